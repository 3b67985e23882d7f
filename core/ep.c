/* Endpoints: one RC queue pair each, on the context's shared receive queue (see the note below). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/core.h"
#include "util/log.h"
#include "verbs/addr.h"

/*
 * With a shared receive queue (core/srq.c) an endpoint reserves no receive buffer: its QP takes
 * them from the context's SRQ, and its credits are the peer's send window over that pool. Its
 * cost is the QP (the send queue alone), its send ring and its counter block; the rendezvous
 * tables and the held-send storage come on first use. Without an SRQ (the device has none, or
 * core_srq=0) each endpoint posts core_credits buffers of its own, and credits are exact.
 */

#define CORE_EP_DRAIN_TIMEOUT 2 /* seconds to wait for a closing queue pair's flushes */

UTIL_STATIC_ASSERT(CORE_EP_ADDR_SIZE <= IBMSG_EP_ADDRESS_MAX, "address blob fits");
UTIL_STATIC_ASSERT(VERBS_SEND_BATCH_MAX == 64, "core_send_batch's maximum (core/config.h)");

static uint32_t pow2_floor(uint32_t v)
{
    uint32_t p = 1;

    while (p * 2 <= v) {
        p *= 2;
    }
    return p;
}

/* Post the buffers waiting in ep->repost and count them as credits owed to the peer. */
int core_ep_repost(ibmsg_ep_t ep)
{
    verbs_sge_t sges[VERBS_RECV_BATCH_MAX];
    uint64_t ids[VERBS_RECV_BATCH_MAX];
    ibmsg_context_t ctx = ep->ctx;
    uint32_t done = 0;
    int status = IBMSG_OK;

    while (done < ep->nrepost) {
        int n = (int)UTIL_MIN(ep->nrepost - done, (uint32_t)VERBS_RECV_BATCH_MAX), posted = 0;
        for (int i = 0; i < n; i++) {
            core_rdesc_t *d = ep->repost[done + (uint32_t)i];
            sges[i].addr = (uintptr_t)d->buf.data;
            sges[i].length = ctx->buf_size;
            sges[i].lkey = d->buf.lkey;
            ids[i] = (uintptr_t)d;
        }
        status = verbs_qp_post_recv(ep->qp, sges, ids, n, &posted);
        done += (uint32_t)posted;
        if (status != IBMSG_OK) {
            break;
        }
    }
    core_cnt_add(ep->cnt, CNT_VERBS_RECV_WRS_POSTED, done);
    ep->rq_posted += done;
    if (ep->state == CORE_EP_CONNECTED || ep->state == CORE_EP_CREATED) {
        core_credit_reposted(&ep->cr, done);
    }
    if (done < ep->nrepost) {
        memmove(ep->repost, ep->repost + done, (ep->nrepost - done) * sizeof(ep->repost[0]));
    }
    ep->nrepost -= done;
    return status;
}

