/*
 * Categories: a DAG over variables and categories. Registration keeps it acyclic; members keep
 * the order they joined; every change bumps the update number (category_changed). Queries take
 * the registry lock because member lists grow under it.
 */
#include "counters/registry/tool_internal.h"

#include "util/log.h"
#include "util/string_out.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

void cnt_category_changed_bump(void)
{
    int v = __atomic_load_n(&cnt_reg.cat_changed, __ATOMIC_RELAXED);
    if (v < INT_MAX) {
        __atomic_store_n(&cnt_reg.cat_changed, v + 1, __ATOMIC_RELEASE);
    }
}

static cnt_category_t *cat_get(int index)
{
    return cnt_table_get(&cnt_reg.cats, index);
}

/* Whether target is below from (or is from), following subcategories. */
static int cat_reaches(const cnt_category_t *from, int target)
{
    if (from->index == target) {
        return 1;
    }
    for (int i = 0; i < from->subcats.num; i++) {
        if (cat_reaches(cat_get(from->subcats.v[i]), target)) {
            return 1;
        }
    }
    return 0;
}

static int cat_add_category(cnt_category_t *parent, cnt_category_t *child)
{
    if (cnt_idx_list_contains(&parent->subcats, child->index)) {
        return IBMSG_OK;
    }
    if (cat_reaches(child, parent->index)) {
        return IBMSG_T_ERR_INVALID; /* the edge would close a cycle */
    }
    if (cnt_idx_list_push(&parent->subcats, child->index) != IBMSG_OK) {
        return IBMSG_T_ERR_MEMORY;
    }
    if (cnt_idx_list_push(&child->parents, parent->index) != IBMSG_OK) {
        parent->subcats.num--;
        return IBMSG_T_ERR_MEMORY;
    }
    cnt_category_changed_bump();
    return IBMSG_OK;
}

