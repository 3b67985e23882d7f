#include "mpit/slots.h"

#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>

void mpit_slots_init(mpit_slots_t *t, size_t entry_size)
{
    memset(t, 0, sizeof(*t));
    /* Keep entries 8-byte aligned whatever the struct. */
    t->entry_size = (entry_size + 7u) & ~(size_t)7u;
}

void mpit_slots_cleanup(mpit_slots_t *t)
{
    for (uint32_t c = 0; c < MPIT_SLOTS_MAX_CHUNKS; c++) {
        free(t->chunks[c]);
    }
    mpit_slots_init(t, t->entry_size);
}

static mpit_slot_t *slots_entry(const mpit_slots_t *t, uint32_t slot)
{
    return (mpit_slot_t *)(t->chunks[slot >> MPIT_SLOTS_CHUNK_SHIFT] +
                           (slot & (MPIT_SLOTS_CHUNK - 1)) * t->entry_size);
}

int mpit_slots_alloc(mpit_slots_t *t, void **entry, uint64_t *value)
{
    uint32_t slot;
    if (t->free_head != 0) {
        slot = t->free_head - 1;
        t->free_head = slots_entry(t, slot)->next_free;
    } else {
        if (t->num_slots == MPIT_SLOTS_CHUNK * MPIT_SLOTS_MAX_CHUNKS) {
            return IBMSG_T_ERR_OUT_OF_HANDLES;
        }
        slot = t->num_slots;
        uint32_t c = slot >> MPIT_SLOTS_CHUNK_SHIFT;
        if (t->chunks[c] == NULL) {
            char *chunk = calloc(MPIT_SLOTS_CHUNK, t->entry_size);
            if (chunk == NULL) {
                return IBMSG_T_ERR_MEMORY;
            }
            __atomic_store_n(&t->chunks[c], chunk, __ATOMIC_RELEASE);
        }
        t->num_slots++;
    }
    mpit_slot_t *e = slots_entry(t, slot);
    uint32_t gen = e->gen + 1; /* even (free) -> odd (live) */
    if (gen == 0x7fffffffu) {
        gen = 1; /* gen stays below 2^31 - 1: values are never -1 */
    }
    memset((char *)e + sizeof(*e), 0, t->entry_size - sizeof(*e));
    e->next_free = 0;
    e->slot = slot;
    __atomic_store_n(&e->gen, gen, __ATOMIC_RELEASE);
    t->live++;
    *entry = e;
    *value = MPIT_SLOTS_TAG | ((uint64_t)gen << 32) | (uint64_t)(slot + 2u);
    return IBMSG_OK;
}

void mpit_slots_free(mpit_slots_t *t, void *entry)
{
    mpit_slot_t *e = entry;
    if ((e->gen & 1u) == 0) {
        return;
    }
    __atomic_store_n(&e->gen, e->gen + 1, __ATOMIC_RELEASE);
    e->next_free = t->free_head;
    t->free_head = e->slot + 1;
    t->live--;
}

uint64_t mpit_slots_value(const void *entry)
{
    const mpit_slot_t *e = entry;
    return MPIT_SLOTS_TAG | ((uint64_t)e->gen << 32) | (uint64_t)(e->slot + 2u);
}
