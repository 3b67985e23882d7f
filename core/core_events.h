/*
 * The messaging core's events (include/ibmsg/tool.h, "Events of the messaging core", lists them
 * with their elements). Each type is a cnt_event_t (counters/registry/registry.h) whose raise site
 * is one inline test, core_ev_on(): an event nobody listens to costs a load and a predictable
 * branch, and the instance is built out of line in core_events.c. With -DIBMSG_CORE_EVENTS=OFF the
 * test is the constant 0 and the types are not registered, to measure what the tests cost.
 *
 * Every event is raised by the thread making progress on the endpoint's context, inside the
 * ibmsg call that made the progress, at IBMSG_T_CB_REQUIRE_MPI_RESTRICTED (tool.h: delivery).
 */
#ifndef IBMSG_CORE_CORE_EVENTS_H
#define IBMSG_CORE_CORE_EVENTS_H

#include <pthread.h>
#include <stdint.h>

#include "ibmsg_config.h"
#include "counters/registry/registry.h"
#include "util/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

struct ibmsg_context_s;
struct ibmsg_ep_s;
struct ibmsg_request_s;

extern cnt_event_t core_ev_ep_connected;
extern cnt_event_t core_ev_ep_failed;
extern cnt_event_t core_ev_rndv_started;
extern cnt_event_t core_ev_rndv_completed;
extern cnt_event_t core_ev_stall_begun;
extern cnt_event_t core_ev_stall_ended;
extern cnt_event_t core_ev_srq_low;
extern cnt_event_t core_ev_srq_refilled;
extern cnt_event_t core_ev_port_active;
extern cnt_event_t core_ev_port_down;
extern cnt_event_t core_ev_qp_fatal;
extern cnt_event_t core_ev_address_changed;

#if IBMSG_HAVE_CORE_EVENTS
#define core_ev_on(ev)            util_unlikely(cnt_event_listening(&(ev)))
/* A send stall is watched when either of its events listens; its end is checked per endpoint. */
#define core_ev_stall_watched()   (core_ev_on(core_ev_stall_begun) || core_ev_on(core_ev_stall_ended))
#define core_ev_stall_tracked(ep) util_unlikely((ep)->ev.stall_ns != 0)
#else
#define core_ev_on(ev)            0
#define core_ev_stall_watched()   0
#define core_ev_stall_tracked(ep) 0
#endif

/* The elements of each type as its instances carry them (the registry's C-struct layout). */
typedef struct core_ev_ep_connected_elems {
    uint32_t qpn, peer_qpn, credits;
} core_ev_ep_connected_elems_t;

typedef struct core_ev_ep_failed_elems {
    uint32_t qpn;
    int32_t cause; /* IBMSG_T_EP_FAIL_* */
} core_ev_ep_failed_elems_t;

typedef struct core_ev_rndv_elems {
    uint64_t tag, bytes;
    uint32_t id;
    int32_t role;   /* 0: the sender's side, 1: the receiver's */
    int32_t status; /* completed only: the request's status */
} core_ev_rndv_elems_t;

typedef struct core_ev_stall_begun_elems {
    uint32_t qpn;
    int32_t reason; /* IBMSG_T_STALL_* */
} core_ev_stall_begun_elems_t;

typedef struct core_ev_stall_ended_elems {
    uint64_t duration_ns;
    uint32_t qpn;
} core_ev_stall_ended_elems_t;

/* The shared receive queue's events, bound to the context. */
typedef struct core_ev_srq_elems {
    uint32_t posted; /* buffers in the queue (low: when the limit event was read; refilled: now) */
    uint32_t target; /* the buffers the queue is kept at (low: the new, grown target) */
    uint32_t count;  /* low: the limit that fired; refilled: the buffers this refill posted */
} core_ev_srq_elems_t;

/* The device's asynchronous events (core/async.c), bound to the context. */
typedef struct core_ev_device_elems {
    uint32_t id;        /* port events: the port number; qp_fatal: the queue pair's number */
    int32_t event_type; /* the device's enum ibv_event_type value */
    uint32_t affected;  /* endpoints it failed (port_active has no such element); address_changed:
                           1 when the LID or GID new queue pairs take differs now */
} core_ev_device_elems_t;

/* An endpoint's event state (in struct ibmsg_ep_s). */
typedef struct core_ep_events {
    uint64_t stall_ns;  /* a send stall is tracked since then (0: none) */
    uint8_t fail_cause; /* IBMSG_T_EP_FAIL_*, set before core_ep_fail by who knows the cause */
    uint8_t fail_due;   /* failed by a flush: core_ep_failed waits for the error's cause */
} core_ep_events_t;

/** Register the core's event types and their categories once (with its settings). */
void core_events_register(void);

/**
 * Run register_types once per process (pthread_once on *once) where events are compiled in
 * (IBMSG_CORE_EVENTS=ON); else nothing. The core's and the job layer's types register through it.
 */
void core_events_register_once(pthread_once_t *once, void (*register_types)(void));

/* The out-of-line raises, called when core_ev_on() says somebody listens. */
void core_ev_ep_connected_raise(struct ibmsg_ep_s *ep, uint32_t peer_qpn, uint32_t credits);
/** core_ep_failed with ep's fail_cause; waits (fail_due) while the cause is a flush's. */
void core_ev_ep_failed_raise(struct ibmsg_ep_s *ep);
/** A rendezvous of req on ep (role 0 send, 1 receive) started, or completed with status. */
void core_ev_rndv_raise(cnt_event_t *ev, struct ibmsg_ep_s *ep, const struct ibmsg_request_s *req,
                        int role, uint64_t bytes, int status);
/** A send is about to queue on ep: a stall begins when nothing was queued. */
void core_ev_stall_begun_raise(struct ibmsg_ep_s *ep);
/** ep's stall is tracked and its queue of sends may have drained. */
void core_ev_stall_ended_raise(struct ibmsg_ep_s *ep);
/** ev (core_ev_srq_low or core_ev_srq_refilled) of ctx's shared receive queue. */
void core_ev_srq_raise(cnt_event_t *ev, struct ibmsg_context_s *ctx, uint32_t posted,
                       uint32_t target, uint32_t count);
/** ev (core_ev_port_active, _port_down, _qp_fatal or _address_changed) from ctx's device. */
void core_ev_device_raise(cnt_event_t *ev, struct ibmsg_context_s *ctx, uint32_t id, int event_type,
                          uint32_t affected);

#ifdef __cplusplus
}
#endif

#endif
