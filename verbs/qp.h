/*
 * Reliable-connected queue pairs: creation, the RESET -> INIT -> RTR -> RTS transitions, and the
 * post helpers of the hot path. On rxe every ibv_post_send is a write() syscall, so callers
 * batch and signal selectively; ibv_post_recv stays in user space.
 */
#ifndef IBMSG_VERBS_QP_H
#define IBMSG_VERBS_QP_H

#include <stdint.h>

#include <ibmsg/status.h>

#include "verbs/addr.h"
#include "verbs/cq.h"
#include "verbs/device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct verbs_qp verbs_qp_t;
typedef struct verbs_srq verbs_srq_t;

/* Queue sizes asked for; verbs_qp_caps gives what the device granted. */
typedef struct verbs_qp_params {
    uint32_t sq_depth;
    uint32_t rq_depth;
    uint32_t max_inline;
    /* Asked: RDMA READs in flight at most, each direction (also capped by the device and
       VERBS_QP_RD_ATOM_MAX). Granted: READs this QP may have outstanding (initiator depth); once
       connected, also within the peer's responder resources. */
    uint32_t max_rd_atomic;
    uint32_t max_dest_rd_atomic; /* granted: READs this QP serves at once (responder) */
    uint32_t send_batch;   /* sends held for one doorbell at most (VERBS_SEND_DEFER; <= 1: none) */
    uint32_t max_send_sge; /* granted: gather elements of a send or RDMA work request */
    uint16_t pkey_index;   /* P_Key table index (set at RESET -> INIT) */
    verbs_srq_t *srq;      /* receives come from this SRQ (rq_depth 0); NULL: the QP's own RQ */
} verbs_qp_params_t;

/* verbs_conn_params_t.retry_cnt: 7, or 6 on Soft-RoCE, which never counts down from 7. */
#define VERBS_RETRY_AUTO 0xff

/* Transport settings for RTR and RTS (IB encodings: see the cvars that set them). */
typedef struct verbs_conn_params {
    uint8_t timeout;                  /* local ACK timeout: 4.096 us * 2^timeout */
    uint8_t retry_cnt;                /* 0..7, or VERBS_RETRY_AUTO */
    uint8_t rnr_retry;                /* 0..7, 7 = forever */
    uint8_t min_rnr_timer;            /* IB encoding 0..31 */
    uint8_t peer_responder_resources; /* the peer's max_dest_rd_atomic: READs it serves for us */
    uint8_t peer_initiator_depth;     /* the peer's max_rd_atomic: READs it may have in flight */
    uint8_t sl;                       /* service level */
    uint8_t traffic_class;            /* GRH */
    uint8_t hop_limit;                /* GRH */
    uint32_t flow_label;              /* GRH, 20 bits */
    uint32_t mtu_max;                 /* largest path MTU in bytes; 0: no cap */
} verbs_conn_params_t;

/* One gather/scatter element. */
typedef struct verbs_sge {
    uint64_t addr;
    uint32_t length;
    uint32_t lkey;
} verbs_sge_t;

enum {
    VERBS_SEND_SIGNALED = 1u << 0,
    VERBS_SEND_INLINE = 1u << 1,
    VERBS_SEND_INVALIDATE = 1u << 2, /* SEND_WITH_INV: invalidates the peer's window inv_rkey */
    VERBS_SEND_IMM = 1u << 3,        /* SEND_WITH_IMM: ex is the immediate (host order) */
    VERBS_SEND_DEFER = 1u << 4,      /* hold the send for the next doorbell (verbs_qp_flush) */
    VERBS_SEND_FENCE = 1u << 5,      /* start only once every earlier RDMA READ has completed */
};

/* Most sends a QP holds for one doorbell (verbs_qp_params_t.send_batch). */
#define VERBS_SEND_BATCH_MAX 64

/* RDMA READs a QP keeps in flight at most (device limits permitting): see verbs_qp_to_rtr. */
#define VERBS_QP_RD_ATOM_MAX 16

/* Most receives one verbs_qp_post_recv call chains into one post list. */
#define VERBS_RECV_BATCH_MAX 64

