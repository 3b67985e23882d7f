/*
 * Handles on the variables bound to NIC ports, on every port that has them: the one walk --read
 * and --watch share. ibmsg's own tool API only: through MPI_T (--mpit) the layer serves one
 * variable bound to no object per port instead.
 */
#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include <stdio.h>

#include "browser/pvars.h"

int pvars_port_handles(pvars_state_t *st, ibmsg_t_pvar_session_t session, pvars_port_fn fn,
                       void *arg)
{
    int num_ports = 0;
    int rc = ibmsg_t_port_get_num(&num_ports);

    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_port_get_num");
    }
    for (int p = 0; p < num_ports; p++) {
        ibmsg_t_port_t port;
        char dev[64], where[96];
        int len = sizeof(dev), port_num = 0;

        rc = ibmsg_t_port_get(p, &port);
        if (rc == IBMSG_OK) {
            rc = ibmsg_t_port_get_info(port, dev, &len, &port_num);
        }
        if (rc != IBMSG_OK) {
            return pvars_fail(rc, "ibmsg_t_port_get(%d)", p);
        }
        snprintf(where, sizeof(where), "%s/%d", dev, port_num);
        for (int i = 0; i < st->num_pvars; i++) {
            ibmsg_t_pvar_handle_t handle = IBMSG_T_PVAR_HANDLE_NULL;
            int count = 0;

            /* Binding to a port without that counter fails: the variable is not on that port. */
            if (st->pvars[i].bind != IBMSG_T_BIND_PORT ||
                ibmsg_t_pvar_handle_alloc(session, i, &port, &handle, &count) != IBMSG_OK) {
                continue;
            }
            rc = fn(st, i, where, handle, count, arg);
            if (rc != IBMSG_OK) {
                return rc;
            }
        }
    }
    return IBMSG_OK;
}
