/*
 * The job layer's events: their registration (at load and at world init) and the out-of-line
 * raises that world_events.h's inline tests call when somebody listens.
 */
#include "world/world_events.h"

#include <pthread.h>

#include "core/core.h"
#include "world/world_counters.h"
#include "util/log.h"

cnt_event_t world_ev_connect_req_sent = CNT_EVENT_INIT;
cnt_event_t world_ev_connect_req_recvd = CNT_EVENT_INIT;
cnt_event_t world_ev_connect_race = CNT_EVENT_INIT;

/* Raised inside ibmsg calls on the world's context: no messaging from the callback. */
#define WORLD_EV_LEVEL IBMSG_T_CB_REQUIRE_MPI_RESTRICTED

static void events_register_once(void)
{
    static const cnt_enum_item_t outcomes[] = {
        {WORLD_RACE_WON, "won"},
        {WORLD_RACE_LOST, "lost"},
    };
    static const ibmsg_t_datatype_t req_types[] = {IBMSG_T_UNSIGNED, IBMSG_T_UNSIGNED,
                                                   IBMSG_T_UNSIGNED};
    static const char *const req_names[] = {"peer", "qpn", "nonce"};
    static const ibmsg_t_datatype_t race_types[] = {IBMSG_T_UNSIGNED, IBMSG_T_UNSIGNED,
                                                    IBMSG_T_UNSIGNED, IBMSG_T_INT};
    static const char *const race_names[] = {"peer", "winner", "qpn", "outcome"};
    ibmsg_t_enum_t outcome_enum = IBMSG_T_ENUM_NULL;
    int index, ret;

    ret = core_config_world_category(); /* at load: the category alone (core/config.h) */
    if (ret == IBMSG_OK) {
        ret = cnt_category_register(
            "wireup", "On-demand connections: requests over UD and their races", "world", &index);
    }
    if (ret == IBMSG_OK) {
        ret = cnt_enum_register("world_connect_race_outcomes", (int)UTIL_ARRAY_SIZE(outcomes),
                                outcomes, &outcome_enum);
    }
    if (ret != IBMSG_OK) {
        util_error("world: cannot register the events' category or enum: %s",
                   ibmsg_status_string(ret));
        return;
    }
    const struct {
        cnt_event_t *ev;
        const char *name;
        int n;
        const ibmsg_t_datatype_t *types;
        const char *const *names;
        ibmsg_t_enum_t enumtype;
        const char *desc;
    } types[] = {
        {&world_ev_connect_req_sent, "world_connect_req_sent", 3, req_types, req_names,
         IBMSG_T_ENUM_NULL,
         "An on-demand connection was asked for: the first connect request to the peer rank "
         "went out (not its resends)"},
        {&world_ev_connect_req_recvd, "world_connect_req_recvd", 3, req_types, req_names,
         IBMSG_T_ENUM_NULL,
         "A peer rank's connect request was taken: answered, or held because ours crossed it and "
         "wins (once per request, not for its resends)"},
        {&world_ev_connect_race, "world_connect_race", 4, race_types, race_names, outcome_enum,
         "Both ranks asked each other at once: the lower rank's request makes the one "
         "connection (outcome won: ours, lost: the peer's)"},
    };
    for (size_t i = 0; i < UTIL_ARRAY_SIZE(types); i++) {
        cnt_event_desc_t d = {
            .name = types[i].name,
            .verbosity = IBMSG_T_VERBOSITY_USER_DETAIL,
            .bind = IBMSG_T_BIND_ENDPOINT,
            .num_elements = types[i].n,
            .datatypes = types[i].types,
            .element_names = types[i].names,
            .enumtype = types[i].enumtype,
            .source = 0,
            .category = "wireup",
            .desc = types[i].desc,
        };
        ret = cnt_event_register(&d, types[i].ev);
        if (ret != IBMSG_OK) {
            util_error("world: cannot register %s: %s", types[i].name, ibmsg_status_string(ret));
        }
    }
}

void world_events_register(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    core_events_register_once(&once, events_register_once);
}

/* At load too: a tool that starts with the process finds the types before the world exists. */
__attribute__((constructor)) static void world_events_at_load(void)
{
    world_events_register();
}

void world_ev_req_raise(cnt_event_t *ev, ibmsg_ep_t ep, uint32_t peer, uint32_t nonce)
{
    world_ev_req_elems_t e = {.peer = peer, .qpn = ep->qpn, .nonce = nonce};
    cnt_event_raise(ev, ep, &e, WORLD_EV_LEVEL);
}

void world_ev_race_raise(ibmsg_ep_t ep, uint32_t peer, uint32_t winner, int outcome)
{
    world_ev_race_elems_t e = {.peer = peer, .winner = winner, .qpn = ep->qpn, .outcome = outcome};
    cnt_event_raise(&world_ev_connect_race, ep, &e, WORLD_EV_LEVEL);
}