int ibmsg_ep_create(ibmsg_context_t ctx, ibmsg_ep_t *ep_p)
{
    verbs_qp_params_t qpp, caps;
    core_rdesc_t **all = NULL;
    ibmsg_ep_t ep;
    uint32_t rq_depth, sq_depth;
    int status;

    if (ctx == NULL || ep_p == NULL) {
        return IBMSG_ERR_INVALID;
    }
    rq_depth = ctx->srq != NULL ? 0 : (uint32_t)ctx->cfg.credits;
    sq_depth = pow2_floor((uint32_t)ctx->cfg.sq_depth);
    if (rq_depth > 0 && core_rcq_reserve(ctx, rq_depth) != IBMSG_OK) {
        return IBMSG_ERR_NO_RESOURCE; /* logged */
    }
    ep = calloc(1, sizeof(*ep));
    if (ep == NULL) {
        util_error("context: out of memory for an endpoint");
        ctx->rcq_reserved -= rq_depth;
        return IBMSG_ERR_NO_MEMORY;
    }
    ep->ctx = ctx;
    status = cnt_block_create_child(IBMSG_T_BIND_ENDPOINT, ep, ctx->cnt, &ep->cnt);
    if (status != IBMSG_OK) {
        free(ep);
        ctx->rcq_reserved -= rq_depth;
        return status;
    }
    ep->sq_depth = sq_depth;
    ep->sq_mask = sq_depth - 1;
    ep->rq_depth = rq_depth;
    ep->repost_batch = UTIL_MAX(1u, UTIL_MIN(rq_depth / 4, (uint32_t)VERBS_RECV_BATCH_MAX));
    ep->signal_interval = UTIL_MAX(1u, UTIL_MIN((uint32_t)ctx->cfg.signal_interval, sq_depth / 2));
    core_mq_list_init(&ep->pending);
    ep->sring = calloc(sq_depth, sizeof(*ep->sring));
    ep->repost = rq_depth > 0 ? calloc(rq_depth, sizeof(*ep->repost)) : NULL;
    if (ep->sring == NULL || (rq_depth > 0 && ep->repost == NULL)) {
        util_error("context: out of memory for an endpoint's queues (%u send, %u receive)",
                   sq_depth, rq_depth);
        status = IBMSG_ERR_NO_MEMORY;
        goto err_free;
    }
    for (uint32_t i = 0; i < sq_depth; i++) {
        ep->sring[i].ep = ep;
    }
    /* One less than the ring: providers round queues up to a power of two and need a slot of
       their own (rxe: 64 entries for 63, 128 for 64), and the send queue is most of the
       endpoint's memory. */
    qpp.sq_depth = sq_depth - 1;
    qpp.rq_depth = rq_depth;
    qpp.srq = ctx->srq;
    qpp.max_inline = (uint32_t)ctx->cfg.inline_limit + (uint32_t)sizeof(core_wire_hdr_t);
    qpp.send_batch = (uint32_t)ctx->cfg.send_batch;
    qpp.max_rd_atomic = (uint32_t)ctx->cfg.max_rd_atomic;
    qpp.pkey_index = (uint16_t)ctx->cfg.pkey_index;
    status = verbs_qp_create(ctx->dev, ctx->scq, ctx->rcq, &qpp, &ep->qp);
    if (status != IBMSG_OK) {
        goto err_free;
    }
    verbs_qp_caps(ep->qp, &caps);
    ep->qpn = verbs_qp_num(ep->qp);
    ep->sq_room = UTIL_MIN(sq_depth - 1, caps.sq_depth);
    ep->send_batch = UTIL_MAX(1u, caps.send_batch);
    status = core_rndv_ep_init(ep);
    if (status != IBMSG_OK) {
        goto err_destroy_qp;
    }
    ep->inline_max = caps.max_inline >= sizeof(core_wire_hdr_t)
                         ? (int32_t)UTIL_MIN(caps.max_inline - (uint32_t)sizeof(core_wire_hdr_t),
                                             (uint32_t)ctx->cfg.inline_limit)
                         : -1;
    core_rma_ep_init(ep);
    status = core_qpt_add(&ctx->qpt, ep->qpn, ep);
    if (status != IBMSG_OK) {
        util_error("qp 0x%x: out of memory for the QP table", ep->qpn);
        goto err_destroy_qp;
    }
    if (rq_depth == 0) {
        goto linked; /* the SRQ's buffers serve it */
    }

    /* Every receive buffer is posted before the peer can learn our address. all keeps them:
     * posting consumes ep->repost, and a failed post must give every one back. */
    all = calloc(rq_depth, sizeof(*all));
    if (all == NULL) {
        util_error("qp 0x%x: out of memory", ep->qpn);
        status = IBMSG_ERR_NO_MEMORY;
        goto err_del_qpt;
    }
    for (uint32_t i = 0; i < rq_depth; i++) {
        core_rdesc_t *d = (core_rdesc_t *)verbs_pool_get(ctx->rpool);
        if (d == NULL) {
            status = ctx->rpool->grow_status; /* logged by the pool: memory or registrations */
            goto err_put_bufs;
        }
        d->ep = ep;
        all[i] = d;
        ep->repost[ep->nrepost++] = d;
    }
    status = core_ep_repost(ep);
    if (status != IBMSG_OK) {
        goto err_put_bufs; /* the QP is destroyed before its buffers go back */
    }
    core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, rq_depth);
    free(all);
    ep->cr.to_return = 0; /* the initial buffers are the peer's initial credits, not a return */
linked:
    ep->next = ctx->eps;
    if (ctx->eps != NULL) {
        ctx->eps->prev = ep;
    }
    ctx->eps = ep;
    core_level_add(ctx->cnt, CNT_CORE_ENDPOINTS, 1);
    *ep_p = ep;
    return IBMSG_OK;

err_put_bufs:
    /* Destroying an INIT queue pair drops its receives without completions. */
    core_qpt_del(&ctx->qpt, ep->qpn);
    core_rndv_ep_cleanup(ep);
    verbs_qp_destroy(ep->qp);
    for (uint32_t i = 0; i < rq_depth && all[i] != NULL; i++) {
        verbs_pool_put(ctx->rpool, &all[i]->buf);
    }
    free(all);
    goto err_free;
err_del_qpt:
    core_qpt_del(&ctx->qpt, ep->qpn);
err_destroy_qp:
    core_rndv_ep_cleanup(ep);
    verbs_qp_destroy(ep->qp);
