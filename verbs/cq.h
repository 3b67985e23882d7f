/* Completion queues and the batched poll of the hot path. */
#ifndef IBMSG_VERBS_CQ_H
#define IBMSG_VERBS_CQ_H

#include <stdint.h>

#include "verbs/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Most completions one verbs_cq_poll returns. */
#define VERBS_CQ_POLL_MAX 64

typedef struct verbs_cq verbs_cq_t;

/* One completion, reduced to what the layers above use. */
typedef struct verbs_wc {
    uint64_t wr_id;
    uint32_t byte_len; /* receives: bytes that arrived */
    uint32_t qp_num;
    int status;    /* 0: success; else the verbs completion status, see verbs_wc_status_string */
    uint32_t ex;   /* receives: the key invalidated (VERBS_WC_INVALIDATED), or the immediate
                      in host order (VERBS_WC_IMM) */
    uint8_t flags; /* receives: VERBS_WC_INVALIDATED, VERBS_WC_IMM */
} verbs_wc_t;

/* Flags of a receive completion. */
enum {
    VERBS_WC_INVALIDATED = 1u << 0, /* a SEND_WITH_INV: the peer invalidated key ex here */
    VERBS_WC_IMM = 1u << 1,         /* a SEND_WITH_IMM: ex is its immediate */
};

/* Completion statuses the layers above tell apart (the values of enum ibv_wc_status). */
enum {
    VERBS_WC_SUCCESS = 0,
    VERBS_WC_FLUSH = 5,           /* flushed: the QP went to the error state */
    VERBS_WC_REM_ACCESS_ERR = 10, /* the peer refused an RDMA access (rkey, bounds, rights) */
    VERBS_WC_RETRY_EXC = 12,      /* no acknowledgement: transport retries exhausted */
    VERBS_WC_RNR_RETRY_EXC = 13,  /* the peer had no receive posted, retries exhausted */
};

/** Create a CQ of at least cqe entries. Returns IBMSG_OK or an error (logged). */
int verbs_cq_create(verbs_dev_t *dev, int cqe, verbs_cq_t **cq_p);

/** Destroy a CQ (NULL is ignored). Every QP using it must be gone. */
void verbs_cq_destroy(verbs_cq_t *cq);

/**
 * Grow the CQ to at least cqe entries (its completions stay). IBMSG_ERR_NOT_SUPPORTED when the
 * device cannot resize, IBMSG_ERR_NO_RESOURCE above the device's maximum; else IBMSG_OK.
 */
int verbs_cq_resize(verbs_cq_t *cq, int cqe);

/** Entries the CQ really has (the device may round up). */
int verbs_cq_size(const verbs_cq_t *cq);

/**
 * Poll up to max (at most VERBS_CQ_POLL_MAX) completions into wcs in one call. Returns how many
 * (0 when empty), or IBMSG_ERR_IO when the CQ itself failed. User space only: no syscall.
 */
int verbs_cq_poll(verbs_cq_t *cq, int max, verbs_wc_t *wcs);

/** The text of a completion status (never NULL). */
const char *verbs_wc_status_string(int status);

#ifdef __cplusplus
}
#endif

#endif
