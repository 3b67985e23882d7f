/*
 * Private to verbs/: address vectors. A queue pair's own address as its port gives it, and the
 * AV (ibv_ah_attr) that reaches a peer's: the RC queue pair's at RTR and the UD address handle
 * take the same routing decision.
 */
#ifndef IBMSG_VERBS_AV_H
#define IBMSG_VERBS_AV_H

#include <infiniband/verbs.h>

#include "verbs/addr.h"
#include "verbs/device.h"

/** The address of queue pair qpn (first PSN psn) on info's port: LID, GID if any, MTU. */
void verbs_av_local(const verbs_dev_info_t *info, uint32_t qpn, uint32_t psn, verbs_addr_t *addr);

/**
 * The AV from info's port to remote: its LID, and a GRH to its GID (this port's GID, hop_limit)
 * when RoCE (the GRH carries the IP addresses) or when the peer has one (IB across subnets).
 * The rest of *av is zero. IBMSG_ERR_INVALID, logged for queue pair qpn (kind names it), when
 * the peer is on another link layer, or needs a GRH and this port has no GID.
 */
int verbs_av_remote(const verbs_dev_info_t *info, const verbs_addr_t *remote, uint8_t hop_limit,
                    const char *kind, uint32_t qpn, struct ibv_ah_attr *av);

#endif
