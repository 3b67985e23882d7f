/*
 * One-sided operations: put (RDMA WRITE), get (RDMA READ) and flush on an endpoint's queue pair.
 *
 * They share the send queue with messages. Every operation is queued on its endpoint first and
 * posted from there, split into work requests of at most max_fragment bytes while the send
 * queue has room, so operations never overtake each other and a full queue only delays them.
 * The send-queue entry of an operation's last work request names the request; since RC
 * completes in order, the completion of any signalled entry completes every entry before it
 * (progress.c, handle_send), so only the last work request of an operation with a user request
 * must be signalled; implicit operations follow the selective-signalling interval like messages
 * and are completed by a flush, whose zero-length signalled WRITE (the marker) goes behind them.
 */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "core/rkey.h"
#include "util/log.h"

/* An inline put carries no local key; the device copies the data during the post. */
#define CORE_RMA_FRAGMENT_CAP (1u << 30)

void core_rma_ep_init(ibmsg_ep_t ep)
{
    const verbs_dev_info_t *info = verbs_dev_info(ep->ctx->dev);
    verbs_qp_params_t caps;

    core_mq_list_init(&ep->rma.pending);
    verbs_qp_caps(ep->qp, &caps);
    ep->rma.inline_max = UTIL_MIN(caps.max_inline, (uint32_t)ep->ctx->cfg.inline_limit);
    ep->rma.max_fragment =
        info->max_msg_sz > 0 ? UTIL_MIN(info->max_msg_sz, CORE_RMA_FRAGMENT_CAP) : (1u << 20);
    ep->rma.max_rd_atomic = UTIL_MAX(1u, caps.max_rd_atomic);
    ep->rma.sge_wr = UTIL_MAX(1u, caps.max_send_sge);
    ep->rma.sge_rd = UTIL_MAX(1u, UTIL_MIN(ep->rma.sge_wr, info->max_sge_rd));
    if (ep->ctx->cfg.iov_sge_max > 0) {
        ep->rma.sge_wr = UTIL_MIN(ep->rma.sge_wr, (uint32_t)ep->ctx->cfg.iov_sge_max);
        ep->rma.sge_rd = UTIL_MIN(ep->rma.sge_rd, (uint32_t)ep->ctx->cfg.iov_sge_max);
    }
}

void core_rma_ep_cleanup(ibmsg_ep_t ep)
{
    if (ep->rma.cells != NULL) {
        verbs_mem_dereg(&ep->rma.cells_mem);
        free(ep->rma.cells);
        ep->rma.cells = NULL;
    }
}

void core_rma_complete(ibmsg_ep_t ep, struct ibmsg_request_s *req, int error)
{
    if (req->rma.op >= CORE_RMA_FETCH_ADD && error == IBMSG_OK) {
        memcpy(req->buf, &ep->rma.cells[req->rma.cell], sizeof(uint64_t)); /* the old word */
    }
    if (req->rma.lmem != NULL) {
        req->rma.lmem->inflight--;
    }
    if (util_unlikely(req->iov.ext != NULL)) {
        for (uint32_t i = 0; i < req->iov.cnt; i++) {
            if (req->iov.ext->hold[i].mem != NULL) {
                req->iov.ext->hold[i].mem->inflight--;
                req->iov.ext->hold[i].mem = NULL;
            }
        }
    }
    ep->rma.outstanding--;
    if (req->rma.implicit) {
        core_req_release(req); /* an error shows in the endpoint's state and the next flush */
        return;
    }
    core_req_complete(req, error);
}

void core_rma_ep_fail(ibmsg_ep_t ep, int error)
{
    core_mq_entry_t *e;

    if (ep->rma.pending.head.next == NULL) {
        return; /* never initialised: the endpoint failed during creation */
    }
    /* A partly posted operation's entries name no request: complete it here. */
    while ((e = core_mq_list_first(&ep->rma.pending)) != NULL) {
        struct ibmsg_request_s *req = util_container_of(e, struct ibmsg_request_s, mq);
        core_mq_list_remove(e);
        core_rma_complete(ep, req, error);
    }
}

