/* Tagged send and receive. */
#include <string.h>

#include "core/core.h"
#include "util/log.h"

/* Whether a send may be posted on ep now: earlier queued sends go first (messages leave in the
   order they were started), and credits and send-queue room allow it. */
static inline int tag_send_now(struct ibmsg_ep_s *ep)
{
    return core_mq_list_empty(&ep->pending) && core_ep_can_send(ep);
}

/* A send of buf, or of the vector iov (cnt entries, checked, len their total). Inlined into
   both callers, so the contiguous one keeps no vector branch. */
static UTIL_ALWAYS_INLINE int tag_isend(ibmsg_ep_t ep, const void *buf, const ibmsg_iov_t *iov,
                                        uint32_t cnt, size_t len, uint64_t tag,
                                        ibmsg_request_t *req_p)
{
    struct ibmsg_request_s *req;
    int status;

    if (util_unlikely(ep->state != CORE_EP_CONNECTED) && ep->state != CORE_EP_CONNECTING) {
        return ep->state == CORE_EP_FAILED ? IBMSG_ERR_PEER_FAILED : IBMSG_ERR_INVALID;
    }
    req = core_req_alloc(ep->ctx);
    if (util_unlikely(req == NULL)) {
        return IBMSG_ERR_NO_MEMORY;
    }
    req->type = CORE_REQ_SEND;
    req->ep = ep;
    req->buf = (void *)(uintptr_t)buf;
    req->len = len;
    req->iov.iov = iov;
    req->iov.cnt = cnt;
    req->status.source = ep;
    req->status.tag = tag;
    req->status.length = len;
    if (util_likely(tag_send_now(ep))) {
        if (util_unlikely(len > core_ep_eager_max(ep, tag))) {
            /* Rendezvous: the request completes when the receiver's FIN arrives. */
            req->state = CORE_REQ_POSTED;
            status = core_rndv_send(ep, req);
            if (status == IBMSG_OK) {
                *req_p = req;
                return IBMSG_OK;
            }
        } else {
            status = util_unlikely(req->iov.iov != NULL)
                         ? core_ep_post_iov(ep, tag, req->iov.iov, req->iov.cnt, (uint32_t)len)
                         : core_ep_post_msg(ep, CORE_WIRE_EAGER, tag, buf, (uint32_t)len);
            if (util_likely(status == IBMSG_OK)) {
                core_req_complete(req, IBMSG_OK);
                *req_p = req;
                return IBMSG_OK;
            }
        }
        if (status != IBMSG_ERR_NO_RESOURCE) {
            core_req_release(req);
            return status;
        }
    } else if (!core_credit_can_send_data(&ep->cr)) {
        core_cnt_inc(ep->cnt, CNT_CORE_CREDIT_STALLS);
    }
    if (core_ev_stall_watched()) {
        core_ev_stall_begun_raise(ep);
    }
    req->state = CORE_REQ_POSTED;
    core_mq_list_push(&ep->pending, &req->mq);
    *req_p = req;
    return IBMSG_OK;
}

int ibmsg_tag_isend(ibmsg_ep_t ep, const void *buf, size_t len, uint64_t tag,
                    ibmsg_request_t *req_p)
{
    if (util_unlikely(ep == NULL || req_p == NULL || (buf == NULL && len > 0))) {
        return IBMSG_ERR_INVALID;
    }
    return tag_isend(ep, buf, NULL, 0, len, tag, req_p);
}

int ibmsg_tag_isendv(ibmsg_ep_t ep, const ibmsg_iov_t *iov, size_t count, uint64_t tag,
                     ibmsg_request_t *req_p)
{
    size_t len;
    int status;

    if (ep == NULL || req_p == NULL) {
        return IBMSG_ERR_INVALID;
    }
    status = core_iov_check(iov, count, &len);
    if (status != IBMSG_OK) {
        return status;
    }
    status = tag_isend(ep, NULL, iov, (uint32_t)count, len, tag, req_p);
    if (status == IBMSG_OK) {
        core_cnt_inc(ep->ctx->cnt, CNT_CORE_IOV_OPS);
        core_cnt_add(ep->ctx->cnt, CNT_CORE_IOV_ENTRIES, count);
    }
    return status;
}

void core_tag_take_unexpected(ibmsg_context_t ctx, struct ibmsg_request_s *req, core_rdesc_t *d)
{
    size_t len = req->len;
    size_t n = d->length <= len ? d->length : len;

    if (util_unlikely(d->type == CORE_WIRE_RTS)) {
        /* A rendezvous arrived first: pull it now; the request completes with the data. */
        req->state = CORE_REQ_POSTED;
        core_rndv_pull(d->ep, req, (const core_wire_hdr_t *)d->buf.data);
        verbs_pool_put(ctx->rpool, &d->buf);
        core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, -1);
        return;
    }
    if (n > 0) {
        core_req_copy_in(req, (const char *)d->buf.data + d->offset, n);
    }
    req->status.source = d->ep;
    req->status.tag = d->mq.tag;
    req->status.length = d->length;
    if (d->length > len) {
        core_cnt_inc(d->ep->cnt, CNT_CORE_TRUNCATED_MSGS);
        core_req_complete(req, IBMSG_ERR_TRUNCATED);
    } else {
        core_req_complete(req, IBMSG_OK);
    }
    verbs_pool_put(ctx->rpool, &d->buf);
    core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, -1);
}

