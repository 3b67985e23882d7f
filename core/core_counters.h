/*
 * The core's and verbs layer's hot-path counters of one context, declared once (X-macro: id,
 * name, class, description). For now they are plain uint64_t fields of a cache-line-aligned
 * block owned by the context: one context is used by one thread at a time, so there is a single
 * writer and no atomic is needed. Switching them to the counters/ shard API is a change to this
 * file only.
 *
 * Classes: C = counter (only increments), L = level (goes up and down; its high watermark is
 * the entry named <name>_hwm right after it, class W).
 */
#ifndef IBMSG_CORE_COUNTERS_H
#define IBMSG_CORE_COUNTERS_H

#include <stdint.h>

#include "util/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CORE_COUNTER_LIST(X)                                                                     \
    X(MSGS_SENT, core_msgs_sent, C, "tagged messages sent (eager and inline)")                   \
    X(BYTES_SENT, core_bytes_sent, C, "payload bytes of tagged messages sent")                   \
    X(EAGER_MSGS_SENT, core_eager_msgs_sent, C, "messages sent through a bounce buffer")         \
    X(INLINE_MSGS_SENT, core_inline_msgs_sent, C, "messages sent inline")                        \
    X(MSGS_RECVD, core_msgs_recvd, C, "tagged messages received")                                \
    X(BYTES_RECVD, core_bytes_recvd, C, "payload bytes of tagged messages received")             \
    X(UNEXPECTED_MSGS, core_unexpected_msgs, C, "messages that arrived before their receive")    \
    X(TRUNCATED_MSGS, core_truncated_msgs, C, "messages longer than the matching receive")       \
    X(MATCH_ATTEMPTS, core_match_attempts, C, "queue entries compared while matching")           \
    X(POSTED_LEN, core_posted_queue_len, L, "receives posted and not yet matched")               \
    X(POSTED_HWM, core_posted_queue_len_hwm, W, "high watermark of core_posted_queue_len")       \
    X(UNEXPECTED_LEN, core_unexpected_queue_len, L, "unexpected messages not yet received")      \
    X(UNEXPECTED_HWM, core_unexpected_queue_len_hwm, W, "high watermark of unexpected queue")    \
    X(CREDIT_MSGS_SENT, core_credit_msgs_sent, C, "explicit credit returns sent")                \
    X(CREDIT_MSGS_RECVD, core_credit_msgs_recvd, C, "explicit credit returns received")          \
    X(CREDIT_STALLS, core_credit_stalls, C, "sends queued for lack of credits")                  \
    X(WIRE_REJECTED, core_wire_rejected, C, "headers from the wire rejected as malformed")       \
    X(CQ_POLLS, verbs_cq_polls, C, "completion queue polls")                                     \
    X(CQ_POLLS_EMPTY, verbs_cq_polls_empty, C, "completion queue polls that found nothing")      \
    X(COMPLETIONS, verbs_completions, C, "work completions handled")                             \
    X(WC_ERRORS, verbs_wc_errors, C, "work completions with an error status (flushes excluded)") \
    X(RNR_EVENTS, verbs_rnr_events, C, "sends that failed with RNR retries exceeded")            \
    X(SEND_POSTS, verbs_send_posts, C, "ibv_post_send calls")                                    \
    X(RECV_POSTS, verbs_recv_posts, C, "receive work requests posted")                           \
    X(POOL_IN_USE, verbs_pool_bufs_in_use, L, "bounce buffers in use (send and receive)")        \
    X(POOL_IN_USE_HWM, verbs_pool_bufs_in_use_hwm, W, "high watermark of bounce buffers in use")

typedef enum core_counter_id {
#define CORE_COUNTER_ENUM(id, name, cls, desc) CORE_CNT_##id,
    CORE_COUNTER_LIST(CORE_COUNTER_ENUM)
#undef CORE_COUNTER_ENUM
        CORE_CNT_LAST
} core_counter_id_t;

typedef struct core_counters {
    uint64_t v[CORE_CNT_LAST];
} UTIL_CACHE_ALIGNED core_counters_t;

/** Add n to a counter. */
static UTIL_ALWAYS_INLINE void core_count_add(core_counters_t *c, core_counter_id_t id, uint64_t n)
{
    c->v[id] += n;
}

static UTIL_ALWAYS_INLINE void core_count_inc(core_counters_t *c, core_counter_id_t id)
{
    c->v[id]++;
}

/** Move a level by delta and push its watermark (the entry after it) up when passed. */
static UTIL_ALWAYS_INLINE void core_level_add(core_counters_t *c, core_counter_id_t id,
                                              int64_t delta)
{
    c->v[id] += (uint64_t)delta;
    if (c->v[id] > c->v[id + 1]) {
        c->v[id + 1] = c->v[id];
    }
}

static inline uint64_t core_count_get(const core_counters_t *c, core_counter_id_t id)
{
    return c->v[id];
}

/** The counter's variable name (for registration and tests). */
const char *core_counter_name(core_counter_id_t id);

/**
 * Register every counter as a performance variable bound to a context (once; after the
 * categories of core_config_init exist).
 */
void core_counters_init(void);

#ifdef __cplusplus
}
#endif

#endif
