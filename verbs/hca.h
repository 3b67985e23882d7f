/*
 * Private to verbs/: one opened device per process, shared by the contexts that choose it (see
 * hca.c). verbs_dev_open and verbs_dev_close are its only callers, apart from the async events'
 * reading and routing (verbs_dev_poll_async).
 */
#ifndef IBMSG_VERBS_HCA_H
#define IBMSG_VERBS_HCA_H

#include "verbs/verbs_priv.h"

/**
 * A reference to ibdev opened: the table's (share: 1) when a context of the process has it open
 * already, else opened now (its ibv_context, a protection domain, a non-blocking async fd), and
 * entered in the table when share is 1. Thread-safe. Returns a status, logged.
 */
int verbs_hca_acquire(struct ibv_device *ibdev, int share, verbs_hca_t **hca_p);

/** Drop a reference of verbs_hca_acquire's: the last one deallocates the PD and closes it. */
void verbs_hca_put(verbs_hca_t *hca);

/** dev (its hca set) becomes a member: async events are routed to it from now on. */
void verbs_hca_join(verbs_dev_t *dev);

/** dev stops being a member (its inbox is dropped) and its reference is put. */
void verbs_hca_leave(verbs_dev_t *dev);

/** verbs_mw_probe's result for the device, probed through dev once per device. */
int verbs_hca_mw_probe(verbs_dev_t *dev);

#endif
