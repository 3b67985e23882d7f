/*
 * Progress: batched polls of the receive and send CQs, validation and matching of arrivals,
 * batched refills of the shared receive queue (or reposting of per-endpoint receive buffers),
 * and the posting of queued sends and credit returns.
 */
#include <string.h>

#include "core/core.h"
#include "util/log.h"

_Static_assert(IBMSG_TAG_COMPACT_MAX == CORE_WIRE_IMM_TAG_MAX, "the public limit is the wire's");

void core_ep_mark_dirty(ibmsg_ep_t ep)
{
    if (!ep->dirty) {
        ep->dirty = 1;
        ep->dirty_next = ep->ctx->dirty;
        ep->ctx->dirty = ep;
    }
}

/*
 * A receive buffer of ep was consumed (delivered, a credit return, a FIN, a pulled RTS or a
 * rejection). From the SRQ: back to the pool, and its credit is owed to the peer now, since the
 * window is over the shared pool (the refill before the dirty loop replaces the buffer). Own RQ:
 * queued for the repost, which owes the credit. Always inline: with its counting the compiler
 * made it a call, which cost more than the counting.
 */
static UTIL_ALWAYS_INLINE void ep_queue_repost(ibmsg_ep_t ep, core_rdesc_t *d)
{
    ibmsg_context_t ctx = ep->ctx;

    if (ctx->srq != NULL) {
        verbs_pool_put(ctx->rpool, &d->buf); /* counted by core_srq_sync() */
        core_srq_consumed(ep);
    } else {
        ep->repost[ep->nrepost++] = d;
    }
    core_ep_mark_dirty(ep);
}

/* A message longer than its receive: counted and completed with the error, out of line. */
static UTIL_COLD void deliver_truncated(struct ibmsg_request_s *req, ibmsg_ep_t ep)
{
    core_cnt_inc(ep->cnt, CNT_CORE_TRUNCATED_MSGS);
    core_req_complete(req, IBMSG_ERR_TRUNCATED);
}

/*
 * Copy a message into a receive request: never more than the request's buffer holds. The rare
 * cases count out of line, so that the common path is the same code with counting and without.
 */
static inline void deliver(struct ibmsg_request_s *req, ibmsg_ep_t ep, uint64_t tag,
                           const void *data, uint32_t len)
{
    size_t n = len <= req->len ? len : req->len;

    if (n > 0) {
        core_req_copy_in(req, data, n);
    }
    req->status.source = ep;
    req->status.tag = tag;
    req->status.length = len;
    if (util_unlikely(len > req->len)) {
        deliver_truncated(req, ep);
    } else {
        core_req_complete(req, IBMSG_OK);
    }
}

/*
 * Work held for a post that will not happen now (or whose post failed): the newest slots
 * [sq_head - n, sq_head), messages, window binds and READs. They never reached the device, so
 * no completion will free them: they end here as a flushed completion would end them.
 */
static void ep_drop_held(ibmsg_ep_t ep)
{
    uint32_t n = verbs_qp_discard_held(ep->qp);

    for (; n > 0; n--) {
        core_sslot_t *s = &ep->sring[--ep->sq_head & ep->sq_mask];
        ep->ctx->sq_out--;
        if (s->buf != NULL) {
            verbs_pool_put(ep->ctx->spool, s->buf);
            core_level_add(ep->ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, -1);
            s->buf = NULL;
        }
        if (s->rndv != NULL) {
            struct ibmsg_request_s *r = s->rndv;
            s->rndv = NULL;
            core_rndv_read_done(ep, r, VERBS_WC_FLUSH);
        }
        core_signals_done(ep, s->signaled);
        s->signaled = 0;
    }
}

void core_ep_fail(ibmsg_ep_t ep, int error)
{
    ibmsg_context_t ctx = ep->ctx;
    core_mq_entry_t *e, *next;

    if (ep->state == CORE_EP_CONNECTED || ep->state == CORE_EP_CREATED ||
        ep->state == CORE_EP_CONNECTING) {
        ep->state = CORE_EP_FAILED;
        if (error == IBMSG_ERR_PEER_FAILED) {
            /* Flush what is still posted, so its buffers come back before the user destroys ep. */
            core_cnt_inc(ep->cnt, CNT_CORE_EP_FAILURES);
            verbs_qp_to_error(ep->qp);
            if (core_ev_on(core_ev_ep_failed)) {
                core_ev_ep_failed_raise(ep);
            }
        }
    }
    ep_drop_held(ep); /* after the state change: nothing it ends may post again */
    core_srq_ep_release(ep);
    while ((e = core_mq_list_first(&ep->pending)) != NULL) {
        struct ibmsg_request_s *req = util_container_of(e, struct ibmsg_request_s, mq);
        core_mq_list_remove(e);
        core_rndv_send_drop(ep, req); /* registered (and bound) for an RTS that never went */
        core_req_complete(req, error);
    }
    core_rndv_ep_fail(ep, error);
    core_rma_ep_fail(ep, error);
    /* Receives bound to ep; wildcard ones stay posted for the other endpoints. */
    for (e = ctx->mq.posted.head.next; e != &ctx->mq.posted.head; e = next) {
        next = e->next;
        if (e->ep == ep) {
            struct ibmsg_request_s *req = util_container_of(e, struct ibmsg_request_s, mq);
            core_mq_remove_posted(&ctx->mq, e);
            core_req_complete(req, error);
        }
    }
}

