/*
 * The world's performance variables: category "world", no object binding (per process).
 */
#include "world/world_counters.h"

#include <pthread.h>
#include <time.h>

#include <ibmsg/status.h>

#include "core/config.h"
#include "counters/registry/registry.h"
#include "util/log.h"

world_counters_t world_cnt;

static pthread_once_t world_counters_once = PTHREAD_ONCE_INIT;

static void world_counters_register(void)
{
    static const struct {
        const char *name;
        int var_class;
        uint64_t *value;
        const char *desc;
    } vars[] = {
        /* Values in themselves (GENERIC, LEVEL), not session-relative: a tool can only allocate
           a handle once ibmsg_world_init has registered them, and must still see the init. */
        {"world_bootstrap_time_ns", IBMSG_T_PVAR_CLASS_GENERIC, &world_cnt.bootstrap_ns,
         "nanoseconds the last ibmsg_world_init took (bootstrap, wireup and its fences)"},
        {"world_init_fence_time_ns", IBMSG_T_PVAR_CLASS_GENERIC, &world_cnt.init_fence_ns,
         "nanoseconds of the last ibmsg_world_init's data-collecting PMIx fence (0: none)"},
        {"world_endpoints", IBMSG_T_PVAR_CLASS_LEVEL, &world_cnt.eps,
         "endpoints of the world (eager: one per peer from init; on demand: those in use)"},
        {"world_fence_time_ns", IBMSG_T_PVAR_CLASS_TIMER, &world_cnt.fence_ns,
         "nanoseconds spent in PMIx fences / TCP barriers (init and ibmsg_world_barrier)"},
        {"world_fences", IBMSG_T_PVAR_CLASS_COUNTER, &world_cnt.fences,
         "fences and barriers completed"},
        {"world_endpoints_on_demand", IBMSG_T_PVAR_CLASS_COUNTER, &world_cnt.eps_on_demand,
         "endpoints created on demand (first use here, or a peer's connect request)"},
        {"world_connect_reqs_sent", IBMSG_T_PVAR_CLASS_COUNTER, &world_cnt.connect_reqs_sent,
         "connect requests sent over UD (first tries)"},
        {"world_connect_reqs_recvd", IBMSG_T_PVAR_CLASS_COUNTER, &world_cnt.connect_reqs_recvd,
         "valid connect requests received over UD"},
        {"world_connect_retries", IBMSG_T_PVAR_CLASS_COUNTER, &world_cnt.connect_retries,
         "connect requests and replies resent after a timeout (lost or slow datagrams)"},
        {"world_connect_rejected", IBMSG_T_PVAR_CLASS_COUNTER, &world_cnt.connect_rejected,
         "connect datagrams rejected (malformed, wrong rank / queue pair / nonce, errors)"},
        {"world_connect_races", IBMSG_T_PVAR_CLASS_COUNTER, &world_cnt.connect_races,
         "connect requests that crossed this process's own (simultaneous connects)"},
        {"world_connects", IBMSG_T_PVAR_CLASS_COUNTER, &world_cnt.connects,
         "connections this process requested that completed"},
        {"world_connect_time_ns", IBMSG_T_PVAR_CLASS_TIMER, &world_cnt.connect_time_ns,
         "total nanoseconds from connect request to connected (of world_connects)"},
        {"world_peers_failed", IBMSG_T_PVAR_CLASS_COUNTER, &world_cnt.peers_failed,
         "world endpoints failed: no answer to a connect request, or the launcher said the peer "
         "is gone"},
        {"world_peers_departed", IBMSG_T_PVAR_CLASS_COUNTER, &world_cnt.peers_departed,
         "world endpoints failed because the peer finalized its world (its goodbye datagram)"},
    };
    int index, ret;

    ret = core_config_world_category();
    if (ret != IBMSG_OK) {
        util_error("world: cannot register category: %s", ibmsg_status_string(ret));
        return;
    }
    for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
        cnt_pvar_desc_t pv = {
            .name = vars[i].name,
            .var_class = vars[i].var_class,
            .datatype = IBMSG_T_UNSIGNED_LONG_LONG,
            .enumtype = IBMSG_T_ENUM_NULL,
            .verbosity = IBMSG_T_VERBOSITY_USER_BASIC,
            .bind = IBMSG_T_BIND_NO_OBJECT,
            .flags = CNT_PVAR_CONTINUOUS | (vars[i].var_class == IBMSG_T_PVAR_CLASS_COUNTER ||
                                                    vars[i].var_class == IBMSG_T_PVAR_CLASS_TIMER
                                                ? 0u
                                                : (unsigned)CNT_PVAR_READONLY),
            .category = "world",
            .desc = vars[i].desc,
            .ctx = vars[i].value,
        };
        ret = cnt_pvar_register(&pv, &index);
        if (ret != IBMSG_OK) {
            util_error("world: cannot register pvar %s: %s", vars[i].name,
                       ibmsg_status_string(ret));
        }
    }
}

void world_counters_init(void)
{
    pthread_once(&world_counters_once, world_counters_register);
}

uint64_t world_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
