/*
 * UD queue pair for the connection handshake (see ud.h). Each receive slot holds the 40-byte
 * GRH that a UD receive always consumes, then the payload; send slots hold a payload only.
 */
#include "verbs/ud.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <ibmsg/status.h>

#include "util/compiler.h"
#include "util/log.h"
#include "verbs/av.h"
#include "verbs/verbs_priv.h"

#define UD_GRH      40
#define UD_SLOT     (UD_GRH + VERBS_UD_MSG_MAX)
#define UD_QKEY     0x1b5e0001u  /* high bit clear: not a controlled QKey */
#define UD_SEND_TAG (1ull << 63) /* wr_id of sends: slot index with this bit */

struct verbs_ud {
    verbs_dev_t *dev;
    struct ibv_cq *cq;
    verbs_cq_notify_t notify;
    struct ibv_qp *qp;
    struct ibv_mr *mr;
    uint8_t *mem; /* nrecv receive slots, then nsend send slots */
    uint32_t nrecv;
    uint32_t nsend;
    uint32_t *free_send; /* stack of free send slot indices */
    uint32_t nfree;
};

struct verbs_ah {
    struct ibv_ah *ah;
};

static int ud_post_recv(verbs_ud_t *ud, uint32_t slot)
{
    struct ibv_sge sge = {
        .addr = (uintptr_t)(ud->mem + (size_t)slot * UD_SLOT),
        .length = UD_SLOT,
        .lkey = ud->mr->lkey,
    };
    struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;
    int ret = ibv_post_recv(ud->qp, &wr, &bad);

    if (ret != 0) {
        util_error("ud qp 0x%x: ibv_post_recv failed: %s", ud->qp->qp_num, strerror(ret));
        return verbs_errno_status(ret);
    }
    return IBMSG_OK;
}

static int ud_to_rts(verbs_ud_t *ud)
{
    struct ibv_qp_attr attr = {0};

    attr.qp_state = IBV_QPS_INIT;
    attr.pkey_index = 0;
    attr.port_num = ud->dev->info.port;
    attr.qkey = UD_QKEY;
    if (ibv_modify_qp(ud->qp, &attr,
                      IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_QKEY)) {
        goto err;
    }
    memset(&attr, 0, sizeof(attr));
    attr.qp_state = IBV_QPS_RTR;
    if (ibv_modify_qp(ud->qp, &attr, IBV_QP_STATE)) {
        goto err;
    }
    attr.qp_state = IBV_QPS_RTS;
    attr.sq_psn = 0;
    if (ibv_modify_qp(ud->qp, &attr, IBV_QP_STATE | IBV_QP_SQ_PSN)) {
        goto err;
    }
    return IBMSG_OK;
err:
    util_error("ud qp 0x%x: transition to RTS failed: %s", ud->qp->qp_num, strerror(errno));
    return verbs_errno_status(errno);
}

