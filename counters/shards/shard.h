/*
 * NUMA-local counter shards: the hot-path counters of ibmsg.
 *
 * A shard is one slot per counter id of counters/shards/counter_table.h, cache-line aligned and
 * padded to 128 bytes, allocated on the NUMA node of the CPU its creator runs on. There are two
 * kinds:
 * - thread shards: one per thread that counts, created on its first cnt_shard_get();
 * - blocks: owned by an object (an endpoint, a context), created with cnt_block_create(), so a
 *   variable can bind to that object. A block has one writer at a time (its owner serializes).
 * Each update goes to exactly one shard. Readers sum every live shard plus the totals that exited
 * threads and destroyed blocks left behind ("retired"), so nothing is ever lost; a thread's exit
 * folds its shard into the retired totals (a pthread key destructor) and recycles it.
 *
 * Why the update path has no lock, no LOCK-prefixed atomic, no allocation and no syscall: a
 * counter is bumped on every message, poll and completion, where a locked RMW costs ~20 cycles
 * uncontended and hundreds contended, and a lock or syscall more. Since only one thread writes a
 * shard, a relaxed load plus a relaxed store (a plain load, add and store on x86) is exact; the
 * relaxed atomics only keep concurrent readers race-free. Everything that costs (allocation, the
 * shard list, folding) happens once per thread or object, out of line.
 *
 * Watermarks of a sharded level. Each shard keeps the maximum and minimum its own level reached
 * since the variable's marks last restarted; they restart when the first handle of one of the
 * variable's watermarks starts (none was running), so a watermark starts from the current level.
 * - Bound to one shard (a thread, a block): exact, the max/min of that shard's level.
 * - NO_OBJECT: the sum of the per-shard maxima (minima), an UPPER bound of the true maximum of
 *   the summed level (a LOWER bound of its minimum), exact when one shard moves. It is the exact
 *   maximum when every shard peaks at the same time, and never less than the level.
 * - A handle started while another handle of the same variable runs sees the watermark since the
 *   earlier start: again a bound in the same direction, never an underestimate of a high mark.
 * The restart is the reader's work, so that a step need not ask whether one happened: the
 * starting thread puts "no mark yet" into every shard's marks, waits until every thread of the
 * process has passed a full barrier (membarrier(2)), then stores each shard's level as the
 * base the marks count from (cnt_wm_start()). A read takes the max (min) of mark, base and
 * level. Started on the writer's thread, the marks are exact; started while another thread
 * moves the level, they cover at least the time from the start's return and nothing before its
 * call (a step in flight during the start may or may not count).
 * Two kinds of step: cnt_level_add() keeps the mark of its direction at once; a level that
 * moves one way in one place and the other way in another (a queue filled by the caller and
 * drained by the progress engine) may take cnt_level_run_add(), a bare add, when its writer
 * calls cnt_level_mark_high() / _low() wherever the direction can change (see there).
 */
#ifndef IBMSG_COUNTERS_SHARD_H
#define IBMSG_COUNTERS_SHARD_H

#include <stdint.h>

#include "counters/shards/counter_table.h"
#include "counters/shards/tick.h"
#include "util/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Slot ids. A LEVEL_WM takes four consecutive slots: the level, its high and low marks (the
 * writer's; a restart resets them) and the base, the level at the restart (the reader's).
 */
#define CNT_SLOTS_COUNTER(id)                                       CNT_##id,
#define CNT_SLOTS_LEVEL(id)                                         CNT_##id,
#define CNT_SLOTS_TIMER(id)                                         CNT_##id,
#define CNT_SLOTS_LEVEL_WM(id)                                      CNT_##id, CNT_##id##_WM_LAST_ = CNT_##id + CNT_WM_SLOTS - 1,
#define CNT_SLOTS(id, name, kind, owner, verbosity, category, desc) CNT_SLOTS_##kind(id)

enum {
    CNT_WM_HIGH = 1, /* slot offsets from a LEVEL_WM's id */
    CNT_WM_LOW = 2,
    CNT_WM_BASE = 3,
    CNT_WM_SLOTS = 4,
};

typedef enum cnt_id { CNT_COUNTER_TABLE(CNT_SLOTS) CNT_SLOT_COUNT } cnt_id_t;

/* The number of counters in the table (not slots). */
#define CNT_ONE(id, name, kind, owner, verbosity, category, desc) +1
enum { CNT_COUNTER_COUNT = 0 CNT_COUNTER_TABLE(CNT_ONE) };
#undef CNT_ONE

