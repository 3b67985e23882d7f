/*
 * Tag matching of one context: the posted-receive queue (in posting order) and the
 * unexpected-message queue (in arrival order). A receive matches a message when its endpoint
 * is the message's or NULL (any) and (message tag ^ receive tag) & mask is 0. Searching the
 * posted queue in order for each arrival, and the unexpected queue in order for each new
 * receive, gives MPI's non-overtaking rule (RC delivers each connection in order).
 * Entries are embedded in requests and receive descriptors: no allocation here.
 *
 * The queue lengths (core_posted_recvq_length, core_unexpected_recvq_length) are levels with
 * watermarks. The posted queue's moves in runs (cnt_level_run_add(): an add, no compare):
 * receives join it outside a batch of arrivals, arrivals take from it inside one (progress and
 * the messaging API do not nest: an event callback may not call the messaging API), and
 * core_mq_arrivals_begin() and _end() bracket every batch to mark where the runs turn; cancels,
 * which come out of that order, mark first. Per arrival and per receive this is one add instead
 * of an add and a compare. The unexpected queue's marks at each of its steps instead: it moves
 * only with unexpected messages, which the usual pre-posted receive never meets, so a batch
 * pays nothing for it.
 */
#ifndef IBMSG_CORE_MATCH_H
#define IBMSG_CORE_MATCH_H

#include <stdint.h>

#include "core/core_counters.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct core_mq_entry {
    struct core_mq_entry *next;
    struct core_mq_entry *prev;
    const void *ep; /* posted: NULL = any endpoint; unexpected: the arrival's endpoint */
    uint64_t tag;
    uint64_t mask; /* posted only */
} core_mq_entry_t;

/* A circular list with a sentinel. */
typedef struct core_mq_list {
    core_mq_entry_t head;
} core_mq_list_t;

typedef struct core_mq {
    core_mq_list_t posted;
    core_mq_list_t unexpected;
    cnt_shard_t *cnt; /* the context's block: queue levels, match attempts, unexpected msgs */
} core_mq_t;

void core_mq_list_init(core_mq_list_t *l);
int core_mq_list_empty(const core_mq_list_t *l);
void core_mq_list_push(core_mq_list_t *l, core_mq_entry_t *e);
void core_mq_list_remove(core_mq_entry_t *e);
/** The first entry, or NULL when empty. */
core_mq_entry_t *core_mq_list_first(const core_mq_list_t *l);

/** Initialise empty queues counting into cnt. */
void core_mq_init(core_mq_t *mq, cnt_shard_t *cnt);

/** An arrival from ep with tag: the first posted receive it matches, dequeued, or NULL. */
core_mq_entry_t *core_mq_match_arrival(core_mq_t *mq, const void *ep, uint64_t tag);

/** Queue an arrival nobody waited for (e->ep, e->tag set by the caller). */
void core_mq_push_unexpected(core_mq_t *mq, core_mq_entry_t *e);

/** A new receive (ep or NULL, tag, mask): the first unexpected message it matches, dequeued. */
core_mq_entry_t *core_mq_match_posted(core_mq_t *mq, const void *ep, uint64_t tag, uint64_t mask);

/** As core_mq_match_posted, but the message stays queued (a probe). */
core_mq_entry_t *core_mq_peek_posted(core_mq_t *mq, const void *ep, uint64_t tag, uint64_t mask);

/** Queue a receive that found nothing (e->ep, tag, mask set by the caller). */
void core_mq_push_posted(core_mq_t *mq, core_mq_entry_t *e);

/*
 * Before a batch of arrivals: the run of rising posted length ends. cnt is the queues' block
 * (mq->cnt, the context's), as the caller holds it: the progress call counts its polls into the
 * same block and loads the pointer once for both.
 */
static inline void core_mq_arrivals_begin(cnt_shard_t *cnt)
{
    core_level_mark_high(cnt, CNT_CORE_POSTED_RECVQ);
}

/** After it: the run of falling posted length ends (cnt as above). */
static inline void core_mq_arrivals_end(cnt_shard_t *cnt)
{
    core_level_mark_low(cnt, CNT_CORE_POSTED_RECVQ);
}

/** Take a posted receive out (cancel). */
void core_mq_remove_posted(core_mq_t *mq, core_mq_entry_t *e);

/** Take an unexpected message out (its endpoint is going away). */
void core_mq_remove_unexpected(core_mq_t *mq, core_mq_entry_t *e);

#ifdef __cplusplus
}
#endif

#endif
