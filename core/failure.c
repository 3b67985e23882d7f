/*
 * Failure detection (see failure.h for the model): the keepalive probes of silent endpoints and
 * the public status query. The failing itself (requests completed with IBMSG_ERR_PEER_FAILED)
 * is core_ep_fail in progress.c, where the completions that trigger it are handled.
 */
#include <stdint.h>

#include "core/core.h"
#include "util/log.h"

void core_keepalive_init(ibmsg_context_t ctx)
{
    ctx->ka.interval_ns = (uint64_t)ctx->cfg.keepalive_ms * 1000000u;
    ctx->ka.deadline_ns = ctx->ka.interval_ns == 0
                              ? UINT64_MAX
                              : core_coarse_now_ns() + ctx->ka.interval_ns / CORE_KA_CHECKS;
    ctx->ka.countdown = CORE_KA_CALLS;
}

/* Post a probe into the next send-queue slot; it completes (and frees its slot) like a send. */
static void keepalive_probe(ibmsg_ep_t ep, uint64_t now)
{
    /* A marker: acknowledged by the peer's transport without a receive buffer, memory or key,
       so a dead peer shows as a retry-exceeded completion. */
    if (core_ep_post_marker(ep) != IBMSG_OK) {
        core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
        return;
    }
    ep->ka.probe_pos = ep->sq_head - 1;
    ep->ka.probing = 1;
    ep->ka.silent_since_ns = now;
    core_cnt_inc(ep->cnt, CNT_CORE_KEEPALIVES_SENT);
    util_debug("qp 0x%x: silent for %llu ms: keepalive probe", ep->qpn,
               (unsigned long long)(ep->ctx->ka.interval_ns / 1000000u));
}

void core_keepalive_idle(ibmsg_context_t ctx)
{
    core_keepalive_due(ctx);
}

void core_keepalive_run(ibmsg_context_t ctx, uint64_t now)
{
    const uint64_t interval = ctx->ka.interval_ns;

    ctx->ka.deadline_ns = now + interval / CORE_KA_CHECKS;
    core_async_poll(ctx); /* the coarse tick reads what the SRQ's low mark did not */
    for (ibmsg_ep_t ep = ctx->eps; ep != NULL; ep = ep->next) {
        core_ep_keepalive_t *ka = &ep->ka;

        if (ep->state != CORE_EP_CONNECTED) {
            continue;
        }
        if (ka->probing) {
            if (ep->sq_tail <= ka->probe_pos) {
                continue; /* in flight: its acknowledgement or its timeout decides */
            }
            ka->probing = 0;
        }
        if (ka->silent_since_ns == 0 || ep->rx_seq != ka->rx_seq) {
            ka->rx_seq = ep->rx_seq;
            ka->silent_since_ns = now;
            continue;
        }
        if (now - ka->silent_since_ns < interval) {
            continue;
        }
        if (!core_sq_room(ep, 1)) {
            continue; /* a full send queue has requests in flight that time out on their own */
        }
        keepalive_probe(ep, now);
    }
}

int ibmsg_ep_status(ibmsg_ep_t ep)
{
    if (ep == NULL) {
        return IBMSG_ERR_INVALID;
    }
    return ep->state == CORE_EP_FAILED ? IBMSG_ERR_PEER_FAILED : IBMSG_OK;
}