err_free:
    ctx->rcq_reserved -= rq_depth;
    cnt_block_destroy(ep->cnt);
    free(ep->repost);
    free(ep->sring);
    free(ep);
    return status;
}

/* The blob's layout and validation: core/ep_addr.h. */
int ibmsg_ep_address(ibmsg_ep_t ep, void *buf, size_t *len)
{
    verbs_qp_params_t caps;
    core_ep_addr_t a;

    if (ep == NULL || buf == NULL || len == NULL || *len < CORE_EP_ADDR_SIZE) {
        return IBMSG_ERR_INVALID;
    }
    verbs_qp_caps(ep->qp, &caps);
    a.credits = core_ep_window(ep);
    a.eager_limit = ep->ctx->eager_limit;
    a.responder_resources = (uint8_t)caps.max_dest_rd_atomic;
    a.initiator_depth = (uint8_t)caps.max_rd_atomic;
    verbs_qp_addr(ep->qp, &a.qp);
    if (core_ep_addr_pack(&a, buf, *len) != IBMSG_OK) {
        return IBMSG_ERR_INVALID;
    }
    *len = CORE_EP_ADDR_SIZE;
    return IBMSG_OK;
}

int ibmsg_ep_connect(ibmsg_ep_t ep, const void *blob, size_t len)
{
    verbs_qp_params_t caps;
    verbs_conn_params_t cp;
    core_ep_addr_t a;
    const char *why = NULL;
    int status;

    if (ep == NULL || blob == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (ep->state != CORE_EP_CREATED) {
        return IBMSG_ERR_BUSY;
    }
    status = core_ep_addr_parse(blob, len, &a, &why);
    if (status != IBMSG_OK) {
        util_error("qp 0x%x: peer address blob of %zu bytes rejected: %s (expected %d bytes, "
                   "version %d)",
                   ep->qpn, len, why, CORE_EP_ADDR_SIZE, CORE_EP_ADDR_VERSION);
        return status;
    }
    cp.timeout = (uint8_t)ep->ctx->cfg.timeout;
    cp.retry_cnt = ep->ctx->cfg.retry_cnt < 0 ? VERBS_RETRY_AUTO : (uint8_t)ep->ctx->cfg.retry_cnt;
    cp.rnr_retry = (uint8_t)ep->ctx->cfg.rnr_retry;
    cp.min_rnr_timer = (uint8_t)ep->ctx->cfg.min_rnr_timer;
    cp.peer_responder_resources = a.responder_resources;
    cp.peer_initiator_depth = a.initiator_depth;
    cp.sl = (uint8_t)ep->ctx->cfg.sl;
    cp.traffic_class = (uint8_t)ep->ctx->cfg.traffic_class;
    cp.hop_limit = (uint8_t)ep->ctx->cfg.hop_limit;
    cp.flow_label = (uint32_t)ep->ctx->cfg.flow_label;
    cp.mtu_max = (uint32_t)ep->ctx->cfg.mtu;
    status = verbs_qp_to_rtr(ep->qp, &a.qp, &cp);
    if (status == IBMSG_OK) {
        status = verbs_qp_to_rts(ep->qp, &cp);
    }
    if (status != IBMSG_OK) {
        ep->state = CORE_EP_FAILED;
        return status;
    }
    verbs_qp_caps(ep->qp, &caps); /* the READ depth agreed with the peer */
    ep->rndv.reads_max = caps.max_rd_atomic;
    ep->rma.max_rd_atomic = caps.max_rd_atomic;
    core_credit_init(&ep->cr, a.credits, core_ep_window(ep));
    core_srq_ep_connected(ep);
    ep->peer_limit = UTIL_MIN(a.eager_limit, ep->ctx->eager_limit);
    ep->state = CORE_EP_CONNECTED;
    if (core_ev_on(core_ev_ep_connected)) {
        core_ev_ep_connected_raise(ep, a.qp.qpn, a.credits);
    }
    util_debug("qp 0x%x: connected to qp 0x%x (credits %u, limit %u, READs %u out, %u in)", ep->qpn,
               a.qp.qpn, a.credits, ep->peer_limit, caps.max_rd_atomic, caps.max_dest_rd_atomic);
    return IBMSG_OK;
}

static void ep_unlink_dirty(ibmsg_ep_t ep)
{
    ibmsg_ep_t *pp = &ep->ctx->dirty;

    while (*pp != NULL) {
        if (*pp == ep) {
            *pp = ep->dirty_next;
            break;
        }
        pp = &(*pp)->dirty_next;
    }
    ep->dirty = 0;
}

/* Drop the unexpected messages that came in on ep. */
static void ep_drop_unexpected(ibmsg_ep_t ep)
{
    ibmsg_context_t ctx = ep->ctx;
    core_mq_entry_t *e = ctx->mq.unexpected.head.next, *next;

    for (; e != &ctx->mq.unexpected.head; e = next) {
        next = e->next;
        if (e->ep == ep) {
            core_rdesc_t *d = util_container_of(e, core_rdesc_t, mq);
            core_mq_remove_unexpected(&ctx->mq, e);
            verbs_pool_put(ctx->rpool, &d->buf);
            core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, -1);
        }
    }
}