static UTIL_COLD void wire_reject(ibmsg_ep_t ep, const core_wire_hdr_t *hdr, const verbs_wc_t *wc,
                                  core_wire_check_t check)
{
    core_cnt_inc(ep->cnt, CNT_CORE_WIRE_REJECTED);
    /* Log the first few per endpoint: a broken peer must not flood the log. */
    if (ep->rejected_logged++ >= 8) {
        return;
    }
    if (wc->flags & VERBS_WC_IMM) {
        util_error("qp 0x%x: rejected a compact message of %u bytes: %s (immediate 0x%08x, "
                   "seq %u)",
                   ep->qpn, wc->byte_len, core_wire_check_string(check), wc->ex, ep->rx_seq);
        return;
    }
    util_error("qp 0x%x: rejected a message of %u bytes: %s (type %u seq %u expected %u, "
               "length %u, credits %u)",
               ep->qpn, wc->byte_len, core_wire_check_string(check),
               wc->byte_len >= sizeof(*hdr) ? (unsigned)hdr->type : 0u,
               wc->byte_len >= sizeof(*hdr) ? hdr->seq : 0u, ep->rx_seq,
               wc->byte_len >= sizeof(*hdr) ? hdr->length : 0u,
               wc->byte_len >= sizeof(*hdr) ? (unsigned)hdr->credits : 0u);
}

static UTIL_COLD void wc_error(ibmsg_ep_t ep, const verbs_wc_t *wc, const char *what)
{
    ep->ctx->scq_due = 1; /* a queue pair in error: its send completions come unsignalled */
    /* A flush is the echo of a queue pair in the error state, never the cause: the cause (say
     * a retry-exceeded send) has its own completion, counted and logged. It fails the endpoint
     * all the same, as it may be seen first (the receive CQ is polled first). */
    if (wc->status == VERBS_WC_FLUSH) {
        if (ep->state == CORE_EP_CONNECTED) {
            ep->ev.fail_cause = IBMSG_T_EP_FAIL_FLUSHED;
            core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
        }
        return;
    }
    if (ep->state == CORE_EP_CONNECTED || ep->ev.fail_cause == IBMSG_T_EP_FAIL_FLUSHED) {
        ep->ev.fail_cause = wc->status != VERBS_WC_RETRY_EXC ? IBMSG_T_EP_FAIL_COMPLETION_ERROR
                            : ep->ka.probing                 ? IBMSG_T_EP_FAIL_KEEPALIVE
                                                             : IBMSG_T_EP_FAIL_RETRY_EXCEEDED;
    }
    core_cnt_inc(ep->cnt, CNT_VERBS_WC_ERRORS);
    if (wc->status == VERBS_WC_RNR_RETRY_EXC) {
        core_cnt_inc(ep->cnt, CNT_VERBS_RNR_EVENTS);
    }
    if (ep->state != CORE_EP_CLOSING) {
        util_error("qp 0x%x: %s completion with error: %s; the endpoint fails (peer dead or "
                   "unreachable)",
                   ep->qpn, what, verbs_wc_status_string(wc->status));
    }
    core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
    if (ep->ev.fail_due) {
        core_ev_ep_failed_raise(ep); /* failed by a flush first: now the cause is known */
    }
}

/* Keep an arrival no receive matched in the unexpected queue; post a fresh buffer in its place.
   Out of line: inlined even in part, it cost the expected arrival's path registers. */
static UTIL_NOINLINE void recv_unexpected(ibmsg_context_t ctx, ibmsg_ep_t ep, core_rdesc_t *d,
                                          uint64_t tag, uint32_t offset, uint32_t length,
                                          uint8_t type)
{
    d->mq.ep = ep;
    d->mq.tag = tag;
    d->offset = offset;
    d->length = length;
    d->type = type;
    core_mq_push_unexpected(&ctx->mq, &d->mq);
    if (ctx->srq != NULL) {
        /* The buffer stays with the message; the SRQ's refill takes a fresh one. */
        core_srq_kept(ctx);
        core_srq_consumed(ep);
        core_ep_mark_dirty(ep);
        return;
    }
    d = (core_rdesc_t *)verbs_pool_get(ctx->rpool);
    if (util_likely(d != NULL)) {
        core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, 1);
        d->ep = ep;
        ep_queue_repost(ep, d);
    } else {
        /* Without the buffer the peer gets one credit fewer back: slower, never an RNR. */
        util_warn("qp 0x%x: no memory for a receive buffer; %u remain posted", ep->qpn,
                  ep->rq_posted);
    }
}

/*
 * An accepted eager message of len bytes at offset in d: to its receive, or unexpected. Counted
 * by the callers, where len is at hand: counted here after the match, len had to be reloaded
 * from the stack (and before it, kept across the match).
 */
