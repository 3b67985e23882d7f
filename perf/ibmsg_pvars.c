/*
 * ibmsg_pvars: the variable browser. Walks the tool interface (include/ibmsg/tool.h) as any tool
 * would, through the public API only: the category tree from its roots with every control and
 * performance variable under each category that holds it, and, with --read, the current values
 * of the variables bound to no object. --json gives the same as one JSON document.
 *
 * --mpit walks the standard MPI_T instead, as an MPI_T tool sees it with libibmsg-mpit preloaded
 * (the MPI library's variables and ibmsg's in one view): the browser re-executes itself with
 * LD_PRELOAD=<libibmsg-mpit-VARIANT>:<the variant's libmpi> and calls the MPI_T_* functions it
 * then finds in the process (perf/pvars_mpit.c). --watch SECONDS starts a handle on every
 * numeric variable bound to no object and prints, every interval, what the counters counted in
 * it and the current value of the other classes, until interrupted (or --count intervals).
 *
 * Exit status: 0 on success, 1 when a tool interface call fails (the message names the call and
 * gives ibmsg_status_string), 2 on a bad command line. A variable whose source is not accessible
 * now (IBMSG_T_ERR_NOT_ACCESSIBLE / NOT_SUPPORTED, for example PAPI without perf events) is shown
 * as unavailable with the reason; that is the variable's state, not an error of the browser.
 */
#include <ibmsg/status.h>
#include <ibmsg/tool.h>
#include <ibmsg/version.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "perf/pvars_api.h"

#define PVARS_MAX_DEPTH                                                       \
    64 /* deeper than any sane category tree; a cycle is reported, not looped \
        */

typedef struct pvars_enum_item {
    int value;
    char *name;
} pvars_enum_item_t;

typedef struct pvars_enum {
    char *name;
    int num_items;
    pvars_enum_item_t *items;
} pvars_enum_t;

/* One variable (control or performance) as the tool interface describes it. */
typedef struct pvars_var {
    int kind; /* IBMSG_T_KIND_CVAR or IBMSG_T_KIND_PVAR */
    int index;
    char *name;
    char *desc;
    int verbosity;
    int var_class; /* pvars */
    ibmsg_t_datatype_t datatype;
    pvars_enum_t *enumtype; /* NULL when the variable has none */
    int bind;
    int scope;                        /* cvars */
    int readonly, continuous, atomic; /* pvars */
    bool in_category;
    /* --read: the value, or why there is none. */
    bool read;
    int read_rc;
    int count;
    void *value;
} pvars_var_t;

typedef struct pvars_category {
    char *name;
    char *desc;
    int num_cvars, num_pvars, num_categories;
    int *cvars, *pvars, *categories;
} pvars_category_t;

typedef struct pvars_state {
    bool json;
    bool read;
    const char *mpit;   /* --mpit: the MPI variant, NULL for ibmsg's own tool API */
    double watch;       /* --watch: seconds per interval, 0: no watch */
    long count;         /* --count: intervals to watch, 0: until interrupted */
    const char *filter; /* --filter: only variables whose name contains it */
    int num_cvars, num_pvars, num_categories, num_roots;
    pvars_var_t *cvars;
    pvars_var_t *pvars;
    pvars_category_t *categories;
    int *roots;
} pvars_state_t;

/* ---- Errors ---------------------------------------------------------------------------------- */