/* Counter kinds (of the table's kind column). */
typedef enum cnt_kind {
    CNT_KIND_COUNTER = 0,
    CNT_KIND_LEVEL,
    CNT_KIND_LEVEL_WM,
    CNT_KIND_TIMER,
} cnt_kind_t;

/* What a read returns. */
typedef enum cnt_read_what {
    CNT_READ_VALUE = 0, /* counters: total; levels: current; timers: nanoseconds */
    CNT_READ_HIGH,      /* LEVEL_WM: high watermark (see the file comment) */
    CNT_READ_LOW,       /* LEVEL_WM: low watermark */
} cnt_read_what_t;

/* Shard states (meta.state). */
enum {
    CNT_SHARD_FREE = 0, /* in the pool, counts nothing */
    CNT_SHARD_ACTIVE,   /* owned by a live thread or object: summed by readers */
    CNT_SHARD_RETIRED,  /* owner gone, values folded into the retired totals; kept because a
                           handle is still bound to it (reads give its final values) */
};

/* What readers and the shard list need; written only under the shard-list lock. */
typedef struct cnt_shard_meta {
    struct cnt_shard *next;   /* all shards ever made: an append-only list, read lock-free */
    int state;                /* CNT_SHARD_*; atomic: readers load it without the lock */
    int bind;                 /* IBMSG_T_BIND_THREAD, or the bind type of a block */
    int node;                 /* NUMA node the memory is on, -1 without libnuma */
    int refs;                 /* tool handles bound to this shard */
    long tid;                 /* thread shards: the kernel thread id */
    void *owner;              /* blocks: the object, as the tool interface's obj pointer */
    struct cnt_shard *parent; /* blocks: the block this one folds into (an endpoint's context) */
    uint8_t *watch_flags;     /* blocks: the owner's byte mirroring a timer's gate, or NULL */
    cnt_id_t watch_id;        /* ... the timer (cnt_block_watch_timer(); active blocks only) */
    uint8_t watch_bit;        /* ... and its bit there */
} cnt_shard_meta_t;

/*
 * The slots come first and start on a 128-byte boundary; the metadata, which other threads
 * write under the list lock, starts on another, so they never share a line with a writer.
 */
typedef struct cnt_shard {
    uint64_t slot[CNT_SLOT_COUNT];
    cnt_shard_meta_t meta UTIL_CACHE_ALIGNED;
} cnt_shard_t;

UTIL_STATIC_ASSERT(sizeof(cnt_shard_t) % UTIL_FALSE_SHARING_GAP == 0, "shard padding");
UTIL_STATIC_ASSERT(sizeof(unsigned long long) == sizeof(uint64_t), "slot width");

/* The calling thread's shard, NULL until its first cnt_shard_get(). Initial-exec: one load. */
extern __thread cnt_shard_t *cnt_shard_tls __attribute__((tls_model("initial-exec")));

/* Per counter id: timers run only while this is set (a handle of that timer is started). */
extern UTIL_HIDDEN uint8_t cnt_timer_gate[CNT_SLOT_COUNT];

/* ---- Hot path ------------------------------------------------------------------------------ */

/** Slow path of cnt_shard_get(): create (or recycle) the calling thread's shard. */
cnt_shard_t *cnt_shard_self_slow(void);

/**
 * The calling thread's shard, created on first use on the node the thread runs on. Look it up
 * once (at context or endpoint creation) and pass it on; never NULL (if memory runs out the
 * thread shares an emergency shard, where concurrent updates may be lost; that is logged).
 */
static UTIL_ALWAYS_INLINE cnt_shard_t *cnt_shard_get(void)
{
    cnt_shard_t *shard = cnt_shard_tls;

    if (util_unlikely(shard == NULL)) {
        shard = cnt_shard_self_slow();
    }
    return shard;
}

/*
 * Add n to a slot only this thread writes. On x86-64 one add to memory without a LOCK prefix:
 * its aligned 8-byte store is seen whole by readers, and it is one instruction where a relaxed
 * load and store are three (compilers do not fuse atomics into one add). Elsewhere, and under
 * ThreadSanitizer (which then sees every write), the relaxed load and store.
 */
#if defined(__SANITIZE_THREAD__)
#define CNT_X86_ASM 0
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CNT_X86_ASM 0
#endif
#endif
#if !defined(CNT_X86_ASM) && defined(__x86_64__)
#define CNT_X86_ASM 1
#elif !defined(CNT_X86_ASM)
#define CNT_X86_ASM 0
#endif
static UTIL_ALWAYS_INLINE void cnt_slot_add(uint64_t *p, uint64_t n)
{
#if CNT_X86_ASM
    __asm__("addq %1, %0" : "+m"(*p) : "er"(n) : "cc");
#else
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) + n, __ATOMIC_RELAXED);
#endif
}

