/* Shared receive queues. */
#include "verbs/srq.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>

#include "util/compiler.h"
#include "util/log.h"
#include "verbs/verbs_priv.h"

int verbs_srq_create(verbs_dev_t *dev, uint32_t max_wr, verbs_srq_t **srq_p)
{
    struct ibv_srq_init_attr init = {0};
    verbs_srq_t *srq;

    if (dev == NULL || srq_p == NULL || max_wr == 0) {
        return IBMSG_ERR_INVALID;
    }
    if (dev->info.max_srq == 0 || dev->info.max_srq_wr == 0) {
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    srq = calloc(1, sizeof(*srq));
    if (srq == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    init.attr.max_wr = UTIL_MIN(max_wr, dev->info.max_srq_wr);
    init.attr.max_sge = 1;
    init.srq_context = dev; /* its events go to this context (hca.c) */
    srq->srq = ibv_create_srq(dev->pd, &init);
    if (srq->srq == NULL) {
        int err = errno;
        free(srq);
        if (err == EOPNOTSUPP || err == ENOSYS) {
            return IBMSG_ERR_NOT_SUPPORTED;
        }
        util_error("%s: ibv_create_srq(%u) failed: %s", dev->info.name, max_wr, strerror(err));
        return verbs_errno_status(err);
    }
    srq->size = init.attr.max_wr; /* what was granted (rxe may round up further) */
    srq->dev = dev;
    *srq_p = srq;
    return IBMSG_OK;
}

void verbs_srq_destroy(verbs_srq_t *srq)
{
    if (srq == NULL) {
        return;
    }
    if (ibv_destroy_srq(srq->srq) != 0) {
        util_warn("%s: ibv_destroy_srq failed: %s", srq->dev->info.name, strerror(errno));
    }
    free(srq);
}

uint32_t verbs_srq_size(const verbs_srq_t *srq)
{
    return srq->size;
}

/* The same list building as verbs_qp_post_recv, kept apart on purpose: one shared builder (even
   always_inline) cost the SRQ's refill 3.3 instructions per message (GCC allocated the loop's
   registers worse; measured and reverted, f0e5098). */
int verbs_srq_post_recv(verbs_srq_t *srq, const verbs_sge_t *sges, const uint64_t *wr_ids, int n,
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
        ret = ibv_post_srq_recv(srq->srq, wr, &bad);
        if (util_unlikely(ret != 0)) {
            done += (int)(bad - wr);
            util_error("%s: ibv_post_srq_recv failed: %s", srq->dev->info.name, strerror(ret));
            *posted = done;
            return verbs_errno_status(ret);
        }
        done += batch;
    }
    *posted = done;
    return IBMSG_OK;
}

int verbs_srq_arm(verbs_srq_t *srq, uint32_t limit)
{
    struct ibv_srq_attr attr = {.srq_limit = limit};

    if (ibv_modify_srq(srq->srq, &attr, IBV_SRQ_LIMIT) != 0) {
        int err = errno;
        util_warn("%s: arming the SRQ limit (%u) failed: %s", srq->dev->info.name, limit,
                  strerror(err));
        return verbs_errno_status(err);
    }
    return IBMSG_OK;
}