/* The device refused one work request of req (verbs_post_refused): req ends with that error,
   out of the queue, and the endpoint goes on. Its fragments already posted complete unnoticed
   (their entries name no request). */
static UTIL_COLD int rma_post_refused(ibmsg_ep_t ep, struct ibmsg_request_s *req,
                                      core_sslot_t *slot, unsigned flags, int status)
{
    slot->req = NULL;
    slot->signaled = 0;
    if (flags & VERBS_SEND_SIGNALED) {
        core_signals_done(ep, 1);
    }
    core_mq_list_remove(&req->mq);
    core_rma_complete(ep, req, status);
    return 2;
}

static UTIL_COLD int rma_post_failed(ibmsg_ep_t ep, core_sslot_t *slot, unsigned flags)
{
    slot->req = NULL;
    if (flags & VERBS_SEND_SIGNALED) {
        core_signals_done(ep, 1);
    }
    core_ep_fail(ep, IBMSG_ERR_PEER_FAILED); /* completes the queued operations */
    return IBMSG_ERR_PEER_FAILED;
}

/* Post an atomic: its result goes to the cell of its send-queue slot, which is its own until
   the slot retires with the operation's completion (core_rma_complete copies it out). Returns
   as rma_post. */
static int rma_post_atomic(ibmsg_ep_t ep, struct ibmsg_request_s *req)
{
    core_rma_req_t *r = &req->rma;
    uint32_t cell = (uint32_t)(ep->sq_head & ep->sq_mask);
    verbs_sge_t sge = {(uintptr_t)&ep->rma.cells[cell], sizeof(uint64_t), ep->rma.cells_mem.lkey};
    unsigned flags = 0;
    core_sslot_t *slot;
    int status;

    if (util_unlikely(!core_sq_room(ep, 1))) {
        return 0;
    }
    slot = core_sslot_take(ep);
    slot->req = req;
    if (!r->implicit || ep->sq_head + 1 - ep->sq_last_signal >= ep->signal_interval) {
        flags |= VERBS_SEND_SIGNALED;
        ep->sq_last_signal = ep->sq_head + 1;
        core_signal_posted(ep);
        slot->signaled = 1;
    }
    r->cell = cell;
    status = verbs_qp_post_atomic(
        ep->qp, r->op == CORE_RMA_CSWAP ? VERBS_ATOMIC_CMP_SWAP : VERBS_ATOMIC_FETCH_ADD, &sge,
        r->raddr, r->rkey, r->operand, r->swap, flags, (uintptr_t)slot);
    core_cnt_posted_now(ep);
    if (util_unlikely(status != IBMSG_OK)) {
        if (verbs_post_refused(status)) {
            return rma_post_refused(ep, req, slot, flags, status);
        }
        return rma_post_failed(ep, slot, flags);
    }
    core_sq_push(ep);
    ep->rma.read_end = ep->sq_head; /* like a READ: a put or send behind it is fenced */
    r->posted = sizeof(uint64_t);
    req->state = CORE_REQ_ACTIVE;
    return 1;
}

/* Post what room allows of req; 1 when it is fully posted, 0 when the queue is full, 2 when
   the device refused it (completed, out of the queue), < 0 when the endpoint failed. */