/* Gather elements a queue pair asks for at most (the device's max_sge caps it): a vector
   operation's entries (IBMSG_IOV_MAX). A send-queue entry of rxe or mlx5 holds about
   max(16 bytes * elements, inline bytes) of data: 16 elements (256 B) are close to what the
   default inline size (core_inline_limit, 200 B) takes already, so the queue barely grows. */
#define VERBS_QP_SGE_MAX 16

/**
 * Create an RC QP on dev with the given CQs and move it to INIT (so receives can be posted
 * before it is connected). Up to 2 send SGEs. params->max_inline is a wish: when the device
 * refuses it, the largest size it takes is found (by bisection, logged at info) and asked for
 * directly by the device's later QPs (verbs_qp_caps gives what was granted). Returns IBMSG_OK
 * or an error (logged).
 */
int verbs_qp_create(verbs_dev_t *dev, verbs_cq_t *send_cq, verbs_cq_t *recv_cq,
                    const verbs_qp_params_t *params, verbs_qp_t **qp_p);

/** Destroy a QP (NULL is ignored); outstanding work requests are flushed without completions. */
void verbs_qp_destroy(verbs_qp_t *qp);

/** What the device granted (sq/rq depth, max_inline as ibv_create_qp returned them). */
void verbs_qp_caps(const verbs_qp_t *qp, verbs_qp_params_t *caps);

/** This QP's address for the peer: QPN, initial PSN, LID, GID and the port's MTU. */
void verbs_qp_addr(const verbs_qp_t *qp, verbs_addr_t *addr);

/** The QP number. */
uint32_t verbs_qp_num(const verbs_qp_t *qp);

/**
 * INIT -> RTR towards remote: path MTU = min(port MTU, remote MTU, cp->mtu_max), GRH (with
 * cp's traffic class, flow label and hop limit) when the remote has a GID or the link is
 * Ethernet, cp's service level, responder resources min(ours, cp->peer_initiator_depth).
 * Returns IBMSG_OK or an error (logged).
 */
int verbs_qp_to_rtr(verbs_qp_t *qp, const verbs_addr_t *remote, const verbs_conn_params_t *cp);

/**
 * RTR -> RTS with the given timeout and retry counts and an initiator depth of
 * min(ours, cp->peer_responder_resources): a responder answers more READs than it has resources for
 * with an invalid-request error. verbs_qp_caps then gives the depths in force.
 */
int verbs_qp_to_rts(verbs_qp_t *qp, const verbs_conn_params_t *cp);

/* A QP's attributes as the device reports them (ibv_query_qp): for tests and logs. */
typedef struct verbs_qp_attr {
    uint8_t state; /* IBV_QPS_* */
    uint8_t max_rd_atomic;
    uint8_t max_dest_rd_atomic;
    uint8_t timeout;
    uint8_t retry_cnt;
    uint8_t rnr_retry;
    uint8_t min_rnr_timer;
    uint8_t path_mtu; /* IB MTU code */
    uint8_t sl;
    uint8_t traffic_class;
    uint8_t hop_limit;
    uint16_t pkey_index;
    uint32_t flow_label;
} verbs_qp_attr_t;

/** Query the QP's attributes. Returns IBMSG_OK or an error (logged). */
int verbs_qp_query(const verbs_qp_t *qp, verbs_qp_attr_t *attr);

/** Move the QP to ERROR (flushes every outstanding work request with an error completion). */
int verbs_qp_to_error(verbs_qp_t *qp);

/**
 * Post one send of nsge (1..2) elements. flags: VERBS_SEND_SIGNALED, VERBS_SEND_INLINE (the
 * total must not exceed the granted max_inline; the data is copied by the call and may be
 * reused at once), VERBS_SEND_INVALIDATE (the peer's window ex, bound through the peer's QP,
 * is invalidated before the peer sees the message) or VERBS_SEND_IMM (ex is the immediate the
 * peer's completion carries); with neither, ex is ignored. Returns IBMSG_OK, or
 * IBMSG_ERR_NO_RESOURCE when the send queue is full.
 *
 * VERBS_SEND_DEFER (on a QP created with send_batch > 1) holds the send instead: nothing reaches
 * the device until verbs_qp_flush or any other post on the QP, which goes behind the held sends
 * in the same post list, so the order on the wire is the order of the calls. Non-inline
 * elements must stay valid until then. A QP holds at most send_batch sends (then
 * IBMSG_ERR_NO_RESOURCE): the caller flushes before. Why: on rxe a post is a syscall, one per
 * list rather than per send.
 */
