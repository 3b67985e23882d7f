/* Requests: a free list per context, grown by chunks (the only allocation, off the fast path; the
   first chunk at the context's creation, so the first operations allocate nothing). */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "util/log.h"

#define CORE_REQ_CHUNK 256

struct core_req_chunk {
    core_req_chunk_t *next;
    struct ibmsg_request_s reqs[CORE_REQ_CHUNK];
};

static UTIL_NOINLINE int req_grow(ibmsg_context_t ctx)
{
    core_req_chunk_t *chunk = calloc(1, sizeof(*chunk));

    if (chunk == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    for (int i = CORE_REQ_CHUNK; i-- > 0;) {
        chunk->reqs[i].free_next = ctx->req_free;
        ctx->req_free = &chunk->reqs[i];
    }
    chunk->next = ctx->req_chunks;
    ctx->req_chunks = chunk;
    return IBMSG_OK;
}

int core_req_reserve(ibmsg_context_t ctx)
{
    return req_grow(ctx);
}

struct ibmsg_request_s *core_req_alloc(ibmsg_context_t ctx)
{
    struct ibmsg_request_s *req;

    if (util_unlikely(ctx->req_free == NULL) && req_grow(ctx) != IBMSG_OK) {
        return NULL;
    }
    req = ctx->req_free;
    ctx->req_free = req->free_next;
    memset(req, 0, sizeof(*req));
    req->ctx = ctx;
    req->mq.next = req->mq.prev = &req->mq;
    return req;
}

void core_req_release(struct ibmsg_request_s *req)
{
    ibmsg_context_t ctx = req->ctx;

    if (util_unlikely(req->iov.ext != NULL)) {
        core_iov_release(ctx, &req->iov);
    }
    req->state = CORE_REQ_FREE;
    req->free_next = ctx->req_free;
    ctx->req_free = req;
}

void core_req_free_all(ibmsg_context_t ctx)
{
    core_req_chunk_t *chunk, *next;

    for (chunk = ctx->req_chunks; chunk != NULL; chunk = next) {
        next = chunk->next;
        free(chunk);
    }
    ctx->req_chunks = NULL;
    ctx->req_free = NULL;
}

int ibmsg_request_test(ibmsg_request_t *req_p, int *completed, ibmsg_tag_status_t *status)
{
    struct ibmsg_request_s *req;
    int error;

    if (req_p == NULL || *req_p == NULL || completed == NULL) {
        return IBMSG_ERR_INVALID;
    }
    req = *req_p;
    if (req->state == CORE_REQ_FREE) {
        return IBMSG_ERR_INVALID;
    }
    if (req->state != CORE_REQ_COMPLETE) {
        int ret = core_progress(req->ctx, NULL);
        if (ret != IBMSG_OK) {
            return ret;
        }
    } else {
        core_flush_held(req->ctx); /* a send reported complete has reached the device */
    }
    if (req->state != CORE_REQ_COMPLETE) {
        *completed = 0;
        return IBMSG_OK;
    }
    if (status != NULL) {
        *status = req->status;
    }
    error = req->status.error;
    core_req_release(req);
    *req_p = IBMSG_REQUEST_NULL;
    *completed = 1;
    return error;
}

int ibmsg_request_wait(ibmsg_request_t *req_p, ibmsg_tag_status_t *status)
{
    core_waiter_t w = {0};
    int completed = 0, ret;

    if (req_p == NULL || *req_p == NULL) {
        return IBMSG_ERR_INVALID;
    }
    for (;;) {
        struct ibmsg_request_s *req = *req_p;
        ret = ibmsg_request_test(req_p, &completed, status);
        if (ret != IBMSG_OK || completed) {
            return ret;
        }
        core_wait_block(req->ctx, &w, req); /* core_wait_mode: spin returns at once */
    }
}

int ibmsg_request_cancel(ibmsg_request_t req)
{
    if (req == NULL || req->state == CORE_REQ_FREE) {
        return IBMSG_ERR_INVALID;
    }
    if (req->state != CORE_REQ_POSTED || req->type == CORE_REQ_RMA) {
        return IBMSG_OK; /* already complete, or one-sided (never cancelled: see rma.h) */
    }
    if (req->rndv.active) {
        return IBMSG_OK; /* a rendezvous in flight (data moving): it completes normally */
    }
    if (req->type == CORE_REQ_RECV) {
        core_mq_remove_posted(&req->ctx->mq, &req->mq);
    } else {
        core_mq_list_remove(&req->mq);
        if (req->rndv.reg != NULL) { /* registered for an RTS still queued */
            verbs_mr_put(req->ctx->rcache, req->rndv.reg);
            req->rndv.reg = NULL;
        }
    }
    req->status.length = req->type == CORE_REQ_SEND ? req->len : 0;
    core_req_complete(req, IBMSG_ERR_CANCELED);
    return IBMSG_OK;
}
