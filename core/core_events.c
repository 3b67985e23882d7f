/*
 * The messaging core's events: their registration (once, with the core's settings) and the
 * out-of-line raises that core_events.h's inline tests call when somebody listens.
 */
#include "core/core_events.h"

#include <pthread.h>
#include <time.h>

#include "core/core.h"
#include "counters/builtin.h"
#include "util/log.h"

cnt_event_t core_ev_ep_connected = CNT_EVENT_INIT;
cnt_event_t core_ev_ep_failed = CNT_EVENT_INIT;
cnt_event_t core_ev_rndv_started = CNT_EVENT_INIT;
cnt_event_t core_ev_rndv_completed = CNT_EVENT_INIT;
cnt_event_t core_ev_stall_begun = CNT_EVENT_INIT;
cnt_event_t core_ev_stall_ended = CNT_EVENT_INIT;
cnt_event_t core_ev_srq_low = CNT_EVENT_INIT;
cnt_event_t core_ev_srq_refilled = CNT_EVENT_INIT;
cnt_event_t core_ev_port_active = CNT_EVENT_INIT;
cnt_event_t core_ev_port_down = CNT_EVENT_INIT;
cnt_event_t core_ev_qp_fatal = CNT_EVENT_INIT;
cnt_event_t core_ev_address_changed = CNT_EVENT_INIT;

/* Raised inside progress: a callback must not call back into the messaging API. */
#define CORE_EV_LEVEL IBMSG_T_CB_REQUIRE_MPI_RESTRICTED

/* The precise clock (a stall may last microseconds); read only while somebody listens. */
static uint64_t now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void check_reg(int ret, const char *what)
{
    if (ret != IBMSG_OK) {
        util_error("core: cannot register %s: %s", what, ibmsg_status_string(ret));
    }
}

static void event_add_bound(cnt_event_t *ev, const char *name, int bind, const char *category,
                            int n, const ibmsg_t_datatype_t *types, const char *const *names,
                            ibmsg_t_enum_t enumtype, const char *desc)
{
    cnt_event_desc_t d = {
        .name = name,
        .verbosity = IBMSG_T_VERBOSITY_USER_DETAIL,
        .bind = bind,
        .num_elements = n,
        .datatypes = types,
        .element_names = names,
        .enumtype = enumtype,
        .source = 0,
        .category = category,
        .desc = desc,
    };
    check_reg(cnt_event_register(&d, ev), name);
}

static void event_add(cnt_event_t *ev, const char *name, const char *category, int n,
                      const ibmsg_t_datatype_t *types, const char *const *names,
                      ibmsg_t_enum_t enumtype, const char *desc)
{
    event_add_bound(ev, name, IBMSG_T_BIND_ENDPOINT, category, n, types, names, enumtype, desc);
}

