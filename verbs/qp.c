/* RC queue pairs: creation, state transitions and posting. */
#include "verbs/qp.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ibmsg/status.h>

#include "util/compiler.h"
#include "util/log.h"
#include "verbs/av.h"
#include "verbs/fault.h"
#include "verbs/verbs_priv.h"

/* An initial PSN that differs between QPs and runs, so stale packets of an old QP do not fit. */
static uint32_t initial_psn(const void *salt)
{
    struct timespec ts;
    uint64_t x;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ (uint64_t)(uintptr_t)salt;
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdULL;
    x ^= x >> 33;
    return (uint32_t)x & 0xffffff;
}

/* RDMA READs in flight per QP in one direction: the device's limit and the caller's, at most
 * VERBS_QP_RD_ATOM_MAX, at least 1. The peer's value is applied at connection. */
static uint8_t verbs_qp_rd_atom(uint32_t dev_max, uint32_t asked)
{
    uint32_t cap = asked != 0 ? UTIL_MIN(asked, (uint32_t)VERBS_QP_RD_ATOM_MAX)
                              : (uint32_t)VERBS_QP_RD_ATOM_MAX;
    return (uint8_t)UTIL_MAX(1u, UTIL_MIN(dev_max, cap));
}

/* One ibv_create_qp with sge send elements and inline bytes; init->cap is what was granted. */
static struct ibv_qp *qp_try(verbs_dev_t *dev, struct ibv_qp_init_attr *init,
                             const verbs_qp_params_t *params, uint32_t sge, uint32_t inline_bytes)
{
    init->cap.max_send_wr = params->sq_depth;
    init->cap.max_recv_wr = params->rq_depth;
    init->cap.max_send_sge = sge;
    init->cap.max_recv_sge = params->srq != NULL ? 0 : 1;
    init->cap.max_inline_data = inline_bytes;
    if (verbs_faults.qp_inline_max != 0 && inline_bytes > verbs_faults.qp_inline_max) {
        verbs_faults.qp_refused++; /* as a device with a lower limit refuses */
        errno = EINVAL;
        return NULL;
    }
    return ibv_create_qp(dev->pd, init);
}

/* The QP with the most inline bytes, at most top, that the device takes, found by bisection
 * (halving what was refused would miss a limit in between: 512 asked of a device taking 300
 * got 256, not 300); *taken is what it was asked, init->cap what was granted. NULL with errno:
 * none fits, or another error than EINVAL. */
static struct ibv_qp *qp_try_largest_inline(verbs_dev_t *dev, struct ibv_qp_init_attr *init,
                                            const verbs_qp_params_t *params, uint32_t sge,
                                            int64_t top, uint32_t *taken)
{
    struct ibv_qp *best = NULL, *qp;
    struct ibv_qp_cap best_cap = {0};
    int64_t lo = 0, hi = top;
    int err = EINVAL;

    while (lo <= hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        qp = qp_try(dev, init, params, sge, (uint32_t)mid);
        if (qp != NULL) {
            if (best != NULL) {
                ibv_destroy_qp(best);
            }
            best = qp;
            best_cap = init->cap;
            *taken = (uint32_t)mid;
            lo = mid + 1;
        } else if (errno == EINVAL) {
            hi = mid - 1;
        } else {
            err = errno;
            break;
        }
    }
    if (best == NULL) {
        errno = err;
        return NULL;
    }
    init->cap = best_cap;
    return best;
}

