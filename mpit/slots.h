/*
 * Handle tables of the MPI_T layer: sessions, pvar handles and cvar handles are entries of a
 * table, and what a tool holds is an encoded (generation, slot) number, never a pointer. A stale
 * or garbage handle therefore fails a bounds and generation check instead of being dereferenced:
 * bad input gives MPI_T_ERR_INVALID_HANDLE, never a crash.
 *
 * Entries live in chunks that are never freed or moved, so lookup takes no lock (hot path of
 * pvar_read); alloc and free are called under the layer's lock. An entry struct begins with an
 * mpit_slot_t. Values have bit 63 set and are not -1, so they are never NULL, 1, -1 or a user
 * space address: never equal to the MPI libraries' null and ALL_HANDLES constants.
 */
#ifndef IBMSG_MPIT_SLOTS_H
#define IBMSG_MPIT_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "util/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

#define MPIT_SLOTS_CHUNK_SHIFT 8
#define MPIT_SLOTS_CHUNK       (1u << MPIT_SLOTS_CHUNK_SHIFT) /* entries per chunk */
#define MPIT_SLOTS_MAX_CHUNKS  1024u                          /* 262144 live entries at most */
#define MPIT_SLOTS_TAG         (1ull << 63)

/* Header of every entry. gen is odd while the entry is live, even while free. */
typedef struct mpit_slot {
    uint32_t gen;       /* read with acquire by lookups */
    uint32_t next_free; /* free list link (slot number + 1; 0 ends the list) */
    uint32_t slot;      /* this entry's slot number */
    uint32_t unused;
} mpit_slot_t;

typedef struct mpit_slots {
    size_t entry_size;                   /* bytes per entry, header included */
    char *chunks[MPIT_SLOTS_MAX_CHUNKS]; /* published with release */
    uint32_t num_slots;                  /* slots ever created */
    uint32_t free_head;                  /* slot number + 1 of the first free one, or 0 */
    uint32_t live;                       /* entries allocated now */
} mpit_slots_t;

/** An empty table of entries of entry_size bytes (>= sizeof(mpit_slot_t)). */
void mpit_slots_init(mpit_slots_t *t, size_t entry_size);
/** Free the chunks. No entry may be used afterwards. */
void mpit_slots_cleanup(mpit_slots_t *t);

/**
 * Allocate a zeroed, live entry. *entry is set to it and *value to the handle value to give out.
 * Returns IBMSG_OK, or IBMSG_T_ERR_OUT_OF_HANDLES / IBMSG_T_ERR_MEMORY. Caller holds the lock.
 */
int mpit_slots_alloc(mpit_slots_t *t, void **entry, uint64_t *value);

/** Free a live entry: its value stops being valid at once. Caller holds the lock. */
void mpit_slots_free(mpit_slots_t *t, void *entry);

/** The value that names a live entry (for example to compare with what a tool passed). */
uint64_t mpit_slots_value(const void *entry);

/** The live entry a value names, or NULL. Lock-free; any 64-bit value is safe to pass. */
static UTIL_ALWAYS_INLINE void *mpit_slots_get(const mpit_slots_t *t, uint64_t value)
{
    uint32_t slot = (uint32_t)value - 2u;
    uint32_t gen = (uint32_t)(value >> 32) & 0x7fffffffu;
    if (util_unlikely((value & MPIT_SLOTS_TAG) == 0 ||
                      slot >= (MPIT_SLOTS_CHUNK * MPIT_SLOTS_MAX_CHUNKS) || (gen & 1u) == 0)) {
        return NULL;
    }
    char *chunk = __atomic_load_n(&t->chunks[slot >> MPIT_SLOTS_CHUNK_SHIFT], __ATOMIC_ACQUIRE);
    if (util_unlikely(chunk == NULL)) {
        return NULL;
    }
    mpit_slot_t *e = (mpit_slot_t *)(chunk + (slot & (MPIT_SLOTS_CHUNK - 1)) * t->entry_size);
    if (util_unlikely(__atomic_load_n(&e->gen, __ATOMIC_ACQUIRE) != gen)) {
        return NULL;
    }
    return e;
}

#ifdef __cplusplus
}
#endif

#endif