/* Reports a failed tool call once, where it is found; the caller returns the code upwards. */
static int pvars_fail(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static int pvars_fail(int rc, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "ibmsg_pvars: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, ": %s (%d)\n", ibmsg_status_string(rc), rc);
    return rc;
}

static int pvars_no_memory(void)
{
    fprintf(stderr, "ibmsg_pvars: out of memory\n");
    return IBMSG_ERR_NO_MEMORY;
}

/* Not accessible now / not supported: the variable's state, reported with it. */
static bool pvars_unavailable(int rc)
{
    return rc == IBMSG_T_ERR_NOT_ACCESSIBLE || rc == IBMSG_T_ERR_NOT_SUPPORTED;
}

/* ---- Names of constants ---------------------------------------------------------------------- */

static const char *pvars_datatype_name(ibmsg_t_datatype_t datatype)
{
    switch (datatype) {
    case IBMSG_T_INT:
        return "INT";
    case IBMSG_T_UNSIGNED:
        return "UNSIGNED";
    case IBMSG_T_UNSIGNED_LONG:
        return "UNSIGNED_LONG";
    case IBMSG_T_UNSIGNED_LONG_LONG:
        return "UNSIGNED_LONG_LONG";
    case IBMSG_T_COUNT:
        return "COUNT";
    case IBMSG_T_CHAR:
        return "CHAR";
    case IBMSG_T_DOUBLE:
        return "DOUBLE";
    case IBMSG_T_DATATYPE_NULL:
        break;
    }
    return "UNKNOWN";
}

static size_t pvars_datatype_size(ibmsg_t_datatype_t datatype)
{
    switch (datatype) {
    case IBMSG_T_INT:
        return sizeof(int);
    case IBMSG_T_UNSIGNED:
        return sizeof(unsigned);
    case IBMSG_T_UNSIGNED_LONG:
        return sizeof(unsigned long);
    case IBMSG_T_UNSIGNED_LONG_LONG:
        return sizeof(unsigned long long);
    case IBMSG_T_COUNT:
        return sizeof(long long);
    case IBMSG_T_CHAR:
        return sizeof(char);
    case IBMSG_T_DOUBLE:
        return sizeof(double);
    case IBMSG_T_DATATYPE_NULL:
        break;
    }
    return 0;
}

static const char *pvars_class_name(int var_class)
{
    static const char *const names[] = {"STATE",         "LEVEL",        "SIZE",    "PERCENTAGE",
                                        "HIGHWATERMARK", "LOWWATERMARK", "COUNTER", "AGGREGATE",
                                        "TIMER",         "GENERIC"};
    int i = var_class - IBMSG_T_PVAR_CLASS_STATE;

    return (i >= 0 && i < (int)(sizeof(names) / sizeof(names[0]))) ? names[i] : "UNKNOWN";
}

static const char *pvars_native_bind_name(int bind)
{
    static const char *const names[] = {"NO_OBJECT", "CONTEXT", "ENDPOINT", "PORT",
                                        "THREAD",    "REQUEST", "MEMORY",   "INFO"};

    return (bind >= 0 && bind < (int)(sizeof(names) / sizeof(names[0]))) ? names[bind] : "UNKNOWN";
}

static const char *pvars_scope_name(int scope)
{
    static const char *const names[] = {"CONSTANT", "READONLY", "LOCAL", "GROUP",
                                        "GROUP_EQ", "ALL",      "ALL_EQ"};
    int i = scope - IBMSG_T_SCOPE_CONSTANT;

    return (i >= 0 && i < (int)(sizeof(names) / sizeof(names[0]))) ? names[i] : "UNKNOWN";
}

static const char *pvars_verbosity_name(int verbosity)
{
    static const char *const names[] = {"USER_BASIC",   "USER_DETAIL",   "USER_ALL",
                                        "TUNER_BASIC",  "TUNER_DETAIL",  "TUNER_ALL",
                                        "MPIDEV_BASIC", "MPIDEV_DETAIL", "MPIDEV_ALL"};
    int i = verbosity - IBMSG_T_VERBOSITY_USER_BASIC;

    return (i >= 0 && i < (int)(sizeof(names) / sizeof(names[0]))) ? names[i] : "UNKNOWN";
}

/* ibmsg's tool API, the default backend. */
static const pvars_api_t pvars_native_api = {
    .name = "ibmsg",
    .init_thread = ibmsg_t_init_thread,
    .finalize = ibmsg_t_finalize,
    .enum_get_info = ibmsg_t_enum_get_info,
    .enum_get_item = ibmsg_t_enum_get_item,
    .cvar_get_num = ibmsg_t_cvar_get_num,
    .cvar_get_info = ibmsg_t_cvar_get_info,
    .cvar_handle_alloc = ibmsg_t_cvar_handle_alloc,
    .cvar_handle_free = ibmsg_t_cvar_handle_free,
    .cvar_read = ibmsg_t_cvar_read,
    .pvar_get_num = ibmsg_t_pvar_get_num,
    .pvar_get_info = ibmsg_t_pvar_get_info,
    .pvar_session_create = ibmsg_t_pvar_session_create,
    .pvar_session_free = ibmsg_t_pvar_session_free,
    .pvar_handle_alloc = ibmsg_t_pvar_handle_alloc,
    .pvar_start = ibmsg_t_pvar_start,
    .pvar_stop = ibmsg_t_pvar_stop,
    .pvar_read = ibmsg_t_pvar_read,
    .category_get_num = ibmsg_t_category_get_num,
    .category_get_info = ibmsg_t_category_get_info,
    .category_get_cvars = ibmsg_t_category_get_cvars,
    .category_get_pvars = ibmsg_t_category_get_pvars,
    .category_get_categories = ibmsg_t_category_get_categories,
    .category_get_roots = ibmsg_t_category_get_roots,
    .bind_name = pvars_native_bind_name,
};

/* The backend in use: pvars_native_api, or the MPI_T one of --mpit. */
static const pvars_api_t *pvars_api = &pvars_native_api;

static const char *pvars_bind_name(int bind)
{
    return pvars_api->bind_name(bind);
}

/* ---- Loading what the tool interface describes ------------------------------------------------
 */

/* A buffer of len bytes for a string the interface returns (len includes the NUL). */
static char *pvars_string_alloc(int len)
{
    return calloc(len > 0 ? (size_t)len : 1, 1);
}

static void pvars_enum_free(pvars_enum_t *e)
{
    if (e == NULL) {
        return;
    }
    for (int i = 0; i < e->num_items; i++) {
        free(e->items[i].name);
    }
    free(e->items);
    free(e->name);
    free(e);
}

static int pvars_enum_load(ibmsg_t_enum_t enumtype, pvars_enum_t **out)
{
    pvars_enum_t *e;
    int num = 0, len = 0, rc;

    *out = NULL;
    if (enumtype == IBMSG_T_ENUM_NULL) {
        return IBMSG_OK;
    }
    rc = pvars_api->enum_get_info(enumtype, &num, NULL, &len);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_enum_get_info");
    }
    e = calloc(1, sizeof(*e));
    if (e == NULL) {
        return pvars_no_memory();
    }
    e->name = pvars_string_alloc(len);
    e->items = calloc(num > 0 ? (size_t)num : 1, sizeof(*e->items));
    if (e->name == NULL || e->items == NULL) {
        pvars_enum_free(e);
        return pvars_no_memory();
    }
    rc = pvars_api->enum_get_info(enumtype, &num, e->name, &len);
    if (rc != IBMSG_OK) {
        pvars_enum_free(e);
        return pvars_fail(rc, "ibmsg_t_enum_get_info");
    }
    for (int i = 0; i < num; i++) {
        int item_len = 0;

        rc = pvars_api->enum_get_item(enumtype, i, &e->items[i].value, NULL, &item_len);
        if (rc == IBMSG_OK) {
            e->items[i].name = pvars_string_alloc(item_len);
            if (e->items[i].name == NULL) {
                pvars_enum_free(e);
                return pvars_no_memory();
            }
            e->num_items = i + 1;
            rc = pvars_api->enum_get_item(enumtype, i, &e->items[i].value, e->items[i].name,
                                          &item_len);
        }
        if (rc != IBMSG_OK) {
            pvars_fail(rc, "ibmsg_t_enum_get_item(%s, %d)", e->name, i);
            pvars_enum_free(e);
            return rc;
        }
    }
    *out = e;
    return IBMSG_OK;
}

static int pvars_cvar_load(int index, pvars_var_t *v)
{
    ibmsg_t_enum_t enumtype = IBMSG_T_ENUM_NULL;
    int name_len = 0, desc_len = 0, rc;

    v->kind = IBMSG_T_KIND_CVAR;
    v->index = index;
    rc = pvars_api->cvar_get_info(index, NULL, &name_len, NULL, NULL, NULL, NULL, &desc_len, NULL,
                                  NULL);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_cvar_get_info(%d)", index);
    }
    v->name = pvars_string_alloc(name_len);
    v->desc = pvars_string_alloc(desc_len);
    if (v->name == NULL || v->desc == NULL) {
        return pvars_no_memory();
    }
    rc = pvars_api->cvar_get_info(index, v->name, &name_len, &v->verbosity, &v->datatype, &enumtype,
                                  v->desc, &desc_len, &v->bind, &v->scope);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_cvar_get_info(%d)", index);
    }
    return pvars_enum_load(enumtype, &v->enumtype);
}

static int pvars_pvar_load(int index, pvars_var_t *v)
{
    ibmsg_t_enum_t enumtype = IBMSG_T_ENUM_NULL;
    int name_len = 0, desc_len = 0, rc;

    v->kind = IBMSG_T_KIND_PVAR;
    v->index = index;
    rc = pvars_api->pvar_get_info(index, NULL, &name_len, NULL, NULL, NULL, NULL, NULL, &desc_len,
                                  NULL, NULL, NULL, NULL);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_pvar_get_info(%d)", index);
    }
    v->name = pvars_string_alloc(name_len);
    v->desc = pvars_string_alloc(desc_len);
    if (v->name == NULL || v->desc == NULL) {
        return pvars_no_memory();
    }
    rc = pvars_api->pvar_get_info(index, v->name, &name_len, &v->verbosity, &v->var_class,
                                  &v->datatype, &enumtype, v->desc, &desc_len, &v->bind,
                                  &v->readonly, &v->continuous, &v->atomic);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_pvar_get_info(%d)", index);
    }
    return pvars_enum_load(enumtype, &v->enumtype);
}

/* Member list of a category: num entries from get_fn, each checked against its range. */
static int pvars_members_load(int cat, int num, int limit, const char *what,
                              int (*get_fn)(int, int, int[]), int **out)
{
    int *list = calloc(num > 0 ? (size_t)num : 1, sizeof(int));
    int rc;

    if (list == NULL) {
        return pvars_no_memory();
    }
    *out = list;
    if (num == 0) {
        return IBMSG_OK;
    }
    rc = get_fn(cat, num, list);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_category_get_%s(%d)", what, cat);
    }
    for (int i = 0; i < num; i++) {
        if (list[i] < 0 || list[i] >= limit) {
            return pvars_fail(IBMSG_T_ERR_INVALID_INDEX,
                              "category %d lists %s index %d (there are %d)", cat, what, list[i],
                              limit);
        }
    }
    return IBMSG_OK;
}

