/*
 * The device's asynchronous events (SRQ limit, QP and CQ errors, port changes), read without
 * blocking: the context's progress reads them when they matter, so nothing waits on the file
 * descriptor and every event is acknowledged before a QP is destroyed (on hardware ibv_destroy_qp
 * waits for that).
 */
#ifndef IBMSG_VERBS_ASYNC_H
#define IBMSG_VERBS_ASYNC_H

#include <stdint.h>

#include "verbs/device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum verbs_async_type {
    VERBS_ASYNC_OTHER = 0,    /* informational (port, COMM_EST, ...) */
    VERBS_ASYNC_SRQ_LIMIT,    /* fewer receives posted than the armed limit (one-shot) */
    VERBS_ASYNC_SRQ_ERR,      /* the SRQ failed */
    VERBS_ASYNC_QP_FATAL,     /* a QP failed: qpn names it */
    VERBS_ASYNC_QP_LAST_WQE,  /* a QP on an SRQ in error took its last receive: qpn names it */
    VERBS_ASYNC_CQ_ERR,       /* a CQ overran or failed */
    VERBS_ASYNC_PORT_DOWN,    /* a port left the ACTIVE state: port names it */
    VERBS_ASYNC_PORT_UP,      /* a port became ACTIVE: port names it */
    VERBS_ASYNC_DEVICE_FATAL, /* the device failed: nothing on it works any more */
    VERBS_ASYNC_ADDRESS,      /* a port's GID table or LID changed: port names it */
} verbs_async_type_t;

typedef struct verbs_async_event {
    verbs_async_type_t type;
    uint32_t qpn; /* the QP events */
    int port;     /* the port events */
    int raw;      /* the enum ibv_event_type, for the log */
} verbs_async_event_t;

/**
 * Read and acknowledge every event pending on the device's fd, route each to the context(s) it
 * concerns (verbs/hca.c: a shared device has one fd for all its contexts), and take the next
 * one routed to dev: 1 (ev filled), 0 when none waits for dev, or an error. A read() syscall and
 * the device's lock: callers gate it (verbs_dev_async_waiting).
 */
int verbs_dev_poll_async(verbs_dev_t *dev, verbs_async_event_t *ev);

struct ibv_async_event;

/**
 * Events routed to dev and not yet taken by verbs_dev_poll_async, non-zero when some wait: read
 * it with a relaxed atomic load (another member's thread may route one at any time, and wakes
 * dev's wake fd when it does). The address stays valid until verbs_dev_close.
 */
const uint32_t *verbs_dev_async_waiting(const verbs_dev_t *dev);

/** The eventfd another member's thread writes after routing an event to dev (-1: none). */
void verbs_dev_set_wake_fd(verbs_dev_t *dev, int fd);

/**
 * Test-only: route e as if dev's thread had read it from the device (verbs/hca.c: to the
 * object's context, or to every context of the device for a port or device event). Each
 * context takes it with its next verbs_dev_poll_async.
 */
void verbs_dev_async_route(verbs_dev_t *dev, const struct ibv_async_event *e);

/** ev from an event as libibverbs reports it (the QP events name e's element.qp). */
void verbs_async_translate(const struct ibv_async_event *e, verbs_async_event_t *ev);

/** The text of an event's raw type (never NULL). */
const char *verbs_async_string(const verbs_async_event_t *ev);

#ifdef __cplusplus
}
#endif

#endif
