/*
 * An unreliable-datagram (UD) queue pair with its own completion queue and registered slots:
 * the connection-less channel the world's on-demand wireup (world/wireup.c) sends its connect
 * requests over. Slow path only: one small datagram at a time, copied in and out.
 */
#ifndef IBMSG_VERBS_UD_H
#define IBMSG_VERBS_UD_H

#include <stddef.h>
#include <stdint.h>

#include "verbs/addr.h"
#include "verbs/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest datagram payload (below the smallest IB MTU, 256 bytes). */
#define VERBS_UD_MSG_MAX 192

typedef struct verbs_ud verbs_ud_t;
typedef struct verbs_ah verbs_ah_t;

/** One datagram received: its payload and the sending queue pair's number (from the CQE). */
typedef struct verbs_ud_msg {
    uint32_t len;
    uint32_t src_qpn;
    uint8_t data[VERBS_UD_MSG_MAX];
} verbs_ud_msg_t;

/**
 * Create a UD QP on dev in RTS with its own CQ, nrecv receive slots posted and nsend send slots.
 * Returns IBMSG_OK or an error (logged).
 */
int verbs_ud_create(verbs_dev_t *dev, uint32_t nrecv, uint32_t nsend, verbs_ud_t **ud_p);

/** Destroy the QP, its CQ and slots (NULL is ignored). Address handles must be gone. */
void verbs_ud_destroy(verbs_ud_t *ud);

/** The address a peer sends to: QPN, LID, GID, MTU and link layer (PSN 0). */
void verbs_ud_addr(const verbs_ud_t *ud, verbs_addr_t *addr);

/**
 * An address handle towards remote (a GRH when remote has a GID or the link is Ethernet).
 * Returns IBMSG_OK, IBMSG_ERR_INVALID for a remote on another link layer, or a verbs error.
 */
int verbs_ud_ah_create(verbs_ud_t *ud, const verbs_addr_t *remote, verbs_ah_t **ah_p);

/** Destroy an address handle (NULL is ignored). */
void verbs_ud_ah_destroy(verbs_ah_t *ah);

/**
 * Send len (<= VERBS_UD_MSG_MAX) bytes to the UD QP qpn behind ah. The data is copied. Returns
 * IBMSG_OK, IBMSG_ERR_NO_RESOURCE when every send slot is in flight (call verbs_ud_poll), or a
 * verbs error. Delivery is not guaranteed (datagram).
 */
int verbs_ud_send(verbs_ud_t *ud, const verbs_ah_t *ah, uint32_t qpn, const void *data, size_t len);

/**
 * Reap completions until one datagram arrives: copy it to msg and repost its slot. Returns 1 with
 * msg filled, 0 when nothing arrived (one ibv_poll_cq on an empty CQ: no syscall), or
 * IBMSG_ERR_IO. *errors (may be NULL) is increased by the completions with an error status and
 * the datagrams too short to hold a GRH.
 */
int verbs_ud_poll(verbs_ud_t *ud, verbs_ud_msg_t *msg, uint64_t *errors);

/**
 * Wait until a send slot is free (timeout_ms 0) or every send has completed (timeout_ms > 0,
 * at most that long), taking completions; datagrams that arrive meanwhile are dropped (for
 * teardown). Returns IBMSG_OK, IBMSG_ERR_TIMEOUT or IBMSG_ERR_IO.
 */
int verbs_ud_flush(verbs_ud_t *ud, int timeout_ms);

#ifdef __cplusplus
}
#endif

#endif
