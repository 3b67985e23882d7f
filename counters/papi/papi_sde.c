/* ibmsg's software counters as PAPI software-defined events: see papi_sde.h. */
#include "counters/papi/papi_sde.h"

#include <pthread.h>
#include <stdint.h>

#include <ibmsg/status.h>
#include "ibmsg_config.h"

#include "counters/shards/shard.h"
#include "util/log.h"

#if IBMSG_HAVE_SDE
#include <sde_lib.h>

static pthread_once_t cnt_papi_sde_once = PTHREAD_ONCE_INIT;
static bool cnt_papi_sde_done;

/* Merge on read: the counter summed over every shard, as a NO_OBJECT pvar reads it. */
static long long cnt_papi_sde_read_cb(void *param)
{
    return (long long)cnt_read(NULL, (cnt_id_t)(intptr_t)param, CNT_READ_VALUE);
}

static void cnt_papi_sde_register_once(void)
{
    papi_handle_t h = papi_sde_init("ibmsg");
    int failed = 0;

    if (h == NULL) {
        util_warn("papi sde: papi_sde_init(\"ibmsg\") failed: no sde:::ibmsg:: events");
        return;
    }
#define CNT_SDE_MODE_COUNTER  PAPI_SDE_DELTA
#define CNT_SDE_MODE_TIMER    PAPI_SDE_DELTA
#define CNT_SDE_MODE_LEVEL    PAPI_SDE_INSTANT
#define CNT_SDE_MODE_LEVEL_WM PAPI_SDE_INSTANT
#define CNT_SDE_REGISTER(id, name, kind, owner, verbosity, category, desc)       \
    if (papi_sde_register_counter_cb(h, name, PAPI_SDE_RO | CNT_SDE_MODE_##kind, \
                                     PAPI_SDE_long_long, cnt_papi_sde_read_cb,   \
                                     (void *)(intptr_t)CNT_##id) != 0) {         \
        failed++;                                                                \
    }
    /*
     * No papi_sde_describe_counter: libsde 7.0 leaks a copy of the full name per description
     * (found with AddressSanitizer), which would fail every leak-checked program linking ibmsg.
     * The pvar of the same name carries the description.
     */
    CNT_COUNTER_TABLE(CNT_SDE_REGISTER)
#undef CNT_SDE_REGISTER
    if (failed > 0) {
        util_warn("papi sde: %d counters could not be registered as sde:::ibmsg:: events", failed);
    }
    __atomic_store_n(&cnt_papi_sde_done, true, __ATOMIC_RELEASE);
}

int cnt_papi_sde_register(void)
{
    pthread_once(&cnt_papi_sde_once, cnt_papi_sde_register_once);
    return cnt_papi_sde_registered() ? IBMSG_OK : IBMSG_ERR_NOT_SUPPORTED;
}

bool cnt_papi_sde_registered(void)
{
    return __atomic_load_n(&cnt_papi_sde_done, __ATOMIC_ACQUIRE);
}

/* At load, so that a PAPI tool finds the events without ibmsg's tool interface being used. */
__attribute__((constructor)) static void cnt_papi_sde_load(void)
{
    cnt_papi_sde_register();
}
#else
int cnt_papi_sde_register(void)
{
    return IBMSG_ERR_NOT_SUPPORTED;
}

bool cnt_papi_sde_registered(void)
{
    return false;
}
#endif
