/*
 * Shared receive queues: one queue of receive buffers for many RC queue pairs (verbs_qp_params_t
 * .srq), and its limit event. On rxe ibv_post_srq_recv stays in user space, as ibv_post_recv.
 */
#ifndef IBMSG_VERBS_SRQ_H
#define IBMSG_VERBS_SRQ_H

#include <stdint.h>

#include "verbs/device.h"
#include "verbs/qp.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Create an SRQ of at least max_wr receives (one SGE each). IBMSG_ERR_NOT_SUPPORTED when the
 * device has none (max_srq 0, or the provider refuses: not logged as an error); else IBMSG_OK
 * or an error (logged).
 */
int verbs_srq_create(verbs_dev_t *dev, uint32_t max_wr, verbs_srq_t **srq_p);

/** Destroy an SRQ (NULL is ignored). Every QP attached to it must be gone. */
void verbs_srq_destroy(verbs_srq_t *srq);

/** Receives the SRQ holds at most (what the device granted). */
uint32_t verbs_srq_size(const verbs_srq_t *srq);

/**
 * Post n receives (one SGE each) as post lists of up to VERBS_RECV_BATCH_MAX. Returns IBMSG_OK
 * or an error (logged); *posted says how many were posted either way.
 */
int verbs_srq_post_recv(verbs_srq_t *srq, const verbs_sge_t *sges, const uint64_t *wr_ids, int n,
                        int *posted);

/**
 * Arm the limit event: the device reports VERBS_ASYNC_SRQ_LIMIT once (verbs/async.h) when fewer
 * than limit receives remain posted, then disarms itself. A syscall: call it from slow paths.
 */
int verbs_srq_arm(verbs_srq_t *srq, uint32_t limit);

#ifdef __cplusplus
}
#endif

#endif
