/*
 * On-demand wireup of a world's endpoints over a UD connection manager, and the world's view of
 * dead peers (PMIx events). See wireup.c for the handshake and docs/scaling.md for why.
 * One wireup per world; used by the world's thread only (progress calls it), except
 * world_wireup_peer_died, which any thread may call.
 */
#ifndef IBMSG_WORLD_WIREUP_H
#define IBMSG_WORLD_WIREUP_H

#include <stddef.h>
#include <stdint.h>

#include <ibmsg/ibmsg.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct world_wireup world_wireup_t;

/* Fetch the UD address blob rank published (PMIx_Get); *len in: buffer size, out: length. */
typedef int (*world_wireup_lookup_cb_t)(uint32_t rank, void *buf, size_t *len);

/**
 * Attach a wireup to ctx for a world of size processes in which this one is rank. eps (size
 * entries, owned by the world) is the rank -> endpoint table the wireup fills. on_demand: create
 * the UD queue pair (else only dead-peer events are handled; the world wires eagerly).
 * Returns IBMSG_OK or an error of verbs_ud_create.
 */
int world_wireup_create(ibmsg_context_t ctx, uint32_t rank, uint32_t size, ibmsg_ep_t *eps,
                        int on_demand, world_wireup_lookup_cb_t lookup, world_wireup_t **wu_p);

/** Detach from the context and free (before the context is destroyed). NULL is ignored. */
void world_wireup_destroy(world_wireup_t *wu);

/** This process's UD address blob, to publish (VERBS_ADDR_PACKED_SIZE bytes). */
int world_wireup_address(world_wireup_t *wu, void *buf, size_t *len);

/**
 * The endpoint to rank: the existing one, or a new one whose connect request is sent now (sends
 * on it queue until the peer answers). Returns IBMSG_OK, IBMSG_ERR_NOT_FOUND / IBMSG_ERR_PROTOCOL
 * when the peer's UD address cannot be had, or the error of ibmsg_ep_create.
 */
int world_wireup_ep(world_wireup_t *wu, uint32_t rank, ibmsg_ep_t *ep);

/** Rank died (the launcher said so): its endpoint fails at the next progress. Any thread. */
void world_wireup_peer_died(world_wireup_t *wu, uint32_t rank);

#ifdef __cplusplus
}
#endif

#endif
