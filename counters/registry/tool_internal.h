/*
 * Private to counters/tool_*.c (and the tests): the registry's tables, its lock and the slot
 * tables behind sessions and handles.
 *
 * Memory model. Variables, categories and enums are appended to chunked tables whose chunks are
 * never freed or moved, and a variable's description is immutable once its index is published
 * (release store of the count), so lock-free readers (pvar_read, get_info) never see freed or
 * half-built memory. Sessions, pvar handles and cvar handles live in slot tables of the same
 * kind: a handle value encodes (kind tag, generation, slot index) and is validated against the
 * slot's generation, so a stale or forged handle is an error, never a dereference of freed
 * memory. Per-handle value buffers are only ever replaced by larger ones; replaced buffers are
 * kept on a retired list (never freed) so a racing reader can still finish with them.
 *
 * Locking. cnt_reg.lock (recursive) guards every mutation: registration, category membership,
 * session and handle management, and handle state changes (start, stop, write, reset,
 * readreset). Handle state that pvar_read needs is published under a per-handle sequence counter
 * (seqlock), so pvar_read and cvar_read take no lock. Notify callbacks run with the lock held;
 * it is recursive, so a callback may register variables or categories from the same thread.
 */
#ifndef IBMSG_COUNTERS_TOOL_INTERNAL_H
#define IBMSG_COUNTERS_TOOL_INTERNAL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "counters/registry/registry.h"
#include "util/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Handle values pack 8 tag bits, 24 generation bits and 32 slot bits: 64-bit pointers only. */
#ifndef __cplusplus
UTIL_STATIC_ASSERT(sizeof(void *) == 8, "tool handles need 64-bit pointers");
#endif

#define CNT_CHUNK_BITS 8
#define CNT_CHUNK_SIZE (1u << CNT_CHUNK_BITS)
#define CNT_MAX_CHUNKS 4096u /* tables and slot tables hold at most 1M entries */
#define CNT_SLOT_NONE  UINT32_MAX

/* ---- Append-only tables (variables, categories, enums) ------------------------------------ */

typedef struct cnt_table {
    void **chunks[CNT_MAX_CHUNKS]; /* each CNT_CHUNK_SIZE entry pointers; never freed */
    int num;                       /* published entries (release store, under the lock) */
} cnt_table_t;

/** Append entry (lock held); publishes it with a release store. */
int cnt_table_append(cnt_table_t *t, void *entry, int *index);
/** The entry at index or NULL when out of range. Lock-free. */
void *cnt_table_get(const cnt_table_t *t, int index);
/** Number of published entries. Lock-free. */
int cnt_table_num(const cnt_table_t *t);

/* ---- Name maps (hash of name and a second key, the class for pvars) ------------------------- */

typedef struct cnt_name_entry {
    const char *name; /* NULL: empty */
    int key2;
    int index;
} cnt_name_entry_t;

typedef struct cnt_name_map {
    cnt_name_entry_t *slots;
    size_t cap; /* power of two */
    size_t num;
} cnt_name_map_t;

/** Index registered for (name, key2) or -1. Lock held. */
int cnt_name_map_find(const cnt_name_map_t *m, const char *name, int key2);
/** Record (name, key2) -> index; name must stay valid forever. Lock held. */
int cnt_name_map_insert(cnt_name_map_t *m, const char *name, int key2, int index);

/* ---- Index lists (category members, parents) ---------------------------------------------- */

typedef struct cnt_idx_list {
    int *v;
    int num;
    int cap;
} cnt_idx_list_t;

int cnt_idx_list_push(cnt_idx_list_t *l, int value);
int cnt_idx_list_contains(const cnt_idx_list_t *l, int value);
/** Copy min(len, num) entries to out (out may be NULL when len <= 0). */
void cnt_idx_list_copy(const cnt_idx_list_t *l, int len, int out[]);

/* ---- Slot tables (sessions, pvar handles, cvar handles) ------------------------------------ */

/* Every slot struct begins with this header. gen is odd while the slot is in use. */
typedef struct cnt_slot_hdr {
    uint32_t gen; /* atomic; 24 bits used */
    uint32_t next_free;
} cnt_slot_hdr_t;

