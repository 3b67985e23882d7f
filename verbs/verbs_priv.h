/* Private to verbs/: the structures behind the opaque handles, with their libibverbs objects. */
#ifndef IBMSG_VERBS_PRIV_H
#define IBMSG_VERBS_PRIV_H

#include <infiniband/verbs.h>

#include "verbs/device.h"
#include "verbs/qp.h"

#include <pthread.h>
#include <sys/types.h>

#include "verbs/async.h"

/*
 * One opened device (its ibv_context and protection domain), shared by the contexts of a process
 * that chose it (verbs_dev_t, one per context: verbs/hca.c), or one context's own when sharing is
 * off. Its lock guards the members, their inboxes and reading the async fd.
 */
typedef struct verbs_hca {
    struct verbs_hca *next; /* the process's table of shared devices (hca.c) */
    char name[64];
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    unsigned refs; /* its members (under the table's lock) */
    pid_t pid;     /* the process that opened it: a forked child opens its own (hca.c) */
    int shared;    /* in the table: later contexts that choose it join */
    int mw_status; /* verbs_mw_probe's result, once per device; 1: not probed yet */
    pthread_mutex_t lock;
    struct verbs_dev *members;
    struct verbs_mr_shared
        *mr_shared; /* the registration cache its members share (mr.c), or NULL */
} verbs_hca_t;

struct verbs_dev {
    struct ibv_context *ctx; /* the hca's, copied: every verbs call names it */
    struct ibv_pd *pd;       /* the hca's too */
    verbs_hca_t *hca;
    struct verbs_dev *next_member;
    struct ibv_comp_channel *chan; /* every CQ's events (verbs/notify.h); fd non-blocking */
    /* Events routed to this member and not yet taken (verbs_dev_poll_async), under hca->lock;
       inbox_n is also read without it (verbs_dev_async_waiting: a relaxed load). */
    verbs_async_event_t *inbox;
    uint32_t inbox_n, inbox_cap;
    int wake_fd; /* written when another member's thread routes an event here; -1: none */
    verbs_dev_info_t info;
    uint32_t inline_max;  /* inline bytes its QPs take at most, once a creation found it (qp.c) */
    int gid_default;      /* the GID was chosen by default (RoCE, gid_index -1): choose again */
    unsigned gid_ifindex; /* ...among the GIDs of this interface (verbs_netdev), or 0: any */
};

/*
 * A CQ's side of notification (the cq_context of its ibv_cq): events read from the channel and
 * not yet acknowledged (ibv_destroy_cq waits for every event read to be), and whether it is
 * armed (an ibv_resize_cq arms it again: providers need not keep the request).
 */
typedef struct verbs_cq_notify {
    struct ibv_cq *cq;
    struct verbs_dev *owner; /* whose context a CQ event goes to (hca.c) */
    unsigned unacked;
    int armed;
} verbs_cq_notify_t;

/* Acknowledge the events read for n (before its CQ is destroyed). */
void verbs_cq_notify_ack(verbs_cq_notify_t *n);

struct verbs_ud;
/* The notification state of a UD queue pair's CQ (ud.c). */
verbs_cq_notify_t *verbs_ud_notify(struct verbs_ud *ud);

/* A send held for the next doorbell: its work request, elements and (inline) data are ours. */
typedef struct verbs_held_send {
    struct ibv_send_wr wr;
    struct ibv_sge sg[2];
} verbs_held_send_t;

struct verbs_qp {
    struct ibv_qp *qp;
    verbs_dev_t *dev;
    verbs_qp_params_t caps;
    uint32_t psn;
    verbs_held_send_t *held; /* [0, nheld): sends waiting for verbs_qp_flush */
    uint8_t *held_inline;    /* caps.max_inline bytes for each held inline send */
    uint32_t nheld;          /* held now */
    uint32_t dropped;        /* held sends a failed post left behind: verbs_qp_discard_held */
};

struct verbs_srq {
    struct ibv_srq *srq;
    verbs_dev_t *dev;
    uint32_t size;
};

struct verbs_cq {
    struct ibv_cq *cq;
    verbs_cq_notify_t notify;
    verbs_dev_t *dev;
    int size;
    unsigned inv_flags; /* wc_flags that mean "invalidated a key" on this device */
};

/* The vendor id Soft-RoCE (rxe) reports. */
#define VERBS_RXE_VENDOR_ID 0xffffffu

/* Immediate data is big-endian on the wire (a __be32 in libibverbs). */
static inline uint32_t verbs_be32_swap(uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    return __builtin_bswap32(v);
#else
    return v;
#endif
}

/* Post one send work request (what names it in the error log; NULL: none) behind the held ones,
 * in one post list. IBMSG_ERR_NO_RESOURCE: full. */
int verbs_qp_post_wr(verbs_qp_t *qp, struct ibv_send_wr *wr, const char *what);

/* Hold wr for the next doorbell when flags has VERBS_SEND_DEFER (and the QP holds sends), else
 * post it now behind the held ones. */
int verbs_qp_submit_wr(verbs_qp_t *qp, struct ibv_send_wr *wr, unsigned flags, const char *what);

/* ibv_reg_mr of [addr, addr + len) with access (IBV_ACCESS_*), with relaxed ordering where the
 * device's info asks for it (register.c). NULL with errno as ibv_reg_mr. */
struct ibv_mr *verbs_register(verbs_dev_t *dev, void *addr, size_t len, unsigned access);

/* Convert an errno value from libibverbs to a status, once, at this boundary. */
int verbs_errno_status(int err);

#endif