int verbs_qp_create(verbs_dev_t *dev, verbs_cq_t *send_cq, verbs_cq_t *recv_cq,
                    const verbs_qp_params_t *params, verbs_qp_t **qp_p)
{
    struct ibv_qp_init_attr init = {0};
    struct ibv_qp_attr attr = {0};
    /* Messages take 2 (header, payload); vector operations up to VERBS_QP_SGE_MAX. */
    uint32_t sge = UTIL_MAX(2u, UTIL_MIN(dev != NULL ? dev->info.max_sge : 2u, VERBS_QP_SGE_MAX));
    verbs_qp_t *qp;
    uint32_t inline_asked;
    int status;

    if (dev == NULL || send_cq == NULL || recv_cq == NULL || params == NULL || qp_p == NULL ||
        params->sq_depth == 0 || (params->rq_depth == 0) != (params->srq != NULL) ||
        params->sq_depth > dev->info.max_qp_wr || params->rq_depth > dev->info.max_qp_wr) {
        return IBMSG_ERR_INVALID;
    }
    qp = calloc(1, sizeof(*qp));
    if (qp == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    init.send_cq = send_cq->cq;
    init.recv_cq = recv_cq->cq;
    init.qp_type = IBV_QPT_RC;
    init.qp_context = dev; /* its events go to this context (hca.c) */
    init.sq_sig_all = 0;   /* selective signalling */
    init.srq = params->srq != NULL ? params->srq->srq : NULL;
    /* Inline bytes are a wish: devices refuse more than they take (rxe: 512), and none says how
     * many it takes. Once found, the device's limit is asked for directly. */
    inline_asked = UTIL_MIN(params->max_inline, dev->inline_max);
    qp->qp = qp_try(dev, &init, params, sge, inline_asked);
    if (qp->qp == NULL && errno == EINVAL) {
        /* The largest inline size the device takes; should none fit, again with the 2
         * elements messages need (a provider whose max_sge is its receive limit may take fewer
         * send elements; vector operations then take more work requests). */
        uint32_t taken = 0;
        qp->qp = qp_try_largest_inline(dev, &init, params, sge, (int64_t)inline_asked - 1, &taken);
        if (qp->qp == NULL && errno == EINVAL && sge > 2) {
            sge = 2;
            qp->qp = qp_try_largest_inline(dev, &init, params, sge, inline_asked, &taken);
        }
        if (qp->qp != NULL) {
            dev->inline_max = taken;
            util_info("%s: queue pairs take at most %u inline bytes (%u asked), %u send elements",
                      dev->info.name, taken, inline_asked, sge);
        }
    }
    if (qp->qp == NULL) {
        int err = errno;
        /* The sizes were checked against the device above, so what remains is exhaustion: of
         * memory (ENOMEM) or of queue pairs (the device's max_qp or the cgroup's rdma.max give
         * EINVAL, EAGAIN or ENOSPC depending on the driver). */
        status = err == ENOMEM ? IBMSG_ERR_NO_MEMORY : IBMSG_ERR_NO_RESOURCE;
        util_error("%s: ibv_create_qp(sq %u, rq %u, inline %u) failed (out of %s?): %s",
                   dev->info.name, params->sq_depth, params->rq_depth, params->max_inline,
                   err == ENOMEM ? "memory" : "queue pairs", strerror(err));
        goto err_free;
    }
    /* The device may grant more than asked (rxe: inline = max(16 * max_send_sge, asked)). */
    qp->caps.sq_depth = init.cap.max_send_wr;
    qp->caps.rq_depth = init.cap.max_recv_wr;
    qp->caps.max_inline = init.cap.max_inline_data;
    qp->caps.max_send_sge = UTIL_MIN(init.cap.max_send_sge, VERBS_QP_SGE_MAX);
    qp->caps.max_rd_atomic = verbs_qp_rd_atom(dev->info.max_init_rd_atom, params->max_rd_atomic);
    qp->caps.max_dest_rd_atomic = verbs_qp_rd_atom(dev->info.max_rd_atom, params->max_rd_atomic);
    qp->caps.send_batch = UTIL_MIN(params->send_batch, (uint32_t)VERBS_SEND_BATCH_MAX);
    qp->caps.srq = params->srq;
    qp->dev = dev;
    qp->psn = initial_psn(qp);

    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = params->pkey_index;
    attr.port_num = dev->info.port;
    /* Remote access is granted per registration (rkey); the QP lets all kinds through. Remote
     * write also lets the peer's zero-length keepalive probes in (core/failure.h); the buffer
     * pools' registrations grant no remote access. Atomics only where the device has them: a
     * QP asking for what its device lacks may be refused. */
    attr.qp_access_flags =
        IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
        (dev->info.atomic_cap != VERBS_ATOMIC_NONE ? IBV_ACCESS_REMOTE_ATOMIC : 0);
    if (ibv_modify_qp(qp->qp, &attr,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) != 0) {
        status = verbs_errno_status(errno);
        util_error("qp 0x%x: RESET -> INIT (port %u, P_Key index %u) failed: %s", qp->qp->qp_num,
                   (unsigned)dev->info.port, (unsigned)params->pkey_index, strerror(errno));
        goto err_destroy_qp;
    }
    *qp_p = qp;
    return IBMSG_OK;

err_destroy_qp:
    ibv_destroy_qp(qp->qp);
err_free:
    free(qp->held_inline);
    free(qp->held);
    free(qp);
    return status;
}

void verbs_qp_destroy(verbs_qp_t *qp)
{
    if (qp == NULL) {
        return;
    }
    if (ibv_destroy_qp(qp->qp) != 0) {
        util_warn("qp 0x%x: ibv_destroy_qp failed: %s", qp->qp->qp_num, strerror(errno));
    }
    free(qp->held_inline);
    free(qp->held);
    free(qp);
}

void verbs_qp_caps(const verbs_qp_t *qp, verbs_qp_params_t *caps)
{
    *caps = qp->caps;
}

uint32_t verbs_qp_num(const verbs_qp_t *qp)
{
    return qp->qp->qp_num;
}

void verbs_qp_addr(const verbs_qp_t *qp, verbs_addr_t *addr)
{
    verbs_av_local(&qp->dev->info, qp->qp->qp_num, qp->psn, addr);
}

int verbs_qp_to_rtr(verbs_qp_t *qp, const verbs_addr_t *remote, const verbs_conn_params_t *cp)
{
    const verbs_dev_info_t *info = &qp->dev->info;
    struct ibv_qp_attr attr = {0};
    int ret = verbs_av_remote(info, remote, cp->hop_limit, "qp", qp->qp->qp_num, &attr.ah_attr);

    if (ret != IBMSG_OK) {
        return ret;
    }
    attr.qp_state = IBV_QPS_RTR;
    attr.path_mtu = (enum ibv_mtu)UTIL_MIN(info->active_mtu, remote->mtu);
    for (uint8_t m = 5; cp->mtu_max != 0 && m >= 1; m--) { /* the largest code within the cap */
        if (verbs_mtu_bytes(m) <= cp->mtu_max || m == 1) {
            attr.path_mtu = (enum ibv_mtu)UTIL_MIN((uint8_t)attr.path_mtu, m);
            break;
        }
    }
    attr.dest_qp_num = remote->qpn;
    attr.rq_psn = remote->psn;
    attr.max_dest_rd_atomic = (uint8_t)UTIL_MAX(
        1u, UTIL_MIN(qp->caps.max_dest_rd_atomic, (uint32_t)cp->peer_initiator_depth));
    attr.min_rnr_timer = cp->min_rnr_timer;
    attr.ah_attr.sl = cp->sl;
    if (attr.ah_attr.is_global) {
        attr.ah_attr.grh.traffic_class = cp->traffic_class;
        attr.ah_attr.grh.flow_label = cp->flow_label;
    }
    if (ibv_modify_qp(qp->qp, &attr,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER) != 0) {
        int err = errno;
        util_error("qp 0x%x: INIT -> RTR (to qp 0x%x, mtu %u) failed: %s", qp->qp->qp_num,
                   remote->qpn, verbs_mtu_bytes((uint8_t)attr.path_mtu), strerror(err));
        return verbs_errno_status(err);
    }
    qp->caps.max_dest_rd_atomic = attr.max_dest_rd_atomic;
    return IBMSG_OK;
}

int verbs_qp_to_rts(verbs_qp_t *qp, const verbs_conn_params_t *cp)
{
    struct ibv_qp_attr attr = {0};

    attr.qp_state = IBV_QPS_RTS;
    attr.timeout = cp->timeout;
    attr.retry_cnt = cp->retry_cnt;
    if (cp->retry_cnt == VERBS_RETRY_AUTO) {
        /* 7 retries where 7 counts down (IB: only rnr_retry 7 means forever); Soft-RoCE's
           requester does not count down from 7, so a dead peer would never be noticed. */
        attr.retry_cnt = qp->dev->info.vendor_id == VERBS_RXE_VENDOR_ID ? 6 : 7;
    }
    attr.rnr_retry = cp->rnr_retry;
    attr.sq_psn = qp->psn;
    attr.max_rd_atomic = (uint8_t)UTIL_MAX(
        1u, UTIL_MIN(qp->caps.max_rd_atomic, (uint32_t)cp->peer_responder_resources));
    if (ibv_modify_qp(qp->qp, &attr,
                      IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                          IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC) != 0) {
        int err = errno;
        util_error("qp 0x%x: RTR -> RTS failed: %s", qp->qp->qp_num, strerror(err));
        return verbs_errno_status(err);
    }
    qp->caps.max_rd_atomic = attr.max_rd_atomic;
    return IBMSG_OK;
}

int verbs_qp_query(const verbs_qp_t *qp, verbs_qp_attr_t *out)
{
    struct ibv_qp_attr attr;
    struct ibv_qp_init_attr init;

    if (ibv_query_qp(qp->qp, &attr,
                     IBV_QP_STATE | IBV_QP_MAX_QP_RD_ATOMIC | IBV_QP_MAX_DEST_RD_ATOMIC |
                         IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                         IBV_QP_MIN_RNR_TIMER | IBV_QP_PATH_MTU | IBV_QP_AV | IBV_QP_PKEY_INDEX,
                     &init) != 0) {
        int err = errno;
        util_error("qp 0x%x: ibv_query_qp failed: %s", qp->qp->qp_num, strerror(err));
        return verbs_errno_status(err);
    }
    memset(out, 0, sizeof(*out));
    out->state = (uint8_t)attr.qp_state;
    out->max_rd_atomic = attr.max_rd_atomic;
    out->max_dest_rd_atomic = attr.max_dest_rd_atomic;
    out->timeout = attr.timeout;
    out->retry_cnt = attr.retry_cnt;
    out->rnr_retry = attr.rnr_retry;
    out->min_rnr_timer = attr.min_rnr_timer;
    out->path_mtu = (uint8_t)attr.path_mtu;
    out->sl = attr.ah_attr.sl;
    out->traffic_class = attr.ah_attr.grh.traffic_class;
    out->hop_limit = attr.ah_attr.grh.hop_limit;
    out->flow_label = attr.ah_attr.grh.flow_label;
    out->pkey_index = attr.pkey_index;
    return IBMSG_OK;
}

int verbs_qp_to_error(verbs_qp_t *qp)
{
    struct ibv_qp_attr attr = {.qp_state = IBV_QPS_ERR};

    if (ibv_modify_qp(qp->qp, &attr, IBV_QP_STATE) != 0) {
        int err = errno;
        util_warn("qp 0x%x: -> ERROR failed: %s", qp->qp->qp_num, strerror(err));
        return verbs_errno_status(err);
    }
    return IBMSG_OK;
}

/* The windows bound by a posted list take their new keys: a type 2 bind names the window by the
 * key it replaces (mw->rkey), read when the provider takes the work request. */
static void qp_binds_posted(const struct ibv_send_wr *wr)
{
    for (; wr != NULL; wr = wr->next) {
        if (wr->opcode == IBV_WR_BIND_MW) {
            wr->bind_mw.mw->rkey = wr->bind_mw.rkey;
        }
    }
}

/*
 * Post the held sends and then wr (NULL: none) as one post list. The held ones are gone from the
 * QP either way; on failure the device reports the first work request it did not take (bad),
 * and the held ones from there on count as dropped. A provider that names none took none.
 */
int verbs_qp_post_wr(verbs_qp_t *qp, struct ibv_send_wr *wr, const char *what)
{
    struct ibv_send_wr *first = wr, *bad = NULL;
    uint32_t n = qp->nheld;
    int ret;

    if (n > 0) {
        qp->held[n - 1].wr.next = wr;
        first = &qp->held[0].wr;
        qp->nheld = 0;
    }
    ret = ibv_post_send(qp->qp, first, &bad);
    if (util_likely(ret == 0)) {
        qp_binds_posted(first);
        return IBMSG_OK;
    }
    uint32_t taken = n;
    for (uint32_t i = 0; i < n; i++) {
        if (bad == NULL || bad == &qp->held[i].wr) {
            taken = bad == NULL ? 0 : i;
            break;
        }
    }
    qp->dropped += n - taken;
    util_error("qp 0x%x: ibv_post_send(%s%s) failed: %s (%u held sends dropped)", qp->qp->qp_num,
               n > 0 ? "held sends, " : "", what, strerror(ret), n - taken);
    if (taken < n) {
        return IBMSG_ERR_IO; /* held sends lost: the connection's stream is broken */
    }
    /* wr alone was not taken: full is worth a retry, a refusal is wr's own error. */
    return ret == ENOMEM ? IBMSG_ERR_NO_RESOURCE : verbs_errno_status(ret);
}

/* Whether an injected fault refuses wr now (fault.h); counts it. */
static int qp_fault(const struct ibv_send_wr *wr)
{
    unsigned kind = wr->opcode == IBV_WR_BIND_MW                         ? VERBS_FAULT_BIND
                    : wr->opcode == IBV_WR_RDMA_WRITE && wr->num_sge > 0 ? VERBS_FAULT_WRITE
                    : wr->opcode == IBV_WR_RDMA_READ                     ? VERBS_FAULT_READ
                                                                         : 0;

    if (!(verbs_faults.post_kinds & kind)) {
        return 0;
    }
    verbs_faults.post_count--;
    verbs_faults.post_refused++;
    return 1;
}

/* The held sends' storage, on the first held send: an idle QP of thousands costs none of it. */
static UTIL_COLD int qp_hold_alloc(verbs_qp_t *qp)
{
    qp->held = calloc(qp->caps.send_batch, sizeof(*qp->held));
    qp->held_inline = malloc((size_t)qp->caps.send_batch * qp->caps.max_inline + 1);
    if (qp->held == NULL || qp->held_inline == NULL) {
        free(qp->held);
        free(qp->held_inline);
        qp->held = NULL;
        qp->held_inline = NULL;
        return IBMSG_ERR_NO_MEMORY;
    }
    return IBMSG_OK;
}

/* Hold a send: copy its work request, elements and inline data into the QP's own storage. */
static int qp_hold_send(verbs_qp_t *qp, const struct ibv_send_wr *wr)
{
    verbs_held_send_t *h;

    if (util_unlikely(qp->nheld >= qp->caps.send_batch)) {
        return IBMSG_ERR_NO_RESOURCE;
    }
    h = &qp->held[qp->nheld];
    h->wr = *wr;
    h->wr.next = NULL;
    h->wr.sg_list = h->sg;
    if (wr->send_flags & IBV_SEND_INLINE) {
        /* The caller may reuse inline data at once: it lives here until the post. */
        uint8_t *data = qp->held_inline + (size_t)qp->nheld * qp->caps.max_inline;
        uint32_t len = 0;
        for (int i = 0; i < wr->num_sge; i++) {
            memcpy(data + len, (const void *)(uintptr_t)wr->sg_list[i].addr, wr->sg_list[i].length);
            len += wr->sg_list[i].length;
        }
        h->sg[0].addr = (uintptr_t)data;
        h->sg[0].length = len;
        h->sg[0].lkey = 0;
        h->wr.num_sge = len > 0;
    } else {
        for (int i = 0; i < wr->num_sge; i++) {
            h->sg[i] = wr->sg_list[i];
        }
    }
    if (qp->nheld > 0) {
        qp->held[qp->nheld - 1].wr.next = &h->wr;
    }
    qp->nheld++;
    return IBMSG_OK;
}

int verbs_qp_post_send(verbs_qp_t *qp, const verbs_sge_t *sge, int nsge, unsigned flags,
                       uint32_t ex, uint64_t wr_id)
{
    struct ibv_sge sg[2];
    struct ibv_send_wr wr;

    for (int i = 0; i < nsge; i++) {
        sg[i].addr = sge[i].addr;
        sg[i].length = sge[i].length;
        sg[i].lkey = sge[i].lkey;
    }
    wr.wr_id = wr_id;
    wr.next = NULL;
    wr.sg_list = sg;
    wr.num_sge = nsge;
    wr.opcode = (flags & VERBS_SEND_INVALIDATE) ? IBV_WR_SEND_WITH_INV
                : (flags & VERBS_SEND_IMM)      ? IBV_WR_SEND_WITH_IMM
                                                : IBV_WR_SEND;
    wr.send_flags = ((flags & VERBS_SEND_SIGNALED) ? IBV_SEND_SIGNALED : 0) |
                    ((flags & VERBS_SEND_INLINE) ? IBV_SEND_INLINE : 0) |
                    ((flags & VERBS_SEND_FENCE) ? IBV_SEND_FENCE : 0);
    if (flags & VERBS_SEND_IMM) {
        wr.imm_data = verbs_be32_swap(ex);
    } else {
        wr.invalidate_rkey = ex;
    }
    return verbs_qp_submit_wr(qp, &wr, flags, "SEND");
}

int verbs_qp_submit_wr(verbs_qp_t *qp, struct ibv_send_wr *wr, unsigned flags, const char *what)
{
    if (util_unlikely(verbs_faults.post_count != 0) && qp_fault(wr)) {
        util_error("qp 0x%x: ibv_post_send(%s) failed: %s (injected)", qp->qp->qp_num, what,
                   strerror(verbs_faults.post_errno));
        return verbs_errno_status(verbs_faults.post_errno);
    }
    /* A held send keeps 2 elements (messages); a longer gather list goes now, behind them. */
    if ((flags & VERBS_SEND_DEFER) && qp->caps.send_batch > 1 &&
        (wr->num_sge <= 2 || (wr->send_flags & IBV_SEND_INLINE))) {
        /* Without memory to hold it, the send goes at once: slower, the same on the wire. */
        if (util_likely(qp->held != NULL) || qp_hold_alloc(qp) == IBMSG_OK) {
            return qp_hold_send(qp, wr);
        }
    }
    return verbs_qp_post_wr(qp, wr, what);
}

uint32_t verbs_qp_held(const verbs_qp_t *qp)
{
    return qp->nheld;
}

int verbs_qp_flush(verbs_qp_t *qp)
{
    if (qp->nheld == 0) {
        return IBMSG_OK;
    }
    return verbs_qp_post_wr(qp, NULL, "SEND list");
}

uint32_t verbs_qp_discard_held(verbs_qp_t *qp)
{
    uint32_t n = qp->dropped + qp->nheld;

    qp->dropped = 0;
    qp->nheld = 0;
    return n;
}

int verbs_qp_post_recv(verbs_qp_t *qp, const verbs_sge_t *sges, const uint64_t *wr_ids, int n,
                       int *posted)
{
    struct ibv_recv_wr wr[VERBS_RECV_BATCH_MAX], *bad;
    struct ibv_sge sg[VERBS_RECV_BATCH_MAX];
    int done = 0;

    while (done < n) {
        int batch = UTIL_MIN(n - done, VERBS_RECV_BATCH_MAX), ret;
        for (int i = 0; i < batch; i++) {
            sg[i].addr = sges[done + i].addr;
            sg[i].length = sges[done + i].length;
            sg[i].lkey = sges[done + i].lkey;
            wr[i].wr_id = wr_ids[done + i];
            wr[i].sg_list = &sg[i];
            wr[i].num_sge = 1;
            wr[i].next = (i + 1 < batch) ? &wr[i + 1] : NULL;
        }
        ret = ibv_post_recv(qp->qp, wr, &bad);
        if (util_unlikely(ret != 0)) {
            done += (int)(bad - wr);
            util_error("qp 0x%x: ibv_post_recv failed: %s", qp->qp->qp_num, strerror(ret));
            if (posted != NULL) {
                *posted = done;
            }
            return verbs_errno_status(ret);
        }
        done += batch;
    }
    if (posted != NULL) {
        *posted = done;
    }
    return IBMSG_OK;
}

int verbs_qp_post_rdma(verbs_qp_t *qp, int op, const verbs_sge_t *sge, int nsge, uint64_t raddr,
                       uint32_t rkey, unsigned flags, uint64_t wr_id)
{
    struct ibv_sge sg[VERBS_QP_SGE_MAX];
    struct ibv_send_wr wr;

    if (util_unlikely(nsge < 0 || (uint32_t)nsge > qp->caps.max_send_sge)) {
        return IBMSG_ERR_INVALID;
    }
    for (int i = 0; i < nsge; i++) {
        sg[i].addr = sge[i].addr;
        sg[i].length = sge[i].length;
        sg[i].lkey = sge[i].lkey;
    }
    wr.wr_id = wr_id;
    wr.next = NULL;
    wr.sg_list = nsge > 0 ? sg : NULL;
    wr.num_sge = nsge;
    wr.opcode = op == VERBS_RDMA_READ ? IBV_WR_RDMA_READ : IBV_WR_RDMA_WRITE;
    wr.send_flags = ((flags & VERBS_SEND_SIGNALED) ? IBV_SEND_SIGNALED : 0) |
                    ((flags & VERBS_SEND_INLINE) ? IBV_SEND_INLINE : 0) |
                    ((flags & VERBS_SEND_FENCE) ? IBV_SEND_FENCE : 0);
    wr.wr.rdma.remote_addr = raddr;
    wr.wr.rdma.rkey = rkey;
    return verbs_qp_submit_wr(qp, &wr, flags, op == VERBS_RDMA_READ ? "RDMA READ" : "RDMA WRITE");
}

int verbs_qp_post_atomic(verbs_qp_t *qp, int op, const verbs_sge_t *sge, uint64_t raddr,
                         uint32_t rkey, uint64_t operand, uint64_t swap, unsigned flags,
                         uint64_t wr_id)
{
    struct ibv_sge sg = {.addr = sge->addr, .length = sge->length, .lkey = sge->lkey};
    struct ibv_send_wr wr;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.sg_list = &sg;
    wr.num_sge = 1;
    wr.opcode =
        op == VERBS_ATOMIC_CMP_SWAP ? IBV_WR_ATOMIC_CMP_AND_SWP : IBV_WR_ATOMIC_FETCH_AND_ADD;
    wr.send_flags = ((flags & VERBS_SEND_SIGNALED) ? IBV_SEND_SIGNALED : 0) |
                    ((flags & VERBS_SEND_FENCE) ? IBV_SEND_FENCE : 0);
    wr.wr.atomic.remote_addr = raddr;
    wr.wr.atomic.rkey = rkey;
    wr.wr.atomic.compare_add = operand;
    wr.wr.atomic.swap = swap;
    return verbs_qp_submit_wr(qp, &wr, flags,
                              op == VERBS_ATOMIC_CMP_SWAP ? "ATOMIC CMP_SWAP" : "ATOMIC FETCH_ADD");
}