static void events_register_once(void)
{
    static const cnt_enum_item_t causes[] = {
        {IBMSG_T_EP_FAIL_LOCAL, "local"},
        {IBMSG_T_EP_FAIL_RETRY_EXCEEDED, "retry_exceeded"},
        {IBMSG_T_EP_FAIL_KEEPALIVE, "keepalive"},
        {IBMSG_T_EP_FAIL_COMPLETION_ERROR, "completion_error"},
        {IBMSG_T_EP_FAIL_GOODBYE, "goodbye"},
        {IBMSG_T_EP_FAIL_LAUNCHER, "launcher"},
        {IBMSG_T_EP_FAIL_CONNECT, "connect"},
        {IBMSG_T_EP_FAIL_FLUSHED, "flushed"},
        {IBMSG_T_EP_FAIL_QP_FATAL, "qp_fatal"},
        {IBMSG_T_EP_FAIL_PORT_DOWN, "port_down"},
    };
    static const cnt_enum_item_t reasons[] = {
        {IBMSG_T_STALL_CREDITS, "credits"},
        {IBMSG_T_STALL_SEND_QUEUE, "send_queue"},
        {IBMSG_T_STALL_RESOURCES, "resources"},
        {IBMSG_T_STALL_CONNECTING, "connecting"},
    };
    static const ibmsg_t_datatype_t connected_types[] = {IBMSG_T_UNSIGNED, IBMSG_T_UNSIGNED,
                                                         IBMSG_T_UNSIGNED};
    static const char *const connected_names[] = {"qpn", "peer_qpn", "credits"};
    static const ibmsg_t_datatype_t failed_types[] = {IBMSG_T_UNSIGNED, IBMSG_T_INT};
    static const char *const failed_names[] = {"qpn", "cause"};
    static const ibmsg_t_datatype_t rndv_types[] = {IBMSG_T_UNSIGNED_LONG_LONG,
                                                    IBMSG_T_UNSIGNED_LONG_LONG, IBMSG_T_UNSIGNED,
                                                    IBMSG_T_INT, IBMSG_T_INT};
    static const char *const rndv_names[] = {"tag", "bytes", "id", "role", "status"};
    static const ibmsg_t_datatype_t begun_types[] = {IBMSG_T_UNSIGNED, IBMSG_T_INT};
    static const char *const begun_names[] = {"qpn", "reason"};
    static const ibmsg_t_datatype_t ended_types[] = {IBMSG_T_UNSIGNED_LONG_LONG, IBMSG_T_UNSIGNED};
    static const char *const ended_names[] = {"duration_ns", "qpn"};
    static const ibmsg_t_datatype_t srq_types[] = {IBMSG_T_UNSIGNED, IBMSG_T_UNSIGNED,
                                                   IBMSG_T_UNSIGNED};
    static const char *const low_names[] = {"posted", "target", "limit"};
    static const char *const refilled_names[] = {"posted", "target", "added"};
    static const ibmsg_t_datatype_t device_types[] = {IBMSG_T_UNSIGNED, IBMSG_T_INT,
                                                      IBMSG_T_UNSIGNED};
    static const char *const port_names[] = {"port", "event_type", "endpoints_failed"};
    static const char *const qp_names[] = {"qpn", "event_type", "endpoints_failed"};
    static const char *const address_names[] = {"port", "event_type", "changed"};
    ibmsg_t_enum_t cause_enum = IBMSG_T_ENUM_NULL, reason_enum = IBMSG_T_ENUM_NULL;
    int index;

    check_reg(
        cnt_category_register("connection", "Endpoints: connection and failure", "core", &index),
        "category connection");
    check_reg(cnt_category_register("flow_control",
                                    "Flow control: sends waiting for credits or send-queue room",
                                    "core", &index),
              "category flow_control");
    check_reg(cnt_category_register("rendezvous",
                                    "The rendezvous protocol: large messages pulled with RDMA READ",
                                    "core", &index),
              "category rendezvous");
    check_reg(cnt_category_register("receive_pool",
                                    "The shared receive queue: its buffers, limit and refills",
                                    "core", &index),
              "category receive_pool");
    check_reg(cnt_category_register("device",
                                    "The device's asynchronous events: ports and queue pairs",
                                    "core", &index),
              "category device");
    check_reg(
        cnt_enum_register("core_ep_fail_causes", (int)UTIL_ARRAY_SIZE(causes), causes, &cause_enum),
        "enum core_ep_fail_causes");
    check_reg(cnt_enum_register("core_send_stall_reasons", (int)UTIL_ARRAY_SIZE(reasons), reasons,
                                &reason_enum),
              "enum core_send_stall_reasons");
    event_add(&core_ev_ep_connected, "core_ep_connected", "connection", 3, connected_types,
              connected_names, IBMSG_T_ENUM_NULL, "An endpoint's queue pair is ready to send");
    event_add(&core_ev_ep_failed, "core_ep_failed", "connection", 2, failed_types, failed_names,
              cause_enum, "An endpoint failed: its requests complete with IBMSG_ERR_PEER_FAILED");
    event_add(&core_ev_rndv_started, "core_rndv_started", "rendezvous", 4, rndv_types, rndv_names,
              IBMSG_T_ENUM_NULL,
              "A rendezvous began: its RTS was posted (role 0) or a receive matched it (role 1)");
    event_add(&core_ev_rndv_completed, "core_rndv_completed", "rendezvous", 5, rndv_types,
              rndv_names, IBMSG_T_ENUM_NULL,
              "A rendezvous ended: the sender got its FIN (role 0) or the receiver pulled the data "
              "(role 1); bytes moved and the request's status");
    event_add(&core_ev_stall_begun, "core_send_stall_begun", "flow_control", 2, begun_types,
              begun_names, reason_enum, "A send had to queue: the endpoint could not take it");
    event_add(&core_ev_stall_ended, "core_send_stall_ended", "flow_control", 2, ended_types,
              ended_names, IBMSG_T_ENUM_NULL, "The sends queued on an endpoint are all posted");
    event_add_bound(&core_ev_srq_low, "core_srq_low", IBMSG_T_BIND_CONTEXT, "receive_pool", 3,
                    srq_types, low_names, IBMSG_T_ENUM_NULL,
                    "The shared receive queue ran below its limit (the device's limit event): "
                    "senders outran the refills, so the queue grows");
    event_add_bound(&core_ev_srq_refilled, "core_srq_refilled", IBMSG_T_BIND_CONTEXT,
                    "receive_pool", 3, srq_types, refilled_names, IBMSG_T_ENUM_NULL,
                    "Receive buffers were posted to the shared receive queue (a batch, the "
                    "initial fill, or the growth after a low event)");
    event_add_bound(&core_ev_port_active, "core_device_port_active", IBMSG_T_BIND_CONTEXT, "device",
                    2, device_types, port_names, IBMSG_T_ENUM_NULL,
                    "The context's port became active again after a port error (once per return)");
    event_add_bound(&core_ev_port_down, "core_device_port_down", IBMSG_T_BIND_CONTEXT, "device", 3,
                    device_types, port_names, IBMSG_T_ENUM_NULL,
                    "The context's port left the active state (a port error): its endpoints "
                    "with traffic in flight fail");
    event_add_bound(&core_ev_qp_fatal, "core_device_qp_fatal", IBMSG_T_BIND_CONTEXT, "device", 3,
                    device_types, qp_names, IBMSG_T_ENUM_NULL,
                    "The device reported a queue pair of the context in error (fatal, request "
                    "or access error): its endpoint fails");
    event_add_bound(&core_ev_address_changed, "core_device_address_changed", IBMSG_T_BIND_CONTEXT,
                    "device", 3, device_types, address_names, IBMSG_T_ENUM_NULL,
                    "The GID table or the LID of the context's port changed: the address new "
                    "queue pairs take was queried again (changed: 1 when it differs now)");
}