/* A receive into buf, or into the vector iov (as tag_isend). */
static UTIL_ALWAYS_INLINE int tag_irecv(ibmsg_context_t ctx, ibmsg_ep_t ep, void *buf,
                                        const ibmsg_iov_t *iov, uint32_t cnt, size_t len,
                                        uint64_t tag, uint64_t mask, ibmsg_request_t *req_p)
{
    struct ibmsg_request_s *req;
    core_mq_entry_t *e;

    req = core_req_alloc(ctx);
    if (util_unlikely(req == NULL)) {
        return IBMSG_ERR_NO_MEMORY;
    }
    req->type = CORE_REQ_RECV;
    req->ep = ep;
    req->buf = buf;
    req->len = len;
    req->iov.iov = iov;
    req->iov.cnt = cnt;
    e = core_mq_match_posted(&ctx->mq, ep, tag, mask);
    if (e != NULL) {
        core_tag_take_unexpected(ctx, req, util_container_of(e, core_rdesc_t, mq));
        *req_p = req;
        return IBMSG_OK;
    }
    if (util_unlikely(ep != NULL && ep->state == CORE_EP_FAILED)) {
        core_req_release(req); /* what arrived before the failure matched above; nothing will */
        return IBMSG_ERR_PEER_FAILED;
    }
    req->mq.ep = ep;
    req->mq.tag = tag;
    req->mq.mask = mask;
    req->state = CORE_REQ_POSTED;
    core_mq_push_posted(&ctx->mq, &req->mq);
    *req_p = req;
    return IBMSG_OK;
}

int ibmsg_tag_irecv(ibmsg_context_t ctx, ibmsg_ep_t ep, void *buf, size_t len, uint64_t tag,
                    uint64_t mask, ibmsg_request_t *req_p)
{
    if (util_unlikely(ctx == NULL || req_p == NULL || (buf == NULL && len > 0) ||
                      (ep != NULL && ep->ctx != ctx))) {
        return IBMSG_ERR_INVALID;
    }
    return tag_irecv(ctx, ep, buf, NULL, 0, len, tag, mask, req_p);
}

int ibmsg_tag_irecvv(ibmsg_context_t ctx, ibmsg_ep_t ep, const ibmsg_iov_t *iov, size_t count,
                     uint64_t tag, uint64_t mask, ibmsg_request_t *req_p)
{
    size_t len;
    int status;

    if (ctx == NULL || req_p == NULL || (ep != NULL && ep->ctx != ctx)) {
        return IBMSG_ERR_INVALID;
    }
    status = core_iov_check(iov, count, &len);
    if (status != IBMSG_OK) {
        return status;
    }
    status = tag_irecv(ctx, ep, NULL, iov, (uint32_t)count, len, tag, mask, req_p);
    if (status == IBMSG_OK) {
        core_cnt_inc(ctx->cnt, CNT_CORE_IOV_OPS);
        core_cnt_add(ctx->cnt, CNT_CORE_IOV_ENTRIES, count);
    }
    return status;
}

int ibmsg_tag_send(ibmsg_ep_t ep, const void *buf, size_t len, uint64_t tag)
{
    ibmsg_request_t req = IBMSG_REQUEST_NULL;
    uint32_t batch;
    int status = IBMSG_ERR_NO_RESOURCE;

    if (util_unlikely(ep == NULL || (buf == NULL && len > 0))) {
        return IBMSG_ERR_INVALID;
    }
    /* Waited for at once, so nothing could join it in a batch: posted directly (behind any
       held messages) instead of being held for the wait to post. */
    batch = ep->send_batch;
    ep->send_batch = 1;
    if (util_likely(ep->state == CORE_EP_CONNECTED && len <= core_ep_eager_max(ep, tag) &&
                    tag_send_now(ep))) {
        /* Eager and sendable now: complete once posted, so no request is needed. */
        status = core_ep_post_msg(ep, CORE_WIRE_EAGER, tag, buf, (uint32_t)len);
    }
    if (status == IBMSG_ERR_NO_RESOURCE) { /* rendezvous, or it has to queue */
        status = ibmsg_tag_isend(ep, buf, len, tag, &req);
    }
    ep->send_batch = batch;
    if (status != IBMSG_OK) {
        return status;
    }
    if (req == IBMSG_REQUEST_NULL) {
        core_flush_held(ep->ctx); /* what the wait on a completed send does */
        return IBMSG_OK;
    }
    return ibmsg_request_wait(&req, NULL);
}

int ibmsg_tag_recv(ibmsg_context_t ctx, ibmsg_ep_t ep, void *buf, size_t len, uint64_t tag,
                   uint64_t mask, ibmsg_tag_status_t *status)
{
    ibmsg_request_t req;
    int ret = ibmsg_tag_irecv(ctx, ep, buf, len, tag, mask, &req);

    if (ret != IBMSG_OK) {
        return ret;
    }
    return ibmsg_request_wait(&req, status);
}

int ibmsg_tag_sendv(ibmsg_ep_t ep, const ibmsg_iov_t *iov, size_t count, uint64_t tag)
{
    ibmsg_request_t req;
    int ret = ibmsg_tag_isendv(ep, iov, count, tag, &req);

    return ret == IBMSG_OK ? ibmsg_request_wait(&req, NULL) : ret;
}

int ibmsg_tag_recvv(ibmsg_context_t ctx, ibmsg_ep_t ep, const ibmsg_iov_t *iov, size_t count,
                    uint64_t tag, uint64_t mask, ibmsg_tag_status_t *status)
{
    ibmsg_request_t req;
    int ret = ibmsg_tag_irecvv(ctx, ep, iov, count, tag, mask, &req);

    return ret == IBMSG_OK ? ibmsg_request_wait(&req, status) : ret;
}
