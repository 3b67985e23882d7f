/*
 * The context's shared receive queue: one pool of eager buffers for all its endpoints, so the
 * receive memory does not grow with their number. Credits become each sender's window over the
 * shared pool (core/credit.h): counted back when a buffer is consumed, not reserved. Progress
 * refills in batches; the limit event (one-shot, re-armed) doubles the target up to
 * core_srq_max; an empty queue makes senders retry after an RNR NAK (verbs_rnr_retry 7: forever),
 * the last resort, which loses nothing.
 */
#include "core/core.h"
#include "util/log.h"

/*
 * Credit budget. The peers' windows overcommit the shared pool (core_credits each, whatever the
 * endpoint count), and when they all stream at once an empty queue RNR-NAKs them: rxe then
 * resends each refused message and everything after it (go-back-N) every ~4 ms, and a sender
 * refused for longer than its ACK timeout x retries fails (transport retry exceeded). So once
 * the queue has run low (below its limit: srq_pressure), the receiver keeps the data credits its
 * peers hold (ctx->srq_lent, counted always) within core_srq_budget: a credit consumed leaves
 * the sum, and its return re-enters it only while there is room. Without room the endpoint
 * waits in order and gets a ticket (at most its fair share, the budget over the waiters) when
 * room comes, which its next message or an explicit CREDIT carries. No wire change: the peer
 * just sees returns come later; the receiver hands out what it withheld itself, so nothing
 * depends on the peer to unblock it.
 *  - A peer's first window counts from the connection on, even above the budget: once under
 *    pressure, returns wait until what the peers hold has come in.
 *  - The peer's last credit (kept for its explicit return) is not counted: a sender needs two to
 *    send data, so a sender at one holds nothing that can fill the pool with data.
 *  - Liveness: credits held by a peer that sends nothing more (it is done, or idle) would block
 *    the waiters forever. When endpoints wait and nothing arrives for CORE_SRQ_STALL_NS, the
 *    credits of the peers not heard from since the previous such stall are forgiven
 *    (core_srq_credits_forgiven): they leave the budget and the waiters get the room. Only a
 *    peer silent that long is forgiven, so the overcommit this can bring back is what such
 *    peers held (within the budget); should they wake, RNR is the last resort as before.
 */

/* Nothing arrived for this long while endpoints waited: the credits out are held idle. Longer
   than a few RNR back-offs (~4 ms each on rxe) and than two ACK timeouts (a sender whose packet
   or acknowledgement was lost resends after one), so busy senders are not taken for idle. */
#define CORE_SRQ_STALL_NS 20000000u

void core_srq_ep_connected(ibmsg_ep_t ep)
{
    if (ep->ctx->srq == NULL) {
        return;
    }
    ep->srq_lent = core_srq_peer_data(ep);
    ep->ctx->srq_lent += ep->srq_lent;
}

void core_srq_ep_release(ibmsg_ep_t ep)
{
    ibmsg_context_t ctx = ep->ctx;

    ctx->srq_lent -= ep->srq_lent + ep->srq_ticket;
    ep->srq_lent = 0;
    ep->srq_ticket = 0;
    if (ep->srq_waiting) {
        ibmsg_ep_t *pp = &ctx->srq_wait_head, prev = NULL;
        while (*pp != ep) {
            prev = *pp;
            pp = &(*pp)->srq_wait_next;
        }
        *pp = ep->srq_wait_next;
        if (ctx->srq_wait_tail == ep) {
            ctx->srq_wait_tail = prev;
        }
        ep->srq_waiting = 0;
        ctx->srq_nwait--;
    }
}

void core_srq_wait(ibmsg_ep_t ep)
{
    ibmsg_context_t ctx = ep->ctx;

    if (ep->srq_waiting || ep->state != CORE_EP_CONNECTED) {
        return;
    }
    ep->srq_waiting = 1;
    ep->srq_wait_next = NULL;
    if (ctx->srq_wait_tail != NULL) {
        ctx->srq_wait_tail->srq_wait_next = ep;
    } else {
        ctx->srq_wait_head = ep;
    }
    ctx->srq_wait_tail = ep;
    ctx->srq_nwait++;
    core_cnt_inc(ep->cnt, CNT_CORE_SRQ_CREDITS_WITHHELD); /* the context's sum includes it */
}