int verbs_ud_create(verbs_dev_t *dev, uint32_t nrecv, uint32_t nsend, verbs_ud_t **ud_p)
{
    struct ibv_qp_init_attr init = {0};
    size_t bytes;
    verbs_ud_t *ud;
    int status;

    if (dev == NULL || ud_p == NULL || nrecv == 0 || nsend == 0 || nrecv > dev->info.max_qp_wr ||
        nsend > dev->info.max_qp_wr) {
        return IBMSG_ERR_INVALID;
    }
    ud = calloc(1, sizeof(*ud));
    if (ud == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    ud->dev = dev;
    ud->nrecv = nrecv;
    ud->nsend = nsend;
    bytes = (size_t)(nrecv + nsend) * UD_SLOT;
    ud->mem = aligned_alloc(64, (bytes + 63) / 64 * 64);
    ud->free_send = calloc(nsend, sizeof(*ud->free_send));
    if (ud->mem == NULL || ud->free_send == NULL) {
        status = IBMSG_ERR_NO_MEMORY;
        goto err_free;
    }
    memset(ud->mem, 0, bytes);
    ud->mr = verbs_register(dev, ud->mem, bytes, IBV_ACCESS_LOCAL_WRITE);
    if (ud->mr == NULL) {
        status = verbs_errno_status(errno);
        util_error("%s: ud slots: ibv_reg_mr(%zu bytes) failed: %s", dev->info.name, bytes,
                   strerror(errno));
        goto err_free;
    }
    ud->cq = ibv_create_cq(dev->ctx, (int)(nrecv + nsend), &ud->notify, dev->chan, 0);
    if (ud->cq == NULL) {
        status = verbs_errno_status(errno);
        util_error("%s: ud cq: ibv_create_cq failed: %s", dev->info.name, strerror(errno));
        goto err_dereg;
    }
    ud->notify.cq = ud->cq;
    ud->notify.owner = dev;
    init.send_cq = ud->cq;
    init.recv_cq = ud->cq;
    init.qp_type = IBV_QPT_UD;
    init.qp_context = dev; /* its events go to this context (hca.c) */
    init.sq_sig_all = 1;   /* every send's completion frees its slot */
    init.cap.max_send_wr = nsend;
    init.cap.max_recv_wr = nrecv;
    init.cap.max_send_sge = 1;
    init.cap.max_recv_sge = 1;
    ud->qp = ibv_create_qp(dev->pd, &init);
    if (ud->qp == NULL) {
        status = verbs_errno_status(errno);
        util_error("%s: ud qp: ibv_create_qp failed: %s", dev->info.name, strerror(errno));
        goto err_destroy_cq;
    }
    status = ud_to_rts(ud);
    for (uint32_t i = 0; status == IBMSG_OK && i < nrecv; i++) {
        status = ud_post_recv(ud, i);
    }
    if (status != IBMSG_OK) {
        goto err_destroy_qp;
    }
    for (uint32_t i = 0; i < nsend; i++) {
        ud->free_send[ud->nfree++] = nrecv + i;
    }
    *ud_p = ud;
    return IBMSG_OK;

err_destroy_qp:
    ibv_destroy_qp(ud->qp);
err_destroy_cq:
    ibv_destroy_cq(ud->cq);
err_dereg:
    ibv_dereg_mr(ud->mr);
err_free:
    free(ud->free_send);
    free(ud->mem);
    free(ud);
    return status;
}

void verbs_ud_destroy(verbs_ud_t *ud)
{
    if (ud == NULL) {
        return;
    }
    if (ibv_destroy_qp(ud->qp) != 0) {
        util_warn("ud qp 0x%x: ibv_destroy_qp failed: %s", ud->qp->qp_num, strerror(errno));
    }
    verbs_cq_notify_ack(&ud->notify);
    ibv_destroy_cq(ud->cq);
    ibv_dereg_mr(ud->mr);
    free(ud->free_send);
    free(ud->mem);
    free(ud);
}

void verbs_ud_addr(const verbs_ud_t *ud, verbs_addr_t *addr)
{
    verbs_av_local(&ud->dev->info, ud->qp->qp_num, 0, addr);
}

int verbs_ud_ah_create(verbs_ud_t *ud, const verbs_addr_t *remote, verbs_ah_t **ah_p)
{
    struct ibv_ah_attr attr;
    verbs_ah_t *ah;
    int ret = verbs_av_remote(&ud->dev->info, remote, 64, "ud qp", ud->qp->qp_num, &attr);

    if (ret != IBMSG_OK) {
        return ret;
    }
    ah = calloc(1, sizeof(*ah));
    if (ah == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    ah->ah = ibv_create_ah(ud->dev->pd, &attr);
    if (ah->ah == NULL) {
        int err = errno;
        util_error("ud qp 0x%x: ibv_create_ah (to qp 0x%x) failed: %s", ud->qp->qp_num, remote->qpn,
                   strerror(err));
        free(ah);
        return verbs_errno_status(err);
    }
    *ah_p = ah;
    return IBMSG_OK;
}

void verbs_ud_ah_destroy(verbs_ah_t *ah)
{
    if (ah == NULL) {
        return;
    }
    ibv_destroy_ah(ah->ah);
    free(ah);
}

int verbs_ud_send(verbs_ud_t *ud, const verbs_ah_t *ah, uint32_t qpn, const void *data, size_t len)
{
    struct ibv_send_wr wr = {0}, *bad;
    struct ibv_sge sge;
    uint32_t slot;
    int ret;

    if (len > VERBS_UD_MSG_MAX || ah == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (ud->nfree == 0) {
        return IBMSG_ERR_NO_RESOURCE;
    }
    slot = ud->free_send[--ud->nfree];
    memcpy(ud->mem + (size_t)slot * UD_SLOT, data, len);
    sge.addr = (uintptr_t)(ud->mem + (size_t)slot * UD_SLOT);
    sge.length = (uint32_t)len;
    sge.lkey = ud->mr->lkey;
    wr.wr_id = UD_SEND_TAG | slot;
    wr.sg_list = &sge;
    wr.num_sge = 1;
    wr.opcode = IBV_WR_SEND;
    wr.send_flags = IBV_SEND_SIGNALED;
    wr.wr.ud.ah = ah->ah;
    wr.wr.ud.remote_qpn = qpn;
    wr.wr.ud.remote_qkey = UD_QKEY;
    ret = ibv_post_send(ud->qp, &wr, &bad);
    if (ret != 0) {
        ud->free_send[ud->nfree++] = slot;
        util_error("ud qp 0x%x: ibv_post_send to qp 0x%x failed: %s", ud->qp->qp_num, qpn,
                   strerror(ret));
        return ret == ENOMEM ? IBMSG_ERR_NO_RESOURCE : verbs_errno_status(ret);
    }
    return IBMSG_OK;
}

verbs_cq_notify_t *verbs_ud_notify(struct verbs_ud *ud)
{
    return &ud->notify;
}

int verbs_ud_poll(verbs_ud_t *ud, verbs_ud_msg_t *msg, uint64_t *errors)
{
    struct ibv_wc wc;
    int n;

    while ((n = ibv_poll_cq(ud->cq, 1, &wc)) > 0) {
        if (wc.wr_id & UD_SEND_TAG) {
            ud->free_send[ud->nfree++] = (uint32_t)(wc.wr_id & ~UD_SEND_TAG);
            if (wc.status != IBV_WC_SUCCESS && errors != NULL) {
                (*errors)++;
            }
            continue;
        }
        uint32_t slot = (uint32_t)wc.wr_id;
        int got = 0;

        if (wc.status == IBV_WC_SUCCESS && wc.byte_len >= UD_GRH && wc.byte_len <= UD_SLOT) {
            msg->len = wc.byte_len - UD_GRH;
            msg->src_qpn = wc.src_qp;
            memcpy(msg->data, ud->mem + (size_t)slot * UD_SLOT + UD_GRH, msg->len);
            got = 1;
        } else if (errors != NULL) {
            (*errors)++;
        }
        if (ud_post_recv(ud, slot) != IBMSG_OK) {
            return IBMSG_ERR_IO;
        }
        if (got) {
            return 1;
        }
    }
    if (n < 0) {
        util_error("ud qp 0x%x: ibv_poll_cq failed", ud->qp->qp_num);
        return IBMSG_ERR_IO;
    }
    return 0;
}

int verbs_ud_flush(verbs_ud_t *ud, int timeout_ms)
{
    struct timespec t0, t;
    verbs_ud_msg_t m;

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (;;) {
        if (timeout_ms == 0 ? ud->nfree > 0 : ud->nfree == ud->nsend) {
            return IBMSG_OK;
        }
        if (verbs_ud_poll(ud, &m, NULL) < 0) {
            return IBMSG_ERR_IO;
        }
        clock_gettime(CLOCK_MONOTONIC, &t);
        if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >
            (timeout_ms > 0 ? timeout_ms : 1000)) {
            return IBMSG_ERR_TIMEOUT;
        }
    }
}
