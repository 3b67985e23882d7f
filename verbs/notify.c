/* Completion notification through the device's channel (see notify.h). */
#include "verbs/notify.h"

#include <errno.h>
#include <string.h>

#include <ibmsg/status.h>

#include "util/log.h"
#include "verbs/verbs_priv.h"

/* Events acknowledged at once: ibv_ack_cq_events takes a mutex, so not one by one. */
#define NOTIFY_ACK_BATCH 64

int verbs_dev_comp_fd(const verbs_dev_t *dev)
{
    return dev->chan->fd;
}

int verbs_dev_async_fd(const verbs_dev_t *dev)
{
    return dev->ctx->async_fd;
}

void verbs_cq_notify_ack(verbs_cq_notify_t *n)
{
    if (n->unacked > 0) {
        ibv_ack_cq_events(n->cq, n->unacked);
        n->unacked = 0;
    }
}

int verbs_dev_comp_drain(verbs_dev_t *dev)
{
    struct ibv_cq *cq;
    void *cq_ctx;
    int count = 0;

    /* The fd is non-blocking (verbs_dev_open): EAGAIN means nothing is pending. */
    while (ibv_get_cq_event(dev->chan, &cq, &cq_ctx) == 0) {
        verbs_cq_notify_t *n = cq_ctx;

        n->armed = 0; /* an event is one-shot */
        if (++n->unacked >= NOTIFY_ACK_BATCH) {
            verbs_cq_notify_ack(n);
        }
        count++;
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
        util_error("%s: ibv_get_cq_event failed: %s", dev->info.name, strerror(errno));
        return verbs_errno_status(errno);
    }
    return count;
}

static int notify_arm(verbs_cq_notify_t *n, const char *dev)
{
    int ret = ibv_req_notify_cq(n->cq, 0);

    if (ret != 0) {
        util_error("%s: ibv_req_notify_cq failed: %s", dev, strerror(ret));
        return verbs_errno_status(ret);
    }
    n->armed = 1;
    return IBMSG_OK;
}

int verbs_cq_arm(verbs_cq_t *cq)
{
    return notify_arm(&cq->notify, cq->dev->info.name);
}

int verbs_ud_arm(verbs_ud_t *ud)
{
    return notify_arm(verbs_ud_notify(ud), "ud");
}