static int pvars_category_load(pvars_state_t *st, int index, pvars_category_t *c)
{
    int name_len = 0, desc_len = 0, rc;

    rc = pvars_api->category_get_info(index, NULL, &name_len, NULL, &desc_len, NULL, NULL, NULL);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_category_get_info(%d)", index);
    }
    c->name = pvars_string_alloc(name_len);
    c->desc = pvars_string_alloc(desc_len);
    if (c->name == NULL || c->desc == NULL) {
        return pvars_no_memory();
    }
    rc = pvars_api->category_get_info(index, c->name, &name_len, c->desc, &desc_len, &c->num_cvars,
                                      &c->num_pvars, &c->num_categories);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_category_get_info(%d)", index);
    }
    rc = pvars_members_load(index, c->num_cvars, st->num_cvars, "cvars",
                            pvars_api->category_get_cvars, &c->cvars);
    if (rc == IBMSG_OK) {
        rc = pvars_members_load(index, c->num_pvars, st->num_pvars, "pvars",
                                pvars_api->category_get_pvars, &c->pvars);
    }
    if (rc == IBMSG_OK) {
        rc = pvars_members_load(index, c->num_categories, st->num_categories, "categories",
                                pvars_api->category_get_categories, &c->categories);
    }
    if (rc != IBMSG_OK) {
        return rc;
    }
    for (int i = 0; i < c->num_cvars; i++) {
        st->cvars[c->cvars[i]].in_category = true;
    }
    for (int i = 0; i < c->num_pvars; i++) {
        st->pvars[c->pvars[i]].in_category = true;
    }
    return IBMSG_OK;
}

static int pvars_load(pvars_state_t *st)
{
    int rc, num_roots = 0;

    rc = pvars_api->cvar_get_num(&st->num_cvars);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_cvar_get_num");
    }
    rc = pvars_api->pvar_get_num(&st->num_pvars);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_pvar_get_num");
    }
    rc = pvars_api->category_get_num(&st->num_categories);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_category_get_num");
    }
    rc = pvars_api->category_get_roots(0, NULL, &num_roots);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_category_get_roots");
    }
    st->cvars = calloc((size_t)st->num_cvars + 1, sizeof(*st->cvars));
    st->pvars = calloc((size_t)st->num_pvars + 1, sizeof(*st->pvars));
    st->categories = calloc((size_t)st->num_categories + 1, sizeof(*st->categories));
    st->roots = calloc((size_t)num_roots + 1, sizeof(*st->roots));
    if (st->cvars == NULL || st->pvars == NULL || st->categories == NULL || st->roots == NULL) {
        return pvars_no_memory();
    }
    for (int i = 0; i < st->num_cvars; i++) {
        rc = pvars_cvar_load(i, &st->cvars[i]);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    for (int i = 0; i < st->num_pvars; i++) {
        rc = pvars_pvar_load(i, &st->pvars[i]);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    for (int i = 0; i < st->num_categories; i++) {
        rc = pvars_category_load(st, i, &st->categories[i]);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    rc = pvars_api->category_get_roots(num_roots, st->roots, &st->num_roots);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_category_get_roots");
    }
    /* Categories are only ever added: a root added since the first call is seen next run. */
    if (st->num_roots > num_roots) {
        st->num_roots = num_roots;
    }
    for (int i = 0; i < st->num_roots; i++) {
        if (st->roots[i] < 0 || st->roots[i] >= st->num_categories) {
            return pvars_fail(IBMSG_T_ERR_INVALID_INDEX, "root category index %d (there are %d)",
                              st->roots[i], st->num_categories);
        }
    }
    return IBMSG_OK;
}

static void pvars_var_cleanup(pvars_var_t *v)
{
    free(v->name);
    free(v->desc);
    free(v->value);
    pvars_enum_free(v->enumtype);
}

static void pvars_cleanup(pvars_state_t *st)
{
    for (int i = 0; st->cvars != NULL && i < st->num_cvars; i++) {
        pvars_var_cleanup(&st->cvars[i]);
    }
    for (int i = 0; st->pvars != NULL && i < st->num_pvars; i++) {
        pvars_var_cleanup(&st->pvars[i]);
    }
    for (int i = 0; st->categories != NULL && i < st->num_categories; i++) {
        pvars_category_t *c = &st->categories[i];

        free(c->name);
        free(c->desc);
        free(c->cvars);
        free(c->pvars);
        free(c->categories);
    }
    free(st->cvars);
    free(st->pvars);
    free(st->categories);
    free(st->roots);
}

/* ---- Reading values (--read) ------------------------------------------------------------------
 */

/* A value buffer of count elements, one byte more so a CHAR value is always NUL-terminated. */
static int pvars_value_alloc(pvars_var_t *v, int count)
{
    size_t size = pvars_datatype_size(v->datatype);

    if (size == 0 || count < 0) {
        return pvars_fail(IBMSG_T_ERR_INVALID, "%s: datatype %d, count %d", v->name,
                          (int)v->datatype, count);
    }
    v->count = count;
    v->value = calloc((size_t)count * size + 1, 1);
    return v->value != NULL ? IBMSG_OK : pvars_no_memory();
}

static int pvars_cvars_read(pvars_state_t *st)
{
    for (int i = 0; i < st->num_cvars; i++) {
        pvars_var_t *v = &st->cvars[i];
        ibmsg_t_cvar_handle_t handle = IBMSG_T_CVAR_HANDLE_NULL;
        int count = 0, rc;

        if (v->bind != IBMSG_T_BIND_NO_OBJECT) {
            continue;
        }
        v->read = true;
        if (pvars_datatype_size(v->datatype) == 0) {
            v->read_rc = IBMSG_T_ERR_NOT_SUPPORTED; /* an MPI datatype MPI_T tools do not use */
            continue;
        }
        rc = pvars_api->cvar_handle_alloc(i, NULL, &handle, &count);
        if (rc == IBMSG_OK) {
            rc = pvars_value_alloc(v, count);
            if (rc == IBMSG_OK) {
                rc = pvars_api->cvar_read(handle, v->value);
                if (rc != IBMSG_OK && !pvars_unavailable(rc)) {
                    pvars_fail(rc, "ibmsg_t_cvar_read(%s)", v->name);
                }
            }
            int free_rc = pvars_api->cvar_handle_free(&handle);
            if (free_rc != IBMSG_OK) {
                return pvars_fail(free_rc, "ibmsg_t_cvar_handle_free(%s)", v->name);
            }
        } else if (!pvars_unavailable(rc)) {
            pvars_fail(rc, "ibmsg_t_cvar_handle_alloc(%s)", v->name);
        }
        v->read_rc = rc;
        if (rc != IBMSG_OK && !pvars_unavailable(rc)) {
            return rc;
        }
    }
    return IBMSG_OK;
}

/*
 * All pvars bound to no object get a handle in one session, then one start of ALL_HANDLES (one
 * instant for all of them), then one read each. A non-continuous COUNTER therefore reads what
 * accumulated between start and read; a continuous one reads what accumulated since its handle
 * was allocated; LEVEL, SIZE, STATE and the like read their current value.
 */
static int pvars_pvars_read(pvars_state_t *st)
{
    ibmsg_t_pvar_session_t session = IBMSG_T_PVAR_SESSION_NULL;
    ibmsg_t_pvar_handle_t *handles;
    int rc, free_rc;

    handles = calloc((size_t)st->num_pvars + 1, sizeof(*handles));
    if (handles == NULL) {
        return pvars_no_memory();
    }
    rc = pvars_api->pvar_session_create(&session);
    if (rc != IBMSG_OK) {
        free(handles);
        return pvars_fail(rc, "ibmsg_t_pvar_session_create");
    }
    for (int i = 0; i < st->num_pvars && rc == IBMSG_OK; i++) {
        pvars_var_t *v = &st->pvars[i];
        int count = 0;

        if (v->bind != IBMSG_T_BIND_NO_OBJECT) {
            continue;
        }
        v->read = true;
        if (pvars_datatype_size(v->datatype) == 0) {
            v->read_rc = IBMSG_T_ERR_NOT_SUPPORTED; /* an MPI datatype MPI_T tools do not use */
            continue;
        }
        v->read_rc = pvars_api->pvar_handle_alloc(session, i, NULL, &handles[i], &count);
        if (v->read_rc == IBMSG_OK) {
            rc = pvars_value_alloc(v, count);
        } else if (!pvars_unavailable(v->read_rc)) {
            rc = pvars_fail(v->read_rc, "ibmsg_t_pvar_handle_alloc(%s)", v->name);
        }
    }
    if (rc == IBMSG_OK) {
        rc = pvars_api->pvar_start(session, IBMSG_T_PVAR_ALL_HANDLES);
        if (rc != IBMSG_OK) {
            pvars_fail(rc, "ibmsg_t_pvar_start(ALL_HANDLES)");
        }
    }
    for (int i = 0; i < st->num_pvars && rc == IBMSG_OK; i++) {
        pvars_var_t *v = &st->pvars[i];

        if (handles[i] == IBMSG_T_PVAR_HANDLE_NULL) {
            continue;
        }
        v->read_rc = pvars_api->pvar_read(session, handles[i], v->value);
        if (v->read_rc != IBMSG_OK && !pvars_unavailable(v->read_rc)) {
            rc = pvars_fail(v->read_rc, "ibmsg_t_pvar_read(%s)", v->name);
        }
    }
    /* Freeing the session frees its handles. */
    free_rc = pvars_api->pvar_session_free(&session);
    if (free_rc != IBMSG_OK) {
        pvars_fail(free_rc, "ibmsg_t_pvar_session_free");
        if (rc == IBMSG_OK) {
            rc = free_rc;
        }
    }
    free(handles);
    return rc;
}

/* ---- Output helpers ---------------------------------------------------------------------------
 */

static const char *pvars_enum_item_name(const pvars_enum_t *e, int value)
{
    for (int i = 0; e != NULL && i < e->num_items; i++) {
        if (e->items[i].value == value) {
            return e->items[i].name;
        }
    }
    return NULL;
}

/*
 * A JSON string: quotes, backslashes and control characters escaped, valid UTF-8 passed through,
 * and any byte that is not part of valid UTF-8 replaced by U+FFFD, so the document always parses.
 */
static void pvars_json_string(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    putchar('"');
    while (*p != '\0') {
        unsigned char c = *p;
        int extra = c < 0x80             ? 0
                    : (c & 0xe0) == 0xc0 ? 1
                    : (c & 0xf0) == 0xe0 ? 2
                    : (c & 0xf8) == 0xf0 ? 3
                                         : -1;

        if (extra == 0) {
            if (c == '"' || c == '\\') {
                printf("\\%c", c);
            } else if (c == '\n') {
                fputs("\\n", stdout);
            } else if (c == '\t') {
                fputs("\\t", stdout);
            } else if (c < 0x20 || c == 0x7f) {
                printf("\\u%04x", c);
            } else {
                putchar(c);
            }
            p++;
            continue;
        }
        bool valid = extra > 0 && !(c == 0xc0 || c == 0xc1 || c > 0xf4);
        for (int k = 1; valid && k <= extra; k++) {
            valid = (p[k] & 0xc0) == 0x80;
        }
        /* Overlong 3- and 4-byte forms, surrogates and code points beyond U+10FFFF. */
        if (valid && extra == 2) {
            valid = !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0);
        } else if (valid && extra == 3) {
            valid = !(c == 0xf0 && p[1] < 0x90) && !(c == 0xf4 && p[1] >= 0x90);
        }
        if (valid) {
            fwrite(p, 1, (size_t)extra + 1, stdout);
            p += extra + 1;
        } else {
            fputs("\\ufffd", stdout);
            p++;
        }
    }
    putchar('"');
}

