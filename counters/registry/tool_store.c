/* Storage of the registry: append-only tables, name maps, index lists and slot tables. */
#include "counters/registry/tool_internal.h"

#include <stdlib.h>
#include <string.h>

#define SLOT_GEN_MASK CNT_SLOT_GEN_MASK

int cnt_table_append(cnt_table_t *t, void *entry, int *index)
{
    int n = t->num;
    uint32_t chunk = (uint32_t)n >> CNT_CHUNK_BITS;

    if (chunk >= CNT_MAX_CHUNKS) {
        return IBMSG_T_ERR_MEMORY;
    }
    if (t->chunks[chunk] == NULL) {
        void **c = calloc(CNT_CHUNK_SIZE, sizeof(void *));
        if (c == NULL) {
            return IBMSG_T_ERR_MEMORY;
        }
        __atomic_store_n(&t->chunks[chunk], c, __ATOMIC_RELEASE);
    }
    t->chunks[chunk][(uint32_t)n & (CNT_CHUNK_SIZE - 1)] = entry;
    __atomic_store_n(&t->num, n + 1, __ATOMIC_RELEASE);
    *index = n;
    return IBMSG_OK;
}

void *cnt_table_get(const cnt_table_t *t, int index)
{
    if (index < 0 || index >= __atomic_load_n(&t->num, __ATOMIC_ACQUIRE)) {
        return NULL;
    }
    void **c = __atomic_load_n(&t->chunks[(uint32_t)index >> CNT_CHUNK_BITS], __ATOMIC_ACQUIRE);
    return c[(uint32_t)index & (CNT_CHUNK_SIZE - 1)];
}

int cnt_table_num(const cnt_table_t *t)
{
    return __atomic_load_n(&t->num, __ATOMIC_ACQUIRE);
}

/* FNV-1a over the name, mixed with key2. */
static size_t name_hash(const char *name, int key2)
{
    uint64_t h = 1469598103934665603ull ^ (uint64_t)(unsigned)key2;
    for (const unsigned char *p = (const unsigned char *)name; *p != '\0'; p++) {
        h = (h ^ *p) * 1099511628211ull;
    }
    return (size_t)h;
}

int cnt_name_map_find(const cnt_name_map_t *m, const char *name, int key2)
{
    if (m->cap == 0) {
        return -1;
    }
    for (size_t i = name_hash(name, key2) & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        const cnt_name_entry_t *e = &m->slots[i];
        if (e->name == NULL) {
            return -1;
        }
        if (e->key2 == key2 && strcmp(e->name, name) == 0) {
            return e->index;
        }
    }
}

static void name_map_put(cnt_name_entry_t *slots, size_t cap, const cnt_name_entry_t *e)
{
    size_t i = name_hash(e->name, e->key2) & (cap - 1);
    while (slots[i].name != NULL) {
        i = (i + 1) & (cap - 1);
    }
    slots[i] = *e;
}

int cnt_name_map_insert(cnt_name_map_t *m, const char *name, int key2, int index)
{
    /* Keep the load at most one half so probes stay short. */
    if (2 * (m->num + 1) > m->cap) {
        size_t cap = m->cap == 0 ? 64 : 2 * m->cap;
        cnt_name_entry_t *slots = calloc(cap, sizeof(*slots));
        if (slots == NULL) {
            return IBMSG_T_ERR_MEMORY;
        }
        for (size_t i = 0; i < m->cap; i++) {
            if (m->slots[i].name != NULL) {
                name_map_put(slots, cap, &m->slots[i]);
            }
        }
        free(m->slots);
        m->slots = slots;
        m->cap = cap;
    }
    cnt_name_entry_t e = {.name = name, .key2 = key2, .index = index};
    name_map_put(m->slots, m->cap, &e);
    m->num++;
    return IBMSG_OK;
}

int cnt_idx_list_push(cnt_idx_list_t *l, int value)
{
    if (l->num == l->cap) {
        int cap = l->cap == 0 ? 4 : 2 * l->cap;
        int *v = realloc(l->v, (size_t)cap * sizeof(int));
        if (v == NULL) {
            return IBMSG_T_ERR_MEMORY;
        }
        l->v = v;
        l->cap = cap;
    }
    l->v[l->num++] = value;
    return IBMSG_OK;
}

int cnt_idx_list_contains(const cnt_idx_list_t *l, int value)
{
    for (int i = 0; i < l->num; i++) {
        if (l->v[i] == value) {
            return 1;
        }
    }
    return 0;
}

void cnt_idx_list_copy(const cnt_idx_list_t *l, int len, int out[])
{
    int n = UTIL_MIN(len, l->num);
    for (int i = 0; i < n; i++) {
        out[i] = l->v[i];
    }
}

int cnt_slot_alloc(cnt_slots_t *s, uint32_t *idx, void **slot)
{
    uint32_t cap = s->max_live != 0 ? s->max_live : CNT_MAX_CHUNKS * CNT_CHUNK_SIZE;
    uint32_t i;

    if (s->live >= cap) {
        return IBMSG_ERR_NO_RESOURCE;
    }
    if (s->free_head != CNT_SLOT_NONE) {
        i = s->free_head;
        cnt_slot_hdr_t *h = cnt_slot_at(s, i);
        s->free_head = h->next_free;
    } else {
        i = s->num;
        uint32_t chunk = i >> CNT_CHUNK_BITS;
        if (chunk >= CNT_MAX_CHUNKS) {
            return IBMSG_ERR_NO_RESOURCE;
        }
        if (s->chunks[chunk] == NULL) {
            char *c = calloc(CNT_CHUNK_SIZE, s->slot_size);
            if (c == NULL) {
                return IBMSG_T_ERR_MEMORY;
            }
            __atomic_store_n(&s->chunks[chunk], c, __ATOMIC_RELEASE);
        }
        __atomic_store_n(&s->num, i + 1, __ATOMIC_RELEASE);
    }
    s->live++;
    *idx = i;
    *slot = cnt_slot_at(s, i);
    return IBMSG_OK;
}

uintptr_t cnt_slot_publish(cnt_slots_t *s, uint32_t idx)
{
    cnt_slot_hdr_t *h = cnt_slot_at(s, idx);
    uint32_t gen = (h->gen + 1) & SLOT_GEN_MASK; /* even -> odd */
    __atomic_store_n(&h->gen, gen, __ATOMIC_RELEASE);
    return ((uintptr_t)s->tag << 56) | ((uintptr_t)gen << 32) | idx;
}

void cnt_slot_release(cnt_slots_t *s, uint32_t idx)
{
    cnt_slot_hdr_t *h = cnt_slot_at(s, idx);
    __atomic_store_n(&h->gen, (h->gen + 1) & SLOT_GEN_MASK, __ATOMIC_RELEASE);
    h->next_free = s->free_head;
    s->free_head = idx;
    s->live--;
}

typedef struct retired_buf {
    struct retired_buf *next;
    void *buf;
} retired_buf_t;

static retired_buf_t *retired_head; /* under the lock; keeps the buffers reachable */

void cnt_retire(void *buf)
{
    if (buf == NULL) {
        return;
    }
    retired_buf_t *r = malloc(sizeof(*r));
    if (r == NULL) {
        /* Leaking the buffer unreferenced is still safe for readers; only accounting suffers. */
        return;
    }
    r->buf = buf;
    r->next = retired_head;
    retired_head = r;
}
