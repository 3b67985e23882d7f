/*
 * Failure detection: the per-endpoint and per-context keepalive state, and the coarse clock it
 * reads. The logic is in failure.c; core.h has the inline check progress calls.
 *
 * How a dead peer is noticed. An RC queue pair learns that its peer is gone only when one of its
 * own work requests goes unacknowledged: the device retransmits after the local ACK timeout
 * (4.096 us * 2^verbs_timeout) and gives up after verbs_retry_cnt retries, completing that
 * request with IBV_WC_RETRY_EXC_ERR and flushing all others (IBV_WC_WR_FLUSH_ERR). So:
 *  - a side that sends learns within about (verbs_retry_cnt + 1) * 4.096 us * 2^verbs_timeout.
 *    Soft-RoCE (rxe, kernel 6.1, emulated guest) measured: the formula plus 5-20 ms on an idle
 *    host (timeout 14, retries 6: 474-487 ms for 470); on 2026-11-26, host loaded, 4 runs
 *    each, median (max): 16.9 (24.4) ms for 8.4, 38.6 (41.5) for 33.6, 66.3 (67.0) for 67.1,
 *    270.9 (272.6) for 268.4, 476.2 (477.1) for 469.8; once, in a full test run, 150.9 for
 *    33.6. The tests allow 250 ms over (test/core/peer.h; hardware: the formula, the ACK
 *    timeout being the device's); earlier loaded runs took up
 *    to twice it (and 164 ms for 8.4), and
 *    never with verbs_retry_cnt 7: rxe_comp.c does not count retries down from 7 (like
 *    rnr_retry 7, "forever"), hence 6 on Soft-RoCE, 7 elsewhere, where verbs_retry_cnt is -1
 *    (the default; test_failure.cc measures all this);
 *  - a side that only receives, or waits for credits a dead peer will never return, sends
 *    nothing: for it the keepalive posts a probe once an endpoint has received nothing for
 *    core_keepalive_ms, and the probe times out like any send. The probe is a zero-length RDMA
 *    write: it needs no receive buffer and no credit at the peer (so it goes out even when
 *    the credits are exhausted), is invisible to the peer's software, and is acknowledged by
 *    the peer's transport as long as its queue pair exists (UCX's endpoint check does the
 *    same). Bound for a silent endpoint: core_keepalive_ms * 5/4 + the transport time above
 *    (keepalive 300 ms, timeout 10, retry 1: 383.4 ms; measured 318.7-379.7 ms, median 372.9).
 */
#ifndef IBMSG_CORE_FAILURE_H
#define IBMSG_CORE_FAILURE_H

#include <stdint.h>
#include <time.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Progress calls between two clock reads while completions keep coming. */
#define CORE_KA_CALLS 64

/* Checks per keepalive interval: a silent endpoint is probed within 5/4 of the interval. */
#define CORE_KA_CHECKS 4

typedef struct core_ep_keepalive {
    uint64_t silent_since_ns; /* when rx_seq last moved (or the last probe went out) */
    uint64_t probe_pos;       /* send-queue position of the probe in flight */
    uint32_t rx_seq;          /* rx_seq at the last check */
    uint8_t probing;          /* a probe is in flight */
} core_ep_keepalive_t;

typedef struct core_ctx_keepalive {
    uint64_t deadline_ns; /* next check; UINT64_MAX when keepalive is off */
    uint64_t interval_ns; /* core_keepalive_ms */
    uint32_t countdown;   /* progress calls until the next clock read */
} core_ctx_keepalive_t;

/* CLOCK_MONOTONIC_COARSE: read from the vDSO without a syscall, a tick (1-4 ms) resolution. */
static inline uint64_t core_coarse_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#ifdef __cplusplus
}
#endif

#endif
