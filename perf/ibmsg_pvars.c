/*
 * ibmsg_pvars: the variable browser. Walks the tool interface (include/ibmsg/tool.h) as any tool
 * would, through the public API only: the category tree from its roots with every control and
 * performance variable under each category that holds it, and, with --read, the current values
 * of the variables bound to no object. --json gives the same as one JSON document.
 *
 * Exit status: 0 on success, 1 when a tool interface call fails (the message names the call and
 * gives ibmsg_status_string), 2 on a bad command line. A variable whose source is not accessible
 * now (IBMSG_T_ERR_NOT_ACCESSIBLE / NOT_SUPPORTED, for example PAPI without perf events) is shown
 * as unavailable with the reason; that is the variable's state, not an error of the browser.
 */
#include <ibmsg/status.h>
#include <ibmsg/tool.h>
#include <ibmsg/version.h>

#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    bool read_on_ports; /* BIND_PORT: read on the ports that have it (pvars_state_t.bound) */
} pvars_var_t;

/* --read: one variable bound to a NIC port, read on one port. */
typedef struct pvars_bound {
    pvars_var_t v; /* a copy of the variable's description with its own value */
    char port[96]; /* "rxe0/1" */
} pvars_bound_t;

typedef struct pvars_category {
    char *name;
    char *desc;
    int num_cvars, num_pvars, num_categories;
    int *cvars, *pvars, *categories;
} pvars_category_t;

