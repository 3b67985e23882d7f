/*
 * The messaging core's counting. Every counter is declared once, in
 * counters/shards/counter_table.h; this file only wraps the shard API (counters/shards/shard.h) for
 * the core's hot path. A context owns a block (its CONTEXT counters), each endpoint a child block
 * of it (its ENDPOINT counters), so a pvar reads one endpoint, one context with its endpoints, or
 * everything. The block pointer is held by the object: an update is a plain load, add and store to
 * a line only this thread writes, with no TLS lookup, lock or atomic read-modify-write.
 *
 * With -DIBMSG_CORE_COUNTERS=OFF the updates compile to nothing, to measure what counting
 * costs; the pvars then stay 0. Tests that check counts skip in such a build.
 */
#ifndef IBMSG_CORE_CORE_COUNTERS_H
#define IBMSG_CORE_CORE_COUNTERS_H

#include <stdint.h>

#include "ibmsg_config.h"
#include "counters/shards/shard.h"
#include "util/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Add n to counter id of block (the caller is the block's writer: the context's thread). */
static UTIL_ALWAYS_INLINE void core_cnt_add(cnt_shard_t *block, cnt_id_t id, uint64_t n)
{
#if IBMSG_HAVE_CORE_COUNTERS
    cnt_add(block, id, n);
#else
    (void)block;
    (void)id;
    (void)n;
#endif
}

static UTIL_ALWAYS_INLINE void core_cnt_inc(cnt_shard_t *block, cnt_id_t id)
{
    core_cnt_add(block, id, 1);
}

/*
 * Add one to counter id + which, which 0 or 1 (a pair of slots side by side): the choice is the
 * address's index register, one add where two counters' adds are two. The empty asm keeps each
 * caller's index its own: GCC otherwise scaled one index for two such adds with a shift.
 */
static UTIL_ALWAYS_INLINE void core_cnt_inc_pair(cnt_shard_t *block, cnt_id_t id, size_t which)
{
#if IBMSG_HAVE_CORE_COUNTERS
    __asm__("" : "+r"(which));
    cnt_slot_add(&block->slot[id] + which, 1);
#else
    (void)block;
    (void)id;
    (void)which;
#endif
}

/** Move level id of block by delta (its watermarks follow). */
static UTIL_ALWAYS_INLINE void core_level_add(cnt_shard_t *block, cnt_id_t id, int64_t delta)
{
#if IBMSG_HAVE_CORE_COUNTERS
    cnt_level_add(block, id, delta);
#else
    (void)block;
    (void)id;
    (void)delta;
#endif
}

/** A step of a run of level id (cnt_level_run_add(): the writer marks where runs end). */
static UTIL_ALWAYS_INLINE void core_level_run_add(cnt_shard_t *block, cnt_id_t id, int64_t delta)
{
#if IBMSG_HAVE_CORE_COUNTERS
    cnt_level_run_add(block, id, delta);
#else
    (void)block;
    (void)id;
    (void)delta;
#endif
}

/** Keep the high (low) mark of level id at its current value: a run ends here. */
static UTIL_ALWAYS_INLINE void core_level_mark_high(cnt_shard_t *block, cnt_id_t id)
{
#if IBMSG_HAVE_CORE_COUNTERS
    cnt_level_mark_high(block, id);
#else
    (void)block;
    (void)id;
#endif
}

static UTIL_ALWAYS_INLINE void core_level_mark_low(cnt_shard_t *block, cnt_id_t id)
{
#if IBMSG_HAVE_CORE_COUNTERS
    cnt_level_mark_low(block, id);
#else
    (void)block;
    (void)id;
#endif
}

#ifdef __cplusplus
}
#endif

#endif