/* Tickets for the waiters, in order, while the budget has room. */
static void srq_tickets(ibmsg_context_t ctx)
{
    const uint32_t budget = core_srq_budget(ctx);
    ibmsg_ep_t ep;

    while ((ep = ctx->srq_wait_head) != NULL && ctx->srq_lent < budget) {
        uint32_t share, t;
        ctx->srq_wait_head = ep->srq_wait_next;
        if (ctx->srq_wait_head == NULL) {
            ctx->srq_wait_tail = NULL;
        }
        ep->srq_waiting = 0;
        ctx->srq_nwait--;
        share = UTIL_MAX(1u, budget / (ctx->srq_nwait + 1));
        t = UTIL_MIN(UTIL_MIN(budget - ctx->srq_lent, share), ep->cr.to_return);
        ep->srq_ticket += t;
        ctx->srq_lent += t;
        core_ep_mark_dirty(ep); /* the dirty loop of this call returns them */
    }
}

void core_srq_serve(ibmsg_context_t ctx, int idle)
{
    uint32_t forgiven = 0;
    ibmsg_ep_t ep;
    uint64_t now;

    srq_tickets(ctx);
    if (ctx->srq_wait_head == NULL || !idle) {
        ctx->srq_stall_ns = 0; /* none waits, or arrivals free room */
        return;
    }
    now = core_coarse_now_ns(); /* an idle call: no syscall (vDSO) */
    if (ctx->srq_stall_ns == 0) {
        ctx->srq_stall_ns = now;
        return;
    }
    if (now - ctx->srq_stall_ns < ctx->srq_stall_after_ns) {
        return;
    }
    /* A stall: forgive the credits of the peers silent since the previous one (idle holders);
       those heard from since keep theirs until the next. */
    ctx->srq_stall_ns = 0;
    for (ep = ctx->eps; ep != NULL; ep = ep->next) {
        if (ep->srq_lent != 0 && ep->rx_seq == ep->srq_seen_rx) {
            core_cnt_add(ep->cnt, CNT_CORE_SRQ_CREDITS_FORGIVEN, ep->srq_lent);
            forgiven += ep->srq_lent;
            ctx->srq_lent -= ep->srq_lent;
            ep->srq_lent = 0;
        }
        ep->srq_seen_rx = ep->rx_seq;
    }
    util_debug("context: %u endpoints waited %llu ms with nothing arriving: %u credits of silent "
               "peers forgiven (%u lent, %u posted)",
               ctx->srq_nwait, (unsigned long long)(ctx->srq_stall_after_ns / 1000000u), forgiven,
               ctx->srq_lent, ctx->srq_posted);
    srq_tickets(ctx);
}

int core_srq_init(ibmsg_context_t ctx)
{
    const verbs_dev_info_t *info = verbs_dev_info(ctx->dev);
    uint32_t max = (uint32_t)UTIL_MIN((uint64_t)ctx->cfg.srq_max, (uint64_t)info->max_srq_wr);
    int status;

    if (ctx->cfg.srq == 0 || info->max_srq == 0 || max == 0) {
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    max = UTIL_MIN(max, info->max_cqe - 1); /* each posted buffer completes once on the rcq */
    status = verbs_srq_create(ctx->dev, max, &ctx->srq);
    if (status != IBMSG_OK) {
        return status;
    }
    ctx->srq_max = max;
    ctx->srq_target = UTIL_MIN((uint32_t)ctx->cfg.srq_depth, max);
    ctx->srq_limit = ctx->srq_target / 4;
    ctx->srq_batch = UTIL_MAX(1u, UTIL_MIN(ctx->srq_target / 8, (uint32_t)VERBS_RECV_BATCH_MAX));
    /* The ACK timeout is 4.096 us x 2^verbs_timeout. */
    ctx->srq_stall_after_ns =
        UTIL_MAX((uint64_t)CORE_SRQ_STALL_NS, 2 * (4096ull << ctx->cfg.timeout));
    core_srq_refill(ctx, ctx->srq_target);
    if (ctx->srq_posted == 0) {
        verbs_srq_destroy(ctx->srq);
        ctx->srq = NULL;
        return IBMSG_ERR_NO_MEMORY;
    }
    core_level_add(ctx->cnt, CNT_CORE_SRQ_TARGET, ctx->srq_target);
    if (ctx->srq_limit > 0) {
        verbs_srq_arm(ctx->srq, ctx->srq_limit); /* logged; refills do not depend on it */
    }
    if (ctx->cfg.rnr_retry != 7) {
        util_warn("%s: verbs_rnr_retry %lld with a shared receive queue: a sender that finds it "
                  "empty fails after that many RNR retries (7: retry forever)",
                  info->name, (long long)ctx->cfg.rnr_retry);
    }
    core_level_add(ctx->cnt, CNT_CORE_SRQ_ACTIVE, 1);
    return IBMSG_OK;
}

void core_srq_cleanup(ibmsg_context_t ctx)
{
    if (ctx->srq == NULL) {
        return;
    }
    /* Destroying the SRQ drops its receives without completions: the pool takes the buffers
       back when it is destroyed, so only the counts change here. */
    verbs_srq_destroy(ctx->srq);
    ctx->srq = NULL;
    core_srq_sync(ctx);
    core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, -(int64_t)ctx->srq_posted);
    core_level_add(ctx->cnt, CNT_CORE_SRQ_POSTED, -(int64_t)ctx->srq_posted);
    core_level_add(ctx->cnt, CNT_CORE_SRQ_TARGET, -(int64_t)ctx->srq_target);
    core_level_add(ctx->cnt, CNT_CORE_SRQ_ACTIVE, -1);
    ctx->rpool->in_use -= ctx->srq_posted;
    ctx->srq_posted = 0;
}