typedef struct pvars_state {
    bool json;
    bool read;
    int num_cvars, num_pvars, num_categories, num_roots;
    pvars_var_t *cvars;
    pvars_var_t *pvars;
    pvars_category_t *categories;
    int *roots;
    int num_bound;
    pvars_bound_t *bound;
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

static const char *pvars_bind_name(int bind)
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
    rc = ibmsg_t_enum_get_info(enumtype, &num, NULL, &len);
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
    rc = ibmsg_t_enum_get_info(enumtype, &num, e->name, &len);
    if (rc != IBMSG_OK) {
        pvars_enum_free(e);
        return pvars_fail(rc, "ibmsg_t_enum_get_info");
    }
    for (int i = 0; i < num; i++) {
        int item_len = 0;

        rc = ibmsg_t_enum_get_item(enumtype, i, &e->items[i].value, NULL, &item_len);
        if (rc == IBMSG_OK) {
            e->items[i].name = pvars_string_alloc(item_len);
            if (e->items[i].name == NULL) {
                pvars_enum_free(e);
                return pvars_no_memory();
            }
            e->num_items = i + 1;
            rc =
                ibmsg_t_enum_get_item(enumtype, i, &e->items[i].value, e->items[i].name, &item_len);
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
    rc = ibmsg_t_cvar_get_info(index, NULL, &name_len, NULL, NULL, NULL, NULL, &desc_len, NULL,
                               NULL);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_cvar_get_info(%d)", index);
    }
    v->name = pvars_string_alloc(name_len);
    v->desc = pvars_string_alloc(desc_len);
    if (v->name == NULL || v->desc == NULL) {
        return pvars_no_memory();
    }
    rc = ibmsg_t_cvar_get_info(index, v->name, &name_len, &v->verbosity, &v->datatype, &enumtype,
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
    rc = ibmsg_t_pvar_get_info(index, NULL, &name_len, NULL, NULL, NULL, NULL, NULL, &desc_len,
                               NULL, NULL, NULL, NULL);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_pvar_get_info(%d)", index);
    }
    v->name = pvars_string_alloc(name_len);
    v->desc = pvars_string_alloc(desc_len);
    if (v->name == NULL || v->desc == NULL) {
        return pvars_no_memory();
    }
    rc = ibmsg_t_pvar_get_info(index, v->name, &name_len, &v->verbosity, &v->var_class,
                               &v->datatype, &enumtype, v->desc, &desc_len, &v->bind, &v->readonly,
                               &v->continuous, &v->atomic);
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

    rc = ibmsg_t_category_get_info(index, NULL, &name_len, NULL, &desc_len, NULL, NULL, NULL);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_category_get_info(%d)", index);
    }
    c->name = pvars_string_alloc(name_len);
    c->desc = pvars_string_alloc(desc_len);
    if (c->name == NULL || c->desc == NULL) {
        return pvars_no_memory();
    }
    rc = ibmsg_t_category_get_info(index, c->name, &name_len, c->desc, &desc_len, &c->num_cvars,
                                   &c->num_pvars, &c->num_categories);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_category_get_info(%d)", index);
    }
    rc = pvars_members_load(index, c->num_cvars, st->num_cvars, "cvars", ibmsg_t_category_get_cvars,
                            &c->cvars);
    if (rc == IBMSG_OK) {
        rc = pvars_members_load(index, c->num_pvars, st->num_pvars, "pvars",
                                ibmsg_t_category_get_pvars, &c->pvars);
    }
    if (rc == IBMSG_OK) {
        rc = pvars_members_load(index, c->num_categories, st->num_categories, "categories",
                                ibmsg_t_category_get_categories, &c->categories);
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

    rc = ibmsg_t_cvar_get_num(&st->num_cvars);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_cvar_get_num");
    }
    rc = ibmsg_t_pvar_get_num(&st->num_pvars);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_pvar_get_num");
    }
    rc = ibmsg_t_category_get_num(&st->num_categories);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_category_get_num");
    }
    rc = ibmsg_t_category_get_roots(0, NULL, &num_roots);
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
    rc = ibmsg_t_category_get_roots(num_roots, st->roots, &st->num_roots);
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
    for (int i = 0; i < st->num_bound; i++) {
        free(st->bound[i].v.value);
    }
    free(st->bound);
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
        rc = ibmsg_t_cvar_handle_alloc(i, NULL, &handle, &count);
        if (rc == IBMSG_OK) {
            rc = pvars_value_alloc(v, count);
            if (rc == IBMSG_OK) {
                rc = ibmsg_t_cvar_read(handle, v->value);
                if (rc != IBMSG_OK && !pvars_unavailable(rc)) {
                    pvars_fail(rc, "ibmsg_t_cvar_read(%s)", v->name);
                }
            }
            int free_rc = ibmsg_t_cvar_handle_free(&handle);
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
/*
 * Handles in session on every variable bound to a NIC port, for every port that has it (binding
 * to a port without that counter fails: skipped), so that one ALL_HANDLES start covers software,
 * PAPI and NIC variables alike. On success *handles has st->num_bound entries (caller frees).
 */
static int pvars_ports_alloc(pvars_state_t *st, ibmsg_t_pvar_session_t session,
                             ibmsg_t_pvar_handle_t **handles)
{
    int num_ports = 0, rc, max;

    rc = ibmsg_t_port_get_num(&num_ports);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_port_get_num");
    }
    max = st->num_pvars * num_ports;
    st->bound = calloc((size_t)max + 1, sizeof(*st->bound));
    *handles = calloc((size_t)max + 1, sizeof(**handles));
    if (st->bound == NULL || *handles == NULL) {
        return pvars_no_memory();
    }
    for (int p = 0; p < num_ports; p++) {
        ibmsg_t_port_t port;
        char dev[64];
        int len = sizeof(dev), port_num = 0;

        rc = ibmsg_t_port_get(p, &port);
        if (rc == IBMSG_OK) {
            rc = ibmsg_t_port_get_info(port, dev, &len, &port_num);
        }
        if (rc != IBMSG_OK) {
            return pvars_fail(rc, "ibmsg_t_port_get(%d)", p);
        }
        for (int i = 0; i < st->num_pvars; i++) {
            pvars_var_t *v = &st->pvars[i];
            pvars_bound_t *b = &st->bound[st->num_bound];
            int count = 0;

            if (v->bind != IBMSG_T_BIND_PORT ||
                ibmsg_t_pvar_handle_alloc(session, i, &port, &(*handles)[st->num_bound], &count) !=
                    IBMSG_OK) {
                continue;
            }
            b->v = *v;
            b->v.value = NULL;
            snprintf(b->port, sizeof(b->port), "%s/%d", dev, port_num);
            rc = pvars_value_alloc(&b->v, count);
            if (rc != IBMSG_OK) {
                return rc;
            }
            v->read_on_ports = true;
            st->num_bound++;
        }
    }
    return IBMSG_OK;
}

