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

int mpit_index_map_sync(mpit_index_map_t *map, mpit_side_t side, int native_num)
{
    if ((int)side < 0 || side >= MPIT_SIDE_LAST || native_num < 0) {
        return IBMSG_ERR_INVALID;
    }
    int add = native_num - map->seen[side];
    if (add <= 0) {
        return IBMSG_OK;
    }
    if (map->num > INT32_MAX - add) {
        return IBMSG_ERR_NO_MEMORY;
    }
    /* Reserve both arrays first, so a failure leaves the map unchanged. */
    int rc = index_map_reserve((void **)&map->entries, &map->cap, map->num + add,
                               sizeof(map->entries[0]));
    if (rc == IBMSG_OK) {
        rc = index_map_reserve((void **)&map->to_view[side], &map->cap_side[side], native_num,
                               sizeof(int));
    }
    if (rc != IBMSG_OK) {
        return rc;
    }
    for (int native = map->seen[side]; native < native_num; native++) {
        map->entries[map->num].side = side;
        map->entries[map->num].native = native;
        map->to_view[side][native] = map->num;
        map->num++;
    }
    map->seen[side] = native_num;
    return IBMSG_OK;
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

int mpit_index_map_to_view(const mpit_index_map_t *map, mpit_side_t side, int native)
{
    if ((int)side < 0 || side >= MPIT_SIDE_LAST || native < 0 || native >= map->seen[side]) {
        return -1;
    }
    return map->to_view[side][native];
}
