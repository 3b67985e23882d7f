#include "mpit/index_map.h"

#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>

void mpit_index_map_init(mpit_index_map_t *map)
{
    memset(map, 0, sizeof(*map));
}

void mpit_index_map_cleanup(mpit_index_map_t *map)
{
    free(map->entries);
    for (int s = 0; s < MPIT_SIDE_LAST; s++) {
        free(map->to_view[s]);
        free(map->num_view[s]);
    }
    mpit_index_map_init(map);
}

/* Grow *array (of elem bytes each) to hold at least need elements. */
static int index_map_reserve(void **array, int *cap, int need, size_t elem)
{
    if (need <= *cap) {
        return IBMSG_OK;
    }
    int new_cap = *cap < 64 ? 64 : *cap;
    while (new_cap < need) {
        if (new_cap > (1 << 29)) {
            return IBMSG_ERR_NO_MEMORY;
        }
        new_cap *= 2;
    }
    void *p = realloc(*array, (size_t)new_cap * elem);
    if (p == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    *array = p;
    *cap = new_cap;
    return IBMSG_OK;
}

/* Every native item shown as itself. */
static int index_map_self(void *arg, int native, int objs[], int cap)
{
    (void)arg;
    (void)native;
    (void)cap;
    objs[0] = MPIT_OBJ_SELF;
    return 1;
}

int mpit_index_map_sync(mpit_index_map_t *map, mpit_side_t side, int native_num)
{
    return mpit_index_map_sync_expand(map, side, native_num, index_map_self, NULL, 1);
}

int mpit_index_map_sync_expand(mpit_index_map_t *map, mpit_side_t side, int native_num,
                               mpit_index_expand_cb_t expand, void *arg, int cap)
{
    if ((int)side < 0 || side >= MPIT_SIDE_LAST || native_num < 0 || expand == NULL || cap < 1) {
        return IBMSG_ERR_INVALID;
    }
    if (native_num <= map->seen[side]) {
        return IBMSG_OK;
    }
    int cap_side = map->cap_side[side];
    int rc = index_map_reserve((void **)&map->to_view[side], &cap_side, native_num, sizeof(int));
    if (rc == IBMSG_OK) {
        cap_side = map->cap_side[side];
        rc = index_map_reserve((void **)&map->num_view[side], &cap_side, native_num, sizeof(int));
    }
    if (rc != IBMSG_OK) {
        return rc;
    }
    map->cap_side[side] = cap_side;
    int *objs = malloc(sizeof(int) * (size_t)cap);
    if (objs == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    for (int native = map->seen[side]; native < native_num; native++) {
        int n = expand(arg, native, objs, cap);
        if (n < 0 || n > cap) {
            rc = n < 0 ? n : IBMSG_ERR_INVALID;
            break;
        }
        if (map->num > INT32_MAX - n) {
            rc = IBMSG_ERR_NO_MEMORY;
            break;
        }
        /* Reserve before writing, so a failure leaves this native unsynced. */
        rc = index_map_reserve((void **)&map->entries, &map->cap, map->num + n,
                               sizeof(map->entries[0]));
        if (rc != IBMSG_OK) {
            break;
        }
        map->to_view[side][native] = n > 0 ? map->num : -1;
        map->num_view[side][native] = n;
        for (int i = 0; i < n; i++) {
            map->entries[map->num].side = side;
            map->entries[map->num].native = native;
            map->entries[map->num].obj = objs[i];
            map->num++;
        }
        map->seen[side] = native + 1;
    }
    free(objs);
    return rc;
}

int mpit_index_map_lookup(const mpit_index_map_t *map, int view, mpit_side_t *side, int *native)
{
    if (view < 0 || view >= map->num) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    *side = (mpit_side_t)map->entries[view].side;
    *native = map->entries[view].native;
    return IBMSG_OK;
}

int mpit_index_map_obj(const mpit_index_map_t *map, int view)
{
    if (view < 0 || view >= map->num) {
        return -1;
    }
    return map->entries[view].obj;
}

int mpit_index_map_to_view(const mpit_index_map_t *map, mpit_side_t side, int native)
{
    int first, num;
    if (mpit_index_map_range(map, side, native, &first, &num) != IBMSG_OK || num != 1 ||
        map->entries[first].obj != MPIT_OBJ_SELF) {
        return -1;
    }
    return first;
}

int mpit_index_map_range(const mpit_index_map_t *map, mpit_side_t side, int native, int *first,
                         int *num)
{
    if ((int)side < 0 || side >= MPIT_SIDE_LAST || native < 0 || native >= map->seen[side]) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    *first = map->to_view[side][native];
    *num = map->num_view[side][native];
    return IBMSG_OK;
}