static int pvars_pvars_read(pvars_state_t *st)
{
    ibmsg_t_pvar_session_t session = IBMSG_T_PVAR_SESSION_NULL;
    ibmsg_t_pvar_handle_t *handles, *bound_handles = NULL;
    int rc, free_rc;

    handles = calloc((size_t)st->num_pvars + 1, sizeof(*handles));
    if (handles == NULL) {
        return pvars_no_memory();
    }
    rc = ibmsg_t_pvar_session_create(&session);
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
        v->read_rc = ibmsg_t_pvar_handle_alloc(session, i, NULL, &handles[i], &count);
        if (v->read_rc == IBMSG_OK) {
            rc = pvars_value_alloc(v, count);
        } else if (!pvars_unavailable(v->read_rc)) {
            rc = pvars_fail(v->read_rc, "ibmsg_t_pvar_handle_alloc(%s)", v->name);
        }
    }
    if (rc == IBMSG_OK) {
        rc = pvars_ports_alloc(st, session, &bound_handles);
    }
    if (rc == IBMSG_OK) {
        rc = ibmsg_t_pvar_start(session, IBMSG_T_PVAR_ALL_HANDLES);
        if (rc != IBMSG_OK) {
            pvars_fail(rc, "ibmsg_t_pvar_start(ALL_HANDLES)");
        }
    }
    for (int i = 0; i < st->num_pvars && rc == IBMSG_OK; i++) {
        pvars_var_t *v = &st->pvars[i];

        if (handles[i] == IBMSG_T_PVAR_HANDLE_NULL) {
            continue;
        }
        v->read_rc = ibmsg_t_pvar_read(session, handles[i], v->value);
        if (v->read_rc != IBMSG_OK && !pvars_unavailable(v->read_rc)) {
            rc = pvars_fail(v->read_rc, "ibmsg_t_pvar_read(%s)", v->name);
        }
    }
    for (int i = 0; i < st->num_bound && rc == IBMSG_OK; i++) {
        pvars_var_t *v = &st->bound[i].v;

        v->read_rc = ibmsg_t_pvar_read(session, bound_handles[i], v->value);
        if (v->read_rc != IBMSG_OK && !pvars_unavailable(v->read_rc)) {
            rc = pvars_fail(v->read_rc, "ibmsg_t_pvar_read(%s, %s)", v->name, st->bound[i].port);
        }
    }
    free(bound_handles);
    /* Freeing the session frees its handles. */
    free_rc = ibmsg_t_pvar_session_free(&session);
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

    printf("ibmsg %s tool interface: %d categories (%d roots), %d control variables, "
           "%d performance variables\n",
           ibmsg_version_string(), st->num_categories, st->num_roots, st->num_cvars, st->num_pvars);
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
                not_read += !v->read_on_ports;
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
    if (st->num_bound > 0) {
        int pw = 8;

        for (int i = 0; i < st->num_bound; i++) {
            int len = (int)strlen(st->bound[i].v.name);
            pw = len > pw ? len : pw;
        }
        printf("\nperformance variables bound to NIC ports (port-wide: every process on the "
               "port):\n");
        for (int i = 0; i < st->num_bound; i++) {
            const pvars_var_t *v = &st->bound[i].v;

            printf("  %-10s %-*s %-13s = ", st->bound[i].port, pw, v->name,
                   pvars_class_name(v->var_class));
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
    printf("]");
    if (st->read) {
        /* Variables bound to NIC ports, read on every port that has them. */
        printf(",\"port_values\":[");
        for (int i = 0; i < st->num_bound; i++) {
            const pvars_var_t *v = &st->bound[i].v;

            printf("%s\n{\"port\":", i > 0 ? "," : "");
            pvars_json_string(st->bound[i].port);
            printf(",\"index\":%d,\"name\":", v->index);
            pvars_json_string(v->name);
            if (v->read_rc == IBMSG_OK) {
                printf(",\"count\":%d,\"value\":", v->count);
                pvars_value(v, true);
            } else {
                printf(",\"value\":null,\"unavailable\":");
                pvars_json_string(ibmsg_status_string(v->read_rc));
            }
            putchar('}');
        }
        printf("]");
    }
    printf("}\n");
    return IBMSG_OK;
}

/* ---- Main -------------------------------------------------------------------------------------
 */

static void pvars_usage(FILE *out)
{
    fprintf(out, "usage: ibmsg_pvars [--read] [--json] [-h]\n"
                 "Lists ibmsg's control and performance variables by category (a variable in\n"
                 "several categories shows under each), with class, datatype, binding, flags,\n"
                 "scope, description and enumerations.\n"
                 "  -r, --read   print the current values of the variables bound to no object\n"
                 "               and of those bound to NIC ports, on every port (performance\n"
                 "               variables: one session, all handles started at once, then\n"
                 "               read)\n"
                 "  -j, --json   the same as one JSON document (with --read: including values)\n"
                 "  -h, --help   this text\n"
                 "Exit status: 0 ok, 1 a tool interface call failed, 2 bad usage.\n");
}

static int pvars_parse(int argc, char **argv, pvars_state_t *st)
{
    static const struct option options[] = {
        {"read", no_argument, NULL, 'r'},
        {"json", no_argument, NULL, 'j'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;

    opterr = 0; /* our own message, which names the program and the option */
    while ((c = getopt_long(argc, argv, ":rjh", options, NULL)) != -1) {
        switch (c) {
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
    rc = ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided);
    if (rc != IBMSG_OK) {
        pvars_fail(rc, "ibmsg_t_init_thread");
        return 1;
    }
    rc = pvars_load(&st);
    if (rc == IBMSG_OK && st.read) {
        rc = pvars_cvars_read(&st);
        if (rc == IBMSG_OK) {
            rc = pvars_pvars_read(&st);
        }
    }
    if (rc == IBMSG_OK) {
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
    rc = ibmsg_t_finalize();
    if (rc != IBMSG_OK) {
        pvars_fail(rc, "ibmsg_t_finalize");
        status = 1;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "ibmsg_pvars: writing the output failed\n");
        status = 1;
    }
    return status;
}