static int rma_post(ibmsg_ep_t ep, struct ibmsg_request_s *req)
{
    core_rma_req_t *r = &req->rma;

    if (r->op >= CORE_RMA_FETCH_ADD) {
        return rma_post_atomic(ep, req);
    }

    do {
        core_sslot_t *slot;
        uint64_t frag = UTIL_MIN(req->len - r->posted, (uint64_t)ep->rma.max_fragment);
        unsigned flags = r->is_inline ? VERBS_SEND_INLINE : 0;
        verbs_sge_t sge[VERBS_QP_SGE_MAX];
        int status, last, nsge = r->op == CORE_RMA_MARKER ? 0 : 1;

        if (util_unlikely(!core_sq_room(ep, 1))) {
            return 0;
        }
        if (util_unlikely(req->iov.iov != NULL)) {
            /* A vector: as many entries as one work request gathers (or scatters to); the
               rest go in the next ones, at the following remote offsets. */
            frag =
                core_iov_sges(&req->iov, r->posted, frag,
                              r->op == CORE_RMA_GET ? ep->rma.sge_rd : ep->rma.sge_wr, sge, &nsge);
        } else {
            sge[0].addr = (uintptr_t)req->buf + r->posted;
            sge[0].length = (uint32_t)frag;
            sge[0].lkey = r->lkey;
        }
        last = r->posted + frag == req->len;
        slot = core_sslot_take(ep);
        slot->req = last ? req : NULL;
        if ((last && !r->implicit) || ep->sq_head + 1 - ep->sq_last_signal >= ep->signal_interval) {
            flags |= VERBS_SEND_SIGNALED;
            ep->sq_last_signal = ep->sq_head + 1;
            core_signal_posted(ep);
            slot->signaled = 1;
        }
        if (r->op == CORE_RMA_PUT) {
            flags |= core_ep_fence(ep);
        }
        status =
            verbs_qp_post_rdma(ep->qp, r->op == CORE_RMA_GET ? VERBS_RDMA_READ : VERBS_RDMA_WRITE,
                               sge, nsge, r->raddr + r->posted, r->rkey, flags, (uintptr_t)slot);
        core_cnt_posted_now(ep);
        if (util_unlikely(status != IBMSG_OK)) {
            if (verbs_post_refused(status)) {
                return rma_post_refused(ep, req, slot, flags, status);
            }
            return rma_post_failed(ep, slot, flags);
        }
        core_sq_push(ep);
        core_ep_fenced(ep, flags);
        if (r->op == CORE_RMA_GET) {
            ep->rma.read_end = ep->sq_head; /* a put or send behind it is fenced */
        }
        r->posted += frag;
        req->state = CORE_REQ_ACTIVE;
    } while (r->posted < req->len);
    return 1;
}

void core_rma_service(ibmsg_ep_t ep)
{
    core_mq_entry_t *e;

    while ((e = core_mq_list_first(&ep->rma.pending)) != NULL) {
        struct ibmsg_request_s *req = util_container_of(e, struct ibmsg_request_s, mq);
        int done = rma_post(ep, req);
        if (done <= 0) {
            return; /* queue full (retried when a send completes), or the endpoint failed */
        }
        if (done == 1) {
            core_mq_list_remove(e); /* 2: refused, already out */
        }
    }
}

static int rma_ep_usable(ibmsg_ep_t ep)
{
    if (util_likely(ep->state == CORE_EP_CONNECTED)) {
        return IBMSG_OK;
    }
    return ep->state == CORE_EP_FAILED ? IBMSG_ERR_PEER_FAILED : IBMSG_ERR_INVALID;
}

/* A remote key of ep, not destroyed, and ep able to take one-sided operations. */
static int rma_key_usable(ibmsg_ep_t ep, ibmsg_rkey_t rkey)
{
    if (util_unlikely(rkey->state != CORE_RMA_SLOT_RKEY || rkey->ep != ep)) {
        util_error("qp 0x%x: remote key %s", ep->qpn,
                   rkey->state != CORE_RMA_SLOT_RKEY ? "destroyed" : "of another endpoint");
        return IBMSG_ERR_INVALID;
    }
    return rma_ep_usable(ep);
}

static UTIL_COLD int rma_refuse_bounds(ibmsg_ep_t ep, ibmsg_rkey_t rkey, uint64_t raddr, size_t len)
{
    core_cnt_inc(ep->cnt, CNT_CORE_RMA_REFUSED_OOB);
    util_error("qp 0x%x: refused a one-sided access of %zu bytes at 0x%llx: outside the key's "
               "range [0x%llx, +%llu)",
               ep->qpn, len, (unsigned long long)raddr, (unsigned long long)rkey->base,
               (unsigned long long)rkey->length);
    return IBMSG_ERR_OUT_OF_BOUNDS;
}