int verbs_qp_post_send(verbs_qp_t *qp, const verbs_sge_t *sge, int nsge, unsigned flags,
                       uint32_t ex, uint64_t wr_id);

/**
 * Whether a post's status says the device refused that one work request (EINVAL, EOPNOTSUPP:
 * a length or opcode it does not take) while everything posted or held before it went on: the
 * QP is intact, the error belongs to that request alone. Posts that also lost held sends
 * return IBMSG_ERR_IO instead.
 */
static inline int verbs_post_refused(int status)
{
    return status == IBMSG_ERR_INVALID || status == IBMSG_ERR_NOT_SUPPORTED;
}

/** The sends held now (VERBS_SEND_DEFER). */
uint32_t verbs_qp_held(const verbs_qp_t *qp);

/**
 * Post the held sends as one post list (one doorbell). On failure (logged) the sends the device
 * did not take are dropped: verbs_qp_discard_held counts them. Returns IBMSG_OK or the error.
 */
int verbs_qp_flush(verbs_qp_t *qp);

/**
 * Drop the held sends and return how many sends held since the last call never reached the
 * device: those dropped now and those a failed post dropped. Their wr_ids were the newest given.
 */
uint32_t verbs_qp_discard_held(verbs_qp_t *qp);

/**
 * Post n receives (one SGE each) as post lists of up to VERBS_RECV_BATCH_MAX. Returns IBMSG_OK
 * or an error; on error the receives before the failing one are posted (*posted says how many).
 */
int verbs_qp_post_recv(verbs_qp_t *qp, const verbs_sge_t *sges, const uint64_t *wr_ids, int n,
                       int *posted);

/* One-sided operations of verbs_qp_post_rdma. */
enum {
    VERBS_RDMA_WRITE = 1,
    VERBS_RDMA_READ = 2,
};

/**
 * Post one RDMA WRITE or READ of nsge (0..max_send_sge; READ: also at most the device's
 * max_sge_rd) local elements to [raddr, raddr + total) under rkey. flags as for
 * verbs_qp_post_send (INLINE only for WRITE; DEFER holds it the same way, except a work request
 * of more than 2 elements that is not inline: it goes at once, behind the held ones). A WRITE
 * of no elements moves no data (used as a signalled marker behind earlier unsignalled work
 * requests). Returns IBMSG_OK, or
 * IBMSG_ERR_NO_RESOURCE when the send queue is full, or another error (logged).
 */
int verbs_qp_post_rdma(verbs_qp_t *qp, int op, const verbs_sge_t *sge, int nsge, uint64_t raddr,
                       uint32_t rkey, unsigned flags, uint64_t wr_id);

/* Remote atomics of verbs_qp_post_atomic. */
enum {
    VERBS_ATOMIC_FETCH_ADD = 1,
    VERBS_ATOMIC_CMP_SWAP = 2,
};

/**
 * Post one 64-bit atomic on the peer's 8-byte-aligned raddr under rkey; the word it held lands
 * in the 8 bytes of sge (registered, local write). FETCH_ADD adds operand; CMP_SWAP stores swap
 * where the word equals operand. Atomics count against max_rd_atomic like READs. flags as for
 * verbs_qp_post_rdma (no INLINE). Returns IBMSG_OK, IBMSG_ERR_NO_RESOURCE when the send queue is
 * full, or another error (logged).
 */
int verbs_qp_post_atomic(verbs_qp_t *qp, int op, const verbs_sge_t *sge, uint64_t raddr,
                         uint32_t rkey, uint64_t operand, uint64_t swap, unsigned flags,
                         uint64_t wr_id);

#ifdef __cplusplus
}
#endif

#endif