void core_srq_refill(ibmsg_context_t ctx, uint32_t want)
{
    verbs_sge_t sges[VERBS_RECV_BATCH_MAX];
    uint64_t ids[VERBS_RECV_BATCH_MAX];
    uint32_t done = 0;

    while (done < want) {
        int n = (int)UTIL_MIN(want - done, (uint32_t)VERBS_RECV_BATCH_MAX), k = 0, posted = 0;
        int failed;
        for (; k < n; k++) {
            core_rdesc_t *d = (core_rdesc_t *)verbs_pool_get(ctx->rpool);
            if (d == NULL) {
                break;
            }
            d->ep = NULL; /* the completion's QP number names it */
            sges[k].addr = (uintptr_t)d->buf.data;
            sges[k].length = ctx->buf_size;
            sges[k].lkey = d->buf.lkey;
            ids[k] = (uintptr_t)d;
        }
        /* A failed post is logged; what it did not take goes back below. */
        failed = k > 0 && verbs_srq_post_recv(ctx->srq, sges, ids, k, &posted) != IBMSG_OK;
        for (int i = posted; i < k; i++) {
            verbs_pool_put(ctx->rpool, (verbs_buf_t *)(uintptr_t)ids[i]);
        }
        done += (uint32_t)posted;
        if (failed || k < n) {
            if (!ctx->srq_pool_logged && k < n) {
                /* Senders then wait in RNR retries until buffers come back: slower, no loss. */
                util_warn("context: the receive pool cannot grow; the shared receive queue "
                          "keeps %u of %u buffers",
                          ctx->srq_posted + done, ctx->srq_target);
                ctx->srq_pool_logged = 1;
            }
            break;
        }
    }
    if (done == 0) {
        return;
    }
    /* No core_srq_sync() here: a refill comes after a poll's sync (srq_progress), from the limit
       event or at the SRQ's creation, never inside a poll. Its marks need that; its levels
       would be right without it (the sync takes the difference, which the refill keeps). */
    ctx->srq_posted += done;
    ctx->srq_empty = 0;
    cnt_shard_t *cnt = ctx->cnt; /* loaded once: the compiler cannot keep it across updates */
    core_level_mark_low(cnt, CNT_CORE_SRQ_POSTED); /* the falls' low marks (core_srq_sync) */
    core_level_mark_low(cnt, CNT_VERBS_BUF_POOL_IN_USE);
    core_level_add(cnt, CNT_CORE_SRQ_POSTED, done);
    core_level_add(cnt, CNT_VERBS_BUF_POOL_IN_USE, done);
    core_cnt_add(cnt, CNT_VERBS_RECV_WRS_POSTED, done);
    core_cnt_inc(cnt, CNT_CORE_SRQ_REFILLS);
    if (core_ev_on(core_ev_srq_refilled)) {
        core_ev_srq_raise(&core_ev_srq_refilled, ctx, ctx->srq_posted, ctx->srq_target, done);
    }
}

/* The limit event: senders outran the refills, so the queue grows (up to core_srq_max). */
void core_srq_limit_reached(ibmsg_context_t ctx)
{
    uint32_t target = UTIL_MIN(2 * ctx->srq_target, ctx->srq_max);

    core_cnt_inc(ctx->cnt, CNT_CORE_SRQ_LIMIT_EVENTS);
    if (core_ev_on(core_ev_srq_low)) {
        core_ev_srq_raise(&core_ev_srq_low, ctx, ctx->srq_posted, target, ctx->srq_limit);
    }
    ctx->srq_pressure = 1;
    core_level_add(ctx->cnt, CNT_CORE_SRQ_TARGET, (int64_t)target - (int64_t)ctx->srq_target);
    ctx->srq_target = target;
    ctx->srq_limit = target / 4;
    ctx->srq_batch = UTIL_MAX(1u, UTIL_MIN(target / 8, (uint32_t)VERBS_RECV_BATCH_MAX));
    if (ctx->srq_posted < target) {
        core_srq_refill(ctx, target - ctx->srq_posted);
    }
    if (ctx->srq_limit > 0) {
        verbs_srq_arm(ctx->srq, ctx->srq_limit); /* one-shot: armed again for the next */
    }
}