static UTIL_COLD int rma_bad_local(ibmsg_ep_t ep, const void *buf, size_t len, ibmsg_mem_t lmem)
{
    if (lmem == NULL) {
        util_error("qp 0x%x: a %zu-byte one-sided operation needs the mapping of its local "
                   "buffer (puts of up to %u bytes go inline without one)",
                   ep->qpn, len, ep->rma.inline_max);
    } else if (lmem->state != CORE_RMA_SLOT_MEM) {
        util_error("qp 0x%x: the local mapping handle is unmapped", ep->qpn);
    } else {
        util_error("qp 0x%x: local buffer %p (+%zu) is not inside its mapping [0x%llx, +%llu)",
                   ep->qpn, buf, len, (unsigned long long)lmem->addr,
                   (unsigned long long)lmem->len);
    }
    return IBMSG_ERR_INVALID;
}

/* Queue req (a put, get or atomic to raddr under rkey) behind ep's one-sided operations, in
   issue order, and post it now when nothing is queued before it. */
static int rma_enqueue(ibmsg_ep_t ep, ibmsg_request_t req, ibmsg_rkey_t rkey, uint64_t raddr,
                       ibmsg_request_t *req_p)
{
    ep->rma.outstanding++;
    ep->rma.last_raddr = raddr;
    ep->rma.last_rkey = rkey->rkey;
    req->state = CORE_REQ_POSTED;
    if (req_p != NULL) {
        *req_p = req; /* before posting: a failing post completes it, and the caller frees it */
    }
    core_mq_list_push(&ep->rma.pending, &req->mq);
    if (ep->rma.pending.head.next == &req->mq) {
        core_rma_service(ep); /* nothing queued before it: post now */
    }
    return IBMSG_OK;
}

/* The checks of put, get and their vector forms before anything local: the handles, the
   endpoint, the key's access and the remote range. */
static int rma_check(ibmsg_ep_t ep, uint8_t op, ibmsg_rkey_t rkey, uint64_t raddr, size_t len)
{
    int status;

    status = rma_key_usable(ep, rkey);
    if (util_unlikely(status != IBMSG_OK)) {
        return status;
    }
    if (util_unlikely(!(rkey->access &
                        (op == CORE_RMA_PUT ? IBMSG_MEM_REMOTE_WRITE : IBMSG_MEM_REMOTE_READ)))) {
        util_error("qp 0x%x: the remote key grants no remote %s", ep->qpn,
                   op == CORE_RMA_PUT ? "write" : "read");
        return IBMSG_ERR_ACCESS;
    }
    if (util_unlikely(!core_rkey_in_bounds(rkey->base, rkey->length, raddr, len))) {
        return rma_refuse_bounds(ep, rkey, raddr, len);
    }
    return IBMSG_OK;
}

/* Whether [buf, buf + len) lies in lmem, a live mapping of ep's context. */
static inline int rma_local_ok(ibmsg_ep_t ep, const void *buf, size_t len, ibmsg_mem_t lmem)
{
    return lmem != NULL && lmem->state == CORE_RMA_SLOT_MEM && lmem->ctx == ep->ctx &&
           core_rkey_in_bounds(lmem->addr, lmem->len, (uintptr_t)buf, len);
}

/* A checked put or get of len bytes to raddr: its request, counted. NULL with *status set when
   it ended here (len 0: complete at once; or no memory). */
static struct ibmsg_request_s *rma_start(ibmsg_ep_t ep, uint8_t op, void *buf, size_t len,
                                         uint64_t raddr, ibmsg_rkey_t rkey, int is_inline,
                                         ibmsg_request_t *req_p, int *status)
{
    struct ibmsg_request_s *req = core_req_alloc(ep->ctx);

    *status = IBMSG_OK;
    if (util_unlikely(req == NULL)) {
        *status = IBMSG_ERR_NO_MEMORY;
        return NULL;
    }
    req->type = CORE_REQ_RMA;
    req->ep = ep;
    req->buf = buf;
    req->len = len;
    req->status.source = ep;
    req->status.length = len;
    req->rma.op = op;
    req->rma.raddr = raddr;
    req->rma.rkey = rkey->rkey;
    req->rma.implicit = req_p == NULL;
    if (op == CORE_RMA_PUT) {
        core_cnt_inc(ep->cnt, CNT_CORE_RMA_PUT_OPS);
        core_cnt_add(ep->cnt, CNT_CORE_RMA_PUT_BYTES, len);
        core_cnt_add(ep->cnt, CNT_CORE_RMA_INLINE_PUTS, (uint64_t)(is_inline && len > 0));
    } else {
        core_cnt_inc(ep->cnt, CNT_CORE_RMA_GET_OPS);
        core_cnt_add(ep->cnt, CNT_CORE_RMA_GET_BYTES, len);
    }
    if (len == 0) {
        /* Nothing moves: complete at once. */
        if (req_p == NULL) {
            core_req_release(req);
        } else {
            core_req_complete(req, IBMSG_OK);
            *req_p = req;
        }
        return NULL;
    }
    req->rma.is_inline = (uint8_t)is_inline;
    return req;
}

