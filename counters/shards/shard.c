/*
 * Counter shards: allocation on the writer's NUMA node, the shard list, retiring the shards of
 * exited threads and destroyed blocks, and the lock-free merged read. The hot path is in
 * shard.h; nothing here runs per update.
 */
#include "counters/shards/shard.h"

#include <errno.h>
#include <linux/membarrier.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ibmsg_config.h"
#include <ibmsg/status.h>
#include <ibmsg/tool.h>
#include "util/fork_locks.h"
#include "util/log.h"

#if IBMSG_HAVE_NUMA
#include <numa.h>
#endif

/* Shards are carved from chunks of this size, one chunk list per NUMA node. */
#define CNT_CHUNK_SIZE (64u * 1024u)
#define CNT_MAX_NODES  64

UTIL_STATIC_ASSERT(sizeof(cnt_shard_t) <= CNT_CHUNK_SIZE, "a shard fits in a chunk");

__thread cnt_shard_t *cnt_shard_tls __attribute__((tls_model("initial-exec")));
uint8_t cnt_timer_gate[CNT_SLOT_COUNT];

/*
 * cnt_lock protects: appending to the shard list, shard state changes, meta.refs, the retired
 * totals, the chunk arenas, the gate and watermark start counts. Readers take no lock: the list
 * is append-only (shards are recycled, never freed) and retiring runs inside the cnt_seq
 * sequence lock, so a reader that raced with a fold retries instead of counting it twice.
 */
static pthread_mutex_t cnt_lock = PTHREAD_MUTEX_INITIALIZER;
UTIL_FORK_LOCK(UTIL_FORK_LOCK_SHARDS, cnt_lock, 0)
static cnt_shard_t *cnt_shards;              /* head of the list; atomic */
static uint64_t cnt_seq;                     /* odd while a fold is in progress; atomic */
static uint64_t cnt_retired[CNT_SLOT_COUNT]; /* atomic; see cnt_fold() for LEVEL_WM slots */
static int cnt_timer_starts[CNT_SLOT_COUNT];
static int cnt_wm_starts[CNT_SLOT_COUNT];

static struct cnt_arena {
    char *next;
    size_t left;
} cnt_arenas[CNT_MAX_NODES + 1]; /* [node + 1]; [0] for memory on no particular node */

static pthread_once_t cnt_setup_once = PTHREAD_ONCE_INIT;
static pthread_key_t cnt_thread_key;
static int cnt_numa UTIL_UNUSED;      /* libnuma usable (set only with IBMSG_HAVE_NUMA) */
static int *cnt_cpu_node UTIL_UNUSED; /* [cpu]: its NUMA node, filled once at setup */
static int cnt_num_cpus UTIL_UNUSED;

/* For threads whose shard could not be allocated: shared, so updates may be lost. */
static cnt_shard_t cnt_emergency_shard;

/* ---- The table ----------------------------------------------------------------------------- */

enum {
#define CNT_INDEX(id, name, kind, owner, verbosity, category, desc) CNT_INDEX_##id,
    CNT_COUNTER_TABLE(CNT_INDEX)
#undef CNT_INDEX
};
UTIL_STATIC_ASSERT(CNT_COUNTER_COUNT < 255, "cnt_entry_by_slot holds an index in a byte");

