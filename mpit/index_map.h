/*
 * The merged index space of the MPI_T layer: view index -> (side, native index).
 *
 * Two sides (the MPI library's MPI_T and ibmsg's tool API) each number their cvars, pvars and
 * categories 0..N-1 and only ever append. The view gives every native index a view index in order
 * of first appearance and never renumbers, so indices a tool saw before MPI_Init (when MPICH adds
 * pvars) still name the same variables after it. One map per kind (cvar, pvar, category).
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
} mpit_index_entry_t;

typedef struct mpit_index_map {
    mpit_index_entry_t *entries;  /* view index -> (side, native) */
    int num;                      /* view indices given out */
    int cap;                      /* capacity of entries */
    int *to_view[MPIT_SIDE_LAST]; /* native index -> view index, per side */
    int seen[MPIT_SIDE_LAST];     /* native indices mapped so far, per side */
    int cap_side[MPIT_SIDE_LAST]; /* capacity of to_view[side] */
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
 * The side and native index of view index; IBMSG_T_ERR_INVALID_INDEX when it is out of range.
 */
int mpit_index_map_lookup(const mpit_index_map_t *map, int view, mpit_side_t *side, int *native);

/** The view index of (side, native), or -1 when that native index has not been synced yet. */
int mpit_index_map_to_view(const mpit_index_map_t *map, mpit_side_t side, int native);

#ifdef __cplusplus
}
#endif

#endif