static void recv_eager(ibmsg_context_t ctx, ibmsg_ep_t ep, core_rdesc_t *d, uint64_t tag,
                       uint32_t offset, uint32_t len)
{
    core_mq_entry_t *e = core_mq_match_arrival(&ctx->mq, ep, tag);

    if (e != NULL) {
        deliver(util_container_of(e, struct ibmsg_request_s, mq), ep, tag,
                (const char *)d->buf.data + offset, len);
        ep_queue_repost(ep, d);
        return;
    }
    recv_unexpected(ctx, ep, d, tag, offset, len, CORE_WIRE_EAGER);
}

/* An accepted eager message of len bytes (recv_eager); cnt loaded once for both updates. */
static UTIL_ALWAYS_INLINE void count_eager_recvd(ibmsg_ep_t ep, uint32_t len)
{
    cnt_shard_t *cnt = ep->cnt;

    core_cnt_inc(cnt, CNT_CORE_EAGER_MSGS_RECVD);
    core_cnt_add(cnt, CNT_CORE_EAGER_BYTES_RECVD, len);
}

/* A compact eager message: its header is the immediate (core/wire.h), its payload all of d. */
static void recv_compact(ibmsg_context_t ctx, ibmsg_ep_t ep, core_rdesc_t *d, const verbs_wc_t *wc)
{
    uint16_t credits = core_wire_imm_credits(wc->ex);
    core_wire_check_t check = core_wire_validate_imm(
        wc->ex, wc->byte_len, core_credit_unreturned(&ep->cr), ctx->eager_limit);

    if (util_unlikely(check != CORE_WIRE_OK)) {
        wire_reject(ep, NULL, wc, check);
        ep_queue_repost(ep, d);
        return;
    }
    ep->rx_seq++;
    if (credits != 0) {
        core_credit_grant(&ep->cr, credits);
    }
    count_eager_recvd(ep, wc->byte_len);
    recv_eager(ctx, ep, d, core_wire_imm_tag(wc->ex), 0, wc->byte_len);
}

/* The SRQ's last buffer was taken: counted once until a refill, out of line as is deliver's. */
static UTIL_COLD void srq_ran_empty(ibmsg_context_t ctx)
{
    ctx->srq_empty = 1;
    core_cnt_inc(ctx->cnt, CNT_CORE_SRQ_EMPTY);
}

/*
 * A buffer of the SRQ completed: which endpoint it served comes from the QP number. The levels
 * follow at the end of the poll (core_srq_sync).
 */
static inline ibmsg_ep_t srq_taken(ibmsg_context_t ctx, core_rdesc_t *d, const verbs_wc_t *wc)
{
    ctx->srq_posted--;
    if (util_unlikely(ctx->srq_posted == 0) && !ctx->srq_empty) {
        srq_ran_empty(ctx);
    }
    d->ep = core_qpt_find(&ctx->qpt, wc->qp_num);
    return d->ep;
}

/* The n buffers of a poll of the receive CQ left the SRQ (every completion there is one); cnt
   is ctx's shard. */
static inline void srq_polled(ibmsg_context_t ctx, int n, cnt_shard_t *cnt)
{
    if (n > 0) {
        core_srq_sync_shard(ctx, cnt);
    }
}

/*
 * A receive that failed, or arrived for an endpoint no longer connected: its buffer goes back.
 * Out of line: its count tests ctx->srq again, which inline kept the pointer in a register
 * across the whole of handle_recv (an instruction per message more than compiled out).
 */
static UTIL_COLD void recv_dropped(ibmsg_context_t ctx, ibmsg_ep_t ep, core_rdesc_t *d,
                                   const verbs_wc_t *wc)
{
    if (wc->status != VERBS_WC_SUCCESS) {
        wc_error(ep, wc, "receive");
    }
    verbs_pool_put(ctx->rpool, &d->buf);
    if (ctx->srq == NULL) { /* from the SRQ: counted by core_srq_sync() */
        core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, -1);
    }
}

