/*
 * Which backend reads a NIC port's counters: the control variable nic_backend (environment
 * IBMSG_NIC_BACKEND), read once when the ports are discovered (the tool interface's first init).
 *
 *   sysfs    one pread per counter file (descriptors kept open): works everywhere, including a
 *            fixture directory given as nic_sysfs_root.
 *   netlink  all hw_counters of a port in one RDMA netlink RDMA_NLDEV_CMD_STAT_GET request
 *            (counters/ PMA files are still pread: netlink does not carry them). Only for the
 *            real /sys/class/infiniband: netlink reads the kernel's devices, not a directory.
 *   auto     (default) netlink for a port that has hw_counters when the root is the real one and
 *            the kernel's RDMA netlink knows the device; sysfs otherwise.
 *
 * Cost (perf/bench/bench_hwcounters in the Soft-RoCE guest, rxe0, 15 hw_counters; medians of 21
 * repetitions, three runs on a loaded 2-core host under TCG): a whole-port snapshot took
 * 52 / 230 / 57 us by pread and 60 / 215 / 42 us by netlink (one message, checked with strace),
 * so under emulation the two are within the noise; a one-counter read is one pread with either
 * backend (the netlink backend preads single files: cheaper than a message). Netlink is chosen by
 * auto because its cost does not grow with the number of counters (an mlx5 port has dozens of
 * hw_counters) and its snapshot is one kernel query, as close to one instant as it gets.
 *
 * A port that cannot use netlink keeps sysfs (logged at info when netlink was asked for).
 */
#ifndef IBMSG_COUNTERS_NIC_BACKEND_H
#define IBMSG_COUNTERS_NIC_BACKEND_H

#include "counters/nic/nic_port.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum cnt_nic_backend {
    CNT_NIC_BACKEND_AUTO,
    CNT_NIC_BACKEND_SYSFS,
    CNT_NIC_BACKEND_NETLINK,
    CNT_NIC_BACKEND_LAST,
} cnt_nic_backend_t;

/** Parse "auto", "sysfs" or "netlink". Returns IBMSG_OK or IBMSG_ERR_INVALID. */
int cnt_nic_backend_parse(const char *name, cnt_nic_backend_t *backend);

/**
 * Register the nic_backend cvar (category nic), an INT of the enumeration nic_backends (auto,
 * sysfs, netlink: the values of cnt_nic_backend_t); the environment is applied here, by name.
 */
int cnt_nic_backend_register(void);

/** The backend asked for (the cvar's value). */
cnt_nic_backend_t cnt_nic_backend_wanted(void);

/**
 * Give every port of nic the backend asked for, where it works (see above); root is the sysfs
 * root the ports were discovered under. Freezes the cvar. Returns IBMSG_OK (a port that cannot
 * use netlink keeps sysfs) or IBMSG_ERR_NO_MEMORY.
 */
int cnt_nic_backend_apply(cnt_nic_t *nic, const char *root);

#ifdef __cplusplus
}
#endif

#endif
