/*
 * ibmsg world: the processes of one job, each with one context and endpoints to the other
 * processes, set up from the environment the job was launched in.
 *
 * How ibmsg_world_init finds its peers, first that applies:
 *   pmix    PMIX_RANK and PMIX_NAMESPACE are set (mpirun, srun --mpi=pmix, prterun) and the
 *           library was built with PMIx (IBMSG_WITH_PMIX): rank, size and local rank come from
 *           the launcher; endpoint addresses go through its key-value store (PMIx_Put, Commit,
 *           one Fence with data collection, Get).
 *   tcp     IBMSG_WORLD_PEER=host:port is set: two processes; IBMSG_WORLD_RANK=0 listens on
 *           port, 1 connects to host:port; addresses go over the TCP helper (ibmsg_oob_*).
 *   single  otherwise: one process (rank 0 of 1), no endpoints.
 *
 * Endpoints are wired on demand by default (control variable / info hint world_wireup = 1): an
 * endpoint to a rank is created by the first ibmsg_world_ep for it, or when that rank asks this
 * process (a handshake over a UD connection manager, run by the progress engine), so messages
 * from a rank this process never asked for still match receives from any source. Sends on an
 * endpoint still connecting queue and go once the peer answers; a peer that never answers fails
 * the endpoint after world_connect_timeout_ms (IBMSG_ERR_PEER_FAILED). world_wireup = 0 (and
 * the TCP bootstrap) connects every peer during ibmsg_world_init instead (eager). Under PMIx, a
 * process the launcher reports terminated or aborted has its endpoint failed. See
 * docs/scaling.md.
 *
 * One world per process. Its context belongs to the thread that created the world, like any
 * context (see ibmsg.h); the world functions must be called from that thread too.
 */
#ifndef IBMSG_WORLD_H
#define IBMSG_WORLD_H

#include <stdint.h>

#include <ibmsg/export.h>
#include <ibmsg/ibmsg.h>
#include <ibmsg/info.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ibmsg_world_s *ibmsg_world_t;

#define IBMSG_WORLD_NULL ((ibmsg_world_t)0)

/* How the world was set up (see above). */
typedef enum ibmsg_world_bootstrap {
    IBMSG_WORLD_SINGLE = 0,
    IBMSG_WORLD_TCP = 1,
    IBMSG_WORLD_PMIX = 2,
} ibmsg_world_bootstrap_t;

/**
 * Set up the world: bootstrap (see above), create the context (with info's hints), then either
 * publish the connection manager's address (on demand) or create and connect one endpoint to
 * every other process (eager); either way every process is ready for connections or messages
 * when it returns. Collective over the job.
 * @param info  hints for the context (see ibmsg_context_create), or IBMSG_INFO_NULL
 * @param world out: the world
 * @return IBMSG_OK; IBMSG_ERR_BUSY when this process already has a world; IBMSG_ERR_INVALID
 *         for world NULL or a malformed IBMSG_WORLD_PEER / IBMSG_WORLD_RANK; the error of
 *         ibmsg_context_create (IBMSG_ERR_NO_DEVICE, ...) or of ibmsg_ep_create
 *         (IBMSG_ERR_NO_RESOURCE: raise core_cq_size for many peers); IBMSG_ERR_IO /
 *         IBMSG_ERR_TIMEOUT when the bootstrap fails; IBMSG_ERR_PROTOCOL for a malformed
 *         address from a peer. On error nothing is left allocated.
 * Thread safety: one thread; the world and its context belong to it.
 */
IBMSG_API int ibmsg_world_init(ibmsg_info_t info, ibmsg_world_t *world);

/**
 * Tear the world down: destroy its context (and endpoints) and leave PMIx. Not collective: call
 * ibmsg_world_barrier first so no peer still sends to this process.
 * @return IBMSG_OK, IBMSG_ERR_INVALID for NULL.
 * Thread safety: the world's thread.
 */
IBMSG_API int ibmsg_world_finalize(ibmsg_world_t world);

/** This process's rank, 0 <= rank < size. IBMSG_ERR_INVALID for NULL. */
IBMSG_API int ibmsg_world_rank(ibmsg_world_t world, uint32_t *rank);

/** The number of processes. IBMSG_ERR_INVALID for NULL. */
IBMSG_API int ibmsg_world_size(ibmsg_world_t world, uint32_t *size);

/** This process's rank among the job's processes on its node (0 without PMIx). */
IBMSG_API int ibmsg_world_local_rank(ibmsg_world_t world, uint32_t *local_rank);

/** How the world was set up. IBMSG_ERR_INVALID for NULL. */
IBMSG_API int ibmsg_world_bootstrap(ibmsg_world_t world, ibmsg_world_bootstrap_t *how);

/** The world's context (for receives from any rank, progress, counters). */
IBMSG_API int ibmsg_world_context(ibmsg_world_t world, ibmsg_context_t *ctx);

/**
 * The endpoint to rank. On demand, the first call for a rank creates the endpoint and sends the
 * connect request; it returns at once and sends on the endpoint queue until the peer answers
 * (the peer must make progress: any ibmsg call that progresses, or ibmsg_world_barrier).
 * @return IBMSG_OK; IBMSG_ERR_OUT_OF_RANGE for rank >= size; IBMSG_ERR_INVALID for NULL
 *         arguments or this process's own rank (there is no loopback endpoint); on demand
 *         IBMSG_ERR_NOT_FOUND / IBMSG_ERR_PROTOCOL when the rank's connection-manager address
 *         cannot be fetched, or the errors of ibmsg_ep_create (IBMSG_ERR_NO_RESOURCE).
 * Thread safety: the world's thread.
 */
IBMSG_API int ibmsg_world_ep(ibmsg_world_t world, uint32_t rank, ibmsg_ep_t *ep);

/**
 * The rank an endpoint of the world leads to (for a receive from any source: status.source).
 * O(1).
 * @return IBMSG_OK; IBMSG_ERR_NOT_FOUND for an endpoint not of this world; IBMSG_ERR_INVALID.
 */
IBMSG_API int ibmsg_world_ep_rank(ibmsg_world_t world, ibmsg_ep_t ep, uint32_t *rank);

/**
 * Wait until every process of the world has entered the barrier (PMIx_Fence; over TCP a token
 * each way). Messages this process started and ibmsg still holds for a batched post
 * (core_send_batch) are posted first. Under PMIx it makes ibmsg progress while it waits (a peer
 * may need this process to answer its connect request before it can reach the barrier); over TCP
 * it does not.
 * @return IBMSG_OK; IBMSG_ERR_TIMEOUT / IBMSG_ERR_IO / IBMSG_ERR_PEER_FAILED when the launcher
 *         or the peer failed; IBMSG_ERR_INVALID for NULL.
 * Thread safety: the world's thread.
 */
IBMSG_API int ibmsg_world_barrier(ibmsg_world_t world);

#ifdef __cplusplus
}
#endif

#endif