typedef struct cnt_slots {
    char *chunks[CNT_MAX_CHUNKS]; /* each CNT_CHUNK_SIZE slots; never freed */
    size_t slot_size;
    uint32_t num;       /* slots ever created (atomic, release) */
    uint32_t free_head; /* under the lock */
    uint32_t live;      /* slots in use, under the lock */
    uint32_t max_live;  /* cap: beyond it alloc fails (0: the table's capacity) */
    uint8_t tag;        /* kind tag in bits 56..63 of the handle value */
} cnt_slots_t;

/** Take a free slot (lock held); its gen becomes odd when cnt_slot_publish is called. */
int cnt_slot_alloc(cnt_slots_t *s, uint32_t *idx, void **slot);
/** Make an allocated slot valid: bumps gen to odd (release). Returns its handle value. */
uintptr_t cnt_slot_publish(cnt_slots_t *s, uint32_t idx);
/** Invalidate a slot and put it on the free list (lock held). */
void cnt_slot_release(cnt_slots_t *s, uint32_t idx);
/** Keep a buffer that a lock-free reader may still use; it is never freed. Lock held. */
void cnt_retire(void *buf);

/* ---- Registry entries ---------------------------------------------------------------------- */

typedef struct cnt_enum {
    char *name;
    int num_items;
    cnt_enum_item_t *items; /* names owned */
    int index;
} cnt_enum_t;

typedef struct cnt_pvar {
    cnt_pvar_desc_t d; /* name, category, desc owned (strdup) */
    int index;
    size_t elsize;       /* bytes per element of d.datatype */
    int started_handles; /* atomic: handles of this pvar started now */
    cnt_idx_list_t cats; /* categories that contain it, in join order */
} cnt_pvar_t;

typedef struct cnt_cvar {
    cnt_cvar_desc_t d; /* name, category, desc owned; d.count >= 1 */
    int index;
    size_t elsize;
    cnt_idx_list_t cats;
} cnt_cvar_t;

typedef struct cnt_category {
    char *name;
    char *desc;
    int index;
    cnt_idx_list_t cvars, pvars, subcats, parents, events;
} cnt_category_t;

/* An event type (tool_event.c). Immutable once published, but for listeners (under the lock). */
typedef struct cnt_event_type {
    cnt_event_desc_t d; /* name, category, desc owned; datatypes and element_names point below */
    int index;
    cnt_event_t *ev; /* the raisers' object: ev->listeners = listeners.num */
    ibmsg_t_datatype_t datatypes[CNT_EVENT_MAX_ELEMENTS];
    char *element_names[CNT_EVENT_MAX_ELEMENTS];
    long displs[CNT_EVENT_MAX_ELEMENTS];
    size_t size;              /* bytes of an instance's buffer */
    cnt_idx_list_t listeners; /* slot indices of its registrations, in allocation order (lock) */
    cnt_idx_list_t cats;
} cnt_event_type_t;

/* A queued instance: raised while another thread delivered instances of its source. */
typedef struct cnt_event_queued {
    const cnt_event_type_t *type;
    const void *obj;
    long long ts;
    int required;
    unsigned char data[CNT_EVENT_MAX_BYTES];
} cnt_event_queued_t;

/* A timestamp source (tool_event.c). */
typedef struct cnt_source {
    cnt_source_desc_t d; /* name, desc owned */
    int index;
    pthread_mutex_t lock; /* guards busy and the ring; never held while a callback runs */
    int busy;             /* a thread is delivering this source's instances */
    uint32_t head, tail;  /* ring[tail % CNT_EVENT_RING] is the oldest queued instance */
    cnt_event_queued_t *ring;
} cnt_source_t;

/* An event registration (ibmsg_t_event_registration_t). Every field is under the lock. */
typedef struct cnt_ereg {
    cnt_slot_hdr_t hdr;
    uintptr_t handle; /* its handle value, passed to callbacks (also while freeing) */
    cnt_event_type_t *type;
    const void *obj; /* NULL: every object */
    struct {
        ibmsg_t_event_cb_function_t fn;
        void *user_data;
    } cb[IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE + 1];
    ibmsg_t_event_dropped_cb_function_t dropped_fn;
    int dropped[CNT_EVENT_MAX_SOURCES]; /* drops per source since the handler was set or called */
    int inflight;                       /* callbacks taken for delivery and not yet returned */
    int freed;                          /* handle_free called: no new callback, slot kept */
    ibmsg_t_event_free_cb_function_t free_fn;
    void *free_user_data;
} cnt_ereg_t;

