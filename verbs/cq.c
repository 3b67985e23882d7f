/* Completion queues. */
#include "verbs/cq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>

#include "util/compiler.h"
#include "util/log.h"
#include "verbs/fault.h"
#include "verbs/verbs_priv.h"

UTIL_STATIC_ASSERT((int)VERBS_WC_SUCCESS == (int)IBV_WC_SUCCESS &&
                       (int)VERBS_WC_FLUSH == (int)IBV_WC_WR_FLUSH_ERR &&
                       (int)VERBS_WC_RETRY_EXC == (int)IBV_WC_RETRY_EXC_ERR &&
                       (int)VERBS_WC_RNR_RETRY_EXC == (int)IBV_WC_RNR_RETRY_EXC_ERR,
                   "completion statuses match libibverbs");

int verbs_cq_create(verbs_dev_t *dev, int cqe, verbs_cq_t **cq_p)
{
    verbs_cq_t *cq;
    int status;

    if (dev == NULL || cq_p == NULL || cqe < 1 || (uint32_t)cqe > dev->info.max_cqe) {
        util_error("%s: CQ of %d entries (device maximum %u)", dev ? dev->info.name : "?", cqe,
                   dev ? dev->info.max_cqe : 0);
        return IBMSG_ERR_INVALID;
    }
    cq = calloc(1, sizeof(*cq));
    if (cq == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    cq->cq = ibv_create_cq(dev->ctx, cqe, &cq->notify, dev->chan, 0);
    if (cq->cq == NULL) {
        status = verbs_errno_status(errno);
        util_error("%s: ibv_create_cq(%d) failed: %s", dev->info.name, cqe, strerror(errno));
        free(cq);
        return status;
    }
    cq->notify.cq = cq->cq;
    cq->notify.owner = dev;
    cq->size = cq->cq->cqe;
    cq->dev = dev;
    cq->inv_flags = IBV_WC_WITH_INV;
    if (dev->info.vendor_id == VERBS_RXE_VENDOR_ID) {
        /* rxe hands the kernel's IB_WC_WITH_INVALIDATE (bit 2) to user space unchanged, where
           bit 2 reads IBV_WC_IP_CSUM_OK (seen on Debian 12's 6.1 kernel). It never sets the
           checksum flag itself, so on rxe either bit means an invalidation. */
        cq->inv_flags |= IBV_WC_IP_CSUM_OK;
    }
    if (verbs_faults.wc_hide_invalidation) {
        cq->inv_flags = 0;
    }
    *cq_p = cq;
    return IBMSG_OK;
}

void verbs_cq_destroy(verbs_cq_t *cq)
{
    if (cq == NULL) {
        return;
    }
    verbs_cq_notify_ack(&cq->notify); /* else ibv_destroy_cq waits for them forever */
    if (ibv_destroy_cq(cq->cq) != 0) {
        util_warn("ibv_destroy_cq failed: %s", strerror(errno));
    }
    free(cq);
}

int verbs_cq_resize(verbs_cq_t *cq, int cqe)
{
    if ((uint32_t)cqe > cq->dev->info.max_cqe) {
        return IBMSG_ERR_NO_RESOURCE;
    }
    if (ibv_resize_cq(cq->cq, cqe) != 0) {
        int err = errno;
        if (err == EOPNOTSUPP || err == ENOSYS) {
            return IBMSG_ERR_NOT_SUPPORTED;
        }
        util_warn("%s: ibv_resize_cq(%d -> %d) failed: %s", cq->dev->info.name, cq->size, cqe,
                  strerror(err));
        return verbs_errno_status(err);
    }
    cq->size = cq->cq->cqe;
    if (cq->notify.armed && ibv_req_notify_cq(cq->cq, 0) != 0) {
        /* A sleeper would miss this CQ's next completion: say so, the CQ still works. */
        util_warn("%s: ibv_req_notify_cq after a resize failed", cq->dev->info.name);
        cq->notify.armed = 0;
    }
    return IBMSG_OK;
}

int verbs_cq_size(const verbs_cq_t *cq)
{
    return cq->size;
}

int verbs_cq_poll(verbs_cq_t *cq, int max, verbs_wc_t *wcs)
{
    struct ibv_wc wc[VERBS_CQ_POLL_MAX];
    int n;

    n = ibv_poll_cq(cq->cq, UTIL_MIN(max, VERBS_CQ_POLL_MAX), wc);
    if (util_unlikely(n < 0)) {
        util_error("ibv_poll_cq failed: %d", n);
        return IBMSG_ERR_IO;
    }
    for (int i = 0; i < n; i++) {
        wcs[i].wr_id = wc[i].wr_id;
        wcs[i].byte_len = wc[i].byte_len;
        wcs[i].qp_num = wc[i].qp_num;
        wcs[i].status = (int)wc[i].status;
        wcs[i].flags = 0;
        wcs[i].ex = 0;
        if (wc[i].opcode == IBV_WC_RECV) {
            /* imm_data and invalidated_rkey share their storage; only one is ever set. */
            if (wc[i].wc_flags & IBV_WC_WITH_IMM) {
                wcs[i].flags = VERBS_WC_IMM;
                wcs[i].ex = verbs_be32_swap(wc[i].imm_data);
            } else if (wc[i].wc_flags & cq->inv_flags) {
                wcs[i].flags = VERBS_WC_INVALIDATED;
                wcs[i].ex = wc[i].invalidated_rkey;
            }
        }
    }
    return n;
}

const char *verbs_wc_status_string(int status)
{
    return ibv_wc_status_str((enum ibv_wc_status)status);
}
