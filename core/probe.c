/*
 * Probes (ibmsg.h): look at the unexpected queue without receiving, or take a message out of
 * matching (mprobe) for a later ibmsg_tag_imrecv. A taken message is held by a request of the
 * context (type CORE_REQ_MSG) that keeps its receive buffer: no allocation beyond the request
 * pool, and imrecv turns that same request into the receive, so it cannot fail for memory.
 */
#include "core/core.h"
#include "util/log.h"

/* The message's full length: a rendezvous's is in its RTS, not the RTS's own size. */
static uint64_t message_length(const core_rdesc_t *d)
{
    if (d->type == CORE_WIRE_RTS) {
        const core_wire_hdr_t *hdr = d->buf.data;
        return ((const core_wire_rndv_t *)(const void *)(hdr + 1))->length;
    }
    return d->length;
}

static void fill_status(const core_rdesc_t *d, ibmsg_tag_status_t *status)
{
    status->source = d->ep;
    status->tag = d->mq.tag;
    status->length = message_length(d);
    status->error = IBMSG_OK;
}

/* Checks and progress common to both probes. */
static int probe_begin(ibmsg_context_t ctx, ibmsg_ep_t ep, const void *out)
{
    if (ctx == NULL || out == NULL || (ep != NULL && ep->ctx != ctx)) {
        return IBMSG_ERR_INVALID;
    }
    return core_progress(ctx, NULL);
}

/* Nothing matched: a failed endpoint will never bring anything (as ibmsg_tag_irecv says). */
static int probe_none(ibmsg_ep_t ep)
{
    return ep != NULL && ep->state == CORE_EP_FAILED ? IBMSG_ERR_PEER_FAILED : IBMSG_OK;
}

int ibmsg_tag_probe(ibmsg_context_t ctx, ibmsg_ep_t ep, uint64_t tag, uint64_t mask, int *found,
                    ibmsg_tag_status_t *status)
{
    core_mq_entry_t *e;
    int ret = probe_begin(ctx, ep, found);

    if (ret != IBMSG_OK) {
        return ret;
    }
    core_cnt_inc(ctx->cnt, CNT_CORE_PROBES);
    e = core_mq_peek_posted(&ctx->mq, ep, tag, mask);
    if (e == NULL) {
        ret = probe_none(ep);
        if (ret == IBMSG_OK) {
            *found = 0;
        }
        return ret;
    }
    core_cnt_inc(ctx->cnt, CNT_CORE_PROBES_FOUND);
    if (status != NULL) {
        fill_status(util_container_of(e, core_rdesc_t, mq), status);
    }
    *found = 1;
    return IBMSG_OK;
}

int ibmsg_tag_mprobe(ibmsg_context_t ctx, ibmsg_ep_t ep, uint64_t tag, uint64_t mask,
                     ibmsg_message_t *msg, ibmsg_tag_status_t *status)
{
    struct ibmsg_request_s *m;
    core_mq_entry_t *e;
    core_rdesc_t *d;
    int ret = probe_begin(ctx, ep, msg);

    if (ret != IBMSG_OK) {
        return ret;
    }
    core_cnt_inc(ctx->cnt, CNT_CORE_MPROBES);
    e = core_mq_peek_posted(&ctx->mq, ep, tag, mask);
    if (e == NULL) {
        ret = probe_none(ep);
        if (ret == IBMSG_OK) {
            *msg = IBMSG_MESSAGE_NULL;
        }
        return ret;
    }
    m = core_req_alloc(ctx); /* before the message leaves the queue: a failure leaves it there */
    if (m == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    d = util_container_of(e, core_rdesc_t, mq);
    core_mq_remove_unexpected(&ctx->mq, e);
    m->type = CORE_REQ_MSG;
    m->state = CORE_REQ_POSTED;
    m->ep = d->ep;
    m->desc = d;
    fill_status(d, &m->status);
    core_mq_list_push(&ctx->mprobed, &m->mq);
    core_cnt_inc(ctx->cnt, CNT_CORE_MPROBES_MATCHED);
    core_level_add(ctx->cnt, CNT_CORE_MPROBED_MSGS, 1);
    if (status != NULL) {
        *status = m->status;
    }
    *msg = (ibmsg_message_t)m;
    return IBMSG_OK;
}

int ibmsg_tag_imrecv(ibmsg_message_t *msg, void *buf, size_t len, ibmsg_request_t *req_p)
{
    struct ibmsg_request_s *m;
    core_rdesc_t *d;

    if (msg == NULL || *msg == NULL || req_p == NULL || (buf == NULL && len > 0)) {
        return IBMSG_ERR_INVALID;
    }
    m = (struct ibmsg_request_s *)(void *)*msg;
    if (m->type != CORE_REQ_MSG || m->state != CORE_REQ_POSTED) {
        return IBMSG_ERR_INVALID; /* received already (its handle was copied), or never one */
    }
    d = m->desc;
    core_mq_list_remove(&m->mq);
    core_level_add(m->ctx->cnt, CNT_CORE_MPROBED_MSGS, -1);
    /* The message's request becomes its receive. */
    m->type = CORE_REQ_RECV;
    m->desc = NULL;
    m->buf = buf;
    m->len = len;
    *msg = IBMSG_MESSAGE_NULL;
    *req_p = m;
    if (d == NULL) { /* its endpoint was destroyed (core_probe_ep_gone) */
        core_req_complete(m, IBMSG_ERR_CANCELED);
        return IBMSG_OK;
    }
    core_tag_take_unexpected(m->ctx, m, d);
    return IBMSG_OK;
}

void core_probe_ep_gone(ibmsg_ep_t ep)
{
    ibmsg_context_t ctx = ep->ctx;

    for (core_mq_entry_t *e = ctx->mprobed.head.next; e != &ctx->mprobed.head; e = e->next) {
        struct ibmsg_request_s *m = util_container_of(e, struct ibmsg_request_s, mq);
        if (m->ep == ep && m->desc != NULL) {
            verbs_pool_put(ctx->rpool, &m->desc->buf);
            core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, -1);
            m->desc = NULL;
            m->ep = NULL; /* status.source keeps its value, as for other cancelled requests */
        }
    }
}

void core_probe_ctx_cleanup(ibmsg_context_t ctx)
{
    core_mq_entry_t *e;

    while ((e = core_mq_list_first(&ctx->mprobed)) != NULL) {
        core_mq_list_remove(e); /* the request itself goes with the context's pool */
        core_level_add(ctx->cnt, CNT_CORE_MPROBED_MSGS, -1);
    }
}