typedef struct cnt_session {
    cnt_slot_hdr_t hdr;
    uint32_t head; /* first handle slot of this session, under the lock */
    int num_handles;
} cnt_session_t;

typedef struct cnt_phandle {
    cnt_slot_hdr_t hdr;
    uint32_t seq; /* seqlock over started, acc, base: odd while a writer changes them */
    uintptr_t session;
    const cnt_pvar_t *pvar;
    void *obj;
    int count;
    int fast_u64;        /* cumulative, one 8-byte integer: ibmsg_t_pvar_read's fast path */
    int started;         /* 0 or 1, written under the seqlock */
    int fresh;           /* watermark: not started since alloc or reset (lock) */
    int mark;            /* collected for a list operation (lock) */
    uint32_t prev, next; /* the session's list, under the lock */
    void *acc;           /* count elements: accumulated, frozen value or watermark */
    void *base;          /* count elements: the source's value at start (cumulative classes) */
    size_t cap;          /* bytes behind acc (acc and base share one buffer) */
} cnt_phandle_t;

typedef struct cnt_chandle {
    cnt_slot_hdr_t hdr;
    const cnt_cvar_t *cvar;
    void *obj;
} cnt_chandle_t;

typedef struct cnt_registry {
    pthread_mutex_t lock;                /* recursive; see the top of this file */
    int refcount;                        /* atomic: ibmsg_t_init_thread calls not yet finalized */
    const cnt_registry_meters_t *meters; /* atomic: who counts the registry (registry.h) */
    cnt_table_t pvars, cvars, cats, enums, events, sources;
    cnt_name_map_t pvar_names, cvar_names, cat_names, enum_names, event_names, source_names;
    int cat_changed; /* atomic; saturates at INT_MAX */
    cnt_slots_t sessions, phandles, chandles, eregs;
    uint64_t events_delivered, events_dropped; /* atomic: the tool_events_* pvars */
    /* The registry's own counters (sessions, handles) are counter shards: counters/shards/shard.h.
     */
} cnt_registry_t;

extern cnt_registry_t cnt_reg;

#define CNT_SLOT_GEN_MASK 0xffffffu

/*
 * The lookups below run on every ibmsg_t_pvar_read, so they are inline: a call per check cost
 * more than the checks themselves.
 */

/** The slot at idx (idx < num) whether live or not. */
static inline void *cnt_slot_at(const cnt_slots_t *s, uint32_t idx)
{
    char *c = __atomic_load_n(&s->chunks[idx >> CNT_CHUNK_BITS], __ATOMIC_ACQUIRE);
    return c + (size_t)(idx & (CNT_CHUNK_SIZE - 1)) * s->slot_size;
}

/** The slot a handle value names, or NULL if the value is not a live handle of s. Lock-free. */
static inline void *cnt_slot_lookup(const cnt_slots_t *s, uintptr_t handle, uint32_t *idx)
{
    uint32_t i = (uint32_t)handle;
    uint32_t gen = (uint32_t)(handle >> 32) & CNT_SLOT_GEN_MASK;

    if ((handle >> 56) != s->tag || (gen & 1u) == 0 ||
        i >= __atomic_load_n(&s->num, __ATOMIC_ACQUIRE)) {
        return NULL;
    }
    cnt_slot_hdr_t *h = (cnt_slot_hdr_t *)cnt_slot_at(s, i);
    if (__atomic_load_n(&h->gen, __ATOMIC_ACQUIRE) != gen) {
        return NULL;
    }
    if (idx != NULL) {
        *idx = i;
    }
    return h;
}

/** Whether the slot still carries handle's generation (acquire). */
static inline int cnt_slot_still(const void *slot, uintptr_t handle)
{
    const cnt_slot_hdr_t *h = (const cnt_slot_hdr_t *)slot;
    return __atomic_load_n(&h->gen, __ATOMIC_ACQUIRE) ==
           ((uint32_t)(handle >> 32) & CNT_SLOT_GEN_MASK);
}

void cnt_tool_lock(void);
void cnt_tool_unlock(void);
/** Register the built-in variables once (pthread_once). Call before taking the lock. */
void cnt_tool_ensure_builtins(void);
/** The once-routine's body (tool_vars.c). */
void cnt_tool_register_builtins(void);
/** Whether the interface is between an init and its finalize. Lock-free. */
static inline int cnt_tool_initialized(void)
{
    return __atomic_load_n(&cnt_reg.refcount, __ATOMIC_ACQUIRE) > 0;
}

