/*
 * Credit flow control of one connection: the sender's window, core_credits messages not yet
 * returned. Without a shared receive queue the peer posts exactly that many buffers for it, so
 * no send ever finds its receive queue empty (an RNR retry costs a kernel tick, ~4 ms on rxe).
 * With one (core/srq.c) the window is over the shared pool: the receiver owes the credit when
 * it consumes the buffer, and returns it only within the pool's credit budget (in turn, when
 * several wait), so the windows together stay within the buffers posted; only first windows
 * (or the credits of idle senders, forgiven) can find the pool empty, when RNR retries (forever)
 * are the last resort, which loses nothing.
 *
 * Rules (deadlock-free with threshold >= 2 and threshold <= local slots - 1):
 *  - every message, data or credit return, consumes one peer buffer (one credit);
 *  - data needs 2 credits available: the last one is kept for an explicit credit return;
 *  - a receiver counts buffers it has reposted (to_return) and returns them piggy-backed on
 *    every message it sends, or explicitly once to_return reaches the threshold;
 *  - a credit return triggered only by returned credits would ping-pong forever; with the
 *    threshold >= 2 each explicit return answers at least two messages, so it dies out.
 */
#ifndef IBMSG_CORE_CREDIT_H
#define IBMSG_CORE_CREDIT_H

#include <stdint.h>

#include "util/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CORE_CREDIT_MAX_GRANT UINT16_MAX

typedef struct core_credit {
    uint32_t avail;     /* peer buffers known free now */
    uint32_t to_return; /* local buffers reposted and not yet reported to the peer */
    uint32_t threshold; /* explicit return from this many */
    uint32_t peer_slots;
    uint64_t sent;     /* messages sent: each took one peer buffer */
    uint64_t returned; /* credits the peer has given back */
} core_credit_t;

/** Start a connection: the peer has peer_slots buffers, this side local_slots (>= 4). */
static inline void core_credit_init(core_credit_t *c, uint32_t peer_slots, uint32_t local_slots)
{
    c->avail = peer_slots;
    c->to_return = 0;
    c->threshold = UTIL_MAX(2u, local_slots / 2);
    c->peer_slots = peer_slots;
    c->sent = 0;
    c->returned = 0;
}

/** Whether a data message may go now. */
static inline int core_credit_can_send_data(const core_credit_t *c)
{
    return c->avail >= 2;
}

/** Whether an explicit credit return may go now (it may use the reserved credit). */
static inline int core_credit_can_send_return(const core_credit_t *c)
{
    return c->avail >= 1;
}

/** Whether enough credits are owed to the peer to return them explicitly. */
static inline int core_credit_return_due(const core_credit_t *c)
{
    return c->to_return >= c->threshold;
}

/** Take one credit for a message and the credits (at most max) to piggy-back on it. */
static inline uint16_t core_credit_consume(core_credit_t *c, uint32_t max)
{
    uint32_t grant = UTIL_MIN(c->to_return, max);

    c->avail--;
    c->sent++;
    c->to_return -= grant;
    return (uint16_t)grant;
}

/** Credits the peer may still return (a header returning more is invalid). */
static inline uint64_t core_credit_unreturned(const core_credit_t *c)
{
    return c->sent - c->returned;
}

/** Take credits the peer returned (already validated against core_credit_unreturned). */
static inline void core_credit_grant(core_credit_t *c, uint16_t credits)
{
    c->avail += credits;
    c->returned += credits;
}

/** Local buffers were reposted (own receive queue) or consumed (SRQ): owed to the peer. */
static inline void core_credit_reposted(core_credit_t *c, uint32_t n)
{
    c->to_return += n;
}

#ifdef __cplusplus
}
#endif

#endif
