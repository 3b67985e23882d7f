/* Posted and unexpected queues (see match.h). */
#include "core/match.h"

#include <stddef.h>

#include "util/compiler.h"

void core_mq_list_init(core_mq_list_t *l)
{
    l->head.next = &l->head;
    l->head.prev = &l->head;
}

int core_mq_list_empty(const core_mq_list_t *l)
{
    return l->head.next == &l->head;
}

void core_mq_list_push(core_mq_list_t *l, core_mq_entry_t *e)
{
    e->prev = l->head.prev;
    e->next = &l->head;
    l->head.prev->next = e;
    l->head.prev = e;
}

void core_mq_list_remove(core_mq_entry_t *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->next = e->prev = e;
}

core_mq_entry_t *core_mq_list_first(const core_mq_list_t *l)
{
    return core_mq_list_empty(l) ? NULL : l->head.next;
}

void core_mq_init(core_mq_t *mq, cnt_shard_t *cnt)
{
    core_mq_list_init(&mq->posted);
    core_mq_list_init(&mq->unexpected);
    mq->cnt = cnt;
}

static inline int tag_matches(uint64_t msg_tag, uint64_t recv_tag, uint64_t mask)
{
    return ((msg_tag ^ recv_tag) & mask) == 0;
}

static inline int posted_matches(const core_mq_entry_t *e, const void *ep, uint64_t tag)
{
    /* The endpoint's own receive first: the test the usual receive passes at once. */
    return (e->ep == ep || e->ep == NULL) && tag_matches(tag, e->tag, e->mask);
}

/* A posted receive matched after attempts compares: dequeued and counted. */
static inline core_mq_entry_t *posted_taken(core_mq_t *mq, core_mq_entry_t *e, uint64_t attempts)
{
    cnt_shard_t *cnt = mq->cnt; /* loaded once for both updates */

    core_mq_list_remove(e);
    core_cnt_add(cnt, CNT_CORE_MATCH_ATTEMPTS, attempts);
    core_level_run_add(cnt, CNT_CORE_POSTED_RECVQ, -1); /* a run: see match.h */
    return e;
}

/* core_mq_match_arrival() past a first entry e that did not match. */
static UTIL_NOINLINE core_mq_entry_t *match_arrival_rest(core_mq_t *mq, core_mq_entry_t *e,
                                                         const void *ep, uint64_t tag)
{
    uint64_t attempts = 2;

    for (e = e->next; e != &mq->posted.head; e = e->next, attempts++) {
        if (posted_matches(e, ep, tag)) {
            return posted_taken(mq, e, attempts);
        }
    }
    core_cnt_add(mq->cnt, CNT_CORE_MATCH_ATTEMPTS, attempts - 1);
    return NULL;
}

/*
 * The searches count the entries they compare, and an empty queue's search adds nothing. The
 * posted queue's first entry is tested apart, the rest out of line: the common search ends at
 * the first with a constant count, and no count is kept in a register around a loop.
 */
core_mq_entry_t *core_mq_match_arrival(core_mq_t *mq, const void *ep, uint64_t tag)
{
    core_mq_entry_t *e = mq->posted.head.next;

    if (e == &mq->posted.head) {
        return NULL; /* nothing was attempted: no count to add */
    }
    if (util_likely(posted_matches(e, ep, tag))) {
        return posted_taken(mq, e, 1);
    }
    return match_arrival_rest(mq, e, ep, tag);
}

void core_mq_push_unexpected(core_mq_t *mq, core_mq_entry_t *e)
{
    core_mq_list_push(&mq->unexpected, e);
    core_cnt_inc(mq->cnt, CNT_CORE_UNEXPECTED_MSGS);
    core_level_add(mq->cnt, CNT_CORE_UNEXPECTED_RECVQ, 1);
}

static inline int unexpected_matches(const core_mq_entry_t *e, const void *ep, uint64_t tag,
                                     uint64_t mask)
{
    return (ep == NULL || e->ep == ep) && tag_matches(e->tag, tag, mask);
}

/*
 * The search of both peek and match: inlined into each (a call more per receive otherwise); the
 * first entry apart, as in core_mq_match_arrival().
 */
static inline core_mq_entry_t *search_unexpected(core_mq_t *mq, const void *ep, uint64_t tag,
                                                 uint64_t mask)
{
    uint64_t attempts = 2;
    core_mq_entry_t *e = mq->unexpected.head.next;

    if (e == &mq->unexpected.head) {
        return NULL; /* nothing was attempted: no count to add */
    }
    if (unexpected_matches(e, ep, tag, mask)) {
        core_cnt_inc(mq->cnt, CNT_CORE_MATCH_ATTEMPTS);
        return e;
    }
    for (e = e->next; e != &mq->unexpected.head; e = e->next, attempts++) {
        if (unexpected_matches(e, ep, tag, mask)) {
            core_cnt_add(mq->cnt, CNT_CORE_MATCH_ATTEMPTS, attempts);
            return e;
        }
    }
    core_cnt_add(mq->cnt, CNT_CORE_MATCH_ATTEMPTS, attempts - 1);
    return NULL;
}

core_mq_entry_t *core_mq_peek_posted(core_mq_t *mq, const void *ep, uint64_t tag, uint64_t mask)
{
    return search_unexpected(mq, ep, tag, mask);
}

core_mq_entry_t *core_mq_match_posted(core_mq_t *mq, const void *ep, uint64_t tag, uint64_t mask)
{
    core_mq_entry_t *e = search_unexpected(mq, ep, tag, mask);

    if (e != NULL) {
        core_mq_remove_unexpected(mq, e); /* its step marks: any order is exact */
    }
    return e;
}

void core_mq_push_posted(core_mq_t *mq, core_mq_entry_t *e)
{
    core_mq_list_push(&mq->posted, e);
    core_level_run_add(mq->cnt, CNT_CORE_POSTED_RECVQ, 1);
}

void core_mq_remove_posted(core_mq_t *mq, core_mq_entry_t *e)
{
    core_mq_list_remove(e);
    core_level_mark_high(mq->cnt, CNT_CORE_POSTED_RECVQ); /* out of the runs' order */
    core_level_add(mq->cnt, CNT_CORE_POSTED_RECVQ, -1);
}

void core_mq_remove_unexpected(core_mq_t *mq, core_mq_entry_t *e)
{
    core_mq_list_remove(e);
    core_level_add(mq->cnt, CNT_CORE_UNEXPECTED_RECVQ, -1);
}