/*
 * Whether a gate byte (cnt_timer_gate) is open. On x86-64 a compare of the byte in
 * memory and a jump: two instructions where a load, test and jump are three.
 */
static UTIL_ALWAYS_INLINE int cnt_gate_open(const uint8_t *gate)
{
#if CNT_X86_ASM
    __asm__ goto("cmpb $0, %0\n\tjne %l1" : : "m"(*gate) : "cc" : open);
    return 0;
open:
    return 1;
#else
    return __atomic_load_n(gate, __ATOMIC_ACQUIRE) != 0;
#endif
}

/* Subtract n from a slot only this thread writes: cnt_slot_add() for a fall known as a count. */
static UTIL_ALWAYS_INLINE void cnt_slot_sub(uint64_t *p, uint64_t n)
{
#if CNT_X86_ASM
    __asm__("subq %1, %0" : "+m"(*p) : "er"(n) : "cc");
#else
    __atomic_store_n(p, __atomic_load_n(p, __ATOMIC_RELAXED) - n, __ATOMIC_RELAXED);
#endif
}

/** Add n to counter id of shard. Only the shard's writer may call this. */
static UTIL_ALWAYS_INLINE void cnt_add(cnt_shard_t *shard, cnt_id_t id, uint64_t n)
{
    cnt_slot_add(&shard->slot[id], n);
}

static UTIL_ALWAYS_INLINE void cnt_inc(cnt_shard_t *shard, cnt_id_t id)
{
    cnt_add(shard, id, 1);
}

/* Whether id is a LEVEL_WM; folds to a constant for a constant id. */
#define CNT_WM_CASE_COUNTER(id)
#define CNT_WM_CASE_LEVEL(id)
#define CNT_WM_CASE_TIMER(id)
#define CNT_WM_CASE_LEVEL_WM(id)                                      case CNT_##id:
#define CNT_WM_CASE(id, name, kind, owner, verbosity, category, desc) CNT_WM_CASE_##kind(id)
static UTIL_ALWAYS_INLINE int cnt_id_has_wm(cnt_id_t id)
{
    switch (id) {
        CNT_COUNTER_TABLE(CNT_WM_CASE)
        return 1;
    default:
        return 0;
    }
}

/*
 * The writer's own read of a slot only it writes (a level). Plain: its stores stay atomic, for
 * readers on other threads, so the compiler may compare with the slot in memory.
 */
static UTIL_ALWAYS_INLINE uint64_t cnt_own_slot(const uint64_t *p)
{
    return *p;
}

/*
 * "No mark since the restart": a restart stores these, and the first step of the direction
 * replaces them (any level is above CNT_WM_NONE_HIGH and below CNT_WM_NONE_LOW).
 */
#define CNT_WM_NONE_HIGH ((uint64_t)INT64_MIN)
#define CNT_WM_NONE_LOW  ((uint64_t)INT64_MAX)

/*
 * Whether level v is above (below) the mark at p. A restart on another thread may store the mark,
 * so the compare reads it as an atomic would: on x86-64 one compare with the slot in memory and
 * a jump (a relaxed load is a load more), elsewhere and under ThreadSanitizer a relaxed load.
 */
