/*
 * Process-wide counters of the world bootstrap (one world per process, used by one thread):
 * plain uint64_t written by that thread, read by the tool interface with relaxed loads.
 */
#ifndef IBMSG_WORLD_WORLD_COUNTERS_H
#define IBMSG_WORLD_WORLD_COUNTERS_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct world_counters {
    uint64_t bootstrap_ns;  /* the last ibmsg_world_init, from start to all endpoints connected */
    uint64_t fence_ns;      /* time in fences and barriers (init's included) */
    uint64_t init_fence_ns; /* the last ibmsg_world_init's data-collecting fence */
    uint64_t fences;        /* fences and barriers completed */
    uint64_t eps;           /* endpoints of the world now */
    /* On-demand wireup (world/wireup.c) and failures. */
    uint64_t eps_on_demand;      /* endpoints created on demand (asked for, or asked by a peer) */
    uint64_t connect_reqs_sent;  /* connect requests sent (first tries; resends in retries) */
    uint64_t connect_reqs_recvd; /* connect requests received and accepted for processing */
    uint64_t connect_retries;    /* requests and replies resent after a timeout */
    uint64_t connect_rejected;   /* connect datagrams rejected as malformed or unexpected */
    uint64_t connect_races;      /* requests that crossed ours (simultaneous connects) */
    uint64_t connects;           /* handshakes this process started that completed */
    uint64_t connect_time_ns;    /* their total time, request to connected */
    uint64_t peers_failed;       /* endpoints failed by wireup timeout or launcher event */
    uint64_t peers_departed;     /* endpoints failed because the peer said goodbye (finalized) */
} world_counters_t;

extern world_counters_t world_cnt;

/** Register the world's performance variables (once). */
void world_counters_init(void);

/** Monotonic nanoseconds. */
uint64_t world_now_ns(void);

#ifdef __cplusplus
}
#endif

#endif
