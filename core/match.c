/* Posted and unexpected queues (see match.h). */
#include "core/match.h"

#include <stddef.h>

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

/*
 * The searches count their attempts from 1 and add one per further entry, so that the common
 * search, which matches the first entry, costs the count's add alone.
 */
core_mq_entry_t *core_mq_match_arrival(core_mq_t *mq, const void *ep, uint64_t tag)
{
    uint64_t attempts = 1;
    core_mq_entry_t *e = mq->posted.head.next;

    if (e == &mq->posted.head) {
        return NULL; /* nothing was attempted: no count to add */
    }
    for (; e != &mq->posted.head; e = e->next, attempts++) {
        /* The endpoint's own receive first: the test the usual receive passes at once. */
        if ((e->ep == ep || e->ep == NULL) && tag_matches(tag, e->tag, e->mask)) {
            cnt_shard_t *cnt = mq->cnt; /* loaded once for both updates */

            core_mq_list_remove(e);
            core_cnt_add(cnt, CNT_CORE_MATCH_ATTEMPTS, attempts);
            core_level_add(cnt, CNT_CORE_POSTED_RECVQ, -1);
            return e;
        }
    }
    core_cnt_add(mq->cnt, CNT_CORE_MATCH_ATTEMPTS, attempts - 1);
    return NULL;
}

void core_mq_push_unexpected(core_mq_t *mq, core_mq_entry_t *e)
{
    core_mq_list_push(&mq->unexpected, e);
    core_cnt_inc(mq->cnt, CNT_CORE_UNEXPECTED_MSGS);
    core_level_add(mq->cnt, CNT_CORE_UNEXPECTED_RECVQ, 1);
}

/* The search of both peek and match: inlined into each (a call more per receive otherwise). */
static inline core_mq_entry_t *search_unexpected(core_mq_t *mq, const void *ep, uint64_t tag,
                                                 uint64_t mask)
{
    uint64_t attempts = 1;
    core_mq_entry_t *e = mq->unexpected.head.next;

    if (e == &mq->unexpected.head) {
        return NULL; /* nothing was attempted: no count to add */
    }
    for (; e != &mq->unexpected.head; e = e->next, attempts++) {
        if ((ep == NULL || e->ep == ep) && tag_matches(e->tag, tag, mask)) {
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
        core_mq_list_remove(e);
        core_level_add(mq->cnt, CNT_CORE_UNEXPECTED_RECVQ, -1);
    }
    return e;
}

void core_mq_push_posted(core_mq_t *mq, core_mq_entry_t *e)
{
    core_mq_list_push(&mq->posted, e);
    core_level_add(mq->cnt, CNT_CORE_POSTED_RECVQ, 1);
}

void core_mq_remove_posted(core_mq_t *mq, core_mq_entry_t *e)
{
    core_mq_list_remove(e);
    core_level_add(mq->cnt, CNT_CORE_POSTED_RECVQ, -1);
}

void core_mq_remove_unexpected(core_mq_t *mq, core_mq_entry_t *e)
{
    core_mq_list_remove(e);
    core_level_add(mq->cnt, CNT_CORE_UNEXPECTED_RECVQ, -1);
}
