/*
 * One opened RDMA device port: selection (by name, port and GID index, or the defaults: the
 * first usable port, NUMA-local first (verbs/dev_rank.h), and on RoCE the RoCE v2 IPv4-mapped
 * GID), its protection domain and the attributes the layers above size themselves by.
 */
#ifndef IBMSG_VERBS_DEVICE_H
#define IBMSG_VERBS_DEVICE_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct verbs_dev verbs_dev_t;

/* What to open. NULL / 0 / -1 mean "choose": see verbs_dev_open. */
typedef struct verbs_dev_params {
    const char *name;     /* device name such as "rxe0", or NULL for any */
    int port;             /* 1-based port number, or 0 for the first ACTIVE port */
    int gid_index;        /* GID table index, or -1: RoCE v2 IPv4-mapped on Ethernet, 0 on IB */
    const char *netdev;   /* RoCE: only GIDs of this network interface (gid_index -1), or NULL */
    int relaxed_ordering; /* 1: registrations ask for relaxed ordering (verbs/register.c) */
    int share;            /* 1: share the device with the process's other contexts (hca.c) */
} verbs_dev_params_t;

/* What was opened. */
typedef struct verbs_dev_info {
    char name[64];
    uint8_t port;
    uint8_t link_layer; /* VERBS_LINK_* (verbs/addr.h) */
    uint8_t active_mtu; /* IB MTU code of the port */
    int gid_index;      /* -1 when the port has no usable GID (IB without GRH) */
    uint16_t lid;
    uint8_t gid[16];
    uint32_t max_qp_wr;
    uint32_t max_cqe;
    uint32_t max_srq;    /* shared receive queues (0: none, verbs/srq.h) */
    uint32_t max_srq_wr; /* receives one SRQ holds at most */
    uint32_t max_sge;
    uint32_t max_sge_rd;       /* scatter elements of an RDMA READ (may be below max_sge) */
    uint32_t max_msg_sz;       /* largest message of the port (RDMA READ included) */
    uint32_t max_rd_atom;      /* RDMA READs a QP serves at once (responder) */
    uint32_t max_init_rd_atom; /* RDMA READs a QP may have outstanding (initiator) */
    uint8_t mw_type2;          /* type 2B memory windows that can be allocated (verbs/mw.h) */
    uint8_t atomic_cap;        /* VERBS_ATOMIC_*: what 64-bit remote atomics are atomic against */
    uint32_t vendor_id;
    uint8_t relaxed_ordering; /* registrations ask for relaxed ordering (asked, not refused) */
} verbs_dev_info_t;

/* verbs_dev_info_t.atomic_cap (ibv_atomic_cap): none, atomic against other atomics through this
   device (HCA; Soft-RoCE), or against every agent, the CPU included (GLOB). */
enum {
    VERBS_ATOMIC_NONE = 0,
    VERBS_ATOMIC_HCA = 1,
    VERBS_ATOMIC_GLOB = 2,
};

/* How registered memory survives fork() (verbs_fork_mode). */
enum {
    VERBS_FORK_PENDING = 0,     /* no device opened yet: not decided */
    VERBS_FORK_UNNEEDED = 1,    /* the kernel copies pinned pages for the child (Linux >= 5.13) */
    VERBS_FORK_INIT = 2,        /* ibv_fork_init: registered ranges are not mapped in children */
    VERBS_FORK_UNPROTECTED = 3, /* ibv_fork_init failed (memory registered before it): a child
                                   writing to a registered page corrupts the parent's transfers */
};

/**
 * Make fork() safe before the first device is opened (verbs_dev_open does it, once per
 * process): nothing on a kernel with copy-on-fork of pinned pages, else ibv_fork_init, which
 * must come before any registration. Returns the VERBS_FORK_* that applies (logged at info).
 */
int verbs_fork_setup(void);

/** The VERBS_FORK_* in force; VERBS_FORK_PENDING before the first verbs_fork_setup. */
int verbs_fork_mode(void);

/**
 * Bytes this process may pin by registering memory: RLIMIT_MEMLOCK, or UINT64_MAX when it is
 * unlimited or the process has CAP_IPC_LOCK (which lifts it).
 */
uint64_t verbs_memlock_limit(void);

/**
 * For a registration that failed with errno err: text naming the locked-memory limit and how
 * to raise it (ulimit -l), when err is what exceeding it gives (ENOMEM, EPERM, EAGAIN); else "".
 * Returns buf.
 */
const char *verbs_memlock_hint(int err, char *buf, size_t len);

/**
 * Open the device and port that params select and allocate a protection domain.
 * Selection: every port of the named device (all devices when NULL), or only the given port, is
 * described and ranked by verbs_port_rank (verbs/dev_rank.h: usable ports only, the calling
 * thread's NUMA node first, then the device list's order); the GID is the given index, or on
 * RoCE the first RoCE v2 GID that is IPv4-mapped (then any RoCE v2 GID), only among those of
 * params->netdev when it is given (so that it selects the device and port too), on IB none (LID
 * routing).
 * The chosen device's ibv_context and protection domain are the process's one for that device
 * when params->share is 1 and another context of the process has it open (verbs/hca.c); the
 * completion channel is always this handle's own.
 * Returns IBMSG_OK; IBMSG_ERR_NO_DEVICE when nothing fits, with an error log that names every
 * device and port that was found, its state and why it was not taken; IBMSG_ERR_INVALID for a
 * bad port or GID index.
 */
int verbs_dev_open(const verbs_dev_params_t *params, verbs_dev_t **dev_p);

/** Release the handle; the last one of a device releases its protection domain and closes it.
    NULL is ignored. */
void verbs_dev_close(verbs_dev_t *dev);

/** The handles (contexts) that have dev's device open through one ibv_context, dev included. */
unsigned verbs_dev_sharers(const verbs_dev_t *dev);

/** 1 when a and b use one ibv_context and one protection domain, else 0. */
int verbs_dev_shares_with(const verbs_dev_t *a, const verbs_dev_t *b);

/** Test-only: ibv_open_device calls for devices that contexts use, since the process started
    (the selection's short-lived opens not counted). */
uint64_t verbs_dev_opens(void);

/**
 * Query dev's port again after an address event: its LID and the GID new queue pairs take (the
 * one the device was opened with: by index, or, chosen by default, chosen again the same way,
 * as an address change re-indexes the table). *changed: whether either differs now. A port
 * with no usable GID left keeps the old one (logged).
 */
int verbs_dev_refresh_address(verbs_dev_t *dev, int *changed);

/** The attributes of an opened device port (valid until verbs_dev_close). */
const verbs_dev_info_t *verbs_dev_info(const verbs_dev_t *dev);

#ifdef __cplusplus
}
#endif

#endif
