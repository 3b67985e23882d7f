/*
 * The merged index space of the MPI_T layer: view index -> (side, native index).
 *
 * Two sides (the MPI library's MPI_T and ibmsg's tool API) each number their cvars, pvars and
 * categories 0..N-1 and only ever append. The view gives every native index a view index in order
 * of first appearance and never renumbers, so indices a tool saw before MPI_Init (when MPICH adds
 * pvars) still name the same variables after it. One map per kind (cvar, pvar, category).
 *
 * A native item may also be shown as several view items, one per object (an ibmsg variable bound
 * to a NIC port becomes one variable per port), or as none (hidden): the expansion is decided
 * once, when the native index is first synced, and its view indices are consecutive.
 *
 * Pure data structure, no locking: the layer calls it under its lock.
 */
#ifndef IBMSG_MPIT_INDEX_MAP_H
#define IBMSG_MPIT_INDEX_MAP_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum mpit_side {
    MPIT_SIDE_MPI = 0,   /* the MPI library's own MPI_T */
    MPIT_SIDE_IBMSG = 1, /* ibmsg's tool API */
    MPIT_SIDE_LAST,
} mpit_side_t;

typedef struct mpit_index_entry {
    int32_t side;   /* mpit_side_t */
    int32_t native; /* index on that side */
    int32_t obj;    /* MPIT_OBJ_SELF, or which object of an expanded native item */
} mpit_index_entry_t;

/* The entry shows the native item itself (not one object of it). */
#define MPIT_OBJ_SELF (-1)

/**
 * How a native item is shown: write up to cap object numbers to objs (MPIT_OBJ_SELF for the item
 * itself) and return how many view items it gets (0: hidden), or a negative IBMSG status.
 */
typedef int (*mpit_index_expand_cb_t)(void *arg, int native, int objs[], int cap);

typedef struct mpit_index_map {
    mpit_index_entry_t *entries;   /* view index -> (side, native) */
    int num;                       /* view indices given out */
    int cap;                       /* capacity of entries */
    int *to_view[MPIT_SIDE_LAST];  /* native index -> its first view index, per side */
    int *num_view[MPIT_SIDE_LAST]; /* native index -> how many view indices (0: hidden) */
    int seen[MPIT_SIDE_LAST];      /* native indices mapped so far, per side */
    int cap_side[MPIT_SIDE_LAST];  /* capacity of to_view[side] */
} mpit_index_map_t;

/** An empty map. */
void mpit_index_map_init(mpit_index_map_t *map);
/** Free what the map holds; it is empty afterwards. */
void mpit_index_map_cleanup(mpit_index_map_t *map);

/**
 * Tell the map that side now has native_num items: native indices not seen yet get the next view
 * indices, in native order. A count below what was seen (a side that shrank or is finalized) is
 * ignored: views never lose indices. Returns IBMSG_OK, IBMSG_ERR_INVALID (bad side or negative
 * count) or IBMSG_ERR_NO_MEMORY (nothing added then).
 */
int mpit_index_map_sync(mpit_index_map_t *map, mpit_side_t side, int native_num);

/**
 * As mpit_index_map_sync, with each new native item shown as expand says (objs holds cap
 * entries). An error of expand is returned; the natives before the failing one stay synced.
 */
int mpit_index_map_sync_expand(mpit_index_map_t *map, mpit_side_t side, int native_num,
                               mpit_index_expand_cb_t expand, void *arg, int cap);

/**
 * The side and native index of view index; IBMSG_T_ERR_INVALID_INDEX when it is out of range.
 */
int mpit_index_map_lookup(const mpit_index_map_t *map, int view, mpit_side_t *side, int *native);

/** The object number of view index (MPIT_OBJ_SELF for a whole item), -1 when out of range. */
int mpit_index_map_obj(const mpit_index_map_t *map, int view);

/**
 * The view index showing (side, native) itself, or -1 when that native index has not been synced
 * yet, is hidden, or is shown per object.
 */
int mpit_index_map_to_view(const mpit_index_map_t *map, mpit_side_t side, int native);

/**
 * The view indices of (side, native): *first, *num (0 when hidden). IBMSG_T_ERR_INVALID_INDEX
 * when that native index has not been synced yet.
 */
int mpit_index_map_range(const mpit_index_map_t *map, mpit_side_t side, int native, int *first,
                         int *num);

#ifdef __cplusplus
}
#endif

#endif
