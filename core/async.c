/*
 * The device's asynchronous events, read without blocking: by progress when the SRQ runs low and
 * at the keepalive tick, and by every wakeup of a sleep on the context's fd (core/wait.c), whose
 * epoll set holds the event fd. A device shared by contexts of the process is read by whichever
 * thread gets to it first, which routes each event to the contexts it concerns (verbs/hca.c);
 * progress takes what another thread routed here when its inbox count is not zero. Each is counted
 * and logged, and the endpoints it concerns fail at once with the device's cause (core_ep_failed
 * says which). The context's port going down or active again, a queue pair in error and a change of
 * the port's GID table or LID are also events of their own (core_device_*, after the failures they
 * cause, so endpoints_failed is known); the port's once per change of its state, however often the
 * device repeats a report. Tests feed events through the same dispatch (core_async_inject):
 * Soft-RoCE never reports a queue pair fatal.
 */
#include "core/core.h"
#include "util/log.h"
#include "verbs/async.h"

/* Fail ep now, with cause (IBMSG_T_EP_FAIL_*) for the core_ep_failed event. */
static void async_fail(ibmsg_ep_t ep, int cause)
{
    ep->ev.fail_cause = (uint8_t)cause;
    core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
}

/*
 * Work posted and not known complete, queued, or a rendezvous under way either side: the port's
 * loss costs this endpoint data. Out of line: once per endpoint per port event.
 */
static int async_ep_busy(ibmsg_ep_t ep)
{
    if (ep->sq_head != ep->sq_tail || core_mq_list_first(&ep->pending) != NULL ||
        ep->rndv.rx_active != 0 || ep->rndv.reads_out != 0) {
        return 1;
    }
    for (uint32_t i = 0; ep->rndv.tx != NULL && i < CORE_RNDV_MAX; i++) {
        if (ep->rndv.tx[i] != NULL) {
            return 1; /* a send waits for its FIN */
        }
    }
    return 0;
}

/*
 * The port went down. Its reliable connections cannot deliver until it is back, and the
 * transport would give up on their work only after its retries: an endpoint with traffic in
 * flight fails now with that cause. An idle one is left: the port may return before it sends
 * (its keepalive probe finds out otherwise).
 */
static void async_port_down(ibmsg_context_t ctx, const verbs_async_event_t *ev)
{
    uint32_t failed = 0;

    ctx->port_down = 1;
    core_cnt_inc(ctx->cnt, CNT_CORE_PORT_DOWN_EVENTS);
    for (ibmsg_ep_t ep = ctx->eps; ep != NULL; ep = ep->next) {
        if (ep->state == CORE_EP_CONNECTED && async_ep_busy(ep)) {
            async_fail(ep, IBMSG_T_EP_FAIL_PORT_DOWN);
            failed++;
        }
    }
    util_error("%s port %u: down; %u endpoint(s) with traffic in flight fail",
               verbs_dev_info(ctx->dev)->name, (unsigned)verbs_dev_info(ctx->dev)->port, failed);
    if (core_ev_on(core_ev_port_down)) {
        core_ev_device_raise(&core_ev_port_down, ctx, (uint32_t)ev->port, ev->raw, failed);
    }
}

/*
 * The port's GID table or LID changed (an IP address added or removed re-indexes a RoCE GID
 * table; a subnet manager may give the port another LID): new queue pairs take the address
 * queried now. Connected endpoints keep theirs: their queue pairs hold the old one, and a peer
 * that can no longer reach it fails them through the transport.
 */
static void async_address(ibmsg_context_t ctx, const verbs_async_event_t *ev)
{
    int changed = 0;

    core_cnt_inc(ctx->cnt, CNT_CORE_ADDRESS_EVENTS);
    verbs_dev_refresh_address(ctx->dev, &changed);
    util_info("%s port %d: %s; new queue pairs take GID index %d, LID %u (%s)",
              verbs_dev_info(ctx->dev)->name, ev->port, verbs_async_string(ev),
              verbs_dev_info(ctx->dev)->gid_index, (unsigned)verbs_dev_info(ctx->dev)->lid,
              changed ? "changed" : "unchanged");
    if (core_ev_on(core_ev_address_changed)) {
        core_ev_device_raise(&core_ev_address_changed, ctx, (uint32_t)ev->port, ev->raw,
                             (uint32_t)changed);
    }
}