static void handle_recv(ibmsg_context_t ctx, const verbs_wc_t *wc)
{
    core_rdesc_t *d = (core_rdesc_t *)(uintptr_t)wc->wr_id;
    ibmsg_ep_t ep;
    const core_wire_hdr_t *hdr = d->buf.data;
    core_wire_check_t check;

    if (ctx->srq != NULL) {
        ep = srq_taken(ctx, d, wc);
        if (util_unlikely(ep == NULL)) { /* its QP is gone (a flush seen after the destroy) */
            verbs_pool_put(ctx->rpool, &d->buf); /* counted by core_srq_sync() */
            return;
        }
    } else {
        ep = d->ep;
        ep->rq_posted--;
    }
    if (util_unlikely(wc->status != VERBS_WC_SUCCESS || ep->state != CORE_EP_CONNECTED)) {
        recv_dropped(ctx, ep, d, wc);
        return;
    }
    if (wc->flags & VERBS_WC_IMM) {
        recv_compact(ctx, ep, d, wc);
        return;
    }
    check = core_wire_validate(hdr, wc->byte_len, ep->rx_seq, core_credit_unreturned(&ep->cr),
                               ctx->eager_hdr_max);
    if (util_unlikely(check != CORE_WIRE_OK)) {
        wire_reject(ep, hdr, wc, check);
        ep_queue_repost(ep, d);
        return;
    }
    ep->rx_seq++;
    if (util_unlikely(wc->flags & VERBS_WC_INVALIDATED) && hdr->type != CORE_WIRE_FIN) {
        core_rndv_stray_invalidation(ep, wc->ex); /* only a FIN may invalidate */
    }
    if (hdr->credits != 0) {
        core_credit_grant(&ep->cr, hdr->credits);
    }
    if (hdr->type == CORE_WIRE_EAGER) {
        count_eager_recvd(ep, hdr->length);
        recv_eager(ctx, ep, d, hdr->tag, (uint32_t)sizeof(*hdr), hdr->length);
    } else if (hdr->type == CORE_WIRE_CREDIT) {
        core_cnt_inc(ep->cnt, CNT_CORE_CREDIT_MSGS_RECVD);
        ep_queue_repost(ep, d);
    } else if (core_rndv_arrival(ep, hdr, wc) == 0) { /* pulled, a FIN, or rejected */
        ep_queue_repost(ep, d);
    } else { /* an RTS no receive matched */
        recv_unexpected(ctx, ep, d, hdr->tag, (uint32_t)sizeof(*hdr), hdr->length, hdr->type);
    }
}

/* A poll's n arrivals, bracketed for the queue lengths' runs (core/match.h). */
static inline void handle_arrivals(ibmsg_context_t ctx, const verbs_wc_t *wcs, int n)
{
    core_mq_arrivals_begin(ctx->cnt);
    for (int i = 0; i < n; i++) {
        handle_recv(ctx, &wcs[i]);
    }
    core_mq_arrivals_end(ctx->cnt); /* the pointer the polls' counts then use */
}

static void handle_send(ibmsg_context_t ctx, const verbs_wc_t *wc)
{
    core_sslot_t *slot = (core_sslot_t *)(uintptr_t)wc->wr_id;
    ibmsg_ep_t ep = slot->ep;
    uint32_t idx = (uint32_t)(slot - ep->sring);
    uint64_t last = ep->sq_tail + ((idx - ep->sq_tail) & ep->sq_mask);
    /* What a one-sided operation ending here completes with: a closing endpoint's flushes are
     * cancellations, as for messages. */
    int error = wc->status == VERBS_WC_SUCCESS          ? IBMSG_OK
                : wc->status == VERBS_WC_REM_ACCESS_ERR ? IBMSG_ERR_ACCESS
                : wc->status == VERBS_WC_FLUSH && ep->state == CORE_EP_CLOSING
                    ? IBMSG_ERR_CANCELED
                    : IBMSG_ERR_PEER_FAILED;

    /* RC completes in order: this signalled send completes every send before it. */
    ctx->sq_out -= UTIL_MIN(last + 1, ep->sq_head) - UTIL_MIN(ep->sq_tail, ep->sq_head);
    for (; ep->sq_tail <= last; ep->sq_tail++) {
        core_sslot_t *s = &ep->sring[ep->sq_tail & ep->sq_mask];
        if (s->buf != NULL) {
            verbs_pool_put(ctx->spool, s->buf);
            core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, -1);
            s->buf = NULL;
        }
        if (s->rndv != NULL) { /* READs are signalled: this is its own completion */
            struct ibmsg_request_s *r = s->rndv;
            s->rndv = NULL;
            core_rndv_read_done(ep, r, wc->status);
        }
        if (s->req != NULL) { /* a one-sided operation ends here; those before it succeeded */
            core_rma_complete(ep, s->req, ep->sq_tail == last ? error : IBMSG_OK);
            s->req = NULL;
        }
        if (s->unbind != NULL) { /* signalled: this is its own completion */
            struct ibmsg_request_s *r = s->unbind;
            s->unbind = NULL;
            core_rndv_unbound(ep, r, wc->status);
        }
    }
    /* A flushed queue pair completes its unsignalled work requests too: only a signalled one
       was counted out. */
    core_signals_done(ep, slot->signaled);
    slot->signaled = 0;
    if (util_unlikely(ctx->sq_stalled)) {
        core_scq_wake(ctx);
    }
    if (util_unlikely(wc->status != VERBS_WC_SUCCESS)) {
        wc_error(ep, wc, "send");
        return;
    }
    if (!core_mq_list_empty(&ep->pending) || !core_mq_list_empty(&ep->rma.pending)) {
        core_ep_mark_dirty(ep);
    }
}

/*
 * core_ep_handed(), inlined into the eager post: as a call it costs more than the counting it
 * holds (the compiler inlines it only while it is that small).
 */
static UTIL_ALWAYS_INLINE int ep_handed(ibmsg_ep_t ep, unsigned flags)
{
    if (!(flags & VERBS_SEND_DEFER)) {
        core_cnt_inc(ep->cnt, CNT_VERBS_SEND_DOORBELLS);
        return IBMSG_OK;
    }
    if (verbs_qp_held(ep->qp) >= ep->send_batch) {
        return core_ep_flush(ep);
    }
    core_ep_mark_dirty(ep); /* progress posts it at the latest */
    return IBMSG_OK;
}