static int rma_issue(ibmsg_ep_t ep, uint8_t op, void *buf, size_t len, ibmsg_mem_t lmem,
                     uint64_t raddr, ibmsg_rkey_t rkey, ibmsg_request_t *req_p)
{
    struct ibmsg_request_s *req;
    int status, is_inline;

    if (util_unlikely(ep == NULL || rkey == NULL || (buf == NULL && len > 0))) {
        return IBMSG_ERR_INVALID;
    }
    status = rma_check(ep, op, rkey, raddr, len);
    if (util_unlikely(status != IBMSG_OK)) {
        return status;
    }
    is_inline = op == CORE_RMA_PUT && len <= ep->rma.inline_max;
    if (len > 0 && !is_inline && util_unlikely(!rma_local_ok(ep, buf, len, lmem))) {
        return rma_bad_local(ep, buf, len, lmem);
    }
    req = rma_start(ep, op, buf, len, raddr, rkey, is_inline, req_p, &status);
    if (req == NULL) {
        return status;
    }
    if (!is_inline) {
        req->rma.lkey = lmem->vm.lkey;
        req->rma.lmem = lmem;
        lmem->inflight++;
    }
    return rma_enqueue(ep, req, rkey, raddr, req_p);
}

/* putv and getv: the entries checked and each one's mapping held in the request's extension
   (its in-flight count, as a put's single mapping), then queued like a put or get. */
static int rma_issue_v(ibmsg_ep_t ep, uint8_t op, const ibmsg_iov_t *iov, size_t count,
                       uint64_t raddr, ibmsg_rkey_t rkey, ibmsg_request_t *req_p)
{
    struct ibmsg_request_s *req;
    core_iov_ext_t *x;
    size_t len;
    int status, is_inline;

    if (util_unlikely(ep == NULL || rkey == NULL)) {
        return IBMSG_ERR_INVALID;
    }
    status = core_iov_check(iov, count, &len);
    if (util_unlikely(status != IBMSG_OK)) {
        return status;
    }
    status = rma_check(ep, op, rkey, raddr, len);
    if (util_unlikely(status != IBMSG_OK)) {
        return status;
    }
    is_inline = op == CORE_RMA_PUT && len <= ep->rma.inline_max;
    for (size_t i = 0; i < count && !is_inline; i++) {
        if (iov[i].len > 0 &&
            util_unlikely(!rma_local_ok(ep, iov[i].buf, iov[i].len, iov[i].mem))) {
            return rma_bad_local(ep, iov[i].buf, iov[i].len, iov[i].mem);
        }
    }
    x = core_iov_ext_get(ep->ctx);
    if (util_unlikely(x == NULL)) {
        return IBMSG_ERR_NO_MEMORY;
    }
    req = rma_start(ep, op, NULL, len, raddr, rkey, is_inline, req_p, &status);
    if (status == IBMSG_OK) {
        core_cnt_inc(ep->ctx->cnt, CNT_CORE_IOV_OPS); /* issued (an empty one completed) */
        core_cnt_add(ep->ctx->cnt, CNT_CORE_IOV_ENTRIES, count);
    }
    if (req == NULL) {
        core_iov_release(ep->ctx, &(core_iov_req_t){.ext = x});
        return status;
    }
    req->iov.iov = iov;
    req->iov.cnt = (uint32_t)count;
    req->iov.ext = x;
    for (size_t i = 0; i < count && !is_inline; i++) {
        if (iov[i].len > 0) {
            x->hold[i].mem = iov[i].mem;
            iov[i].mem->inflight++;
        }
    }
    return rma_enqueue(ep, req, rkey, raddr, req_p);
}