static int ep_drained(const struct ibmsg_ep_s *ep)
{
    return ep->rq_posted == 0 && ep->signals_outstanding == 0;
}

int ibmsg_ep_destroy(ibmsg_ep_t ep)
{
    ibmsg_context_t ctx;
    struct timespec start, now;

    if (ep == NULL) {
        return IBMSG_ERR_INVALID;
    }
    ctx = ep->ctx;
    if (ep->ev.fail_due) {
        core_ev_ep_failed_raise(ep); /* flushed, and no completion told why */
    }
    core_ep_flush(ep); /* messages reported sent leave, as they would have without holding */
    core_ep_fail(ep, IBMSG_ERR_CANCELED);
    ep->state = CORE_EP_CLOSING;
    ep_drop_unexpected(ep);
    core_probe_ep_gone(ep); /* messages mprobed from it: their receives will be CANCELED */

    /* Flush the queue pair and take its completions, so none can name ep after it is freed:
       unsignalled sends flush with a completion too (those already done have none), and a
       marker posted now flushes behind them all, so its completion is the last (the drain of
       the kernel's ib_drain_sq). A full send queue (rare) has no room for it. */
    verbs_qp_to_error(ep->qp);
    if (core_sq_room(ep, 1) && core_ep_post_marker(ep) != IBMSG_OK) {
        util_debug("qp 0x%x: no drain marker posted", ep->qpn);
    }
    clock_gettime(CLOCK_MONOTONIC, &start);
    while (!ep_drained(ep)) {
        if (core_progress(ctx, NULL) != IBMSG_OK) {
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        if (now.tv_sec - start.tv_sec > CORE_EP_DRAIN_TIMEOUT) {
            break;
        }
    }
    ep_unlink_dirty(ep);
    while (ep->nrepost > 0) {
        verbs_pool_put(ctx->rpool, &ep->repost[--ep->nrepost]->buf);
        core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, -1);
    }
    core_async_poll(ctx); /* acknowledged before the destroy: hardware waits for that */
    verbs_qp_destroy(ep->qp);
    if (ctx->srq != NULL) {
        /* A receive it took from the SRQ may have flushed; once the QP is gone, no completion
           can name it, and those that did return their buffers here (ep is CLOSING). */
        core_drain_recv_cq(ctx);
    }
    core_qpt_del(&ctx->qpt, ep->qpn);
    ctx->sq_out -= ep->sq_head - ep->sq_tail;
    for (; ep->sq_tail != ep->sq_head; ep->sq_tail++) {
        core_sslot_t *slot = &ep->sring[ep->sq_tail & ep->sq_mask];
        if (slot->buf != NULL) {
            verbs_pool_put(ctx->spool, slot->buf);
            core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, -1);
            slot->buf = NULL;
        }
        if (slot->req != NULL) { /* a one-sided operation the flush did not report */
            core_rma_complete(ep, slot->req, IBMSG_ERR_CANCELED);
            slot->req = NULL;
        }
        if (slot->unbind != NULL) { /* a send whose FIN came: the data was read */
            core_rndv_unbound(ep, slot->unbind, VERBS_WC_FLUSH);
            slot->unbind = NULL;
        }
    }
    if (ep->prev != NULL) {
        ep->prev->next = ep->next;
    } else {
        ctx->eps = ep->next;
    }
    if (ep->next != NULL) {
        ep->next->prev = ep->prev;
    }
    ctx->rcq_reserved -= ep->rq_depth;
    core_level_add(ctx->cnt, CNT_CORE_ENDPOINTS, -1);
    if (!ep_drained(ep)) {
        /* Completions may still name it: keep the memory until the CQs are gone. */
        util_warn("qp 0x%x: %u receives and %u signalled sends did not flush", ep->qpn,
                  ep->rq_posted, ep->signals_outstanding);
        ep->next = ctx->zombies;
        ctx->zombies = ep;
        return IBMSG_OK;
    }
    cnt_block_destroy(ep->cnt); /* its counts stay in the context's */
    core_rndv_ep_cleanup(ep);
    core_rma_ep_cleanup(ep);
    free(ep->repost);
    free(ep->sring);
    free(ep);
    return IBMSG_OK;
}
