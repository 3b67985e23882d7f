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
 * Read and acknowledge one pending event: 1 (ev filled), 0 when none is pending, or an error.
 * One read() syscall: callers gate it.
 */
int verbs_dev_poll_async(verbs_dev_t *dev, verbs_async_event_t *ev);

struct ibv_async_event;

/** ev from an event as libibverbs reports it (the QP events name e's element.qp). */
void verbs_async_translate(const struct ibv_async_event *e, verbs_async_event_t *ev);

/** The text of an event's raw type (never NULL). */
const char *verbs_async_string(const verbs_async_event_t *ev);

#ifdef __cplusplus
}
#endif

#endif
