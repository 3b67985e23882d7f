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
#include "verbs/async.h"

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
    ctx->srq_posted += done;
    ctx->srq_empty = 0;
    core_level_add(ctx->cnt, CNT_CORE_SRQ_POSTED, done);
    core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, done);
    core_cnt_add(ctx->cnt, CNT_VERBS_RECV_WRS_POSTED, done);
    core_cnt_inc(ctx->cnt, CNT_CORE_SRQ_REFILLS);
}

/* The limit event: senders outran the refills, so the queue grows (up to core_srq_max). */
static void srq_limit_reached(ibmsg_context_t ctx)
{
    uint32_t target = UTIL_MIN(2 * ctx->srq_target, ctx->srq_max);

    core_cnt_inc(ctx->cnt, CNT_CORE_SRQ_LIMIT_EVENTS);
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

void core_srq_async(ibmsg_context_t ctx)
{
    verbs_async_event_t ev;
    ibmsg_ep_t ep;

    while (verbs_dev_poll_async(ctx->dev, &ev) == 1) {
        switch (ev.type) {
        case VERBS_ASYNC_SRQ_LIMIT:
            if (ctx->srq != NULL) {
                srq_limit_reached(ctx);
            }
            break;
        case VERBS_ASYNC_QP_FATAL:
            ep = core_qpt_find(&ctx->qpt, ev.qpn);
            if (ep != NULL && ep->state == CORE_EP_CONNECTED) {
                util_error("qp 0x%x: %s; the endpoint fails", ev.qpn, verbs_async_string(&ev));
                core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
            }
            break;
        case VERBS_ASYNC_SRQ_ERR:
        case VERBS_ASYNC_CQ_ERR:
            util_error("context: %s; every endpoint fails", verbs_async_string(&ev));
            for (ep = ctx->eps; ep != NULL; ep = ep->next) {
                core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
            }
            break;
        default:
            util_debug("context: async event %s", verbs_async_string(&ev));
            break;
        }
    }
}
