/*
 * Completion notification: every CQ of a device reports to the device's one completion channel,
 * so a sleeper watches one file descriptor for all of them. A CQ is armed (verbs_cq_arm), its
 * next completion puts an event on the channel, and the event is read and acknowledged here.
 * The channel's fd is non-blocking: reading never waits, so progress may drain it.
 */
#ifndef IBMSG_VERBS_NOTIFY_H
#define IBMSG_VERBS_NOTIFY_H

#include "verbs/cq.h"
#include "verbs/device.h"
#include "verbs/ud.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The completion channel's fd: readable while an event of an armed CQ waits to be read. */
int verbs_dev_comp_fd(const verbs_dev_t *dev);

/** The device's asynchronous event fd (non-blocking; read with verbs_dev_poll_async). */
int verbs_dev_async_fd(const verbs_dev_t *dev);

/**
 * Read every event waiting on the completion channel (one read() each, none blocks) and
 * acknowledge them in batches. Returns how many were read, or an error.
 */
int verbs_dev_comp_drain(verbs_dev_t *dev);

/** Ask for an event at the CQ's next completion (any kind). IBMSG_OK or an error (logged). */
int verbs_cq_arm(verbs_cq_t *cq);

/** The same for the CQ of a UD queue pair. */
int verbs_ud_arm(verbs_ud_t *ud);

#ifdef __cplusplus
}
#endif

#endif
