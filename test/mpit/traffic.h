/*
 * ibmsg traffic for the MPI_T traffic tool (mpit_traffic.c), which is written against <mpi.h>
 * only: this header names no ibmsg type. One context with two endpoints connected to each other
 * in this process (both on the first RDMA device, rxe0 in the guest).
 */
#ifndef IBMSG_TEST_MPIT_TRAFFIC_H
#define IBMSG_TEST_MPIT_TRAFFIC_H

#include <stddef.h>

/** Open the context and connect the endpoints: 0, TRAFFIC_NO_DEVICE, or -1 (printed). */
#define TRAFFIC_NO_DEVICE 1
int traffic_open(void);

/** Send n tagged messages of len bytes (at most the eager limit) one way, each received. */
int traffic_run(int n, size_t len);

/** Destroy what traffic_open made. */
void traffic_close(void);

#endif