/* Post one message: its payload is buf, or (vector, a constant) gathered from iov's iovcnt
   entries, always through a bounce buffer. Inlined into the three callers below, so each keeps
   only its own branches. */
UTIL_STATIC_ASSERT(CNT_CORE_COMPACT_MSGS_SENT == CNT_CORE_EAGER_MSGS_SENT + 1 &&
                       CNT_CORE_INLINE_MSGS_SENT == CNT_CORE_HEADER_MSGS_SENT + 1,
                   "post_msg indexes each pair of an eager message's slots by the compact flag");
static UTIL_ALWAYS_INLINE int post_msg(ibmsg_ep_t ep, uint8_t type, uint8_t hdr_flags, uint64_t tag,
                                       const void *buf, int vector, const ibmsg_iov_t *iov,
                                       uint32_t iovcnt, uint32_t len, const uint32_t *invalidate)
{
    ibmsg_context_t ctx = ep->ctx;
    core_sslot_t *slot = &ep->sring[ep->sq_head & ep->sq_mask];
    /* Compact: the header rides in the immediate and the wire holds the payload alone. */
    int compact = type == CORE_WIRE_EAGER && len > 0 && tag <= CORE_WIRE_IMM_TAG_MAX;
    uint32_t hlen = compact ? 0 : (uint32_t)sizeof(core_wire_hdr_t);
    uint32_t ex = invalidate != NULL ? *invalidate : 0;
    core_wire_hdr_t hdr;
    verbs_sge_t sge[2];
    verbs_buf_t *b = NULL;
    cnt_shard_t *cnt;
    unsigned flags = invalidate != NULL ? VERBS_SEND_INVALIDATE : 0;
    int nsge = 0, status;
    uint16_t grant;

    if ((int64_t)len > ep->inline_max || vector) {
        b = verbs_pool_get(ctx->spool);
        if (util_unlikely(b == NULL)) {
            return IBMSG_ERR_NO_RESOURCE;
        }
        if (ctx->srq != NULL) {
            core_srq_sync_rise(ctx); /* a send during a poll: the buffers taken fall first */
        }
        core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, 1);
    }
    /* Owed credits ride along: with an SRQ, those its budget has room for (core/srq.c). */
    grant = core_credit_consume(&ep->cr, core_ep_return_max(ep, compact ? CORE_WIRE_IMM_CREDITS_MAX
                                                                        : CORE_CREDIT_MAX_GRANT));
    if (ctx->srq != NULL && grant != 0) {
        core_srq_returned(ep, grant);
    }
    if (compact) {
        ex = core_wire_imm_make(tag, grant);
        ep->tx_seq++;
        flags |= VERBS_SEND_IMM;
    } else {
        hdr.type = type;
        hdr.flags = hdr_flags;
        hdr.credits = grant;
        hdr.seq = ep->tx_seq++;
        hdr.tag = tag;
        hdr.length = len;
        hdr.reserved = 0;
    }
    if (b == NULL) {
        /* Inline: the device copies header and payload during the post. */
        if (!compact) {
            sge[nsge].addr = (uintptr_t)&hdr;
            sge[nsge].length = hlen;
            sge[nsge++].lkey = 0;
        }
        if (len > 0) {
            sge[nsge].addr = (uintptr_t)buf;
            sge[nsge].length = len;
            sge[nsge++].lkey = 0;
        }
        flags |= VERBS_SEND_INLINE;
    } else {
        if (!compact) {
            memcpy(b->data, &hdr, hlen);
        }
        if (vector) {
            core_iov_gather((char *)b->data + hlen, iov, iovcnt, len);
        } else {
            memcpy((char *)b->data + hlen, buf, len);
        }
        sge[0].addr = (uintptr_t)b->data;
        sge[0].length = hlen + len;
        sge[0].lkey = b->lkey;
        nsge = 1;
    }
    slot->buf = b;
    slot->signaled = 0;
    if (ep->sq_head + 1 - ep->sq_last_signal >= ep->signal_interval) {
        flags |= VERBS_SEND_SIGNALED;
        ep->sq_last_signal = ep->sq_head + 1;
        core_signal_posted(ep);
        slot->signaled = 1;
    }
    flags |= core_ep_defer(ep) | core_ep_fence(ep); /* held: one post for many (core_ep_flush) */
    status = verbs_qp_post_send(ep->qp, sge, nsge, flags, ex, (uintptr_t)slot);
    if (util_unlikely(status != IBMSG_OK)) {
        if (b != NULL) {
            verbs_pool_put(ctx->spool, b);
            core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, -1);
            slot->buf = NULL;
        }
        if (flags & VERBS_SEND_SIGNALED) {
            core_signals_done(ep, 1);
        }
        core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
        return IBMSG_ERR_PEER_FAILED;
    }
    core_sq_push(ep);
    core_ep_fenced(ep, flags);
    /*
     * Counted once posted, as every other post site does; cnt loaded once for all the updates
     * (the compiler cannot keep it across them). An eager message is one add to the slot of its
     * pair of kinds, the compact flag indexing the second of each pair: the eager, inline,
     * compact and header counts and verbs_send_wrs_posted read as sums of these slots
     * (CNT_SUM_TABLE), so their own slots take only the messages no other slot counts.
     */
    cnt = ep->cnt;
    if (util_likely(type == CORE_WIRE_EAGER)) {
        if (util_likely(b == NULL)) { /* inline: with its header, or compact */
            core_cnt_inc_pair(cnt, CNT_CORE_HEADER_MSGS_SENT, (size_t)compact);
        } else { /* from a bounce buffer: the same pair, from core_eager_msgs_sent's own slot */
            core_cnt_inc_pair(cnt, CNT_CORE_EAGER_MSGS_SENT, (size_t)compact);
        }
        core_cnt_add(cnt, CNT_CORE_EAGER_BYTES_SENT, len);
    } else if (type == CORE_WIRE_CREDIT) {
        core_cnt_inc(cnt, CNT_CORE_CREDIT_MSGS_SENT);
    } else {
        core_cnt_inc(cnt, CNT_VERBS_SEND_WRS_POSTED); /* its own slot: neither of the above */
    }
    return ep_handed(ep, flags);
}

