/* Vector operations: checks, gather and scatter copies, work-request lists (see iov.h). */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "util/log.h"

#define CORE_IOV_CHUNK 64

struct core_iov_chunk {
    core_iov_chunk_t *next;
    core_iov_ext_t ext[CORE_IOV_CHUNK];
};

int core_iov_check(const ibmsg_iov_t *iov, size_t count, size_t *total)
{
    size_t sum = 0;

    if (util_unlikely(iov == NULL && count > 0)) {
        util_error("a vector of %zu entries without its array", count);
        return IBMSG_ERR_INVALID;
    }
    if (util_unlikely(count > IBMSG_IOV_MAX)) {
        util_error("a vector of %zu entries: at most IBMSG_IOV_MAX (%d)", count, IBMSG_IOV_MAX);
        return IBMSG_ERR_INVALID;
    }
    for (size_t i = 0; i < count; i++) {
        size_t len = iov[i].len;
        if (util_unlikely((iov[i].buf == NULL && len > 0) ||
                          (uintptr_t)iov[i].buf + len < (uintptr_t)iov[i].buf || sum + len < sum)) {
            util_error("vector entry %zu (%p, %zu bytes): %s", i, iov[i].buf, len,
                       iov[i].buf == NULL ? "no buffer" : "its length wraps around");
            return IBMSG_ERR_INVALID;
        }
        sum += len;
    }
    *total = sum;
    return IBMSG_OK;
}

void core_iov_gather(void *dst, const ibmsg_iov_t *iov, uint32_t cnt, size_t n)
{
    char *d = dst;

    for (uint32_t i = 0; i < cnt && n > 0; i++) {
        size_t k = UTIL_MIN(iov[i].len, n);
        if (k > 0) {
            memcpy(d, iov[i].buf, k);
        }
        d += k;
        n -= k;
    }
}

void core_iov_scatter(const ibmsg_iov_t *iov, uint32_t cnt, const void *src, size_t n)
{
    const char *s = src;

    for (uint32_t i = 0; i < cnt && n > 0; i++) {
        size_t k = UTIL_MIN(iov[i].len, n);
        if (k > 0) {
            memcpy(iov[i].buf, s, k);
        }
        s += k;
        n -= k;
    }
}

/* The local key of entry i: its registration, its mapping, or none (inline). */
static uint32_t iov_lkey(const core_iov_req_t *v, uint32_t i)
{
    const core_iov_ext_t *x = v->ext;

    if (x == NULL) {
        return 0;
    }
    if (x->regs) {
        return x->hold[i].reg != NULL ? x->hold[i].reg->lkey : 0;
    }
    return x->hold[i].mem != NULL ? x->hold[i].mem->vm.lkey : 0;
}

uint32_t core_iov_sges(const core_iov_req_t *v, uint64_t off, uint64_t max_bytes, uint32_t max_sge,
                       verbs_sge_t *sge, int *nsge)
{
    uint64_t done = 0;
    int n = 0;

    for (uint32_t i = 0; i < v->cnt && done < max_bytes && (uint32_t)n < max_sge; i++) {
        uint64_t len = v->iov[i].len;
        uint64_t k;
        if (off >= len) {
            off -= len; /* before the start, or empty */
            continue;
        }
        k = UTIL_MIN(len - off, max_bytes - done);
        sge[n].addr = (uintptr_t)v->iov[i].buf + off;
        sge[n].length = (uint32_t)k;
        sge[n].lkey = iov_lkey(v, i);
        n++;
        done += k;
        off = 0;
    }
    *nsge = n;
    return (uint32_t)done;
}

core_iov_ext_t *core_iov_ext_get(ibmsg_context_t ctx)
{
    core_iov_ext_t *x = ctx->iovs.free;

    if (util_unlikely(x == NULL)) {
        core_iov_chunk_t *chunk = calloc(1, sizeof(*chunk));
        if (chunk == NULL) {
            return NULL;
        }
        for (int i = CORE_IOV_CHUNK; i-- > 0;) {
            chunk->ext[i].free_next = ctx->iovs.free;
            ctx->iovs.free = &chunk->ext[i];
        }
        chunk->next = ctx->iovs.chunks;
        ctx->iovs.chunks = chunk;
        x = ctx->iovs.free;
    }
    ctx->iovs.free = x->free_next;
    memset(x, 0, sizeof(*x));
    x->in_use = 1;
    return x;
}

void core_iov_release(ibmsg_context_t ctx, core_iov_req_t *v)
{
    core_iov_ext_t *x = v->ext;

    if (x == NULL) {
        return;
    }
    free(x->stage);
    x->stage = NULL;
    x->in_use = 0;
    x->free_next = ctx->iovs.free;
    ctx->iovs.free = x;
    v->ext = NULL;
}

void core_iov_ctx_cleanup(ibmsg_context_t ctx)
{
    core_iov_chunk_t *chunk, *next;

    for (chunk = ctx->iovs.chunks; chunk != NULL; chunk = next) {
        next = chunk->next;
        for (int i = 0; i < CORE_IOV_CHUNK; i++) {
            if (chunk->ext[i].in_use) {
                free(chunk->ext[i].stage);
            }
        }
        free(chunk);
    }
    ctx->iovs.chunks = NULL;
    ctx->iovs.free = NULL;
}

int core_iov_register(ibmsg_context_t ctx, core_iov_req_t *v, uint64_t want)
{
    core_iov_ext_t *x = v->ext != NULL ? v->ext : core_iov_ext_get(ctx);

    if (x == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    v->ext = x;
    x->regs = 1;
    for (uint32_t i = 0; i < v->cnt && want > 0; i++) {
        size_t k = (size_t)UTIL_MIN((uint64_t)v->iov[i].len, want);
        int status;
        if (k == 0) {
            continue;
        }
        status =
            verbs_mr_get(ctx->rcache, v->iov[i].buf, k, VERBS_ACCESS_LOCAL_WRITE, &x->hold[i].reg);
        if (status != IBMSG_OK) {
            x->hold[i].reg = NULL;
            core_iov_unregister(ctx, v);
            return status;
        }
        want -= k;
    }
    return IBMSG_OK;
}

void core_iov_unregister(ibmsg_context_t ctx, core_iov_req_t *v)
{
    core_iov_ext_t *x = v->ext;

    if (x == NULL || !x->regs) {
        return;
    }
    for (uint32_t i = 0; i < IBMSG_IOV_MAX; i++) {
        if (x->hold[i].reg != NULL) {
            verbs_mr_put(ctx->rcache, x->hold[i].reg);
            x->hold[i].reg = NULL;
        }
    }
}

int core_iov_stage(struct ibmsg_request_s *req)
{
    core_iov_ext_t *x = core_iov_ext_get(req->ctx);
    void *stage;

    if (x == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    stage = malloc(req->len);
    if (stage == NULL) {
        core_iov_release(req->ctx, &(core_iov_req_t){.ext = x});
        util_error("no memory for the %zu-byte staging copy of a vector send", req->len);
        return IBMSG_ERR_NO_MEMORY;
    }
    core_iov_gather(stage, req->iov.iov, req->iov.cnt, req->len);
    x->stage = stage;
    req->iov.ext = x;
    req->buf = stage;
    return IBMSG_OK;
}
