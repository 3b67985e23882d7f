/*
 * The job layer's events (include/ibmsg/tool.h, "Events of the job layer", lists them with their
 * elements): the on-demand connection manager's requests and races (world/wireup.c). Each is a
 * cnt_event_t tested inline with the core's core_ev_on(), so they cost what the core's cost (one
 * load and a predictable branch nobody listening) and compile out with them
 * (-DIBMSG_CORE_EVENTS=OFF).
 *
 * Every event is bound to the endpoint to the peer rank and raised by the thread making progress
 * on the world's context (the request sent: the thread in ibmsg_world_ep), inside the ibmsg call,
 * at IBMSG_T_CB_REQUIRE_MPI_RESTRICTED.
 */
#ifndef IBMSG_WORLD_WORLD_EVENTS_H
#define IBMSG_WORLD_WORLD_EVENTS_H

#include <stdint.h>

#include "core/core_events.h"

#ifdef __cplusplus
extern "C" {
#endif

extern cnt_event_t world_ev_connect_req_sent;
extern cnt_event_t world_ev_connect_req_recvd;
extern cnt_event_t world_ev_connect_race;

/* A race's outcome for the side that raises it (enum world_connect_race_outcomes). */
enum { WORLD_RACE_WON = 0, WORLD_RACE_LOST = 1 };

/* The elements of the request events as their instances carry them. */
typedef struct world_ev_req_elems {
    uint32_t peer;  /* the other rank */
    uint32_t qpn;   /* our endpoint's queue pair */
    uint32_t nonce; /* the handshake's number, the requester's */
} world_ev_req_elems_t;

typedef struct world_ev_race_elems {
    uint32_t peer;   /* the other rank */
    uint32_t winner; /* the rank whose request makes the connection: the lower one */
    uint32_t qpn;    /* our endpoint's queue pair (the one connection either way) */
    int32_t outcome; /* WORLD_RACE_WON or WORLD_RACE_LOST */
} world_ev_race_elems_t;

/** Register the world's event types and their category once (at load and at world init). */
void world_events_register(void);

/* The out-of-line raises, called when core_ev_on() says somebody listens. */
void world_ev_req_raise(cnt_event_t *ev, struct ibmsg_ep_s *ep, uint32_t peer, uint32_t nonce);
void world_ev_race_raise(struct ibmsg_ep_s *ep, uint32_t peer, uint32_t winner, int outcome);

#ifdef __cplusplus
}
#endif

#endif
