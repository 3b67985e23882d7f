/* Registration of the counter sources' variables at the tool interface's init: see sources.h. */
#include "counters/sources.h"

#include <ibmsg/status.h>

#include "counters/nic_pvars.h"
#include "counters/papi_pvars.h"
#include "util/log.h"

void cnt_sources_register(void)
{
    int ret = cnt_nic_pvars_register();

    if (ret != IBMSG_OK) {
        util_error("tool: NIC port counters are not available: %s", ibmsg_status_string(ret));
    }
    ret = cnt_papi_pvars_register();
    if (ret != IBMSG_OK) {
        util_error("tool: PAPI variables are not available: %s", ibmsg_status_string(ret));
    }
}
