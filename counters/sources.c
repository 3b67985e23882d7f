/* Registration of the counter sources' variables at the tool interface's init: see sources.h. */
#include "counters/sources.h"

#include <ibmsg/status.h>

#include "counters/nic_pvars.h"
#include "counters/papi_pvars.h"
#include "counters/papi_sde.h"
#include "util/log.h"

void cnt_sources_register(void)
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