int cnt_category_register_locked(const char *name, const char *desc, const char *parent,
                                 int *cat_index)
{
    cnt_category_t *p = NULL;
    int index, ret;

    if (name == NULL || name[0] == '\0' || cat_index == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (parent != NULL) {
        int pi = cnt_name_map_find(&cnt_reg.cat_names, parent, 0);
        if (pi < 0) {
            return IBMSG_T_ERR_INVALID_NAME;
        }
        p = cat_get(pi);
    }
    index = cnt_name_map_find(&cnt_reg.cat_names, name, 0);
    if (index >= 0) {
        ret = p != NULL ? cat_add_category(p, cat_get(index)) : IBMSG_OK;
        if (ret == IBMSG_OK) {
            *cat_index = index;
        }
        return ret;
    }

    cnt_category_t *c = calloc(1, sizeof(*c));
    if (c == NULL || (c->name = strdup(name)) == NULL ||
        (desc != NULL && (c->desc = strdup(desc)) == NULL)) {
        ret = IBMSG_T_ERR_MEMORY;
        goto err_free_cat;
    }
    ret = cnt_table_append(&cnt_reg.cats, c, &index);
    if (ret != IBMSG_OK) {
        goto err_free_cat;
    }
    if (cnt_name_map_insert(&cnt_reg.cat_names, c->name, 0, index) != IBMSG_OK) {
        /* The category exists (its index is public now) but cannot be found by name. */
        util_error("category %s: out of memory for its name", c->name);
    }
    c->index = index;
    cnt_category_changed_bump();
    if (p != NULL) {
        ret = cat_add_category(p, c);
        if (ret != IBMSG_OK) {
            return ret;
        }
    }
    *cat_index = index;
    return IBMSG_OK;

err_free_cat:
    if (c != NULL) {
        free(c->name);
        free(c->desc);
        free(c);
    }
    return ret;
}

int cnt_category_register(const char *name, const char *desc, const char *parent, int *cat_index)
{
    cnt_tool_ensure_builtins();
    cnt_tool_lock();
    int ret = cnt_category_register_locked(name, desc, parent, cat_index);
    cnt_tool_unlock();
    return ret;
}

int cnt_category_add_category(int parent_index, int child_index)
{
    cnt_tool_ensure_builtins();
    cnt_tool_lock();
    cnt_category_t *p = cat_get(parent_index), *c = cat_get(child_index);
    int ret = (p == NULL || c == NULL) ? IBMSG_T_ERR_INVALID_INDEX : cat_add_category(p, c);
    cnt_tool_unlock();
    return ret;
}

/* Adds an item of kind (IBMSG_T_KIND_CVAR, _PVAR or _EVENT) to a category's member list. */
static int cat_add_var(int cat_index, int kind, int var_index, cnt_idx_list_t *var_cats)
{
    cnt_category_t *c = cat_get(cat_index);
    if (c == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    cnt_idx_list_t *members = kind == IBMSG_T_KIND_PVAR    ? &c->pvars
                              : kind == IBMSG_T_KIND_EVENT ? &c->events
                                                           : &c->cvars;
    if (cnt_idx_list_contains(members, var_index)) {
        return IBMSG_OK;
    }
    if (cnt_idx_list_push(members, var_index) != IBMSG_OK) {
        return IBMSG_T_ERR_MEMORY;
    }
    if (cnt_idx_list_push(var_cats, cat_index) != IBMSG_OK) {
        members->num--;
        return IBMSG_T_ERR_MEMORY;
    }
    cnt_category_changed_bump();
    return IBMSG_OK;
}

int cnt_category_add_pvar_locked(int cat_index, int pvar_index)
{
    cnt_pvar_t *pv = cnt_table_get(&cnt_reg.pvars, pvar_index);
    if (pv == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    return cat_add_var(cat_index, IBMSG_T_KIND_PVAR, pvar_index, &pv->cats);
}

int cnt_category_add_cvar_locked(int cat_index, int cvar_index)
{
    cnt_cvar_t *cv = cnt_table_get(&cnt_reg.cvars, cvar_index);
    if (cv == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    return cat_add_var(cat_index, IBMSG_T_KIND_CVAR, cvar_index, &cv->cats);
}

int cnt_category_add_event_locked(int cat_index, int event_index)
{
    cnt_event_type_t *t = cnt_table_get(&cnt_reg.events, event_index);
    if (t == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    return cat_add_var(cat_index, IBMSG_T_KIND_EVENT, event_index, &t->cats);
}

int cnt_category_add_pvar(int cat_index, int pvar_index)
{
    cnt_tool_ensure_builtins();
    cnt_tool_lock();
    int ret = cnt_category_add_pvar_locked(cat_index, pvar_index);
    cnt_tool_unlock();
    return ret;
}

int cnt_category_add_cvar(int cat_index, int cvar_index)
{
    cnt_tool_ensure_builtins();
    cnt_tool_lock();
    int ret = cnt_category_add_cvar_locked(cat_index, cvar_index);
    cnt_tool_unlock();
    return ret;
}

/* ---- MPI_T category queries ---------------------------------------------------------------- */

int ibmsg_t_category_get_num(int *num_cat)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (num_cat == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *num_cat = cnt_table_num(&cnt_reg.cats);
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                              int *num_cvars, int *num_pvars, int *num_categories)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    const cnt_category_t *c = cat_get(cat_index);
    if (c == NULL) {
        cnt_tool_unlock();
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    util_string_out(c->name, name, name_len);
    util_string_out(c->desc, desc, desc_len);
    if (num_cvars != NULL) {
        *num_cvars = c->cvars.num;
    }
    if (num_pvars != NULL) {
        *num_pvars = c->pvars.num;
    }
    if (num_categories != NULL) {
        *num_categories = c->subcats.num;
    }
    cnt_tool_unlock();
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_category_get_num_events(int cat_index, int *num_events)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    const cnt_category_t *c = cat_get(cat_index);
    int ret = c == NULL            ? IBMSG_T_ERR_INVALID_INDEX
              : num_events == NULL ? IBMSG_T_ERR_INVALID
                                   : IBMSG_T_SUCCESS;
    if (ret == IBMSG_T_SUCCESS) {
        *num_events = c->events.num;
    }
    cnt_tool_unlock();
    return ret;
}

int ibmsg_t_category_get_index(const char *name, int *cat_index)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (name == NULL || cat_index == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    int index = cnt_name_map_find(&cnt_reg.cat_names, name, 0);
    if (index >= cnt_table_num(&cnt_reg.cats)) {
        index = -1;
    }
    cnt_tool_unlock();
    if (index < 0) {
        return IBMSG_T_ERR_INVALID_NAME;
    }
    *cat_index = index;
    return IBMSG_T_SUCCESS;
}

/* Which member list of a category: 0 cvars, 1 pvars, 2 subcategories, 3 events. */
static int cat_get_members(int cat_index, int which, int len, int indices[])
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (len < 0 || (len > 0 && indices == NULL)) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    const cnt_category_t *c = cat_get(cat_index);
    if (c == NULL) {
        cnt_tool_unlock();
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    const cnt_idx_list_t *l = which == 0   ? &c->cvars
                              : which == 1 ? &c->pvars
                              : which == 2 ? &c->subcats
                                           : &c->events;
    cnt_idx_list_copy(l, len, indices);
    cnt_tool_unlock();
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_category_get_cvars(int cat_index, int len, int indices[])
{
    return cat_get_members(cat_index, 0, len, indices);
}

int ibmsg_t_category_get_pvars(int cat_index, int len, int indices[])
{
    return cat_get_members(cat_index, 1, len, indices);
}

int ibmsg_t_category_get_categories(int cat_index, int len, int indices[])
{
    return cat_get_members(cat_index, 2, len, indices);
}

int ibmsg_t_category_get_events(int cat_index, int len, int indices[])
{
    return cat_get_members(cat_index, 3, len, indices);
}

int ibmsg_t_category_changed(int *update_number)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (update_number == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *update_number = __atomic_load_n(&cnt_reg.cat_changed, __ATOMIC_ACQUIRE);
    return IBMSG_T_SUCCESS;
}

/* ---- Extensions: roots, containing, flatten ------------------------------------------------- */

/* Writes list[0..n) to (len, out) and n to *num; frees the list. */
static int out_list(cnt_idx_list_t *l, int len, int out[], int *num)
{
    cnt_idx_list_copy(l, len, out);
    if (num != NULL) {
        *num = l->num;
    }
    free(l->v);
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_category_get_roots(int len, int indices[], int *num)
{
    cnt_idx_list_t roots = {0};

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (len < 0 || (len > 0 && indices == NULL)) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    int n = cnt_table_num(&cnt_reg.cats);
    for (int i = 0; i < n; i++) {
        if (cat_get(i)->parents.num == 0 && cnt_idx_list_push(&roots, i) != IBMSG_OK) {
            cnt_tool_unlock();
            free(roots.v);
            return IBMSG_T_ERR_MEMORY;
        }
    }
    cnt_tool_unlock();
    return out_list(&roots, len, indices, num);
}

int ibmsg_t_category_get_containing(int kind, int index, int transitive, int len, int indices[],
                                    int *num)
{
    const cnt_idx_list_t *direct;
    cnt_idx_list_t found = {0};
    unsigned char *seen = NULL;
    int ret = IBMSG_T_SUCCESS;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (kind != IBMSG_T_KIND_CVAR && kind != IBMSG_T_KIND_PVAR && kind != IBMSG_T_KIND_CATEGORY &&
        kind != IBMSG_T_KIND_EVENT) {
        return IBMSG_T_ERR_INVALID;
    }
    if (len < 0 || (len > 0 && indices == NULL)) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    if (kind == IBMSG_T_KIND_CVAR) {
        const cnt_cvar_t *cv = cnt_table_get(&cnt_reg.cvars, index);
        direct = cv != NULL ? &cv->cats : NULL;
    } else if (kind == IBMSG_T_KIND_PVAR) {
        const cnt_pvar_t *pv = cnt_table_get(&cnt_reg.pvars, index);
        direct = pv != NULL ? &pv->cats : NULL;
    } else if (kind == IBMSG_T_KIND_EVENT) {
        const cnt_event_type_t *t = cnt_table_get(&cnt_reg.events, index);
        direct = t != NULL ? &t->cats : NULL;
    } else {
        const cnt_category_t *c = cat_get(index);
        direct = c != NULL ? &c->parents : NULL;
    }
    if (direct == NULL) {
        ret = IBMSG_T_ERR_INVALID_INDEX;
        goto out_unlock;
    }
    seen = calloc((size_t)cnt_table_num(&cnt_reg.cats) + 1, 1);
    if (seen == NULL) {
        ret = IBMSG_T_ERR_MEMORY;
        goto out_unlock;
    }
    /* Breadth first: the direct parents, then theirs, each category once, nearest first. */
    for (int i = 0; i < direct->num; i++) {
        if (!seen[direct->v[i]]) {
            seen[direct->v[i]] = 1;
            if (cnt_idx_list_push(&found, direct->v[i]) != IBMSG_OK) {
                ret = IBMSG_T_ERR_MEMORY;
                goto out_unlock;
            }
        }
    }
    for (int head = 0; transitive && head < found.num; head++) {
        const cnt_idx_list_t *up = &cat_get(found.v[head])->parents;
        for (int i = 0; i < up->num; i++) {
            if (!seen[up->v[i]]) {
                seen[up->v[i]] = 1;
                if (cnt_idx_list_push(&found, up->v[i]) != IBMSG_OK) {
                    ret = IBMSG_T_ERR_MEMORY;
                    goto out_unlock;
                }
            }
        }
    }
out_unlock:
    cnt_tool_unlock();
    free(seen);
    if (ret != IBMSG_T_SUCCESS) {
        free(found.v);
        return ret;
    }
    return out_list(&found, len, indices, num);
}

typedef struct flatten_state {
    int kind;
    unsigned char *seen_var;
    unsigned char *seen_cat;
    cnt_idx_list_t out;
} flatten_state_t;

/* Depth first: a category's own variables in join order, then its subcategories in order. */
static int flatten_walk(flatten_state_t *st, const cnt_category_t *c)
{
    const cnt_idx_list_t *vars = st->kind == IBMSG_T_KIND_PVAR ? &c->pvars : &c->cvars;

    st->seen_cat[c->index] = 1;
    for (int i = 0; i < vars->num; i++) {
        if (!st->seen_var[vars->v[i]]) {
            st->seen_var[vars->v[i]] = 1;
            if (cnt_idx_list_push(&st->out, vars->v[i]) != IBMSG_OK) {
                return IBMSG_T_ERR_MEMORY;
            }
        }
    }
    for (int i = 0; i < c->subcats.num; i++) {
        /* A category reached again through another path adds nothing new. */
        if (!st->seen_cat[c->subcats.v[i]]) {
            int ret = flatten_walk(st, cat_get(c->subcats.v[i]));
            if (ret != IBMSG_OK) {
                return ret;
            }
        }
    }
    return IBMSG_OK;
}

int ibmsg_t_category_flatten(int cat_index, int kind, int len, int indices[], int *num)
{
    flatten_state_t st = {.kind = kind};
    int ret;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if ((kind != IBMSG_T_KIND_CVAR && kind != IBMSG_T_KIND_PVAR) || len < 0 ||
        (len > 0 && indices == NULL)) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    const cnt_category_t *c = cat_get(cat_index);
    if (c == NULL) {
        cnt_tool_unlock();
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    int nvars = cnt_table_num(kind == IBMSG_T_KIND_PVAR ? &cnt_reg.pvars : &cnt_reg.cvars);
    st.seen_var = calloc((size_t)nvars + 1, 1);
    st.seen_cat = calloc((size_t)cnt_table_num(&cnt_reg.cats) + 1, 1);
    ret = (st.seen_var == NULL || st.seen_cat == NULL) ? IBMSG_T_ERR_MEMORY : flatten_walk(&st, c);
    cnt_tool_unlock();
    free(st.seen_var);
    free(st.seen_cat);
    if (ret != IBMSG_OK) {
        free(st.out.v);
        return ret;
    }
    return out_list(&st.out, len, indices, num);
}
