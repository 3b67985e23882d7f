/*
 * PMIx bootstrap: the process's place in a job started by a PMIx launcher (mpirun, srun, prterun)
 * and the exchange of address blobs through the launcher's key-value store. PMIx state is
 * process-wide (PMIx_Init is reference counted by the library), so these functions are too: one
 * thread at a time. Built without PMIx (IBMSG_WITH_PMIX=OFF or not found), every call but
 * world_pmix_launched returns IBMSG_ERR_NOT_SUPPORTED.
 */
#ifndef IBMSG_WORLD_BOOTSTRAP_PMIX_H
#define IBMSG_WORLD_BOOTSTRAP_PMIX_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Whether this library has PMIx and the environment says a PMIx launcher started us. */
int world_pmix_launched(void);

/**
 * PMIx_Init; then the job's size and this process's rank and node-local rank.
 * @return IBMSG_OK, IBMSG_ERR_NOT_SUPPORTED, IBMSG_ERR_IO when PMIx fails (logged).
 */
int world_pmix_init(uint32_t *rank, uint32_t *size, uint32_t *local_rank);

/** Publish len bytes under key (PMIx_Put, global scope) and PMIx_Commit them. */
int world_pmix_put(const char *key, const void *blob, size_t len);

/**
 * PMIx_Fence over the whole job; collect: with data collection (after puts). timeout_s > 0 asks
 * the server to give up after that many seconds (IBMSG_ERR_TIMEOUT).
 */
int world_pmix_fence(int collect, int timeout_s);

/**
 * Fetch the blob rank published under key into buf; *len is in: its size, out: the blob's
 * length. A blob that is not a byte object or is longer than buf is IBMSG_ERR_PROTOCOL; a key
 * that is missing IBMSG_ERR_NOT_FOUND.
 */
int world_pmix_get(uint32_t rank, const char *key, void *buf, size_t *len);

/**
 * A fence without data collection that makes progress while it waits: PMIx_Fence_nb, then
 * progress(arg) until the launcher's callback (on its thread) says the fence is done. With
 * on-demand wireup a peer may be waiting for this process to answer its connect request before
 * it can reach the same fence. progress may sleep: wake(wake_arg) is called (on a PMIx thread) once
 * the fence has completed (wake_arg must outlive the fence: the call may still run when
 * this one returns).
 */
int world_pmix_fence_progress(int timeout_s, void (*progress)(void *), void *arg,
                              void (*wake)(void *), void *wake_arg);

/* Called (on a PMIx thread) with the rank of a process of our job that the launcher reports gone.
 */
typedef void (*world_pmix_death_cb_t)(uint32_t rank, void *arg);

/**
 * Register a PMIx event handler for process termination and abort events of this job
 * (PMIX_ERR_PROC_ABORTED, PMIX_EVENT_PROC_TERMINATED, PMIX_ERR_PROC_TERM_WO_SYNC, ...); cb gets
 * the affected rank. One registration per process; world_pmix_finalize removes it.
 */
int world_pmix_on_death(world_pmix_death_cb_t cb, void *arg);

/** PMIx_Finalize (pairs with a successful world_pmix_init). */
int world_pmix_finalize(void);

#ifdef __cplusplus
}
#endif

#endif