int core_ep_post_hdr(ibmsg_ep_t ep, uint8_t type, uint8_t hdr_flags, uint64_t tag, const void *buf,
                     uint32_t len, const uint32_t *invalidate)
{
    return post_msg(ep, type, hdr_flags, tag, buf, 0, NULL, 0, len, invalidate);
}

/* The eager send's own copy: the type known, its counts need no test of it. */
int core_ep_post_eager(ibmsg_ep_t ep, uint64_t tag, const void *buf, uint32_t len)
{
    return post_msg(ep, CORE_WIRE_EAGER, 0, tag, buf, 0, NULL, 0, len, NULL);
}

int core_ep_post_iov(ibmsg_ep_t ep, uint64_t tag, const ibmsg_iov_t *iov, uint32_t cnt,
                     uint32_t len)
{
    return post_msg(ep, CORE_WIRE_EAGER, 0, tag, NULL, 1, iov, cnt, len, NULL);
}

int core_ep_post_marker(ibmsg_ep_t ep)
{
    core_sslot_t *slot = core_sslot_take(ep);
    int status;

    slot->signaled = 1;
    status = verbs_qp_post_rdma(ep->qp, VERBS_RDMA_WRITE, NULL, 0, 0, 0, VERBS_SEND_SIGNALED,
                                (uintptr_t)slot);
    if (status != IBMSG_OK) {
        slot->signaled = 0;
        return status;
    }
    ep->sq_last_signal = ep->sq_head + 1;
    core_signal_posted(ep);
    core_sq_push(ep);
    return IBMSG_OK; /* not a message: verbs_send_wrs_posted leaves markers out */
}

int core_ep_handed(ibmsg_ep_t ep, unsigned flags)
{
    return ep_handed(ep, flags);
}

int core_ep_flush(ibmsg_ep_t ep)
{
    if (verbs_qp_held(ep->qp) == 0) {
        return IBMSG_OK;
    }
    core_cnt_inc(ep->cnt, CNT_VERBS_SEND_DOORBELLS);
    if (util_unlikely(verbs_qp_flush(ep->qp) != IBMSG_OK)) {
        core_ep_fail(ep, IBMSG_ERR_PEER_FAILED); /* drops what the device did not take */
        return IBMSG_ERR_PEER_FAILED;
    }
    return IBMSG_OK;
}

/*
 * An explicit credit return, when enough are owed. With an SRQ also when the endpoint's turn
 * came (a ticket), and only as far as the budget has room: a return that finds none waits for
 * its turn (core/srq.c), and a ticket not spent now goes back to the budget.
 */
static void ep_return_credits(ibmsg_ep_t ep)
{
    ibmsg_context_t ctx = ep->ctx;

    if (ctx->srq == NULL) {
        if (core_credit_return_due(&ep->cr) && core_credit_can_send_return(&ep->cr) &&
            core_sq_room(ep, 1)) {
            core_ep_post_msg(ep, CORE_WIRE_CREDIT, 0, NULL, 0);
        }
        return;
    }
    if ((core_credit_return_due(&ep->cr) || ep->srq_ticket != 0) && ep->cr.to_return != 0 &&
        core_credit_can_send_return(&ep->cr) && core_ep_return_max(ep, 1) != 0 &&
        core_sq_room(ep, 1)) {
        core_ep_post_msg(ep, CORE_WIRE_CREDIT, 0, NULL, 0);
    }
    if (ep->srq_ticket != 0) {
        ctx->srq_lent -= ep->srq_ticket;
        ep->srq_ticket = 0;
    }
    if (core_credit_return_due(&ep->cr) && core_ep_return_max(ep, 1) == 0) {
        core_srq_wait(ep);
    }
}

