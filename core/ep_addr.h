/*
 * The endpoint address blob that ibmsg_ep_address writes and ibmsg_ep_connect reads: a core
 * header (version, flags, size, the peer's credits and eager limit) and the queue pair's verbs
 * address. Pure functions (no device), so the unit tests and the fuzz harness run anywhere.
 *
 * Layout: 0 version (CORE_EP_ADDR_VERSION)  1 flags (0)  2..3 total size, big-endian
 *         4..7 receive buffers posted (credits)  8..11 largest payload accepted (big-endian)
 *         12 RDMA READs the queue pair serves at once (its max_dest_rd_atomic)
 *         13 RDMA READs it may have outstanding (its max_rd_atomic)  14..15 reserved (0)
 *         16.. the verbs address (verbs/addr.h, VERBS_ADDR_PACKED_SIZE bytes)
 * Each side's initiator depth is the minimum of its own and the peer's responder resources
 * (byte 12): a responder answers READs beyond its resources with an invalid-request error.
 */
#ifndef IBMSG_CORE_EP_ADDR_H
#define IBMSG_CORE_EP_ADDR_H

#include <stddef.h>
#include <stdint.h>

#include "verbs/addr.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2: compact eager messages; 3: limit-sized buffers (wire.h); 4: READ depths */
#define CORE_EP_ADDR_VERSION 5
#define CORE_EP_ADDR_HDR     16
#define CORE_EP_ADDR_SIZE    (CORE_EP_ADDR_HDR + VERBS_ADDR_PACKED_SIZE)

typedef struct core_ep_addr {
    uint32_t credits;            /* receive buffers the peer posted */
    uint32_t eager_limit;        /* largest payload the peer accepts */
    uint8_t responder_resources; /* READs the peer serves at once (its max_dest_rd_atomic) */
    uint8_t initiator_depth;     /* READs the peer may have outstanding (its max_rd_atomic) */
    verbs_addr_t qp;
} core_ep_addr_t;

/** Pack a into buf (at least CORE_EP_ADDR_SIZE bytes). IBMSG_OK or IBMSG_ERR_INVALID. */
int core_ep_addr_pack(const core_ep_addr_t *a, void *buf, size_t len);

/**
 * Parse and validate a peer's blob: exact size, version, flags, credits and eager limit within
 * their control variables' ranges, READ depths within verbs_max_rd_atomic's, and a valid verbs
 * address. Returns IBMSG_OK and fills *a;
 * IBMSG_ERR_PROTOCOL (*why says which rule; *a untouched); IBMSG_ERR_INVALID for NULL pointers.
 */
int core_ep_addr_parse(const void *blob, size_t len, core_ep_addr_t *a, const char **why);

#ifdef __cplusplus
}
#endif

#endif
