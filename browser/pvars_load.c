/*
 * Loading what the tool interface describes: every control and performance variable (with its
 * enumeration), every category with its members, and the roots, into a pvars_state_t.
 */
#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include <stdbool.h>
#include <stdlib.h>

#include "browser/pvars.h"

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

int pvars_load(pvars_state_t *st)
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

void pvars_cleanup(pvars_state_t *st)
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