void core_ep_service(ibmsg_ep_t ep)
{
    core_mq_entry_t *e;

    core_rndv_service(ep);
    if (!core_mq_list_empty(&ep->rma.pending)) {
        core_rma_service(ep);
    }
    while ((e = core_mq_list_first(&ep->pending)) != NULL && core_ep_can_send(ep)) {
        struct ibmsg_request_s *req = util_container_of(e, struct ibmsg_request_s, mq);
        int status;
        if (util_unlikely(req->len > core_ep_eager_max(ep, req->status.tag))) {
            status = core_rndv_send(ep, req);
            if (status == IBMSG_OK) {
                core_mq_list_remove(e); /* in flight: completes with its FIN */
                continue;
            }
            if (status != IBMSG_ERR_NO_RESOURCE && ep->state == CORE_EP_CONNECTED) {
                core_mq_list_remove(e); /* its buffer could not be registered */
                core_req_complete(req, status);
                continue;
            }
            return; /* retried when a FIN or send completes, or the endpoint failed */
        }
        status = util_unlikely(req->iov.iov != NULL)
                     ? core_ep_post_iov(ep, req->status.tag, req->iov.iov, req->iov.cnt,
                                        (uint32_t)req->len)
                     : core_ep_post_msg(ep, CORE_WIRE_EAGER, req->status.tag, req->buf,
                                        (uint32_t)req->len);
        if (status == IBMSG_ERR_NO_RESOURCE) {
            return; /* no send buffer: retried when a send completes */
        }
        if (status != IBMSG_OK) {
            return; /* the endpoint failed: core_ep_fail completed the queue */
        }
        core_mq_list_remove(e);
        core_req_complete(req, IBMSG_OK);
    }
    if (core_ev_stall_tracked(ep)) {
        core_ev_stall_ended_raise(ep);
    }
    ep_return_credits(ep);
}

int core_poll_send_cq(ibmsg_context_t ctx)
{
    verbs_wc_t wcs[VERBS_CQ_POLL_MAX];
    int m = verbs_cq_poll(ctx->scq, (int)ctx->cfg.poll_batch, wcs);

    for (int i = 0; i < m; i++) {
        handle_send(ctx, &wcs[i]);
    }
    return m;
}

core_progress_hook_t core_context_set_progress_hook(ibmsg_context_t ctx, int (*fn)(void *arg),
                                                    void *arg)
{
    core_progress_hook_t old = ctx->progress_hook;

    ctx->progress_hook.fn = fn;
    ctx->progress_hook.arg = fn != NULL ? arg : NULL;
    if (fn != NULL) {
        __atomic_fetch_or(&ctx->progress_slow, CORE_PROGRESS_SLOW_HOOK, __ATOMIC_RELEASE);
    } else {
        __atomic_fetch_and(&ctx->progress_slow, (uint8_t)~CORE_PROGRESS_SLOW_HOOK,
                           __ATOMIC_RELEASE);
    }
    return old;
}

/*
 * Refill the SRQ: a full batch while messages arrive, everything on an idle call, and at once
 * when it runs low. short_sync: the call found n > 0 arrivals and nothing synced the levels
 * during its poll, so they fall by n (core_srq_sync_polled()); else the full sync. Below the
 * limit the device has likely reported its limit event: read it (a syscall, so only then; the
 * keepalive tick reads the rest).
 */
static inline void srq_progress(ibmsg_context_t ctx, int n, cnt_shard_t *cnt, int short_sync)
{
    uint32_t missing;
    int low;

    if (short_sync) {
        core_srq_sync_polled(n, cnt);
    } else {
        srq_polled(ctx, n, cnt);
    }
    missing = ctx->srq_posted < ctx->srq_target ? ctx->srq_target - ctx->srq_posted : 0;
    low = ctx->srq_posted < ctx->srq_limit;

    if (missing != 0 && (n == 0 || missing >= ctx->srq_batch || low)) {
        core_srq_refill(ctx, missing);
    }
    if (util_unlikely(low)) {
        ctx->srq_pressure = 1; /* credit returns keep within the budget from now on */
        core_async_poll(ctx);
    }
    if (util_unlikely(ctx->srq_wait_head != NULL) || ctx->srq_stall_ns != 0) {
        core_srq_serve(ctx, n == 0);
    }
}

void core_drain_recv_cq(ibmsg_context_t ctx)
{
    verbs_wc_t wcs[VERBS_CQ_POLL_MAX];
    int n;

    while ((n = verbs_cq_poll(ctx->rcq, VERBS_CQ_POLL_MAX, wcs)) > 0) {
        handle_arrivals(ctx, wcs, n);
        if (ctx->srq != NULL) {
            srq_polled(ctx, n, ctx->cnt);
        }
    }
}

