/*
 * Completion queues sized for what can be outstanding, not reserved per endpoint: the send CQ
 * holds every work request posted and not known complete (ctx->sq_out: a QP in error flushes
 * each with a completion, signalled or not), and grows when that would exceed it. Only at the
 * device's maximum does a post wait, in its endpoint's queue, for completions to free entries.
 */
#include "core/core.h"
#include "util/log.h"

/* Grow cq to at least need entries (doubling, up to the device's maximum). */
static int cq_grow(ibmsg_context_t ctx, verbs_cq_t *cq, uint64_t need)
{
    uint32_t max = verbs_dev_info(ctx->dev)->max_cqe;
    uint64_t want = (uint64_t)verbs_cq_size(cq);

    if (need > max) {
        return IBMSG_ERR_NO_RESOURCE;
    }
    while (want < need) {
        want = 2 * want + 1;
    }
    int status = verbs_cq_resize(cq, (int)UTIL_MIN(want, (uint64_t)max));
    if (status == IBMSG_OK) {
        core_cnt_inc(ctx->cnt, CNT_CORE_CQ_RESIZES);
        util_debug("context: a completion queue grew to %d entries", verbs_cq_size(cq));
    }
    return status;
}

int core_scq_grow(ibmsg_context_t ctx, uint32_t n)
{
    if (ctx->sq_out + n <= ctx->sq_budget) {
        return 1;
    }
    if (cq_grow(ctx, ctx->scq, ctx->sq_out + n) == IBMSG_OK) {
        ctx->sq_budget = (uint64_t)verbs_cq_size(ctx->scq);
        if (ctx->sq_out + n <= ctx->sq_budget) {
            return 1;
        }
    }
    core_cnt_inc(ctx->cnt, CNT_CORE_SCQ_STALLS);
    ctx->sq_stalled = 1;
    return 0;
}

void core_scq_wake(ibmsg_context_t ctx)
{
    ctx->sq_stalled = 0;
    for (ibmsg_ep_t ep = ctx->eps; ep != NULL; ep = ep->next) {
        if (ep->state == CORE_EP_CONNECTED) {
            core_ep_mark_dirty(ep);
        }
    }
}

int core_rcq_reserve(ibmsg_context_t ctx, uint32_t n)
{
    if (ctx->rcq_reserved + n > (uint32_t)verbs_cq_size(ctx->rcq)) {
        int status = cq_grow(ctx, ctx->rcq, (uint64_t)ctx->rcq_reserved + n);
        if (status != IBMSG_OK) {
            util_error("context: the receive completion queue of %d entries cannot hold %u more "
                       "receives (%u posted): %s",
                       verbs_cq_size(ctx->rcq), n, ctx->rcq_reserved, ibmsg_status_string(status));
            return IBMSG_ERR_NO_RESOURCE;
        }
    }
    ctx->rcq_reserved += n;
    return IBMSG_OK;
}
