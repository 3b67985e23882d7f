/* Contexts: device, completion queues, buffer pools and the matching queues of one thread. */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "util/log.h"
#include "verbs/async.h"
#include "verbs/mr.h"

/* Receive buffers come in chunks of this many at least (one registration each). */
#define CORE_POOL_CHUNK_MIN 64
/* With a shared receive queue, in chunks of this many (2 MiB of 8 KiB buffers). */
#define CORE_SRQ_POOL_CHUNK 256

uint64_t core_context_pinned(const struct ibmsg_context_s *ctx, int srq)
{
    const verbs_dev_info_t *di = verbs_dev_info(ctx->dev);
    uint64_t recv = srq ? UTIL_MIN((uint64_t)ctx->cfg.srq_max, (uint64_t)di->max_srq_wr)
                        : UTIL_MAX((uint64_t)ctx->cfg.credits, (uint64_t)CORE_POOL_CHUNK_MIN);
    uint64_t send = UTIL_MAX((uint64_t)ctx->cfg.sq_depth, (uint64_t)CORE_POOL_CHUNK_MIN);
    uint64_t cqes = (uint64_t)verbs_cq_size(ctx->scq) + (uint64_t)verbs_cq_size(ctx->rcq);

    return (recv + send) * ctx->buf_size + cqes * 64;
}