/* One progress call (core_progress), inlined three times: plain, hooked (hooked), timed. */
static UTIL_ALWAYS_INLINE int progress(ibmsg_context_t ctx, int *events, int hooked)
{
    verbs_wc_t wcs[VERBS_CQ_POLL_MAX];
    int batch = (int)ctx->cfg.poll_batch, n, m, h = 0;
    cnt_shard_t *cnt;
    ibmsg_ep_t ep, later = NULL;

    if (hooked && ctx->progress_hook.fn != NULL) {
        h = ctx->progress_hook.fn(ctx->progress_hook.arg); /* the job layer: one empty poll idle */
    }
    core_flush_held(ctx); /* what was held goes out before we wait for anything */
    if (util_unlikely(__atomic_load_n(ctx->async_waiting, __ATOMIC_RELAXED) != 0)) {
        core_async_poll(ctx); /* another context's thread routed an event here (verbs/hca.c) */
    }
    n = verbs_cq_poll(ctx->rcq, batch, wcs);
    if (util_unlikely(n < 0)) {
        core_cnt_inc(ctx->cnt, CNT_VERBS_CQ_POLLS);
        return n;
    }
    if (n > 0) {
        handle_arrivals(ctx, wcs, n);
    }
    /*
     * The send CQ gets a completion for a signalled work request only, or an error one: so a
     * call that found arrivals skips it while no signalled request is outstanding, and returns
     * them sooner. An error completion of an unsignalled one comes from a queue pair in error,
     * whose posted receives flush into the receive CQ too: a flushed receive makes this call
     * poll the send CQ (ctx->scq_due), where the cause is counted and logged as before. The CQ
     * has room for what waits (ctx->sq_out, core/cq_budget.c); a call that finds no arrival polls
     * it always.
     */
    /* The polls of both CQs are counted here, with one update of each counter; a call that
       skips the send CQ found arrivals, so it has no empty poll to count. */
    m = 0;
    cnt = ctx->cnt; /* the arrivals' last update loaded it */
    if (n == 0 || ctx->signals_outstanding != 0 || ctx->scq_due) {
        m = core_poll_send_cq(ctx);
        ctx->scq_due = m == (int)ctx->cfg.poll_batch; /* more may wait */
        cnt = ctx->cnt; /* loaded again after the call: kept across it, it cost a register */
        core_cnt_add(cnt, CNT_VERBS_CQ_POLLS, 2);
        if (util_unlikely(m < 0)) {
            if (ctx->srq != NULL) {
                srq_polled(ctx, n, cnt);
            }
            return m;
        }
        core_cnt_add(cnt, CNT_VERBS_CQ_POLLS_EMPTY, (uint64_t)(n == 0) + (uint64_t)(m == 0));
        core_cnt_add(cnt, CNT_VERBS_COMPLETIONS, (uint64_t)(n + m));
        if (ctx->srq != NULL) {
            srq_progress(ctx, n, cnt, 0); /* the shard loaded for the polls' counts */
        }
    } else {
        core_cnt_inc(cnt, CNT_VERBS_CQ_POLLS);
        core_cnt_add(cnt, CNT_VERBS_COMPLETIONS, (uint64_t)n);
        if (ctx->srq != NULL) {
            srq_progress(ctx, n, cnt, 1); /* arrivals only, and no sync during the poll */
        }
    }

    /*
     * Repost in post lists, then send what the new credits and send-queue room allow. A call
     * that delivered messages reposts only a full batch (ep->repost_batch): the rest waits for
     * a call in which nothing arrived, which is spent waiting anyway, so the receive that just
     * completed returns to the caller without the post on its path. The peer never waits on
     * the buffers held back (see repost_batch).
     */
    while ((ep = ctx->dirty) != NULL) {
        ctx->dirty = ep->dirty_next;
        ep->dirty = 0;
        if (ep->nrepost > 0 && ep->state == CORE_EP_CONNECTED) {
            if (n == 0 || ep->nrepost >= ep->repost_batch) {
                if (core_ep_repost(ep) != IBMSG_OK) {
                    core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
                }
            } else {
                ep->dirty = 1; /* visited again by the next call */
                ep->dirty_next = later;
                later = ep;
            }
        }
        if (ep->state == CORE_EP_CONNECTED) {
            core_ep_service(ep);
            core_ep_flush(ep);
        }
    }
    ctx->dirty = later;
    core_keepalive_poll(ctx, n + m == 0);
    if (events != NULL) {
        *events = n + m + h;
    }
    return IBMSG_OK;
}

/* A progress call with the hook set (the job layer's), untimed. */
int core_progress_hooked(ibmsg_context_t ctx, int *events)
{
    return progress(ctx, events, 1);
}

#if IBMSG_HAVE_CORE_COUNTERS
/*
 * A progress call while a handle of core_progress_time runs (its bit of ctx->progress_slow said
 * so: the clock is read without testing the timer's gate again, and the time added whatever a
 * stop did meanwhile). None compiled out: GCC made an untimed twin of the plain call a jump to
 * it, an instruction the reference does not pay.
 */
int core_progress_timed(ibmsg_context_t ctx, int *events)
{
    cnt_tick_t start = cnt_tick_now();
    int status = progress(ctx, events, 1);

    core_cnt_add(ctx->cnt, CNT_CORE_PROGRESS_TIME, cnt_tick_now() - start);
    return status;
}
#endif

int core_progress_plain(ibmsg_context_t ctx, int *events)
{
    return progress(ctx, events, 0);
}