static const struct cnt_entry {
    int id;
    cnt_kind_t kind;
    int owner;
    const char *name;
} cnt_entries[] = {
#define CNT_ENTRY(id, name, kind, owner, verbosity, category, desc) \
    {CNT_##id, CNT_KIND_##kind, IBMSG_T_BIND_##owner, name},
    CNT_COUNTER_TABLE(CNT_ENTRY)
#undef CNT_ENTRY
};

/* Per slot: 1 + the index in cnt_entries of the counter that starts there, 0 elsewhere. */
static const uint8_t cnt_entry_by_slot[CNT_SLOT_COUNT] = {
#define CNT_ENTRY_INDEX(id, name, kind, owner, verbosity, category, desc) \
    [CNT_##id] = 1 + CNT_INDEX_##id,
    CNT_COUNTER_TABLE(CNT_ENTRY_INDEX)
#undef CNT_ENTRY_INDEX
};

static const struct cnt_entry *cnt_entry_of(int id)
{
    if (id < 0 || id >= CNT_SLOT_COUNT || cnt_entry_by_slot[id] == 0) {
        return NULL;
    }
    return &cnt_entries[cnt_entry_by_slot[id] - 1];
}

int cnt_id_kind(int id)
{
    const struct cnt_entry *e = cnt_entry_of(id);
    return e == NULL ? -1 : (int)e->kind;
}

const char *cnt_id_name(int id)
{
    const struct cnt_entry *e = cnt_entry_of(id);
    return e == NULL ? NULL : e->name;
}

int cnt_id_owner(int id)
{
    const struct cnt_entry *e = cnt_entry_of(id);
    return e == NULL ? -1 : e->owner;
}

/* ---- Allocation ---------------------------------------------------------------------------- */

static void cnt_thread_exit(void *arg);

static void cnt_do_setup(void)
{
    int rc = pthread_key_create(&cnt_thread_key, cnt_thread_exit);

    if (rc != 0) {
        /* Without the key exited threads keep their shards: counts stay exact, memory grows. */
        util_error("pthread_key_create: %s; exited threads' shards will not be recycled",
                   strerror(rc));
    }
#if IBMSG_HAVE_NUMA
    cnt_numa = numa_available() >= 0;
    if (!cnt_numa) {
        util_debug("numa_available() < 0: counter shards are not placed by node");
    } else {
        /*
         * The CPU -> node map, once: libnuma fills its own cache lazily and without a lock, so
         * two threads asking numa_node_of_cpu() for the first time race inside libnuma.
         */
        int cpus = numa_num_configured_cpus();
        cnt_cpu_node = cpus > 0 ? malloc((size_t)cpus * sizeof(*cnt_cpu_node)) : NULL;
        if (cnt_cpu_node != NULL) {
            for (int cpu = 0; cpu < cpus; cpu++) {
                cnt_cpu_node[cpu] = numa_node_of_cpu(cpu);
            }
            cnt_num_cpus = cpus;
        }
    }
#endif
    cnt_tick_setup();
}

static void cnt_setup(void)
{
    pthread_once(&cnt_setup_once, cnt_do_setup);
}

/* The NUMA node of the CPU the caller runs on, -1 if unknown or without libnuma. */
static int cnt_current_node(void)
{
#if IBMSG_HAVE_NUMA
    if (cnt_numa) {
        int cpu = sched_getcpu();
        int node = cpu < 0 || cpu >= cnt_num_cpus ? -1 : cnt_cpu_node[cpu];
        return node >= 0 && node < CNT_MAX_NODES ? node : -1;
    }
#endif
    return -1;
}

/* Carve a shard from node's chunk (caller holds cnt_lock). */
static cnt_shard_t *cnt_arena_alloc(int node)
{
    struct cnt_arena *arena = &cnt_arenas[node + 1];
    void *p;

    if (arena->left < sizeof(cnt_shard_t)) {
        void *chunk = NULL;

#if IBMSG_HAVE_NUMA
        if (node >= 0) {
            /* Page aligned, and its pages are placed on node when first touched. */
            chunk = numa_alloc_onnode(CNT_CHUNK_SIZE, node);
        }
#endif
        if (node < 0) {
            chunk = aligned_alloc(UTIL_FALSE_SHARING_GAP, CNT_CHUNK_SIZE);
        }
        if (chunk == NULL) {
            return NULL;
        }
        arena->next = chunk;
        arena->left = CNT_CHUNK_SIZE;
    }
    p = arena->next;
    arena->next += sizeof(cnt_shard_t);
    arena->left -= sizeof(cnt_shard_t);
    return p;
}

/*
 * A zeroed shard on node, in the list, not yet active (caller holds cnt_lock). Free shards of
 * the same node are recycled first.
 */
static cnt_shard_t *cnt_shard_alloc(int node)
{
    cnt_shard_t *shard;

    for (shard = cnt_shards; shard != NULL; shard = shard->meta.next) {
        if (shard->meta.state == CNT_SHARD_FREE && shard->meta.node == node) {
            for (size_t i = 0; i < CNT_SLOT_COUNT; i++) {
                __atomic_store_n(&shard->slot[i], 0, __ATOMIC_RELAXED);
            }
            return shard;
        }
    }
    shard = cnt_arena_alloc(node);
    if (shard == NULL) {
        return NULL;
    }
    /* The first touch, by the creating thread on its own node. */
    memset(shard, 0, sizeof(*shard));
    shard->meta.node = node;
    shard->meta.next = cnt_shards;
    __atomic_store_n(&cnt_shards, shard, __ATOMIC_RELEASE);
    return shard;
}

/* Make a zeroed shard visible to readers as owned (caller holds cnt_lock). */
static void cnt_shard_activate(cnt_shard_t *shard, int bind, void *owner, long tid)
{
    /* Atomic: lock-free lookups read them (see cnt_shard_lookup()). */
    __atomic_store_n(&shard->meta.parent, NULL, __ATOMIC_RELAXED);
    __atomic_store_n(&shard->meta.bind, bind, __ATOMIC_RELAXED);
    __atomic_store_n(&shard->meta.owner, owner, __ATOMIC_RELAXED);
    __atomic_store_n(&shard->meta.tid, tid, __ATOMIC_RELAXED);
    shard->meta.refs = 0;
    shard->meta.watch_flags = NULL;
    /* Release: a reader that sees ACTIVE sees the zeroed slots (or later values). */
    __atomic_store_n(&shard->meta.state, CNT_SHARD_ACTIVE, __ATOMIC_RELEASE);
}

static cnt_shard_thread_hook_t cnt_thread_hook; /* atomic */

void cnt_shard_set_thread_hook(cnt_shard_thread_hook_t hook)
{
    __atomic_store_n(&cnt_thread_hook, hook, __ATOMIC_RELEASE);
}

void cnt_shard_thread_begins(cnt_shard_t *shard)
{
    cnt_shard_thread_hook_t hook = __atomic_load_n(&cnt_thread_hook, __ATOMIC_ACQUIRE);

    if (hook != NULL) {
        hook(shard, shard->meta.tid);
    }
}

cnt_shard_t *cnt_shard_self_slow(void)
{
    cnt_shard_t *shard;
    int node;

    cnt_setup();
    node = cnt_current_node();
    pthread_mutex_lock(&cnt_lock);
    shard = cnt_shard_alloc(node);
    if (shard != NULL) {
        cnt_shard_activate(shard, IBMSG_T_BIND_THREAD, NULL, (long)syscall(SYS_gettid));
    }
    pthread_mutex_unlock(&cnt_lock);
    if (shard == NULL) {
        util_error("no memory for a counter shard: this thread's counts may be lost");
        return &cnt_emergency_shard;
    }
    if (pthread_setspecific(cnt_thread_key, shard) != 0) {
        util_warn("pthread_setspecific failed: this thread's counter shard is not recycled");
    }
    cnt_shard_thread_begins(shard); /* PAPI: counts itself where it cannot attach */
    cnt_shard_tls = shard;
    return shard;
}

/* ---- Retiring ------------------------------------------------------------------------------ */

/* The high (low) watermark of the LEVEL_WM at s: its mark, base and level (see shard.h). */
static int64_t cnt_wm_value(const uint64_t *s, cnt_read_what_t what)
{
    int64_t level = (int64_t)__atomic_load_n(s, __ATOMIC_ACQUIRE);
    int64_t base = (int64_t)__atomic_load_n(&s[CNT_WM_BASE], __ATOMIC_ACQUIRE);
    int64_t mark;

    /* The mark is stored after the level: a read in between sees a level past its mark. */
    if (what == CNT_READ_HIGH) {
        mark = (int64_t)__atomic_load_n(&s[CNT_WM_HIGH], __ATOMIC_ACQUIRE);
        mark = mark > base ? mark : base;
        return mark > level ? mark : level;
    }
    mark = (int64_t)__atomic_load_n(&s[CNT_WM_LOW], __ATOMIC_ACQUIRE);
    mark = mark < base ? mark : base;
    return mark < level ? mark : level;
}

/*
 * Add a shard's values to the retired totals (caller holds cnt_lock, inside the sequence lock).
 * For a LEVEL_WM the retired slots hold: the summed levels; at +HIGH and +LOW how far the
 * retired shards' marks stood above and below their final levels since the last restart (a
 * restart makes them 0: retired shards no longer move).
 */
static void cnt_fold(const cnt_shard_t *shard)
{
    for (size_t e = 0; e < UTIL_ARRAY_SIZE(cnt_entries); e++) {
        int id = cnt_entries[e].id;
        uint64_t *r = &cnt_retired[id];
        const uint64_t *s = &shard->slot[id];
        uint64_t value = __atomic_load_n(s, __ATOMIC_RELAXED);

        __atomic_store_n(r, __atomic_load_n(r, __ATOMIC_RELAXED) + value, __ATOMIC_RELEASE);
        if (cnt_entries[e].kind == CNT_KIND_LEVEL_WM) {
            uint64_t above = (uint64_t)cnt_wm_value(s, CNT_READ_HIGH) - value;
            uint64_t below = value - (uint64_t)cnt_wm_value(s, CNT_READ_LOW);

            __atomic_store_n(&r[CNT_WM_HIGH],
                             __atomic_load_n(&r[CNT_WM_HIGH], __ATOMIC_RELAXED) + above,
                             __ATOMIC_RELEASE);
            __atomic_store_n(&r[CNT_WM_LOW],
                             __atomic_load_n(&r[CNT_WM_LOW], __ATOMIC_RELAXED) + below,
                             __ATOMIC_RELEASE);
        }
    }
}

/* Fold an active shard into the retired totals and take it out of the sums (holds cnt_lock). */
static void cnt_retire(cnt_shard_t *shard)
{
    uint64_t seq = __atomic_load_n(&cnt_seq, __ATOMIC_RELAXED);

    /*
     * A sequence lock without fences (ThreadSanitizer does not model them): the stores between
     * the two sequence numbers are releases and readers load with acquire, so a reader that sees
     * any of them also sees seq + 1 when it loads the sequence again. On x86 both are plain
     * moves.
     */
    __atomic_store_n(&cnt_seq, seq + 1, __ATOMIC_RELAXED);
    cnt_fold(shard);
    __atomic_store_n(&shard->meta.state, shard->meta.refs > 0 ? CNT_SHARD_RETIRED : CNT_SHARD_FREE,
                     __ATOMIC_RELEASE);
    __atomic_store_n(&cnt_seq, seq + 2, __ATOMIC_RELEASE);
}

static void cnt_thread_exit(void *arg)
{
    cnt_shard_t *shard = arg;

    pthread_mutex_lock(&cnt_lock);
    cnt_retire(shard);
    pthread_mutex_unlock(&cnt_lock);
    /* A later destructor that counts gets a fresh shard (and this destructor runs again). */
    cnt_shard_tls = NULL;
}

/* ---- Blocks -------------------------------------------------------------------------------- */

static int cnt_block_valid(const cnt_shard_t *block)
{
    return block->meta.state == CNT_SHARD_ACTIVE && block->meta.bind != IBMSG_T_BIND_THREAD &&
           block != &cnt_emergency_shard;
}

int cnt_block_create_child(int bind, void *owner, cnt_shard_t *parent, cnt_shard_t **block)
{
    cnt_shard_t *shard;
    int node, status = IBMSG_OK;

    if (block == NULL || owner == NULL || bind <= IBMSG_T_BIND_NO_OBJECT ||
        bind >= IBMSG_T_BIND_LAST || bind == IBMSG_T_BIND_THREAD) {
        return IBMSG_ERR_INVALID;
    }
    cnt_setup();
    node = cnt_current_node();
    pthread_mutex_lock(&cnt_lock);
    if (parent != NULL && !cnt_block_valid(parent)) {
        status = IBMSG_ERR_INVALID;
    } else if ((shard = cnt_shard_alloc(node)) == NULL) {
        status = IBMSG_ERR_NO_MEMORY;
    } else {
        cnt_shard_activate(shard, bind, owner, 0);
        /* Before readers can see it as a child, it is zero: the parent's sum does not jump. */
        __atomic_store_n(&shard->meta.parent, parent, __ATOMIC_RELEASE);
        *block = shard;
    }
    pthread_mutex_unlock(&cnt_lock);
    if (status == IBMSG_ERR_NO_MEMORY) {
        util_error("no memory for the counter block of object %p", owner);
    }
    return status;
}

int cnt_block_create(int bind, void *owner, cnt_shard_t **block)
{
    return cnt_block_create_child(bind, owner, NULL, block);
}

/*
 * Move a child's values into its parent (cnt_lock held, inside the sequence lock). The caller
 * is the parent's writer (see cnt_block_create_child()), so writing its slots is safe.
 */
static void cnt_fold_into(const cnt_shard_t *child, cnt_shard_t *parent)
{
    for (size_t e = 0; e < UTIL_ARRAY_SIZE(cnt_entries); e++) {
        cnt_id_t id = (cnt_id_t)cnt_entries[e].id;
        uint64_t value = __atomic_load_n(&child->slot[id], __ATOMIC_RELAXED);

        if (value == 0) {
            continue;
        }
        if (cnt_entries[e].kind == CNT_KIND_LEVEL_WM) {
            /* The parent may be in a run (cnt_level_run_add()): end it both ways first. */
            cnt_level_mark_high(parent, id);
            cnt_level_mark_low(parent, id);
            cnt_level_add(parent, id, (int64_t)value);
        } else {
            __atomic_store_n(&parent->slot[id],
                             __atomic_load_n(&parent->slot[id], __ATOMIC_RELAXED) + value,
                             __ATOMIC_RELEASE);
        }
    }
}

void cnt_block_destroy(cnt_shard_t *block)
{
    if (block == NULL) {
        return;
    }
    pthread_mutex_lock(&cnt_lock);
    if (!cnt_block_valid(block)) {
        util_error("cnt_block_destroy: %p is not a live counter block", (void *)block);
        pthread_mutex_unlock(&cnt_lock);
        return;
    }
    /* Orphan the children: from now on they retire into the global totals. */
    for (cnt_shard_t *s = cnt_shards; s != NULL; s = s->meta.next) {
        if (s->meta.parent == block) {
            __atomic_store_n(&s->meta.parent, NULL, __ATOMIC_RELAXED);
        }
    }
    cnt_shard_t *parent = block->meta.parent;
    if (parent != NULL) {
        uint64_t seq = __atomic_load_n(&cnt_seq, __ATOMIC_RELAXED);

        /* The same sequence lock as cnt_retire(): a racing sum neither misses nor doubles it. */
        __atomic_store_n(&cnt_seq, seq + 1, __ATOMIC_RELAXED);
        cnt_fold_into(block, parent);
        __atomic_store_n(&block->meta.parent, NULL, __ATOMIC_RELEASE);
        __atomic_store_n(&block->meta.state,
                         block->meta.refs > 0 ? CNT_SHARD_RETIRED : CNT_SHARD_FREE,
                         __ATOMIC_RELEASE);
        __atomic_store_n(&cnt_seq, seq + 2, __ATOMIC_RELEASE);
    } else {
        cnt_retire(block);
    }
    pthread_mutex_unlock(&cnt_lock);
}

/* ---- Reading ------------------------------------------------------------------------------- */

/* A shard's contribution to what. */
static uint64_t cnt_shard_value(const cnt_shard_t *shard, cnt_id_t id, cnt_read_what_t what)
{
    const uint64_t *s = &shard->slot[id];

    if (what == CNT_READ_VALUE) {
        return __atomic_load_n(s, __ATOMIC_ACQUIRE);
    }
    return (uint64_t)cnt_wm_value(s, what);
}

static uint64_t cnt_retired_value(cnt_id_t id, cnt_read_what_t what)
{
    const uint64_t *r = &cnt_retired[id];
    uint64_t value = __atomic_load_n(r, __ATOMIC_ACQUIRE);

    if (what == CNT_READ_VALUE) {
        return value;
    }
    if (what == CNT_READ_HIGH) {
        return value + __atomic_load_n(&r[CNT_WM_HIGH], __ATOMIC_ACQUIRE);
    }
    return value - __atomic_load_n(&r[CNT_WM_LOW], __ATOMIC_ACQUIRE);
}

static uint64_t cnt_sum(cnt_id_t id, cnt_read_what_t what)
{
    for (;;) {
        uint64_t seq = __atomic_load_n(&cnt_seq, __ATOMIC_ACQUIRE);
        uint64_t sum;

        if (seq & 1) {
            sched_yield(); /* a fold is in progress: it takes microseconds */
            continue;
        }
        sum = cnt_retired_value(id, what);
        for (const cnt_shard_t *shard = __atomic_load_n(&cnt_shards, __ATOMIC_ACQUIRE);
             shard != NULL; shard = shard->meta.next) {
            if (__atomic_load_n(&shard->meta.state, __ATOMIC_ACQUIRE) == CNT_SHARD_ACTIVE) {
                sum += cnt_shard_value(shard, id, what);
            }
        }
        if (__atomic_load_n(&cnt_seq, __ATOMIC_RELAXED) == seq) {
            return sum;
        }
    }
}

/* A shard plus its live children (blocks created with cnt_block_create_child()). */
static uint64_t cnt_family_sum(const cnt_shard_t *shard, cnt_id_t id, cnt_read_what_t what)
{
    if (__atomic_load_n(&shard->meta.bind, __ATOMIC_RELAXED) == IBMSG_T_BIND_THREAD) {
        return cnt_shard_value(shard, id, what); /* threads have no children */
    }
    for (;;) {
        uint64_t seq = __atomic_load_n(&cnt_seq, __ATOMIC_ACQUIRE);
        uint64_t sum;

        if (seq & 1) {
            sched_yield();
            continue;
        }
        sum = cnt_shard_value(shard, id, what);
        for (const cnt_shard_t *s = __atomic_load_n(&cnt_shards, __ATOMIC_ACQUIRE); s != NULL;
             s = s->meta.next) {
            if (__atomic_load_n(&s->meta.parent, __ATOMIC_ACQUIRE) == shard &&
                __atomic_load_n(&s->meta.state, __ATOMIC_ACQUIRE) == CNT_SHARD_ACTIVE) {
                sum += cnt_shard_value(s, id, what);
            }
        }
        if (__atomic_load_n(&cnt_seq, __ATOMIC_RELAXED) == seq) {
            return sum;
        }
    }
}

/* The counters that read as a sum of slots (counter_table.h): {id, part}. */
static const struct {
    cnt_id_t id, part;
} cnt_sum_parts[] = {
#define CNT_SUM_PART(id, part) {CNT_##id, CNT_##part},
    CNT_SUM_TABLE(CNT_SUM_PART)
#undef CNT_SUM_PART
};

static uint64_t cnt_slot_sum(const cnt_shard_t *shard, cnt_id_t id, cnt_read_what_t what)
{
    return shard != NULL ? cnt_family_sum(shard, id, what) : cnt_sum(id, what);
}

uint64_t cnt_read(const cnt_shard_t *shard, cnt_id_t id, cnt_read_what_t what)
{
    int kind = cnt_id_kind(id);
    uint64_t value;

    if (kind < 0 || (what != CNT_READ_VALUE && kind != CNT_KIND_LEVEL_WM)) {
        return 0;
    }
    value = cnt_slot_sum(shard, id, what);
    /* Each slot a consistent sum of its own: counters only grow, so the total is exact at rest
       and, while they move, between the values before and after the read. */
    for (size_t i = 0; i < UTIL_ARRAY_SIZE(cnt_sum_parts); i++) {
        if (cnt_sum_parts[i].id == id) {
            value += cnt_slot_sum(shard, cnt_sum_parts[i].part, what);
        }
    }
    return kind == CNT_KIND_TIMER ? cnt_tick_to_ns(value) : value;
}

/* ---- Lookup and references ----------------------------------------------------------------- */

cnt_shard_t *cnt_shard_lookup(int bind, const void *obj, int ref)
{
    cnt_shard_t *found = NULL;

    if (obj == NULL) {
        return NULL;
    }
    if (ref) {
        pthread_mutex_lock(&cnt_lock);
    }
    for (cnt_shard_t *shard = __atomic_load_n(&cnt_shards, __ATOMIC_ACQUIRE); shard != NULL;
         shard = shard->meta.next) {
        int state = __atomic_load_n(&shard->meta.state, __ATOMIC_ACQUIRE);

        if (state == CNT_SHARD_FREE ||
            __atomic_load_n(&shard->meta.bind, __ATOMIC_RELAXED) != bind) {
            continue;
        }
        if (bind == IBMSG_T_BIND_THREAD
                ? (const void *)shard == obj
                : __atomic_load_n(&shard->meta.owner, __ATOMIC_RELAXED) == obj) {
            found = shard;
            if (state == CNT_SHARD_ACTIVE) {
                break; /* a live owner wins over a retired block of the same address */
            }
        }
    }
    if (ref) {
        if (found != NULL) {
            found->meta.refs++;
        }
        pthread_mutex_unlock(&cnt_lock);
    }
    return found;
}

void cnt_shard_unref(cnt_shard_t *shard)
{
    pthread_mutex_lock(&cnt_lock);
    if (shard->meta.refs > 0 && --shard->meta.refs == 0 && shard->meta.state == CNT_SHARD_RETIRED) {
        /* Already folded: only stop keeping it. */
        __atomic_store_n(&shard->meta.state, CNT_SHARD_FREE, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&cnt_lock);
}

int cnt_shard_node(const cnt_shard_t *shard)
{
    return shard->meta.node;
}

void cnt_thread_list(int len, cnt_shard_t *out[], int *num)
{
    int n = 0;

    pthread_mutex_lock(&cnt_lock);
    for (cnt_shard_t *shard = cnt_shards; shard != NULL; shard = shard->meta.next) {
        if (shard->meta.state == CNT_SHARD_ACTIVE && shard->meta.bind == IBMSG_T_BIND_THREAD) {
            if (n < len) {
                out[n] = shard;
            }
            n++;
        }
    }
    pthread_mutex_unlock(&cnt_lock);
    if (num != NULL) {
        *num = n;
    }
}

/* ---- Gates --------------------------------------------------------------------------------- */

/* Set (open) or clear the bit of a block watching timer id (cnt_lock held). */
static void cnt_watch_set(const cnt_shard_t *block, int open)
{
    if (open) {
        __atomic_fetch_or(block->meta.watch_flags, block->meta.watch_bit, __ATOMIC_RELEASE);
    } else {
        __atomic_fetch_and(block->meta.watch_flags, (uint8_t)~block->meta.watch_bit,
                           __ATOMIC_RELEASE);
    }
}

/* The gate of timer id opens or closes: store it and mirror it into the blocks watching it. */
static void cnt_timer_gate_set(cnt_id_t id, int open)
{
    __atomic_store_n(&cnt_timer_gate[id], (uint8_t)open, __ATOMIC_RELEASE);
    for (cnt_shard_t *s = cnt_shards; s != NULL; s = s->meta.next) {
        if (s->meta.state == CNT_SHARD_ACTIVE && s->meta.watch_flags != NULL &&
            s->meta.watch_id == id) {
            cnt_watch_set(s, open);
        }
    }
}

void cnt_timer_gate_start(cnt_id_t id)
{
    cnt_tick_setup(); /* the clock is chosen before any region can read it */
    pthread_mutex_lock(&cnt_lock);
    if (cnt_timer_starts[id]++ == 0) {
        cnt_timer_gate_set(id, 1);
    }
    pthread_mutex_unlock(&cnt_lock);
}

void cnt_timer_gate_stop(cnt_id_t id)
{
    pthread_mutex_lock(&cnt_lock);
    if (cnt_timer_starts[id] > 0 && --cnt_timer_starts[id] == 0) {
        cnt_timer_gate_set(id, 0);
    }
    pthread_mutex_unlock(&cnt_lock);
}

void cnt_block_watch_timer(cnt_shard_t *block, cnt_id_t id, uint8_t *flags, uint8_t bit)
{
    pthread_mutex_lock(&cnt_lock);
    block->meta.watch_flags = flags;
    block->meta.watch_id = id;
    block->meta.watch_bit = bit;
    cnt_watch_set(block, cnt_timer_starts[id] > 0);
    pthread_mutex_unlock(&cnt_lock);
}

/*
 * Make every thread of the process pass a full barrier: after it, a thread's next load sees what
 * this thread stored before it, and this thread's next load what the others stored before it.
 * The private expedited command takes microseconds; the global one, where the private one is
 * missing (before Linux 4.14) or refused, milliseconds. Where neither works (a seccomp filter,
 * an old kernel) the restart goes on without it, and says so once. Holds cnt_lock.
 */
static void cnt_all_threads_barrier(void)
{
    static int how; /* 0: not tried yet, 1: private expedited, 2: global, 3: none */

    if (how == 0) {
        how = syscall(SYS_membarrier, MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED, 0, 0) == 0 ? 1 : 2;
    }
    if (how == 1 && syscall(SYS_membarrier, MEMBARRIER_CMD_PRIVATE_EXPEDITED, 0, 0) == 0) {
        return;
    }
    if (how <= 2 && syscall(SYS_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) == 0) {
        how = 2;
        return;
    }
    if (how != 3) {
        how = 3;
        util_warn("membarrier(2) unavailable (%s): a watermark started while another thread "
                  "moves its level may miss the step made at that instant",
                  strerror(errno));
    }
}

/*
 * Restart the marks of LEVEL_WM id (cnt_lock held): "no mark yet" in every shard, the barrier,
 * then each shard's level as its base (see shard.h for why this is enough), and no distance of
 * the retired shards' marks from their final levels.
 */
static void cnt_wm_restart(cnt_id_t id)
{
    cnt_shard_t *shard;

    for (shard = cnt_shards; shard != NULL; shard = shard->meta.next) {
        __atomic_store_n(&shard->slot[id + CNT_WM_HIGH], CNT_WM_NONE_HIGH, __ATOMIC_RELAXED);
        __atomic_store_n(&shard->slot[id + CNT_WM_LOW], CNT_WM_NONE_LOW, __ATOMIC_RELAXED);
    }
    cnt_all_threads_barrier();
    for (shard = cnt_shards; shard != NULL; shard = shard->meta.next) {
        __atomic_store_n(&shard->slot[id + CNT_WM_BASE],
                         __atomic_load_n(&shard->slot[id], __ATOMIC_ACQUIRE), __ATOMIC_RELEASE);
    }
    __atomic_store_n(&cnt_retired[id + CNT_WM_HIGH], 0, __ATOMIC_RELEASE);
    __atomic_store_n(&cnt_retired[id + CNT_WM_LOW], 0, __ATOMIC_RELEASE);
}

void cnt_wm_start(cnt_id_t id)
{
    pthread_mutex_lock(&cnt_lock);
    if (cnt_wm_starts[id]++ == 0) {
        cnt_wm_restart(id);
    }
    pthread_mutex_unlock(&cnt_lock);
}

void cnt_wm_stop(cnt_id_t id)
{
    pthread_mutex_lock(&cnt_lock);
    if (cnt_wm_starts[id] > 0) {
        cnt_wm_starts[id]--;
    }
    pthread_mutex_unlock(&cnt_lock);
}
