/*
 * Which port a context opens when no port is named: a pure function over what the search found
 * (verbs/device.c fills it from the devices, their GID tables and sysfs), so that the rules can
 * be tested with any set of devices.
 *
 * A port is usable when it is ACTIVE, its device speaks InfiniBand transport (IB or RoCE: iWARP
 * devices such as irdma in iWARP mode refuse SEND_WITH_IMM, which the compact eager messages
 * use; efa and usNIC have no RC queue pairs) and, on Ethernet, it has the GID asked for (a RoCE
 * v2 GID by default). Among usable ports the first one on the NUMA node of the calling thread
 * wins (a dual-HCA node: the HCA near the thread's memory), else the first one in the device
 * list's order. The search never stops at a port that does not fit.
 */
#ifndef IBMSG_VERBS_DEV_RANK_H
#define IBMSG_VERBS_DEV_RANK_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The transport of a device (ibv_transport_type, as far as selection cares). */
enum {
    VERBS_TRANSPORT_IB = 0,    /* InfiniBand and RoCE */
    VERBS_TRANSPORT_IWARP = 1, /* no SEND_WITH_IMM */
    VERBS_TRANSPORT_OTHER = 2, /* efa, usNIC: no RC queue pairs */
};

/* One port found by the search. */
typedef struct verbs_port_desc {
    const char *device; /* its device's name */
    unsigned port;      /* 1-based */
    int active;         /* IBV_PORT_ACTIVE */
    int transport;      /* VERBS_TRANSPORT_* */
    int ethernet;       /* RoCE link layer */
    int gid_index;      /* the GID selection found (Ethernet: -1 none), or -1 on IB */
    int numa_node;      /* the device's NUMA node, -1 when unknown */
} verbs_port_desc_t;

/**
 * The index of the port to open among n, or -1 when none is usable. cpu_node is the NUMA node
 * of the calling thread (-1 unknown). why (n entries, may be NULL) receives, for each port, NULL
 * when usable or a static reason why not.
 */
int verbs_port_rank(const verbs_port_desc_t *ports, size_t n, int cpu_node, const char **why);

#ifdef __cplusplus
}
#endif

#endif
