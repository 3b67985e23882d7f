/*
 * NIC port counters: discovery of every RDMA device port under a sysfs root
 * (/sys/class/infiniband by default) and of every counter file in its ports/N/counters/ and
 * ports/N/hw_counters/ directories (the names depend on the driver: mlx5, rxe, ...), and reading
 * them through a counter source (counters/nic/source.h) whose backend is chosen at open.
 *
 * Files are opened on their first reading and then kept open, so a later reading is one pread:
 * a process never holds descriptors for counters nobody reads (a host with many HCAs would
 * otherwise run into the descriptor limit).
 *
 * Thread safety: discovery (cnt_nic_open) and cnt_nic_close are not thread safe with respect to
 * each other or to readings; readings of one port are serialised by that port's lock, so that
 * readings are folded into the totals in the order they were taken (an out-of-order fold would
 * look like the counter going backwards).
 */
#ifndef IBMSG_COUNTERS_NIC_PORT_H
#define IBMSG_COUNTERS_NIC_PORT_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <ibmsg/tool.h>

#include "counters/nic/nic_value.h"
#include "counters/nic/source.h"

#ifdef __cplusplus
extern "C" {
#endif

#define CNT_NIC_DEFAULT_ROOT "/sys/class/infiniband"
#define CNT_NIC_NAME_MAX     96 /* file names longer than this are skipped with a warning */

typedef struct cnt_nic_counter {
    char name[CNT_NIC_NAME_MAX]; /* the sysfs file name */
    bool hw;                     /* in hw_counters/ (else counters/) */
    int fd;                      /* -1 until the first reading */
    cnt_nic_value_t value;       /* protected by the port lock */
} cnt_nic_counter_t;

/* One port of one RDMA device: the object behind the public ibmsg_t_port_t handle. */
struct ibmsg_t_port_s {
    cnt_source_t source; /* ops and num_counters */
    int index;           /* position in its cnt_nic_t */
    char dev_name[CNT_NIC_NAME_MAX];
    int port_num;
    char dir[4096]; /* <root>/<dev>/ports/<n> */
    pthread_mutex_t lock;
    cnt_nic_counter_t *counters; /* source.num_counters of them, counters/ first, by name */
    bool has_hw_counters;
    int nl_fd;             /* RDMA netlink socket of the netlink backend, else -1 */
    uint32_t nl_dev_index; /* the device's index for RDMA netlink */
    uint32_t nl_seq;       /* protected by lock */
    char *nl_buf;          /* reply buffer of the netlink backend, protected by lock */
    bool *nl_seen;         /* per counter: in the last reply; protected by lock */
};

typedef struct cnt_nic {
    int num_ports;
    ibmsg_t_port_t *ports; /* by device name, then port number */
} cnt_nic_t;

/** The backend that preads one sysfs file per counter (descriptors kept open). */
extern const cnt_source_ops_t cnt_nic_pread_ops;

/**
 * The backend that reads all hw_counters of a port in one RDMA netlink RDMA_NLDEV_CMD_STAT_GET
 * request (PMA counters/ files are still pread: netlink does not carry them).
 */
extern const cnt_source_ops_t cnt_nic_netlink_ops;

/**
 * Switch port to the netlink backend. Returns IBMSG_OK, or IBMSG_ERR_NOT_SUPPORTED when the
 * kernel has no RDMA netlink or does not know the device (the port keeps the pread backend).
 * Not thread safe with readings of the port: call before the port is read.
 */
int cnt_nic_netlink_attach(ibmsg_t_port_t port);

/** One pread of counter i of port (the lock held). Shared by the backends. */
int cnt_nic_counter_pread(ibmsg_t_port_t port, int i, uint64_t *raw);

/**
 * Discover every device port under root (NULL: CNT_NIC_DEFAULT_ROOT). A root that does not exist
 * gives a set with no ports (IBMSG_OK): hosts without RDMA have none. Returns IBMSG_OK,
 * IBMSG_ERR_NO_MEMORY, or IBMSG_ERR_IO when root exists but cannot be listed.
 */
int cnt_nic_open(const char *root, cnt_nic_t **nic);
/** Close every descriptor and free the set. NULL is ignored. */
void cnt_nic_close(cnt_nic_t *nic);

/** Index of the counter with this file name in counters/ (hw false) or hw_counters/, or -1. */
int cnt_nic_port_find(const ibmsg_t_port_t port, bool hw, const char *name);

/**
 * Read counters idx[0..n) of port now and return their virtual totals (nic_value.h) in totals.
 * Returns IBMSG_OK, IBMSG_ERR_INVALID (bad index), IBMSG_ERR_IO (a file could not be read) or
 * IBMSG_ERR_NOT_SUPPORTED (a file that does not hold a number, such as "N/A (no PMA)").
 */
int cnt_nic_port_read(ibmsg_t_port_t port, int n, const int idx[], uint64_t totals[]);

/** Read every counter of port (totals[0..num_counters)) in one pass of the backend. */
int cnt_nic_port_snapshot(ibmsg_t_port_t port, uint64_t totals[]);

/**
 * The names of the counters of port that are saturated (as of their last reading), separated by
 * commas, hw_counters ones prefixed "hw_counters/", written to buf (always NUL-terminated when
 * len > 0). Returns the number of saturated counters.
 */
int cnt_nic_port_saturated(ibmsg_t_port_t port, char *buf, size_t len);

/**
 * hw_counters/lifespan: how many milliseconds the kernel caches hw_counters values (a reading
 * within that time of the previous one returns the same values). IBMSG_ERR_NOT_FOUND when the
 * port has no hw_counters/.
 */
int cnt_nic_port_lifespan(ibmsg_t_port_t port, uint64_t *ms);

/** Parse a sysfs counter file's text (decimal, optional trailing newline). */
int cnt_nic_parse_value(const char *text, size_t len, uint64_t *value);

#ifdef __cplusplus
}
#endif

#endif
