/* Wiring of the built-in counter sources into the registry: see builtin.h. */
#include "counters/builtin.h"

#include <pthread.h>

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include "counters/nic/nic_pvars.h"
#include "counters/papi/papi_pvars.h"
#include "counters/papi/papi_sde.h"
#include "counters/papi/papi_source.h"
#include "counters/registry/registry.h"
#include "counters/shards/shard.h"
#include "counters/shards/shard_vars.h"
#include "util/log.h"

/* The registry's sessions, handles and reads, counted on the shards with every other counter. */
static void meter_sessions(int delta)
{
    if (delta > 0) {
        cnt_level_inc(cnt_shard_get(), CNT_TOOL_SESSIONS_ALIVE);
    } else {
        cnt_level_dec(cnt_shard_get(), CNT_TOOL_SESSIONS_ALIVE);
    }
}

static void meter_handles(int delta)
{
    if (delta > 0) {
        cnt_level_inc(cnt_shard_get(), CNT_TOOL_HANDLES_ALIVE);
        cnt_inc(cnt_shard_get(), CNT_TOOL_HANDLE_ALLOCS);
    } else {
        cnt_level_dec(cnt_shard_get(), CNT_TOOL_HANDLES_ALIVE);
    }
}

/* One load and a branch unless a handle of tool_pvar_read_time runs. */
static uint64_t meter_read_start(void)
{
    return cnt_timer_start(CNT_TOOL_PVAR_READ_TIME);
}

static void meter_read_stop(uint64_t start)
{
    /* The shard (a TLS lookup) is fetched only when the timer runs. */
    cnt_timer_stop(cnt_shard_get(), CNT_TOOL_PVAR_READ_TIME, start);
}

static const cnt_registry_meters_t builtin_meters = {
    .sessions = meter_sessions,
    .handles = meter_handles,
    .read_start = meter_read_start,
    .read_stop = meter_read_stop,
};

static pthread_once_t builtin_once = PTHREAD_ONCE_INIT;

static void builtin_wire(void)
{
    cnt_registry_set_meters(&builtin_meters);
    cnt_shard_set_thread_hook(cnt_papi_thread_begins);
    cnt_shard_vars_register();
}

void cnt_builtin_init(void)
{
    pthread_once(&builtin_once, builtin_wire);
}

/* At load, so that the shard variables come first, whoever registers next. */
__attribute__((constructor)) static void builtin_load(void)
{
    cnt_builtin_init();
}

/* NIC and PAPI variables: registered at the first init, never at library load. A source that
   fails is logged and left out (the tool interface works without it). */
static void builtin_sources_register(void)
{
    int ret = cnt_nic_pvars_register();

    if (ret != IBMSG_OK) {
        util_error("tool: NIC port counters are not available: %s", ibmsg_status_string(ret));
    }
    /* Idempotent (also done at load); without libsde there is nothing to say. */
    cnt_papi_sde_register();
    ret = cnt_papi_pvars_register();
    if (ret != IBMSG_OK) {
        util_error("tool: PAPI variables are not available: %s", ibmsg_status_string(ret));
    }
}

static void (*builtin_client_register)(void);

void cnt_builtin_set_client_register(void (*register_vars)(void))
{
    builtin_client_register = register_vars;
}

int ibmsg_t_init_thread(int required, int *provided)
{
    if (provided == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_builtin_init();
    builtin_sources_register();
    if (builtin_client_register != NULL) {
        builtin_client_register();
    }
    return cnt_registry_init_thread(required, provided);
}