/* One element of a value: text for people, or a JSON number (non-finite doubles are null). */
static void pvars_element(const pvars_var_t *v, int i, bool json)
{
    switch (v->datatype) {
    case IBMSG_T_INT: {
        int x = ((const int *)v->value)[i];
        const char *item = pvars_enum_item_name(v->enumtype, x);

        if (item != NULL && !json) {
            printf("%d (%s)", x, item);
        } else {
            printf("%d", x);
        }
        break;
    }
    case IBMSG_T_UNSIGNED:
        printf("%u", ((const unsigned *)v->value)[i]);
        break;
    case IBMSG_T_UNSIGNED_LONG:
        printf("%lu", ((const unsigned long *)v->value)[i]);
        break;
    case IBMSG_T_UNSIGNED_LONG_LONG:
        printf("%llu", ((const unsigned long long *)v->value)[i]);
        break;
    case IBMSG_T_COUNT:
        printf("%lld", ((const long long *)v->value)[i]);
        break;
    case IBMSG_T_DOUBLE: {
        double x = ((const double *)v->value)[i];

        if (json && !isfinite(x)) {
            fputs("null", stdout);
        } else if (json) {
            printf("%.17g", x); /* enough digits to give the same double back */
        } else {
            printf("%g", x);
        }
        break;
    }
    case IBMSG_T_CHAR:
    case IBMSG_T_DATATYPE_NULL:
        break;
    }
}

/* The value of a variable that was read: CHAR as a string, one element bare, more as a list. */
static void pvars_value(const pvars_var_t *v, bool json)
{
    if (v->datatype == IBMSG_T_CHAR) {
        /* The buffer has count + 1 bytes, zeroed: a string that fills count is still ended. */
        if (json) {
            pvars_json_string(v->value);
        } else {
            printf("\"%s\"", (const char *)v->value);
        }
        return;
    }
    if (v->count == 1) {
        pvars_element(v, 0, json);
        return;
    }
    putchar('[');
    for (int i = 0; i < v->count; i++) {
        fputs(i > 0 ? ", " : "", stdout);
        pvars_element(v, i, json);
    }
    putchar(']');
}

/* ---- Text output ------------------------------------------------------------------------------
 */