int ibmsg_context_create(ibmsg_info_t info, ibmsg_context_t *ctx_p)
{
    verbs_dev_params_t dp;
    verbs_rcache_params_t rcp;
    const verbs_dev_info_t *di;
    ibmsg_context_t ctx;
    uint32_t chunk, rcq_size;
    int status, want_srq;

    if (ctx_p == NULL) {
        return IBMSG_ERR_INVALID;
    }
    ctx = calloc(1, sizeof(*ctx));
    if (ctx == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    ctx->wait_fd = ctx->wake_fd = -1;
    status = core_config_acquire(info, &ctx->cfg);
    if (status != IBMSG_OK) {
        goto err_free_ctx;
    }
    /* On this thread's NUMA node: the context's thread is its block's only writer. */
    status = cnt_block_create(IBMSG_T_BIND_CONTEXT, ctx, &ctx->cnt);
    if (status != IBMSG_OK) {
        goto err_release_config;
    }
#if IBMSG_HAVE_CORE_COUNTERS
    cnt_block_watch_timer(ctx->cnt, CNT_CORE_PROGRESS_TIME, &ctx->progress_slow,
                          CORE_PROGRESS_SLOW_TIMER);
#endif
    dp.name = ctx->cfg.device[0] != '\0' ? ctx->cfg.device : NULL;
    dp.port = (int)ctx->cfg.port;
    dp.gid_index = (int)ctx->cfg.gid_index;
    dp.netdev = ctx->cfg.netdev[0] != '\0' ? ctx->cfg.netdev : NULL;
    dp.relaxed_ordering = (int)ctx->cfg.relaxed_ordering;
    dp.share = (int)ctx->cfg.share_device;
    status = verbs_dev_open(&dp, &ctx->dev);
    if (status != IBMSG_OK) {
        goto err_release_config;
    }
    di = verbs_dev_info(ctx->dev);
    ctx->async_waiting = verbs_dev_async_waiting(ctx->dev);
    status = core_wait_init(ctx);
    if (status != IBMSG_OK) {
        goto err_close_dev;
    }
    status = verbs_cq_create(ctx->dev, (int)UTIL_MIN((uint32_t)ctx->cfg.cq_size, di->max_cqe),
                             &ctx->scq);
    if (status != IBMSG_OK) {
        goto err_close_dev;
    }
    ctx->sq_budget = (uint64_t)verbs_cq_size(ctx->scq);
    /* An SRQ's receive CQ never grows: each posted buffer completes at most once. */
    want_srq = ctx->cfg.srq != 0 && di->max_srq > 0 && di->max_srq_wr > 0;
    rcq_size = (uint32_t)ctx->cfg.cq_size;
    if (want_srq) {
        rcq_size = UTIL_MAX(rcq_size, (uint32_t)UTIL_MIN((uint64_t)ctx->cfg.srq_max + 1,
                                                         (uint64_t)di->max_srq_wr + 1));
    }
    status = verbs_cq_create(ctx->dev, (int)UTIL_MIN(rcq_size, di->max_cqe), &ctx->rcq);
    if (status != IBMSG_OK) {
        goto err_destroy_scq;
    }
    ctx->eager_limit = (uint32_t)ctx->cfg.eager_limit;
    ctx->buf_size = core_wire_buf_size(ctx->eager_limit);
    ctx->eager_hdr_max = core_wire_eager_max(ctx->eager_limit, UINT64_MAX);
    chunk = want_srq ? CORE_SRQ_POOL_CHUNK
                     : UTIL_MAX((uint32_t)ctx->cfg.credits, (uint32_t)CORE_POOL_CHUNK_MIN);
    status = verbs_pool_create(ctx->dev, "recv", ctx->buf_size, sizeof(core_rdesc_t), chunk, 0,
                               &ctx->rpool);
    if (status != IBMSG_OK) {
        goto err_destroy_rcq;
    }
    chunk = UTIL_MAX((uint32_t)ctx->cfg.sq_depth, (uint32_t)CORE_POOL_CHUNK_MIN);
    status = verbs_pool_create(ctx->dev, "send", ctx->buf_size, sizeof(verbs_buf_t), chunk, 0,
                               &ctx->spool);
    if (status != IBMSG_OK) {
        goto err_destroy_rpool;
    }
    /* The first requests now, not on the first send or receive: no allocation there. */
    status = core_req_reserve(ctx);
    if (status != IBMSG_OK) {
        goto err_destroy_spool;
    }
    rcp.enabled = ctx->cfg.reg_cache != 0;
    rcp.max_entries = (uint32_t)ctx->cfg.reg_cache_max_entries;
    rcp.max_bytes = (uint64_t)ctx->cfg.reg_cache_max_bytes;
    rcp.page_size = 0;
    rcp.check = (int)ctx->cfg.reg_cache_check;
    /* Shared with the contexts of the device when their settings are the same (verbs/mr.h). */
    status = verbs_mr_cache_open(ctx->dev, &rcp, core_context_pinned(ctx, want_srq), ctx->cnt,
                                 &ctx->rcache);
    if (status != IBMSG_OK) {
        goto err_free_reqs;
    }
    status = core_srq_init(ctx);
    if (status != IBMSG_OK) {
        util_info("%s: no shared receive queue (core_srq %lld, max_srq %u, %s): per-endpoint "
                  "receive queues of %lld buffers",
                  di->name, (long long)ctx->cfg.srq, di->max_srq, ibmsg_status_string(status),
                  (long long)ctx->cfg.credits);
    }
    core_mq_init(&ctx->mq, ctx->cnt);
    core_mq_list_init(&ctx->mprobed);
    core_keepalive_init(ctx);
    *ctx_p = ctx;
    return IBMSG_OK;

err_free_reqs:
    core_req_free_all(ctx);
err_destroy_spool:
    verbs_pool_destroy(ctx->spool);
err_destroy_rpool:
    verbs_pool_destroy(ctx->rpool);
err_destroy_rcq:
    verbs_cq_destroy(ctx->rcq);
err_destroy_scq:
    verbs_cq_destroy(ctx->scq);
err_close_dev:
    core_wait_cleanup(ctx);
    verbs_dev_close(ctx->dev);
err_release_config:
    cnt_block_destroy(ctx->cnt);
    core_config_release();
err_free_ctx:
    free(ctx);
    return status;
}

int ibmsg_context_destroy(ibmsg_context_t ctx)
{
    if (ctx == NULL) {
        return IBMSG_ERR_INVALID;
    }
    while (ctx->eps != NULL) {
        ibmsg_ep_destroy(ctx->eps);
    }
    core_srq_cleanup(ctx);     /* its QPs are gone; before the pool's memory goes */
    core_rma_ctx_cleanup(ctx); /* before the protection domain goes */
    core_probe_ctx_cleanup(ctx);
    core_req_free_all(ctx);
    core_iov_ctx_cleanup(ctx);
    verbs_mr_cache_close(ctx->rcache);
    verbs_pool_destroy(ctx->spool);
    verbs_pool_destroy(ctx->rpool);
    verbs_cq_destroy(ctx->rcq);
    verbs_cq_destroy(ctx->scq);
    while (ctx->zombies != NULL) {
        struct ibmsg_ep_s *ep = ctx->zombies;
        ctx->zombies = ep->next;
        cnt_block_destroy(ep->cnt);
        core_rndv_ep_cleanup(ep);
        core_rma_ep_cleanup(ep);
        free(ep->repost);
        free(ep->sring);
        free(ep);
    }
    core_qpt_free(&ctx->qpt);
    core_wait_cleanup(ctx);
    verbs_dev_close(ctx->dev);
    cnt_block_destroy(ctx->cnt);
    free(ctx);
    core_config_release();
    return IBMSG_OK;
}

int ibmsg_context_query(ibmsg_context_t ctx, ibmsg_context_attr_t *attr)
{
    const verbs_dev_info_t *info;

    if (ctx == NULL || attr == NULL) {
        return IBMSG_ERR_INVALID;
    }
    info = verbs_dev_info(ctx->dev);
    memset(attr, 0, sizeof(*attr));
    memcpy(attr->device, info->name, sizeof(attr->device));
    attr->port = info->port;
    attr->gid_index = info->gid_index;
    attr->eager_limit = ctx->eager_limit;
    attr->inline_limit =
        ctx->eps != NULL && ctx->eps->inline_max > 0 ? (size_t)ctx->eps->inline_max : 0;
    attr->credits = (uint32_t)ctx->cfg.credits;
    attr->path_mtu = verbs_mtu_bytes(info->active_mtu);
    return IBMSG_OK;
}

int ibmsg_context_progress(ibmsg_context_t ctx, int *events)
{
    if (ctx == NULL) {
        return IBMSG_ERR_INVALID;
    }
    return core_progress(ctx, events);
}
