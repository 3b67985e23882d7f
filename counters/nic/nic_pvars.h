/* NIC port counters as performance variables (see nic_pvars.c for names and semantics). */
#ifndef IBMSG_COUNTERS_NIC_PVARS_H
#define IBMSG_COUNTERS_NIC_PVARS_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Register the nic_sysfs_root cvar, discover the ports under it and register their variables
 * and categories. Called by the tool interface's init; later calls do nothing and return
 * IBMSG_OK. Thread safe.
 */
int cnt_nic_pvars_register(void);

#ifdef __cplusplus
}
#endif

#endif