void core_events_register_once(pthread_once_t *once, void (*register_types)(void))
{
#if IBMSG_HAVE_CORE_EVENTS
    pthread_once(once, register_types);
#else
    (void)once;
    (void)register_types;
#endif
}

void core_events_register(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    core_events_register_once(&once, events_register_once);
}

/*
 * At load too, after the built-in categories: a tool that starts with the process (an agent
 * preloaded into it, ibmsg_pvars --follow) finds the types before the first context exists.
 */
__attribute__((constructor)) static void core_events_at_load(void)
{
    cnt_builtin_init();
    core_events_register();
}

void core_ev_ep_connected_raise(ibmsg_ep_t ep, uint32_t peer_qpn, uint32_t credits)
{
    core_ev_ep_connected_elems_t e = {.qpn = ep->qpn, .peer_qpn = peer_qpn, .credits = credits};
    cnt_event_raise(&core_ev_ep_connected, ep, &e, CORE_EV_LEVEL);
}

void core_ev_ep_failed_raise(ibmsg_ep_t ep)
{
    if (ep->ev.fail_cause == IBMSG_T_EP_FAIL_FLUSHED && !ep->ev.fail_due) {
        /* A flush is an echo: the error completion that caused it tells why, next. */
        ep->ev.fail_due = 1;
        return;
    }
    ep->ev.fail_due = 0;
    core_ev_ep_failed_elems_t e = {.qpn = ep->qpn, .cause = ep->ev.fail_cause};
    cnt_event_raise(&core_ev_ep_failed, ep, &e, CORE_EV_LEVEL);
}

void core_ev_rndv_raise(cnt_event_t *ev, ibmsg_ep_t ep, const struct ibmsg_request_s *req, int role,
                        uint64_t bytes, int status)
{
    core_ev_rndv_elems_t e = {
        .tag = req->status.tag,
        .bytes = bytes,
        .id = req->rndv.id,
        .role = role,
        .status = status,
    };
    cnt_event_raise(ev, ep, &e, CORE_EV_LEVEL);
}

void core_ev_stall_begun_raise(ibmsg_ep_t ep)
{
    core_ev_stall_begun_elems_t e = {.qpn = ep->qpn};

    if (!core_mq_list_empty(&ep->pending)) {
        return; /* behind a send already waiting: the stall began with it */
    }
    ep->ev.stall_ns = now_ns() | 1; /* never 0: 0 means no stall tracked */
    e.reason = ep->state == CORE_EP_CONNECTING       ? IBMSG_T_STALL_CONNECTING
               : !core_credit_can_send_data(&ep->cr) ? IBMSG_T_STALL_CREDITS
               : ep->sq_head - ep->sq_tail >= ep->sq_room || ep->ctx->sq_out >= ep->ctx->sq_budget
                   ? IBMSG_T_STALL_SEND_QUEUE
                   : IBMSG_T_STALL_RESOURCES;
    if (cnt_event_listening(&core_ev_stall_begun)) {
        cnt_event_raise(&core_ev_stall_begun, ep, &e, CORE_EV_LEVEL);
    }
}

void core_ev_stall_ended_raise(ibmsg_ep_t ep)
{
    if (!core_mq_list_empty(&ep->pending)) {
        return;
    }
    uint64_t now = now_ns();
    core_ev_stall_ended_elems_t e = {
        .duration_ns = now > ep->ev.stall_ns ? now - ep->ev.stall_ns : 0,
        .qpn = ep->qpn,
    };
    ep->ev.stall_ns = 0;
    if (cnt_event_listening(&core_ev_stall_ended)) {
        cnt_event_raise(&core_ev_stall_ended, ep, &e, CORE_EV_LEVEL);
    }
}

void core_ev_srq_raise(cnt_event_t *ev, ibmsg_context_t ctx, uint32_t posted, uint32_t target,
                       uint32_t count)
{
    core_ev_srq_elems_t e = {.posted = posted, .target = target, .count = count};
    cnt_event_raise(ev, ctx, &e, CORE_EV_LEVEL);
}

void core_ev_device_raise(cnt_event_t *ev, ibmsg_context_t ctx, uint32_t id, int event_type,
                          uint32_t affected)
{
    core_ev_device_elems_t e = {.id = id, .event_type = event_type, .affected = affected};
    cnt_event_raise(ev, ctx, &e, CORE_EV_LEVEL);
}