static void pvars_text_var(const pvars_var_t *v, int depth)
{
    int indent = 2 * depth;

    printf("%*s%s %s\n", indent, "", v->kind == IBMSG_T_KIND_CVAR ? "cvar" : "pvar", v->name);
    if (v->kind == IBMSG_T_KIND_PVAR) {
        printf("%*s  class %s, datatype %s, bind %s, verbosity %s, flags:%s%s%s%s\n", indent, "",
               pvars_class_name(v->var_class), pvars_datatype_name(v->datatype),
               pvars_bind_name(v->bind), pvars_verbosity_name(v->verbosity),
               v->readonly ? " readonly" : "", v->continuous ? " continuous" : "",
               v->atomic ? " atomic" : "",
               (v->readonly || v->continuous || v->atomic) ? "" : " none");
    } else {
        printf("%*s  datatype %s, bind %s, verbosity %s, scope %s\n", indent, "",
               pvars_datatype_name(v->datatype), pvars_bind_name(v->bind),
               pvars_verbosity_name(v->verbosity), pvars_scope_name(v->scope));
    }
    if (v->desc[0] != '\0') {
        printf("%*s  %s\n", indent, "", v->desc);
    }
    if (v->enumtype != NULL) {
        printf("%*s  enum %s:", indent, "", v->enumtype->name);
        for (int i = 0; i < v->enumtype->num_items; i++) {
            printf("%s %d %s", i > 0 ? "," : "", v->enumtype->items[i].value,
                   v->enumtype->items[i].name);
        }
        putchar('\n');
    }
}

