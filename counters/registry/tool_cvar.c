/*
 * Control variables: registration (with the environment), ibmsg_t_cvar_*, and setting from
 * strings and info objects. A cvar's description is immutable once published, so get_info and
 * read take no lock; writes are serialized by the registry lock.
 */
#include "counters/registry/tool_internal.h"

#include "util/log.h"
#include "util/parse.h"
#include "util/string_out.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define ENV_PREFIX "IBMSG_"

static int str_same(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static int cvar_read_value(const cnt_cvar_t *cv, void *obj, void *buf)
{
    if (cv->d.read != NULL) {
        return cv->d.read(obj, buf, cv->d.ctx);
    }
    cnt_value_load(cv->d.datatype, cv->d.count, cv->d.ctx, buf);
    return IBMSG_OK;
}

/* Lock held. A char variable takes a string bounded by its count (always NUL-terminated). */
static int cvar_write_value(const cnt_cvar_t *cv, void *obj, const void *buf)
{
    if (cv->d.write != NULL) {
        return cv->d.write(obj, buf, cv->d.ctx);
    }
    if (cv->d.ctx == NULL) {
        return IBMSG_T_ERR_CVAR_SET_NEVER; /* computed by its read callback: nothing to set */
    }
    if (cv->d.datatype == IBMSG_T_CHAR) {
        char tmp[256];
        char *s = (size_t)cv->d.count <= sizeof(tmp) ? tmp : malloc((size_t)cv->d.count);
        if (s == NULL) {
            return IBMSG_T_ERR_MEMORY;
        }
        size_t n = strnlen(buf, (size_t)cv->d.count - 1);
        memcpy(s, buf, n);
        memset(s + n, 0, (size_t)cv->d.count - n);
        cnt_value_store(IBMSG_T_CHAR, cv->d.count, cv->d.ctx, s);
        if (s != tmp) {
            free(s);
        }
        return IBMSG_OK;
    }
    cnt_value_store(cv->d.datatype, cv->d.count, cv->d.ctx, buf);
    return IBMSG_OK;
}

static int scope_writable(int scope)
{
    return scope != IBMSG_T_SCOPE_CONSTANT && scope != IBMSG_T_SCOPE_READONLY;
}

/* An enum value must be one of the items. */
static int enum_has_value(const cnt_enum_t *e, long long v)
{
    for (int i = 0; i < e->num_items; i++) {
        if (e->items[i].value == v) {
            return 1;
        }
    }
    return 0;
}

static int parse_status(int ret)
{
    return ret == IBMSG_ERR_INVALID ? IBMSG_T_ERR_INVALID : ret;
}

/* Writes an integer value to a cvar of an integer or double type, with range checks. */
static int cvar_set_integer(const cnt_cvar_t *cv, long long sv, unsigned long long uv, int neg)
{
    union {
        int i;
        unsigned u;
        unsigned long ul;
        unsigned long long ull;
        long long ll;
        double d;
    } v;

    switch (cv->d.datatype) {
    case IBMSG_T_INT:
        if (neg ? sv < INT_MIN : uv > INT_MAX) {
            return IBMSG_ERR_OUT_OF_RANGE;
        }
        v.i = neg ? (int)sv : (int)uv;
        if (cv->d.enumtype != IBMSG_T_ENUM_NULL &&
            !enum_has_value(cnt_enum_lookup(cv->d.enumtype), v.i)) {
            return IBMSG_T_ERR_INVALID;
        }
        break;
    case IBMSG_T_UNSIGNED:
        if (neg || uv > UINT_MAX) {
            return IBMSG_ERR_OUT_OF_RANGE;
        }
        v.u = (unsigned)uv;
        break;
    case IBMSG_T_UNSIGNED_LONG:
        if (neg || uv > ULONG_MAX) {
            return IBMSG_ERR_OUT_OF_RANGE;
        }
        v.ul = (unsigned long)uv;
        break;
    case IBMSG_T_UNSIGNED_LONG_LONG:
        if (neg) {
            return IBMSG_ERR_OUT_OF_RANGE;
        }
        v.ull = uv;
        break;
    case IBMSG_T_COUNT:
        if (!neg && uv > LLONG_MAX) {
            return IBMSG_ERR_OUT_OF_RANGE;
        }
        v.ll = neg ? sv : (long long)uv;
        break;
    case IBMSG_T_DOUBLE:
        v.d = neg ? (double)sv : (double)uv;
        break;
    default:
        return IBMSG_T_ERR_INVALID;
    }
    return cvar_write_value(cv, NULL, &v);
}

int cnt_cvar_set_string_internal(const cnt_cvar_t *cv, const char *value, int check_scope)
{
    long long sv = 0;
    unsigned long long uv = 0;
    int ret;

    if (value == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    if (check_scope && !scope_writable(cv->d.scope)) {
        return IBMSG_T_ERR_CVAR_SET_NEVER;
    }
    if (cv->d.datatype == IBMSG_T_CHAR) {
        if (strlen(value) + 1 > (size_t)cv->d.count) {
            return IBMSG_ERR_OUT_OF_RANGE;
        }
        return cvar_write_value(cv, NULL, value);
    }
    if (cv->d.count != 1) {
        return IBMSG_T_ERR_NOT_SUPPORTED; /* arrays are not set from one string */
    }
    if (cv->d.datatype == IBMSG_T_DOUBLE) {
        double d;
        ret = util_parse_double(value, &d);
        return ret == IBMSG_OK ? cvar_write_value(cv, NULL, &d) : parse_status(ret);
    }
    if (cv->d.enumtype != IBMSG_T_ENUM_NULL) {
        const cnt_enum_t *e = cnt_enum_lookup(cv->d.enumtype);
        for (int i = 0; i < e->num_items; i++) {
            if (util_str_equal_nocase(e->items[i].name, value)) {
                return cvar_set_integer(cv, e->items[i].value, 0, 1);
            }
        }
    }
    const char *p = value;
    while (isspace((unsigned char)*p)) {
        p++;
    }
    if (*p == '-') {
        ret = util_parse_ll(value, LLONG_MIN, LLONG_MAX, &sv);
        return ret == IBMSG_OK ? cvar_set_integer(cv, sv, 0, 1) : parse_status(ret);
    }
    ret = util_parse_ull(value, ULLONG_MAX, &uv);
    return ret == IBMSG_OK ? cvar_set_integer(cv, 0, uv, 0) : parse_status(ret);
}

int cnt_cvar_set_string(int cvar_index, const char *value)
{
    cnt_tool_ensure_builtins();
    const cnt_cvar_t *cv = cnt_table_get(&cnt_reg.cvars, cvar_index);
    if (cv == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    cnt_tool_lock();
    int ret = cnt_cvar_set_string_internal(cv, value, 1);
    cnt_tool_unlock();
    return ret;
}

/* Lock held: the environment's IBMSG_<NAME> is applied once, at registration. */
static void cvar_apply_env(const cnt_cvar_t *cv)
{
    char var[sizeof(ENV_PREFIX) + 256];
    size_t n = strlen(cv->d.name);

    if (cv->d.scope == IBMSG_T_SCOPE_CONSTANT || n + sizeof(ENV_PREFIX) > sizeof(var)) {
        return;
    }
    memcpy(var, ENV_PREFIX, sizeof(ENV_PREFIX) - 1);
    for (size_t i = 0; i <= n; i++) {
        var[sizeof(ENV_PREFIX) - 1 + i] = (char)toupper((unsigned char)cv->d.name[i]);
    }
    const char *value = getenv(var);
    if (value == NULL) {
        return;
    }
    int ret = cnt_cvar_set_string_internal(cv, value, 0);
    if (ret != IBMSG_OK) {
        util_warn("cvar %s: ignoring %s=\"%s\": %s", cv->d.name, var, value,
                  ibmsg_status_string(ret));
    }
}

static int cvar_desc_valid(const cnt_cvar_desc_t *d)
{
    if (d->name == NULL || d->name[0] == '\0' || cnt_datatype_size(d->datatype) == 0 ||
        d->verbosity < IBMSG_T_VERBOSITY_USER_BASIC ||
        d->verbosity > IBMSG_T_VERBOSITY_MPIDEV_ALL || d->bind < IBMSG_T_BIND_NO_OBJECT ||
        d->bind >= IBMSG_T_BIND_LAST || d->scope < IBMSG_T_SCOPE_CONSTANT ||
        d->scope > IBMSG_T_SCOPE_ALL_EQ || d->count < 0 || (d->read == NULL && d->ctx == NULL)) {
        return 0;
    }
    if (d->enumtype != IBMSG_T_ENUM_NULL &&
        (d->datatype != IBMSG_T_INT || cnt_enum_lookup(d->enumtype) == NULL)) {
        return 0;
    }
    return 1;
}

static int cvar_same(const cnt_cvar_t *cv, const cnt_cvar_desc_t *d, int count)
{
    return cv->d.datatype == d->datatype && cv->d.enumtype == d->enumtype &&
           cv->d.verbosity == d->verbosity && cv->d.bind == d->bind && cv->d.scope == d->scope &&
           cv->d.count == count && str_same(cv->d.category, d->category) &&
           str_same(cv->d.desc, d->desc);
}

int cnt_cvar_register_locked(const cnt_cvar_desc_t *desc, int *cvar_index)
{
    int cat = -1, index, ret;

    if (desc == NULL || cvar_index == NULL || !cvar_desc_valid(desc)) {
        return IBMSG_ERR_INVALID;
    }
    int count = desc->count == 0 ? 1 : desc->count;
    if (desc->category != NULL &&
        (cat = cnt_name_map_find(&cnt_reg.cat_names, desc->category, 0)) < 0) {
        return IBMSG_T_ERR_INVALID_NAME;
    }
    index = cnt_name_map_find(&cnt_reg.cvar_names, desc->name, 0);
    if (index >= 0) {
        if (!cvar_same(cnt_table_get(&cnt_reg.cvars, index), desc, count)) {
            return IBMSG_ERR_EXISTS;
        }
        *cvar_index = index;
        return IBMSG_OK;
    }

    cnt_cvar_t *cv = calloc(1, sizeof(*cv));
    if (cv == NULL) {
        return IBMSG_T_ERR_MEMORY;
    }
    cv->d = *desc;
    cv->d.count = count;
    cv->d.name = strdup(desc->name);
    cv->d.category = desc->category != NULL ? strdup(desc->category) : NULL;
    cv->d.desc = desc->desc != NULL ? strdup(desc->desc) : NULL;
    cv->elsize = cnt_datatype_size(desc->datatype);
    if (cv->d.name == NULL || (desc->category != NULL && cv->d.category == NULL) ||
        (desc->desc != NULL && cv->d.desc == NULL)) {
        ret = IBMSG_T_ERR_MEMORY;
        goto err_free_cvar;
    }
    cv->index = cnt_table_num(&cnt_reg.cvars);
    ret = cnt_name_map_insert(&cnt_reg.cvar_names, cv->d.name, 0, cv->index);
    if (ret != IBMSG_OK) {
        goto err_free_cvar;
    }
    ret = cnt_table_append(&cnt_reg.cvars, cv, &index);
    if (ret != IBMSG_OK) {
        goto err_free_cvar; /* only past 1M cvars; the stale name entry is then unreachable */
    }
    if (cat >= 0 && cnt_category_add_cvar_locked(cat, index) != IBMSG_OK) {
        util_error("cvar %s: cannot join category %s", cv->d.name, cv->d.category);
    }
    cvar_apply_env(cv);
    *cvar_index = index;
    return IBMSG_OK;

err_free_cvar:
    free((char *)cv->d.name);
    free((char *)cv->d.category);
    free((char *)cv->d.desc);
    free(cv);
    return ret;
}

int cnt_cvar_register(const cnt_cvar_desc_t *desc, int *cvar_index)
{
    cnt_tool_ensure_builtins();
    cnt_tool_lock();
    int ret = cnt_cvar_register_locked(desc, cvar_index);
    cnt_tool_unlock();
    return ret;
}

/* ---- MPI_T control variable functions ------------------------------------------------------ */

int ibmsg_t_cvar_get_num(int *num_cvar)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (num_cvar == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *num_cvar = cnt_table_num(&cnt_reg.cvars);
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                          ibmsg_t_datatype_t *datatype, ibmsg_t_enum_t *enumtype, char *desc,
                          int *desc_len, int *bind, int *scope)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_cvar_t *cv = cnt_table_get(&cnt_reg.cvars, cvar_index);
    if (cv == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    util_string_out(cv->d.name, name, name_len);
    util_string_out(cv->d.desc, desc, desc_len);
    if (verbosity != NULL) {
        *verbosity = cv->d.verbosity;
    }
    if (datatype != NULL) {
        *datatype = cv->d.datatype;
    }
    if (enumtype != NULL) {
        *enumtype = cv->d.enumtype;
    }
    if (bind != NULL) {
        *bind = cv->d.bind;
    }
    if (scope != NULL) {
        *scope = cv->d.scope;
    }
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_cvar_get_index(const char *name, int *cvar_index)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (name == NULL || cvar_index == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    int index = cnt_name_map_find(&cnt_reg.cvar_names, name, 0);
    if (index >= cnt_table_num(&cnt_reg.cvars)) {
        index = -1;
    }
    cnt_tool_unlock();
    if (index < 0) {
        return IBMSG_T_ERR_INVALID_NAME;
    }
    *cvar_index = index;
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_cvar_handle_alloc(int cvar_index, void *obj_handle, ibmsg_t_cvar_handle_t *handle,
                              int *count)
{
    void *obj = NULL;
    uint32_t idx;
    cnt_chandle_t *h;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_cvar_t *cv = cnt_table_get(&cnt_reg.cvars, cvar_index);
    if (cv == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    if (handle == NULL || count == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    if (cv->d.bind != IBMSG_T_BIND_NO_OBJECT) {
        if (obj_handle == NULL || (obj = *(void **)obj_handle) == NULL) {
            return IBMSG_T_ERR_INVALID_HANDLE;
        }
    }
    cnt_tool_lock();
    int ret = cnt_slot_alloc(&cnt_reg.chandles, &idx, (void **)&h);
    if (ret != IBMSG_OK) {
        cnt_tool_unlock();
        return ret == IBMSG_ERR_NO_RESOURCE ? IBMSG_T_ERR_OUT_OF_HANDLES : ret;
    }
    /* A reader holding a stale copy of a freed handle may load these while the slot is reused:
       relaxed atomics after a release fence, so it sees a new pair only together with the
       generation change that makes it refuse the pair. */
    __atomic_thread_fence(__ATOMIC_RELEASE);
    __atomic_store_n(&h->cvar, cv, __ATOMIC_RELAXED);
    __atomic_store_n(&h->obj, obj, __ATOMIC_RELAXED);
    *handle = (ibmsg_t_cvar_handle_t)cnt_slot_publish(&cnt_reg.chandles, idx);
    cnt_tool_unlock();
    *count = cv->d.count;
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_cvar_handle_free(ibmsg_t_cvar_handle_t *handle)
{
    uint32_t idx;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (handle == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    if (cnt_slot_lookup(&cnt_reg.chandles, (uintptr_t)*handle, &idx) == NULL) {
        cnt_tool_unlock();
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    cnt_slot_release(&cnt_reg.chandles, idx);
    cnt_tool_unlock();
    *handle = IBMSG_T_CVAR_HANDLE_NULL;
    return IBMSG_T_SUCCESS;
}

void cnt_cvar_handle_free_all(void)
{
    uint32_t n = __atomic_load_n(&cnt_reg.chandles.num, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        cnt_slot_hdr_t *h = cnt_slot_at(&cnt_reg.chandles, i);
        if ((h->gen & 1u) != 0) {
            cnt_slot_release(&cnt_reg.chandles, i);
        }
    }
}

int ibmsg_t_cvar_read(ibmsg_t_cvar_handle_t handle, void *buf)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_chandle_t *h = cnt_slot_lookup(&cnt_reg.chandles, (uintptr_t)handle, NULL);
    if (h == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    if (buf == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    /* The slot is never freed; cvar and obj are set before the generation is published, and
       are one allocation's pair if the generation is still the handle's after loading them. */
    const cnt_cvar_t *cv = __atomic_load_n(&h->cvar, __ATOMIC_RELAXED);
    void *obj = __atomic_load_n(&h->obj, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
    if (!cnt_slot_still(h, (uintptr_t)handle)) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    if (cv->d.count <= 1) {
        return cvar_read_value(cv, obj, buf); /* one element: one atomic load, no lock */
    }
    /* Strings and arrays are copied element by element: under the lock every write holds, so
       a read never mixes two writes. */
    cnt_tool_lock();
    int ret = cvar_read_value(cv, obj, buf);
    cnt_tool_unlock();
    return ret;
}

int ibmsg_t_cvar_write(ibmsg_t_cvar_handle_t handle, const void *buf)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    const cnt_chandle_t *h = cnt_slot_lookup(&cnt_reg.chandles, (uintptr_t)handle, NULL);
    int ret;
    if (h == NULL) {
        ret = IBMSG_T_ERR_INVALID_HANDLE;
    } else if (buf == NULL) {
        ret = IBMSG_T_ERR_INVALID;
    } else if (!scope_writable(h->cvar->d.scope)) {
        ret = IBMSG_T_ERR_CVAR_SET_NEVER;
    } else {
        ret = cvar_write_value(h->cvar, h->obj, buf);
    }
    cnt_tool_unlock();
    return ret;
}

/* ---- Setting from info objects ------------------------------------------------------------- */

/* The cvar a key names: exact, then case-insensitively, with or without the IBMSG_ prefix. */
static const cnt_cvar_t *cvar_by_key(const char *key)
{
    size_t plen = sizeof(ENV_PREFIX) - 1;
    const char *bare = key;

    if (strncasecmp(key, ENV_PREFIX, plen) == 0 && key[plen] != '\0') {
        bare = key + plen;
    }
    int n = cnt_table_num(&cnt_reg.cvars);
    for (int i = 0; i < n; i++) {
        const cnt_cvar_t *cv = cnt_table_get(&cnt_reg.cvars, i);
        if (util_str_equal_nocase(cv->d.name, key) || util_str_equal_nocase(cv->d.name, bare)) {
            return cv;
        }
    }
    return NULL;
}

static int cvar_set_from_term(const cnt_cvar_t *cv, ibmsg_info_t info, const char *key,
                              ibmsg_info_type_t type)
{
    if (!scope_writable(cv->d.scope)) {
        return IBMSG_T_ERR_CVAR_SET_NEVER;
    }
    if (type == IBMSG_INFO_TYPE_STRING) {
        int len = 0;
        int ret = ibmsg_info_get_string(info, key, NULL, &len);
        char *s = ret == IBMSG_OK ? malloc((size_t)len) : NULL;
        if (s == NULL) {
            return ret == IBMSG_OK ? IBMSG_T_ERR_MEMORY : ret;
        }
        ret = ibmsg_info_get_string(info, key, s, &len);
        if (ret == IBMSG_OK) {
            ret = cnt_cvar_set_string_internal(cv, s, 1);
        }
        free(s);
        return ret;
    }
    if (cv->d.datatype == IBMSG_T_CHAR || cv->d.count != 1) {
        return IBMSG_T_ERR_INVALID; /* numbers do not set strings or arrays */
    }
    if (type == IBMSG_INFO_TYPE_INT) {
        int64_t v;
        int ret = ibmsg_info_get_int(info, key, &v);
        if (ret != IBMSG_OK) {
            return ret;
        }
        return v < 0 ? cvar_set_integer(cv, v, 0, 1) : cvar_set_integer(cv, 0, (uint64_t)v, 0);
    }
    double d;
    int ret = ibmsg_info_get_double(info, key, &d);
    if (ret != IBMSG_OK) {
        return ret;
    }
    if (cv->d.datatype == IBMSG_T_DOUBLE) {
        return cvar_write_value(cv, NULL, &d);
    }
    /* A double sets an integer only when it is one exactly (NaN fails every comparison). */
    if (!(d >= -9223372036854775808.0 && d < 18446744073709551616.0)) {
        return d == d ? IBMSG_ERR_OUT_OF_RANGE : IBMSG_T_ERR_INVALID;
    }
    if (d < 0) {
        long long ll = (long long)d;
        return (double)ll == d ? cvar_set_integer(cv, ll, 0, 1) : IBMSG_T_ERR_INVALID;
    }
    unsigned long long u = (unsigned long long)d;
    return (double)u == d ? cvar_set_integer(cv, 0, u, 0) : IBMSG_T_ERR_INVALID;
}

int cnt_cvar_set_from_info(ibmsg_info_t info)
{
    char key[IBMSG_INFO_MAX_KEY + 1];
    int nkeys, ret;

    cnt_tool_ensure_builtins();
    ret = ibmsg_info_get_nkeys(info, &nkeys);
    if (ret != IBMSG_OK) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    for (int i = 0; i < nkeys && ret == IBMSG_OK; i++) {
        ibmsg_info_type_t type;
        int len = sizeof(key);
        ret = ibmsg_info_get_nthkey(info, i, key, &len, &type);
        if (ret != IBMSG_OK || type == IBMSG_INFO_TYPE_NONE) {
            continue; /* bare strings name no variable */
        }
        const cnt_cvar_t *cv = cvar_by_key(key);
        if (cv != NULL) {
            ret = cvar_set_from_term(cv, info, key, type);
        }
    }
    cnt_tool_unlock();
    return ret;
}

int ibmsg_t_cvar_set_from_info(ibmsg_info_t info)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    return cnt_cvar_set_from_info(info);
}