static UTIL_COLD int atomic_refuse(ibmsg_ep_t ep, ibmsg_rkey_t rkey, uint64_t raddr)
{
    if ((raddr & 7) == 0) {
        return rma_refuse_bounds(ep, rkey, raddr, sizeof(uint64_t));
    }
    core_cnt_inc(ep->cnt, CNT_CORE_RMA_REFUSED_OOB);
    util_error("qp 0x%x: refused an atomic at 0x%llx: not 8-byte aligned", ep->qpn,
               (unsigned long long)raddr);
    return IBMSG_ERR_OUT_OF_BOUNDS;
}

/* The endpoint's result cells, registered at its first atomic (a system call, once). */
static UTIL_COLD int atomic_cells(ibmsg_ep_t ep)
{
    size_t size = ((size_t)ep->sq_depth * sizeof(uint64_t) + 63) & ~(size_t)63;
    uint64_t *cells = aligned_alloc(64, size);
    int status;

    if (cells == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    memset(cells, 0, size);
    status = verbs_mem_reg(ep->ctx->dev, cells, size, 0, &ep->rma.cells_mem);
    if (status != IBMSG_OK) {
        free(cells);
        return status == IBMSG_ERR_NO_RESOURCE ? IBMSG_ERR_NO_MEMORY : status;
    }
    ep->rma.cells = cells;
    return IBMSG_OK;
}

static int atomic_issue(ibmsg_ep_t ep, uint8_t op, uint64_t operand, uint64_t swap,
                        uint64_t *result, uint64_t raddr, ibmsg_rkey_t rkey, ibmsg_request_t *req_p)
{
    struct ibmsg_request_s *req;
    int status;

    if (util_unlikely(ep == NULL || rkey == NULL || result == NULL)) {
        return IBMSG_ERR_INVALID;
    }
    status = rma_key_usable(ep, rkey);
    if (util_unlikely(status != IBMSG_OK)) {
        return status;
    }
    if (util_unlikely(verbs_dev_info(ep->ctx->dev)->atomic_cap == VERBS_ATOMIC_NONE)) {
        util_error("qp 0x%x: %s has no remote atomics (atomic_cap NONE)", ep->qpn,
                   verbs_dev_info(ep->ctx->dev)->name);
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    if (util_unlikely(!(rkey->access & IBMSG_MEM_REMOTE_ATOMIC))) {
        util_error("qp 0x%x: the remote key grants no remote atomics", ep->qpn);
        return IBMSG_ERR_ACCESS;
    }
    if (util_unlikely((raddr & 7) != 0 ||
                      !core_rkey_in_bounds(rkey->base, rkey->length, raddr, sizeof(uint64_t)))) {
        return atomic_refuse(ep, rkey, raddr);
    }
    if (util_unlikely(ep->rma.cells == NULL)) {
        status = atomic_cells(ep);
        if (status != IBMSG_OK) {
            return status;
        }
    }
    req = core_req_alloc(ep->ctx);
    if (util_unlikely(req == NULL)) {
        return IBMSG_ERR_NO_MEMORY;
    }
    req->type = CORE_REQ_RMA;
    req->ep = ep;
    req->buf = result;
    req->len = sizeof(uint64_t);
    req->status.source = ep;
    req->status.length = sizeof(uint64_t);
    req->rma.op = op;
    req->rma.raddr = raddr;
    req->rma.rkey = rkey->rkey;
    req->rma.operand = operand;
    req->rma.swap = swap;
    req->rma.implicit = req_p == NULL;
    core_cnt_inc(ep->cnt, op == CORE_RMA_CSWAP ? CNT_CORE_RMA_CSWAPS : CNT_CORE_RMA_FETCH_ADDS);
    return rma_enqueue(ep, req, rkey, raddr, req_p);
}

int ibmsg_atomic_fetch_add64(ibmsg_ep_t ep, uint64_t add, uint64_t *result, uint64_t remote_addr,
                             ibmsg_rkey_t rkey, ibmsg_request_t *req)
{
    return atomic_issue(ep, CORE_RMA_FETCH_ADD, add, 0, result, remote_addr, rkey, req);
}

int ibmsg_atomic_cswap64(ibmsg_ep_t ep, uint64_t compare, uint64_t swap, uint64_t *result,
                         uint64_t remote_addr, ibmsg_rkey_t rkey, ibmsg_request_t *req)
{
    return atomic_issue(ep, CORE_RMA_CSWAP, compare, swap, result, remote_addr, rkey, req);
}

int ibmsg_put(ibmsg_ep_t ep, const void *buf, size_t len, ibmsg_mem_t lmem, uint64_t remote_addr,
              ibmsg_rkey_t rkey, ibmsg_request_t *req)
{
    return rma_issue(ep, CORE_RMA_PUT, (void *)(uintptr_t)buf, len, lmem, remote_addr, rkey, req);
}

int ibmsg_get(ibmsg_ep_t ep, void *buf, size_t len, ibmsg_mem_t lmem, uint64_t remote_addr,
              ibmsg_rkey_t rkey, ibmsg_request_t *req)
{
    return rma_issue(ep, CORE_RMA_GET, buf, len, lmem, remote_addr, rkey, req);
}

int ibmsg_putv(ibmsg_ep_t ep, const ibmsg_iov_t *iov, size_t count, uint64_t remote_addr,
               ibmsg_rkey_t rkey, ibmsg_request_t *req)
{
    return rma_issue_v(ep, CORE_RMA_PUT, iov, count, remote_addr, rkey, req);
}

int ibmsg_getv(ibmsg_ep_t ep, const ibmsg_iov_t *iov, size_t count, uint64_t remote_addr,
               ibmsg_rkey_t rkey, ibmsg_request_t *req)
{
    return rma_issue_v(ep, CORE_RMA_GET, iov, count, remote_addr, rkey, req);
}

int ibmsg_ep_flush(ibmsg_ep_t ep, ibmsg_request_t *req_p)
{
    struct ibmsg_request_s *req;
    int status;

    if (ep == NULL || req_p == NULL) {
        return IBMSG_ERR_INVALID;
    }
    status = rma_ep_usable(ep);
    if (status != IBMSG_OK) {
        return status;
    }
    req = core_req_alloc(ep->ctx);
    if (req == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    req->type = CORE_REQ_RMA;
    req->ep = ep;
    req->status.source = ep;
    req->rma.op = CORE_RMA_MARKER;
    core_cnt_inc(ep->cnt, CNT_CORE_RMA_FLUSHES);
    *req_p = req;
    if (ep->rma.outstanding == 0) {
        core_req_complete(req, IBMSG_OK);
        return IBMSG_OK;
    }
    /* The marker moves no data: any address and key the peer granted will do. */
    req->rma.raddr = ep->rma.last_raddr;
    req->rma.rkey = ep->rma.last_rkey;
    ep->rma.outstanding++;
    req->state = CORE_REQ_POSTED;
    core_mq_list_push(&ep->rma.pending, &req->mq);
    if (ep->rma.pending.head.next == &req->mq) {
        core_rma_service(ep);
    }
    return IBMSG_OK;
}

int ibmsg_ep_flush_wait(ibmsg_ep_t ep)
{
    ibmsg_request_t req;
    int status = ibmsg_ep_flush(ep, &req);

    return status == IBMSG_OK ? ibmsg_request_wait(&req, NULL) : status;
}

int ibmsg_rma_query(ibmsg_ep_t ep, ibmsg_rma_attr_t *attr)
{
    if (ep == NULL || attr == NULL) {
        return IBMSG_ERR_INVALID;
    }
    memset(attr, 0, sizeof(*attr));
    attr->inline_limit = ep->rma.inline_max;
    attr->max_fragment = ep->rma.max_fragment;
    attr->max_rd_atomic = ep->rma.max_rd_atomic;
    return IBMSG_OK;
}