static int pvars_text_category(const pvars_state_t *st, int index, int *path, int depth)
{
    const pvars_category_t *c = &st->categories[index];

    for (int i = 0; i < depth; i++) {
        if (path[i] == index) {
            return pvars_fail(IBMSG_T_ERR_INVALID, "category %s contains itself", c->name);
        }
    }
    if (depth >= PVARS_MAX_DEPTH) {
        return pvars_fail(IBMSG_T_ERR_INVALID, "categories nested deeper than %d at %s",
                          PVARS_MAX_DEPTH, c->name);
    }
    path[depth] = index;
    printf("%*s[%s]%s%s\n", 2 * depth, "", c->name, c->desc[0] != '\0' ? " " : "", c->desc);
    for (int i = 0; i < c->num_cvars; i++) {
        pvars_text_var(&st->cvars[c->cvars[i]], depth + 1);
    }
    for (int i = 0; i < c->num_pvars; i++) {
        pvars_text_var(&st->pvars[c->pvars[i]], depth + 1);
    }
    for (int i = 0; i < c->num_categories; i++) {
        int rc = pvars_text_category(st, c->categories[i], path, depth + 1);

        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    return IBMSG_OK;
}

static int pvars_text_tree(const pvars_state_t *st)
{
    int path[PVARS_MAX_DEPTH];
    bool header = false;

    printf("ibmsg %s %s%s: %d categories (%d roots), %d control variables, "
           "%d performance variables\n",
           ibmsg_version_string(), pvars_api == &pvars_native_api ? "tool interface" : "view of ",
           pvars_api == &pvars_native_api ? "" : pvars_api->name, st->num_categories, st->num_roots,
           st->num_cvars, st->num_pvars);
    for (int i = 0; i < st->num_roots; i++) {
        int rc;

        putchar('\n');
        rc = pvars_text_category(st, st->roots[i], path, 0);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    /* Variables no category holds are still variables: list them so nothing is hidden. */
    for (int k = 0; k < 2; k++) {
        const pvars_var_t *vars = k == 0 ? st->cvars : st->pvars;
        int num = k == 0 ? st->num_cvars : st->num_pvars;

        for (int i = 0; i < num; i++) {
            if (!vars[i].in_category) {
                if (!header) {
                    printf("\n[no category]\n");
                    header = true;
                }
                pvars_text_var(&vars[i], 1);
            }
        }
    }
    return IBMSG_OK;
}

static void pvars_text_values(const pvars_state_t *st)
{
    int width = 8, not_read = 0;

    for (int k = 0; k < 2; k++) {
        const pvars_var_t *vars = k == 0 ? st->cvars : st->pvars;
        int num = k == 0 ? st->num_cvars : st->num_pvars;

        for (int i = 0; i < num; i++) {
            int len = (int)strlen(vars[i].name);

            width = vars[i].read && len > width ? len : width;
        }
    }
    for (int k = 0; k < 2; k++) {
        const pvars_var_t *vars = k == 0 ? st->cvars : st->pvars;
        int num = k == 0 ? st->num_cvars : st->num_pvars;

        printf("%s%s variables bound to no object:\n", k == 0 ? "" : "\n",
               k == 0 ? "control" : "performance");
        for (int i = 0; i < num; i++) {
            const pvars_var_t *v = &vars[i];

            if (!v->read) {
                not_read++;
                continue;
            }
            printf("  %-*s %-13s = ", width, v->name,
                   v->kind == IBMSG_T_KIND_PVAR ? pvars_class_name(v->var_class) : "");
            if (v->read_rc == IBMSG_OK) {
                pvars_value(v, false);
            } else {
                printf("unavailable: %s", ibmsg_status_string(v->read_rc));
            }
            putchar('\n');
        }
    }
    printf("\n%d variables bound to objects were not read (they need an object handle)\n",
           not_read);
}

/* ---- JSON output ------------------------------------------------------------------------------
 */

static void pvars_json_key(const char *key)
{
    pvars_json_string(key);
    putchar(':');
}

static void pvars_json_var(const pvars_var_t *v, bool with_values)
{
    printf("{\"index\":%d,\"name\":", v->index);
    pvars_json_string(v->name);
    if (v->kind == IBMSG_T_KIND_PVAR) {
        printf(",\"class\":\"%s\"", pvars_class_name(v->var_class));
    }
    printf(",\"datatype\":\"%s\",\"bind\":\"%s\",\"verbosity\":\"%s\"",
           pvars_datatype_name(v->datatype), pvars_bind_name(v->bind),
           pvars_verbosity_name(v->verbosity));
    if (v->kind == IBMSG_T_KIND_PVAR) {
        printf(",\"readonly\":%s,\"continuous\":%s,\"atomic\":%s", v->readonly ? "true" : "false",
               v->continuous ? "true" : "false", v->atomic ? "true" : "false");
    } else {
        printf(",\"scope\":\"%s\"", pvars_scope_name(v->scope));
    }
    printf(",\"desc\":");
    pvars_json_string(v->desc);
    printf(",\"enum\":");
    if (v->enumtype == NULL) {
        printf("null");
    } else {
        printf("{\"name\":");
        pvars_json_string(v->enumtype->name);
        printf(",\"items\":[");
        for (int i = 0; i < v->enumtype->num_items; i++) {
            printf("%s{\"value\":%d,\"name\":", i > 0 ? "," : "", v->enumtype->items[i].value);
            pvars_json_string(v->enumtype->items[i].name);
            putchar('}');
        }
        printf("]}");
    }
    if (with_values && v->read) {
        if (v->read_rc == IBMSG_OK) {
            printf(",\"count\":%d,\"value\":", v->count);
            pvars_value(v, true);
        } else {
            printf(",\"value\":null,\"unavailable\":");
            pvars_json_string(ibmsg_status_string(v->read_rc));
        }
    }
    putchar('}');
}

static int pvars_json_category(const pvars_state_t *st, int index, int *path, int depth)
{
    const pvars_category_t *c = &st->categories[index];

    for (int i = 0; i < depth; i++) {
        if (path[i] == index) {
            return pvars_fail(IBMSG_T_ERR_INVALID, "category %s contains itself", c->name);
        }
    }
    if (depth >= PVARS_MAX_DEPTH) {
        return pvars_fail(IBMSG_T_ERR_INVALID, "categories nested deeper than %d at %s",
                          PVARS_MAX_DEPTH, c->name);
    }
    path[depth] = index;
    printf("{\"index\":%d,\"name\":", index);
    pvars_json_string(c->name);
    printf(",\"desc\":");
    pvars_json_string(c->desc);
    printf(",\"cvars\":[");
    for (int i = 0; i < c->num_cvars; i++) {
        printf("%s", i > 0 ? "," : "");
        pvars_json_string(st->cvars[c->cvars[i]].name);
    }
    printf("],\"pvars\":[");
    for (int i = 0; i < c->num_pvars; i++) {
        printf("%s", i > 0 ? "," : "");
        pvars_json_string(st->pvars[c->pvars[i]].name);
    }
    printf("],\"categories\":[");
    for (int i = 0; i < c->num_categories; i++) {
        int rc;

        printf("%s", i > 0 ? "," : "");
        rc = pvars_json_category(st, c->categories[i], path, depth + 1);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    printf("]}");
    return IBMSG_OK;
}

/*
 * One document: the tree (categories nested, members by name), then every variable in full by
 * index (with "value" under --read). Object keys are fixed, so tools can rely on them.
 */
static int pvars_json(const pvars_state_t *st)
{
    int path[PVARS_MAX_DEPTH];

    printf("{");
    pvars_json_key("ibmsg_version");
    pvars_json_string(ibmsg_version_string());
    printf(",");
    pvars_json_key("interface");
    pvars_json_string(pvars_api->name);
    printf(",\"tree\":[");
    for (int i = 0; i < st->num_roots; i++) {
        int rc;

        printf("%s", i > 0 ? "," : "");
        rc = pvars_json_category(st, st->roots[i], path, 0);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    printf("],\"cvars\":[");
    for (int i = 0; i < st->num_cvars; i++) {
        printf("%s\n", i > 0 ? "," : "");
        pvars_json_var(&st->cvars[i], st->read);
    }
    printf("],\"pvars\":[");
    for (int i = 0; i < st->num_pvars; i++) {
        printf("%s\n", i > 0 ? "," : "");
        pvars_json_var(&st->pvars[i], st->read);
    }
    printf("]}\n");
    return IBMSG_OK;
}

/* ---- Watching (--watch) ---------------------------------------------------------------------
 */

static volatile sig_atomic_t pvars_interrupted;

static void pvars_on_signal(int sig)
{
    (void)sig;
    pvars_interrupted = 1;
}

/* One watched variable: its handle and its last two readings (8 bytes: the widest type). */
typedef struct pvars_watched {
    pvars_var_t *v;
    ibmsg_t_pvar_handle_t handle;
    bool delta; /* COUNTER, AGGREGATE, TIMER: what it counted in the interval */
    int read_rc;
    unsigned char prev[8], cur[8];
} pvars_watched_t;

static bool pvars_watchable(const pvars_state_t *st, const pvars_var_t *v)
{
    return v->bind == IBMSG_T_BIND_NO_OBJECT && v->datatype != IBMSG_T_CHAR &&
           pvars_datatype_size(v->datatype) != 0 &&
           (st->filter == NULL || strstr(v->name, st->filter) != NULL);
}

/* The interval's number of a watched variable, as text that is also a JSON number. */
static void pvars_watch_number(const pvars_watched_t *w, char *buf, size_t len)
{
    switch (w->v->datatype) {
    case IBMSG_T_DOUBLE: {
        double c, p;
        memcpy(&c, w->cur, sizeof(c));
        memcpy(&p, w->prev, sizeof(p));
        snprintf(buf, len, "%.9g", w->delta ? c - p : c);
        return;
    }
    case IBMSG_T_INT: {
        int c, p;
        memcpy(&c, w->cur, sizeof(c));
        memcpy(&p, w->prev, sizeof(p));
        snprintf(buf, len, "%lld", w->delta ? (long long)c - p : (long long)c);
        return;
    }
    case IBMSG_T_UNSIGNED: {
        unsigned c, p;
        memcpy(&c, w->cur, sizeof(c));
        memcpy(&p, w->prev, sizeof(p));
        snprintf(buf, len, "%u", w->delta ? c - p : c); /* wraps exactly */
        return;
    }
    case IBMSG_T_COUNT: {
        long long c, p;
        memcpy(&c, w->cur, sizeof(c));
        memcpy(&p, w->prev, sizeof(p));
        snprintf(buf, len, "%lld", w->delta ? c - p : c);
        return;
    }
    default: { /* UNSIGNED_LONG, UNSIGNED_LONG_LONG: 8 bytes on LP64 */
        unsigned long long c, p;
        memcpy(&c, w->cur, sizeof(c));
        memcpy(&p, w->prev, sizeof(p));
        snprintf(buf, len, "%llu", w->delta ? c - p : c);
        return;
    }
    }
}

static void pvars_watch_print(const pvars_state_t *st, const pvars_watched_t *ws, int num,
                              long interval, double seconds, double elapsed)
{
    char number[64];

    if (st->json) {
        printf("{\"interval\":%ld,\"seconds\":%.6f,\"elapsed\":%.6f,\"variables\":[", interval,
               seconds, elapsed);
    } else {
        printf("# interval %ld: %.3f s (%.3f s since start)\n", interval, seconds, elapsed);
        printf("%-56s %-14s %-5s %s\n", "variable", "class", "what", "number");
    }
    for (int i = 0; i < num; i++) {
        const pvars_watched_t *w = &ws[i];
        const char *what = w->delta ? "delta" : "value";

        if (st->json) {
            printf("%s{\"name\":", i > 0 ? "," : "");
            pvars_json_string(w->v->name);
            printf(",\"class\":\"%s\",", pvars_class_name(w->v->var_class));
            if (w->read_rc != IBMSG_OK) {
                printf("\"unavailable\":");
                pvars_json_string(ibmsg_status_string(w->read_rc));
            } else {
                pvars_watch_number(w, number, sizeof(number));
                printf("\"%s\":%s", what, number);
            }
            putchar('}');
        } else if (w->read_rc != IBMSG_OK) {
            printf("%-56s %-14s %-5s unavailable: %s\n", w->v->name,
                   pvars_class_name(w->v->var_class), "-", ibmsg_status_string(w->read_rc));
        } else {
            pvars_watch_number(w, number, sizeof(number));
            printf("%-56s %-14s %-5s %s\n", w->v->name, pvars_class_name(w->v->var_class), what,
                   number);
        }
    }
    printf(st->json ? "]}\n" : "\n");
    fflush(stdout);
}

static double pvars_seconds(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) * 1e-9;
}

/* Read every watched handle into cur (a failure is the variable's state, not the watch's). */
static int pvars_watch_read(ibmsg_t_pvar_session_t session, pvars_watched_t *ws, int num)
{
    for (int i = 0; i < num; i++) {
        ws[i].read_rc = pvars_api->pvar_read(session, ws[i].handle, ws[i].cur);
        if (ws[i].read_rc != IBMSG_OK && !pvars_unavailable(ws[i].read_rc)) {
            return pvars_fail(ws[i].read_rc, "pvar_read(%s)", ws[i].v->name);
        }
    }
    return IBMSG_OK;
}

/*
 * Every numeric pvar bound to no object (and matching --filter) gets a handle in one session,
 * all are started at one instant, then every interval all are read: counters, aggregates and
 * timers print what they counted in the interval, the other classes their value. SIGINT or
 * SIGTERM (or --count intervals) ends it with a final line.
 */
static int pvars_watch(pvars_state_t *st)
{
    ibmsg_t_pvar_session_t session = IBMSG_T_PVAR_SESSION_NULL;
    pvars_watched_t *ws = calloc((size_t)st->num_pvars + 1, sizeof(*ws));
    struct sigaction sa, old_int, old_term;
    struct timespec start, last, now;
    long interval = 0;
    int num = 0, rc;

    if (ws == NULL) {
        return pvars_no_memory();
    }
    rc = pvars_api->pvar_session_create(&session);
    if (rc != IBMSG_OK) {
        free(ws);
        return pvars_fail(rc, "pvar_session_create");
    }
    for (int i = 0; i < st->num_pvars && rc == IBMSG_OK; i++) {
        pvars_var_t *v = &st->pvars[i];
        pvars_watched_t *w = &ws[num];
        int count = 0;

        if (!pvars_watchable(st, v)) {
            continue;
        }
        int alloc_rc = pvars_api->pvar_handle_alloc(session, i, NULL, &w->handle, &count);
        if (alloc_rc != IBMSG_OK) {
            if (!pvars_unavailable(alloc_rc)) {
                rc = pvars_fail(alloc_rc, "pvar_handle_alloc(%s)", v->name);
            }
            continue;
        }
        if (count != 1) {
            continue; /* arrays are not watched; the session frees the handle */
        }
        w->v = v;
        w->delta = v->var_class == IBMSG_T_PVAR_CLASS_COUNTER ||
                   v->var_class == IBMSG_T_PVAR_CLASS_AGGREGATE ||
                   v->var_class == IBMSG_T_PVAR_CLASS_TIMER;
        num++;
    }
    if (rc == IBMSG_OK) {
        rc = pvars_api->pvar_start(session, IBMSG_T_PVAR_ALL_HANDLES);
        if (rc != IBMSG_OK) {
            pvars_fail(rc, "pvar_start(ALL_HANDLES)");
        }
    }
    if (rc == IBMSG_OK) {
        rc = pvars_watch_read(session, ws, num);
    }
    for (int i = 0; i < num; i++) {
        memcpy(ws[i].prev, ws[i].cur, sizeof(ws[i].cur));
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = pvars_on_signal; /* no SA_RESTART: the sleep returns EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    clock_gettime(CLOCK_MONOTONIC, &start);
    last = start;
    while (rc == IBMSG_OK && !pvars_interrupted && (st->count == 0 || interval < st->count)) {
        double at = st->watch * (double)(interval + 1);
        struct timespec deadline = start;
        deadline.tv_sec += (time_t)at;
        deadline.tv_nsec += (long)((at - (double)(time_t)at) * 1e9);
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL);
        if (err == EINTR || pvars_interrupted) {
            break;
        }
        rc = pvars_watch_read(session, ws, num);
        if (rc != IBMSG_OK) {
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        interval++;
        pvars_watch_print(st, ws, num, interval, pvars_seconds(&last, &now),
                          pvars_seconds(&start, &now));
        last = now;
        for (int i = 0; i < num; i++) {
            memcpy(ws[i].prev, ws[i].cur, sizeof(ws[i].cur));
        }
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (rc == IBMSG_OK) {
        if (st->json) {
            printf("{\"end\":true,\"intervals\":%ld,\"interrupted\":%s,\"variables\":%d}\n",
                   interval, pvars_interrupted ? "true" : "false", num);
        } else {
            printf("# end: %ld intervals of %d variables%s\n", interval, num,
                   pvars_interrupted ? " (interrupted)" : "");
        }
    }
    /* Freeing the session frees (and stops) its handles. */
    int free_rc = pvars_api->pvar_session_free(&session);
    if (free_rc != IBMSG_OK && rc == IBMSG_OK) {
        rc = pvars_fail(free_rc, "pvar_session_free");
    }
    free(ws);
    return rc;
}

/* ---- MPI_T (--mpit) ---------------------------------------------------------------------------
 */

/* The MPI variants built in: the backend, where the layer is and which libmpi goes with it. */
typedef struct pvars_variant {
    const char *name;
    const pvars_api_t *(*api)(void);
    const char *layer_build;
    const char *layer_install;
    const char *mpi_lib;
} pvars_variant_t;

static const pvars_variant_t pvars_variants[] = {
#ifdef PVARS_HAVE_MPIT_MPICH
    {"mpich", pvars_mpit_api_mpich, PVARS_MPIT_LAYER_BUILD_MPICH, PVARS_MPIT_LAYER_INSTALL_MPICH,
     PVARS_MPIT_MPI_MPICH},
#endif
#ifdef PVARS_HAVE_MPIT_OMPI
    {"ompi", pvars_mpit_api_ompi, PVARS_MPIT_LAYER_BUILD_OMPI, PVARS_MPIT_LAYER_INSTALL_OMPI,
     PVARS_MPIT_MPI_OMPI},
#endif
    {NULL, NULL, NULL, NULL, NULL},
};

#define PVARS_MPIT_CHILD_ENV "IBMSG_PVARS_MPIT_CHILD"

static const pvars_variant_t *pvars_variant_find(const char *name)
{
    for (const pvars_variant_t *v = pvars_variants; v->name != NULL; v++) {
        if (name[0] == '\0' || strcmp(name, v->name) == 0) {
            return v;
        }
    }
    return NULL;
}

/*
 * --mpit: in the parent, re-execute under LD_PRELOAD of the layer and the variant's libmpi (as a
 * user runs an MPI_T tool); in that child, take the MPI_T backend. Returns IBMSG_OK in the child,
 * an error (reported) when the exec or the backend fails; the parent never returns on success.
 */
static int pvars_mpit_setup(pvars_state_t *st, char **argv)
{
    const pvars_variant_t *var = pvars_variant_find(st->mpit);

    if (var == NULL) {
        fprintf(stderr, "ibmsg_pvars: --mpit: no MPI variant '%s' built in (%s)\n", st->mpit,
                pvars_variants[0].name != NULL ? "have: mpich and/or ompi" : "none was found");
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    if (getenv(PVARS_MPIT_CHILD_ENV) != NULL) {
        pvars_api = var->api();
        return pvars_api != NULL ? IBMSG_OK : IBMSG_ERR_NOT_FOUND;
    }
    const char *layer = getenv("IBMSG_PVARS_MPIT_LAYER");
    if (layer == NULL || layer[0] == '\0') {
        layer = access(var->layer_build, R_OK) == 0 ? var->layer_build : var->layer_install;
    }
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(layer) + strlen(var->mpi_lib) + (old != NULL ? strlen(old) : 0) + 3;
    char *preload = malloc(len);
    if (preload == NULL) {
        return pvars_no_memory();
    }
    snprintf(preload, len, "%s:%s%s%s", layer, var->mpi_lib, old != NULL && old[0] ? ":" : "",
             old != NULL ? old : "");
    setenv("LD_PRELOAD", preload, 1);
    setenv(PVARS_MPIT_CHILD_ENV, var->name, 1);
    free(preload);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    fprintf(stderr, "ibmsg_pvars: --mpit: cannot re-execute under LD_PRELOAD=%s: %s\n", layer,
            strerror(errno));
    return IBMSG_ERR_IO;
}

/* ---- Main -------------------------------------------------------------------------------------
 */

static void pvars_usage(FILE *out)
{
    fprintf(out,
            "usage: ibmsg_pvars [--mpit[=VARIANT]] [--read | --watch SECONDS [--count N]]\n"
            "                   [--filter TEXT] [--json] [-h]\n"
            "Lists ibmsg's control and performance variables by category (a variable in\n"
            "several categories shows under each), with class, datatype, binding, flags,\n"
            "scope, description and enumerations.\n"
            "  -r, --read   print the current values of the variables bound to no object\n"
            "               (performance variables: one session, all handles started at\n"
            "               once, then read)\n"
            "  -j, --json   the same as one JSON document (with --read: including values;\n"
            "               with --watch: one JSON object per line and interval)\n"
            "  -m, --mpit[=VARIANT]  the standard MPI_T view an MPI_T tool sees with\n"
            "               libibmsg-mpit-VARIANT preloaded (mpich or ompi; default: the first\n"
            "               built): the MPI library's variables and ibmsg's; the browser\n"
            "               re-executes itself with LD_PRELOAD=<layer>:<libmpi> (the layer's\n"
            "               path can be given in IBMSG_PVARS_MPIT_LAYER)\n"
            "  -w, --watch SECONDS  every SECONDS (a fraction is fine) print what the started\n"
            "               counters, aggregates and timers counted in the interval and the\n"
            "               current value of the other classes (numeric variables bound to\n"
            "               no object), until SIGINT / SIGTERM, with a final line\n"
            "  -c, --count N  stop watching after N intervals\n"
            "  -f, --filter TEXT  only variables whose name contains TEXT (--watch)\n"
            "  -h, --help   this text\n"
            "Exit status: 0 ok, 1 a tool interface call failed, 2 bad usage.\n");
}

static int pvars_parse(int argc, char **argv, pvars_state_t *st)
{
    static const struct option options[] = {
        {"read", no_argument, NULL, 'r'},         {"mpit", optional_argument, NULL, 'm'},
        {"watch", required_argument, NULL, 'w'},  {"count", required_argument, NULL, 'c'},
        {"filter", required_argument, NULL, 'f'}, {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
    };
    int c;

    opterr = 0; /* our own message, which names the program and the option */
    while ((c = getopt_long(argc, argv, ":rjhm::w:c:f:", options, NULL)) != -1) {
        char *end = NULL;

        switch (c) {
        case 'm':
            st->mpit = optarg != NULL ? optarg : "";
            break;
        case 'w':
            st->watch = strtod(optarg, &end);
            if (end == optarg || *end != '\0' || !(st->watch > 0) || st->watch > 86400) {
                fprintf(stderr,
                        "ibmsg_pvars: --watch: '%s' is not a number of seconds in "
                        "(0, 86400]\n",
                        optarg);
                return 2;
            }
            break;
        case 'c':
            errno = 0;
            st->count = strtol(optarg, &end, 10);
            if (end == optarg || *end != '\0' || errno != 0 || st->count < 1) {
                fprintf(stderr, "ibmsg_pvars: --count: '%s' is not a positive integer\n", optarg);
                return 2;
            }
            break;
        case 'f':
            st->filter = optarg;
            break;
        case ':':
            fprintf(stderr, "ibmsg_pvars: option '%s' needs an argument\n", argv[optind - 1]);
            pvars_usage(stderr);
            return 2;
        case 'r':
            st->read = true;
            break;
        case 'j':
            st->json = true;
            break;
        case 'h':
            pvars_usage(stdout);
            return 0;
        default: {
            const char *word = argv[optind - 1];

            /* optopt: 0 for an unknown long option, else the option (short, or long with an
             * argument it does not take, which only "--name=value" can give). */
            if (optopt != 0 && strncmp(word, "--", 2) == 0 && strchr(word, '=') != NULL) {
                fprintf(stderr, "ibmsg_pvars: option '%s' takes no argument\n", word);
            } else if (optopt == 0) {
                fprintf(stderr, "ibmsg_pvars: unknown option '%s'\n", word);
            } else {
                fprintf(stderr, "ibmsg_pvars: unknown option '-%c'\n", optopt);
            }
            pvars_usage(stderr);
            return 2;
        }
        }
    }
    if (optind < argc) {
        fprintf(stderr, "ibmsg_pvars: unexpected argument '%s'\n", argv[optind]);
        pvars_usage(stderr);
        return 2;
    }
    if (st->watch > 0 && st->read) {
        fprintf(stderr, "ibmsg_pvars: --read and --watch exclude each other\n");
        return 2;
    }
    if ((st->count > 0 || st->filter != NULL) && st->watch == 0) {
        fprintf(stderr, "ibmsg_pvars: --count and --filter go with --watch\n");
        return 2;
    }
    return -1;
}

int main(int argc, char **argv)
{
    pvars_state_t st = {0};
    int provided, rc, status;

    status = pvars_parse(argc, argv, &st);
    if (status >= 0) {
        return status;
    }
    if (st.mpit != NULL && pvars_mpit_setup(&st, argv) != IBMSG_OK) {
        return 1;
    }
    rc = pvars_api->init_thread(IBMSG_T_THREAD_SINGLE, &provided);
    if (rc != IBMSG_OK) {
        pvars_fail(rc, "%s: init_thread", pvars_api->name);
        return 1;
    }
    rc = pvars_load(&st);
    if (rc == IBMSG_OK && st.watch > 0) {
        rc = pvars_watch(&st);
    } else if (rc == IBMSG_OK && st.read) {
        rc = pvars_cvars_read(&st);
        if (rc == IBMSG_OK) {
            rc = pvars_pvars_read(&st);
        }
    }
    if (rc == IBMSG_OK && st.watch == 0) {
        if (st.json) {
            rc = pvars_json(&st);
        } else if (st.read) {
            pvars_text_values(&st);
        } else {
            rc = pvars_text_tree(&st);
        }
    }
    pvars_cleanup(&st);
    status = rc == IBMSG_OK ? 0 : 1;
    rc = pvars_api->finalize();
    if (rc != IBMSG_OK) {
        pvars_fail(rc, "%s: finalize", pvars_api->name);
        status = 1;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ibmsg_pvars: writing the output failed\n");
        status = 1;
    }
    return status;
}