static UTIL_ALWAYS_INLINE int cnt_wm_above(int64_t v, const uint64_t *p)
{
#if CNT_X86_ASM
    __asm__ goto("cmpq %0, %1\n\tjg %l2" : : "m"(*p), "r"(v) : "cc" : above);
    return 0;
above:
    return 1;
#else
    return v > (int64_t)__atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

static UTIL_ALWAYS_INLINE int cnt_wm_below(int64_t v, const uint64_t *p)
{
#if CNT_X86_ASM
    __asm__ goto("cmpq %0, %1\n\tjl %l2" : : "m"(*p), "r"(v) : "cc" : below);
    return 0;
below:
    return 1;
#else
    return v < (int64_t)__atomic_load_n(p, __ATOMIC_RELAXED);
#endif
}

/* Raise the high (lower the low) mark of the LEVEL_WM at s to now if now passes it. */
static UTIL_ALWAYS_INLINE void cnt_wm_raise(uint64_t *s, int64_t now)
{
    if (cnt_wm_above(now, &s[CNT_WM_HIGH])) {
        __atomic_store_n(&s[CNT_WM_HIGH], (uint64_t)now, __ATOMIC_RELAXED);
    }
}

static UTIL_ALWAYS_INLINE void cnt_wm_lower(uint64_t *s, int64_t now)
{
    if (cnt_wm_below(now, &s[CNT_WM_LOW])) {
        __atomic_store_n(&s[CNT_WM_LOW], (uint64_t)now, __ATOMIC_RELAXED);
    }
}

/*
 * A step of a run: the level of LEVEL_WM id moves by delta and its marks do not look. The marks
 * stay exact if, between two calls of cnt_level_mark_high() / _low(), the level moves one way
 * only: the extremes of such a run are its ends, its start was marked and its end is the level
 * (a read takes the max and min with the level). So the writer marks the high mark where rises
 * end and falls begin, and the low mark where falls end, e.g. before and after each batch of
 * arrivals for a queue that the caller fills and the arrivals drain; a step out of that order
 * marks the other direction first, then takes cnt_level_add().
 */
static UTIL_ALWAYS_INLINE void cnt_level_run_add(cnt_shard_t *shard, cnt_id_t id, int64_t delta)
{
    cnt_slot_add(&shard->slot[id], (uint64_t)delta);
}

/* A fall of a run by n (cnt_level_run_add() of -n, one instruction where the negation is two). */
static UTIL_ALWAYS_INLINE void cnt_level_run_sub(cnt_shard_t *shard, cnt_id_t id, uint64_t n)
{
    cnt_slot_sub(&shard->slot[id], n);
}

/* Keep the high (low) mark of LEVEL_WM id at the current level: the end of a run (see above). */
static UTIL_ALWAYS_INLINE void cnt_level_mark_high(cnt_shard_t *shard, cnt_id_t id)
{
    uint64_t *p = &shard->slot[id];

    cnt_wm_raise(p, (int64_t)cnt_own_slot(p));
}

static UTIL_ALWAYS_INLINE void cnt_level_mark_low(cnt_shard_t *shard, cnt_id_t id)
{
    uint64_t *p = &shard->slot[id];

    cnt_wm_lower(p, (int64_t)cnt_own_slot(p));
}

/** The level id of shard as this shard moved it (its own slot). Only the shard's writer. */
static UTIL_ALWAYS_INLINE int64_t cnt_level_own(const cnt_shard_t *shard, cnt_id_t id)
{
    return (int64_t)cnt_own_slot(&shard->slot[id]);
}

/**
 * Move level id of shard by delta (LEVEL or LEVEL_WM): a step of a run that marks at once. A rise
 * can only raise the high mark and a fall only lower the low one, so a constant delta compares
 * one mark. Only the shard's writer may call this.
 */
static UTIL_ALWAYS_INLINE void cnt_level_add(cnt_shard_t *shard, cnt_id_t id, int64_t delta)
{
    cnt_level_run_add(shard, id, delta);
    if (cnt_id_has_wm(id)) {
        if (delta > 0) {
            cnt_level_mark_high(shard, id);
        } else if (delta < 0) {
            cnt_level_mark_low(shard, id);
        }
    }
}

static UTIL_ALWAYS_INLINE void cnt_level_inc(cnt_shard_t *shard, cnt_id_t id)
{
    cnt_level_add(shard, id, 1);
}

static UTIL_ALWAYS_INLINE void cnt_level_dec(cnt_shard_t *shard, cnt_id_t id)
{
    cnt_level_add(shard, id, -1);
}

typedef uint64_t cnt_tick_t;

/** Whether a handle of timer id runs: a caller may choose a timed path once for a region. */
static UTIL_ALWAYS_INLINE int cnt_timer_on(cnt_id_t id)
{
    return cnt_gate_open(&cnt_timer_gate[id]);
}

/**
 * Begin a timed region of timer id. Returns 0 (and reads no clock) unless a handle of that timer
 * is started, so an unobserved region costs one load and a branch.
 */
static UTIL_ALWAYS_INLINE cnt_tick_t cnt_timer_start(cnt_id_t id)
{
    if (util_likely(!cnt_timer_on(id))) {
        return 0;
    }
    return cnt_tick_now();
}

/** End a timed region begun with cnt_timer_start(); adds its ticks to shard. */
static UTIL_ALWAYS_INLINE void cnt_timer_stop(cnt_shard_t *shard, cnt_id_t id, cnt_tick_t start)
{
    if (util_unlikely(start != 0)) {
        cnt_add(shard, id, cnt_tick_now() - start);
    }
}

/* ---- Slow paths: objects, reading, gates (all thread safe) ---------------------------------- */

/** The kind of a counter id (its table entry), or -1 if id is not a counter's first slot. */
int cnt_id_kind(int id);
/** The table entry of id: its name and owner binding; NULL / -1 if id is not a counter. */
const char *cnt_id_name(int id);
int cnt_id_owner(int id);

/**
 * Create a block of counters owned by an object (an endpoint, a context), on the NUMA node of
 * the calling thread's CPU. bind is the IBMSG_T_BIND_* type of owner; owner is the object
 * variables bind to (the pointer a tool's obj_handle holds), not NULL. One thread at a time
 * writes a block. Returns IBMSG_OK, IBMSG_ERR_INVALID or IBMSG_ERR_NO_MEMORY.
 */
int cnt_block_create(int bind, void *owner, cnt_shard_t **block);

/**
 * Create a block like cnt_block_create() whose counts also belong to parent, a live block (an
 * endpoint's block in its context's): reading parent (cnt_read() with parent, or a variable bound
 * to parent's owner) gives parent's own slots plus those of its live children, and destroying
 * the child folds its values into parent rather than into the retired totals, so the parent's
 * view never goes back. The child and the parent must have the same writer (the thread that
 * uses the context), which also destroys the child. A parent destroyed first orphans its
 * children: they retire into the global totals as plain blocks. Returns IBMSG_OK,
 * IBMSG_ERR_INVALID (also when parent is not a live block) or IBMSG_ERR_NO_MEMORY.
 */
int cnt_block_create_child(int bind, void *owner, cnt_shard_t *parent, cnt_shard_t **block);

/**
 * Destroy a block: its values join the retired totals (sums do not go back) and it is recycled
 * once no tool handle is bound to it. Its writer must be done with it. NULL is ignored.
 */
void cnt_block_destroy(cnt_shard_t *block);

/**
 * Read counter id: from one shard (a thread's, or a block plus its live children), or summed
 * over every shard and the retired totals when shard is NULL. A high (low) watermark of a block
 * with children is the sum of their marks: an upper (lower) bound, as for NULL. Counters give their
 * total since the process (or the shard's first owner) began, levels and watermarks their value as
 * a two's complement int64, timers nanoseconds. Lock-free; never blocks writers. A read concurrent
 * with updates returns a value the sum had between the start and the end of the read.
 */
uint64_t cnt_read(const cnt_shard_t *shard, cnt_id_t id, cnt_read_what_t what);

/**
 * Find the shard a tool's object names: for IBMSG_T_BIND_THREAD obj is an ibmsg_t_thread_t
 * (the thread's shard), for a block's bind type the block's owner. With ref, the shard is kept
 * (not recycled) until cnt_shard_unref(). Returns NULL when obj names no shard of that type.
 */
cnt_shard_t *cnt_shard_lookup(int bind, const void *obj, int ref);
void cnt_shard_unref(cnt_shard_t *shard);

/** The NUMA node a shard's memory was allocated on (-1 without libnuma). */
int cnt_shard_node(const cnt_shard_t *shard);

/*
 * Called once a thread has its shard (and again at each ibmsg_t_thread_self), with the shard as
 * the thread's identity and its kernel tid: counters/builtin.c points it at PAPI, which counts
 * per thread, so the shards need not know PAPI. Never on the update path.
 */
typedef void (*cnt_shard_thread_hook_t)(const void *owner, long tid);
/** Install the hook (NULL: none). */
void cnt_shard_set_thread_hook(cnt_shard_thread_hook_t hook);
/** Call the hook for shard, if one is installed. */
void cnt_shard_thread_begins(cnt_shard_t *shard);

/**
 * The live thread shards: up to len are written to out, *num (not NULL) is set to how many
 * there are. Threads that exited are not listed.
 */
void cnt_thread_list(int len, cnt_shard_t *out[], int *num);

/** Count one more (less) started handle of timer id; the timer runs while the count is > 0. */
void cnt_timer_gate_start(cnt_id_t id);
void cnt_timer_gate_stop(cnt_id_t id);

/**
 * Mirror the gate of timer id into bit of *flags, a byte of the block's owner, while the block
 * lives: set (an atomic OR) while a handle of the timer runs, now if one does, cleared when the
 * last stops. The owner can then test one byte of its own for the timer and its other rare
 * conditions, where the gate would be a test more (the context's progress call). One timer per
 * block; flags must outlive the block. Only the block's writer calls this.
 */
void cnt_block_watch_timer(cnt_shard_t *block, cnt_id_t id, uint8_t *flags, uint8_t bit);

/**
 * Count one more (less) started watermark handle of LEVEL_WM id. When none was running, the
 * marks of every shard restart from its current level (see the file comment; the start waits
 * for a membarrier(2), microseconds).
 */
void cnt_wm_start(cnt_id_t id);
void cnt_wm_stop(cnt_id_t id);

#ifdef __cplusplus
}
#endif

#endif