/*
 * One event, read from the device or injected by a test (core_async_inject): counted, logged, and
 * the endpoints it concerns fail.
 */
static void async_dispatch(ibmsg_context_t ctx, const verbs_async_event_t *ev)
{
    ibmsg_ep_t ep;
    int failing;

    core_cnt_inc(ctx->cnt, CNT_CORE_ASYNC_EVENTS);
    switch (ev->type) {
    case VERBS_ASYNC_SRQ_LIMIT:
        if (ctx->srq != NULL) {
            core_srq_limit_reached(ctx);
        }
        break;
    case VERBS_ASYNC_QP_FATAL:
        ep = core_qpt_find(&ctx->qpt, ev->qpn);
        failing = ep != NULL && ep->state == CORE_EP_CONNECTED;
        if (failing) {
            util_error("qp 0x%x: %s; the endpoint fails", ev->qpn, verbs_async_string(ev));
            async_fail(ep, IBMSG_T_EP_FAIL_QP_FATAL);
        }
        if (core_ev_on(core_ev_qp_fatal)) {
            core_ev_device_raise(&core_ev_qp_fatal, ctx, ev->qpn, ev->raw, (uint32_t)failing);
        }
        break;
    case VERBS_ASYNC_PORT_DOWN:
        /* Soft-RoCE reports a port error for each netdev change that leaves it down (the carrier
         * lost, then the link taken down): once per change of state. Endpoints busy since the
         * first are left to the transport's retries and the keepalive, as after it. */
        if (ev->port == verbs_dev_info(ctx->dev)->port && !ctx->port_down) {
            async_port_down(ctx, ev);
        }
        break;
    case VERBS_ASYNC_PORT_UP:
        /* Soft-RoCE reports a port's return twice (measured): once per change of state. */
        if (ev->port == verbs_dev_info(ctx->dev)->port && ctx->port_down) {
            ctx->port_down = 0;
            util_warn("%s port %d: active again", verbs_dev_info(ctx->dev)->name, ev->port);
            if (core_ev_on(core_ev_port_active)) {
                core_ev_device_raise(&core_ev_port_active, ctx, (uint32_t)ev->port, ev->raw, 0);
            }
        }
        break;
    case VERBS_ASYNC_ADDRESS:
        if (ev->port == verbs_dev_info(ctx->dev)->port) {
            async_address(ctx, ev);
        }
        break;
    case VERBS_ASYNC_SRQ_ERR:
    case VERBS_ASYNC_CQ_ERR:
    case VERBS_ASYNC_DEVICE_FATAL:
        util_error("context: %s; every endpoint fails", verbs_async_string(ev));
        for (ep = ctx->eps; ep != NULL; ep = ep->next) {
            if (ep->state == CORE_EP_CONNECTED) {
                ep->ev.fail_cause = IBMSG_T_EP_FAIL_QP_FATAL;
            }
            core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
        }
        break;
    default:
        util_debug("context: async event %s", verbs_async_string(ev));
        break;
    }
}

int core_async_poll(ibmsg_context_t ctx)
{
    verbs_async_event_t ev;
    int count = 0;

    while (verbs_dev_poll_async(ctx->dev, &ev) == 1) {
        count++;
        async_dispatch(ctx, &ev);
    }
    return count;
}

void core_async_inject_device(ibmsg_context_t ctx, const struct ibv_async_event *e)
{
    verbs_dev_async_route(ctx->dev, e);
    core_async_poll(ctx);
}

void core_async_inject(ibmsg_context_t ctx, const struct ibv_async_event *e)
{
    verbs_async_event_t ev;

    verbs_async_translate(e, &ev);
    async_dispatch(ctx, &ev);
}
