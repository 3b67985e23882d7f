/*
 * Performance variables: registration and the descriptive MPI_T calls (get_num, get_info,
 * get_index). Descriptions are immutable once published, so get_info takes no lock.
 */
#include "counters/registry/tool_internal.h"

#include "util/log.h"
#include "util/string_out.h"

#include <stdlib.h>
#include <string.h>

#define PVAR_FLAGS_ALL (CNT_PVAR_READONLY | CNT_PVAR_CONTINUOUS | CNT_PVAR_ATOMIC)

static int str_same(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

static int class_valid(int var_class)
{
    return var_class >= IBMSG_T_PVAR_CLASS_STATE && var_class <= IBMSG_T_PVAR_CLASS_GENERIC;
}

/* Which datatypes each class may have: counters count, percentages are fractions. */
static int class_datatype_valid(int var_class, ibmsg_t_datatype_t dt)
{
    switch (var_class) {
    case IBMSG_T_PVAR_CLASS_COUNTER:
        return cnt_datatype_is_unsigned(dt);
    case IBMSG_T_PVAR_CLASS_PERCENTAGE:
        return dt == IBMSG_T_DOUBLE;
    case IBMSG_T_PVAR_CLASS_HIGHWATERMARK:
    case IBMSG_T_PVAR_CLASS_LOWWATERMARK:
    case IBMSG_T_PVAR_CLASS_AGGREGATE:
    case IBMSG_T_PVAR_CLASS_TIMER:
        return dt != IBMSG_T_CHAR;
    default:
        return 1;
    }
}

static int pvar_desc_valid(const cnt_pvar_desc_t *d)
{
    if (d->name == NULL || d->name[0] == '\0' || !class_valid(d->var_class) ||
        cnt_datatype_size(d->datatype) == 0 || !class_datatype_valid(d->var_class, d->datatype) ||
        d->verbosity < IBMSG_T_VERBOSITY_USER_BASIC ||
        d->verbosity > IBMSG_T_VERBOSITY_MPIDEV_ALL || d->bind < IBMSG_T_BIND_NO_OBJECT ||
        d->bind >= IBMSG_T_BIND_LAST || (d->flags & ~(unsigned)PVAR_FLAGS_ALL) != 0 ||
        (d->read == NULL && d->ctx == NULL)) {
        return 0;
    }
    if (d->enumtype != IBMSG_T_ENUM_NULL &&
        (d->datatype != IBMSG_T_INT || cnt_enum_lookup(d->enumtype) == NULL)) {
        return 0;
    }
    return 1;
}

static int pvar_same(const cnt_pvar_t *pv, const cnt_pvar_desc_t *d)
{
    return pv->d.datatype == d->datatype && pv->d.enumtype == d->enumtype &&
           pv->d.verbosity == d->verbosity && pv->d.bind == d->bind && pv->d.flags == d->flags &&
           str_same(pv->d.category, d->category) && str_same(pv->d.desc, d->desc);
}

int cnt_pvar_register_locked(const cnt_pvar_desc_t *desc, int *pvar_index)
{
    int cat = -1, index, ret;

    if (desc == NULL || pvar_index == NULL || !pvar_desc_valid(desc)) {
        return IBMSG_ERR_INVALID;
    }
    if (desc->category != NULL &&
        (cat = cnt_name_map_find(&cnt_reg.cat_names, desc->category, 0)) < 0) {
        return IBMSG_T_ERR_INVALID_NAME;
    }
    index = cnt_name_map_find(&cnt_reg.pvar_names, desc->name, desc->var_class);
    if (index >= 0) {
        /* A second context registering the same variable shares the first one's index. */
        if (!pvar_same(cnt_table_get(&cnt_reg.pvars, index), desc)) {
            return IBMSG_ERR_EXISTS;
        }
        *pvar_index = index;
        return IBMSG_OK;
    }

    cnt_pvar_t *pv = calloc(1, sizeof(*pv));
    if (pv == NULL) {
        return IBMSG_T_ERR_MEMORY;
    }
    pv->d = *desc;
    pv->d.name = strdup(desc->name);
    pv->d.category = desc->category != NULL ? strdup(desc->category) : NULL;
    pv->d.desc = desc->desc != NULL ? strdup(desc->desc) : NULL;
    pv->elsize = cnt_datatype_size(desc->datatype);
    if (pv->d.name == NULL || (desc->category != NULL && pv->d.category == NULL) ||
        (desc->desc != NULL && pv->d.desc == NULL)) {
        ret = IBMSG_T_ERR_MEMORY;
        goto err_free_pvar;
    }
    pv->index = cnt_table_num(&cnt_reg.pvars);
    ret = cnt_name_map_insert(&cnt_reg.pvar_names, pv->d.name, desc->var_class, pv->index);
    if (ret != IBMSG_OK) {
        goto err_free_pvar;
    }
    ret = cnt_table_append(&cnt_reg.pvars, pv, &index);
    if (ret != IBMSG_OK) {
        goto err_free_pvar; /* only past 1M pvars; the stale name entry is then unreachable */
    }
    if (cat >= 0 && cnt_category_add_pvar_locked(cat, index) != IBMSG_OK) {
        util_error("pvar %s: cannot join category %s", pv->d.name, pv->d.category);
    }
    *pvar_index = index;
    return IBMSG_OK;

err_free_pvar:
    free((char *)pv->d.name);
    free((char *)pv->d.category);
    free((char *)pv->d.desc);
    free(pv);
    return ret;
}

int cnt_pvar_register(const cnt_pvar_desc_t *desc, int *pvar_index)
{
    cnt_tool_ensure_builtins();
    cnt_tool_lock();
    int ret = cnt_pvar_register_locked(desc, pvar_index);
    cnt_tool_unlock();
    return ret;
}

int cnt_pvar_is_started(int pvar_index)
{
    const cnt_pvar_t *pv = cnt_table_get(&cnt_reg.pvars, pvar_index);
    return pv != NULL && __atomic_load_n(&pv->started_handles, __ATOMIC_RELAXED) > 0;
}

int ibmsg_t_pvar_get_num(int *num_pvar)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (num_pvar == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *num_pvar = cnt_table_num(&cnt_reg.pvars);
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                          ibmsg_t_datatype_t *datatype, ibmsg_t_enum_t *enumtype, char *desc,
                          int *desc_len, int *bind, int *readonly, int *continuous, int *atomic)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_pvar_t *pv = cnt_table_get(&cnt_reg.pvars, pvar_index);
    if (pv == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    util_string_out(pv->d.name, name, name_len);
    util_string_out(pv->d.desc, desc, desc_len);
    if (verbosity != NULL) {
        *verbosity = pv->d.verbosity;
    }
    if (var_class != NULL) {
        *var_class = pv->d.var_class;
    }
    if (datatype != NULL) {
        *datatype = pv->d.datatype;
    }
    if (enumtype != NULL) {
        *enumtype = pv->d.enumtype;
    }
    if (bind != NULL) {
        *bind = pv->d.bind;
    }
    if (readonly != NULL) {
        *readonly = (pv->d.flags & CNT_PVAR_READONLY) != 0;
    }
    if (continuous != NULL) {
        *continuous = (pv->d.flags & CNT_PVAR_CONTINUOUS) != 0;
    }
    if (atomic != NULL) {
        *atomic = (pv->d.flags & CNT_PVAR_ATOMIC) != 0;
    }
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (name == NULL || pvar_index == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    if (!class_valid(var_class)) {
        return IBMSG_T_ERR_INVALID_NAME;
    }
    cnt_tool_lock();
    int index = cnt_name_map_find(&cnt_reg.pvar_names, name, var_class);
    if (index >= cnt_table_num(&cnt_reg.pvars)) {
        index = -1;
    }
    cnt_tool_unlock();
    if (index < 0) {
        return IBMSG_T_ERR_INVALID_NAME;
    }
    *pvar_index = index;
    return IBMSG_T_SUCCESS;
}