/** The installed meters (registry.h), or NULL. */
static inline const cnt_registry_meters_t *cnt_tool_meters(void)
{
    return __atomic_load_n(&cnt_reg.meters, __ATOMIC_ACQUIRE);
}

/* Registration without the lazy built-in step (the built-ins use these); lock held. */
int cnt_pvar_register_locked(const cnt_pvar_desc_t *desc, int *pvar_index);
int cnt_cvar_register_locked(const cnt_cvar_desc_t *desc, int *cvar_index);
int cnt_category_register_locked(const char *name, const char *desc, const char *parent,
                                 int *cat_index);
int cnt_enum_register_locked(const char *name, int num_items, const cnt_enum_item_t items[],
                             ibmsg_t_enum_t *enumtype);
int cnt_category_add_pvar_locked(int cat_index, int pvar_index);
int cnt_category_add_cvar_locked(int cat_index, int cvar_index);
/** Bump category_changed, saturating at INT_MAX. Lock held. */
void cnt_category_changed_bump(void);

/** The enum an enum handle names, or NULL. */
const cnt_enum_t *cnt_enum_lookup(ibmsg_t_enum_t enumtype);
/** The enum handle of an enum index. */
ibmsg_t_enum_t cnt_enum_handle(int index);

/** Free every session (and its handles) and every cvar handle: the last finalize. Lock held. */
void cnt_session_free_all(void);
void cnt_cvar_handle_free_all(void);
/** Free every event registration (no free callback): the last finalize. Lock held. */
void cnt_event_free_all(void);
/** Register the source ibmsg_monotonic (index 0) and the event pvars: the built-ins. Lock held. */
void cnt_event_register_builtins(void);
int cnt_category_add_event_locked(int cat_index, int event_index);

/** Set a cvar from a string without the scope check (environment at registration). */
int cnt_cvar_set_string_internal(const cnt_cvar_t *cv, const char *value, int check_scope);
/** ibmsg_t_cvar_set_from_info without the initialization check. */
int cnt_cvar_set_from_info(ibmsg_info_t info);

/* ---- Values by datatype (tool_value.c) ----------------------------------------------------- */

/** Bytes of one element, 0 for an unknown datatype. */
size_t cnt_datatype_size(ibmsg_t_datatype_t dt);
/** Whether dt is one of the unsigned integer datatypes. */
int cnt_datatype_is_unsigned(ibmsg_t_datatype_t dt);
/** out[i] = acc[i] + cur[i] - base[i] (modular for integers); out may alias cur. */
void cnt_value_accumulate(ibmsg_t_datatype_t dt, int n, void *out, const void *acc, const void *cur,
                          const void *base);
/** Atomically raise (high) or lower (!high) wm[i] toward cur[i]; then cur[i] = wm[i]. */
void cnt_value_watermark(ibmsg_t_datatype_t dt, int n, void *wm, void *cur, int high);
/** Max/min into wm (lock held; relaxed atomics per element for readers inside the seqlock). */
void cnt_value_extreme(ibmsg_t_datatype_t dt, int n, void *wm, const void *cur, int high);
/** Read or write *ctx as n elements (relaxed atomics element by element; chars are bytes). */
void cnt_value_load(ibmsg_t_datatype_t dt, int n, const void *ctx, void *buf);
void cnt_value_store(ibmsg_t_datatype_t dt, int n, void *ctx, const void *buf);
/** Set n elements of dst to 0, element by element (relaxed atomics, as cnt_value_store). */
void cnt_value_clear(ibmsg_t_datatype_t dt, int n, void *dst);

/* ---- Test hooks ---------------------------------------------------------------------------- */

/** Set the category update number (to test saturation). */
void cnt_tool_test_set_category_changed(int value);
/** Cap live sessions and pvar handles (0 restores the default: the slot tables' capacity). */
void cnt_tool_test_set_limits(uint32_t max_sessions, uint32_t max_handles);
/** Cap live event registrations (0 restores the default). */
void cnt_tool_test_set_event_limit(uint32_t max_registrations);
/** Set a registration's count of drops of source not yet told (to test saturation). */
int cnt_event_test_set_dropped(ibmsg_t_event_registration_t reg, int source, int count);

#ifdef __cplusplus
}
#endif

#endif
