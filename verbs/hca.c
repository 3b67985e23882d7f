/*
 * Devices shared by the contexts of a process. A context per thread is the fast path, and each
 * used to open its own ibv_context: on mlx5 that is UAR pages and doorbells per context (and
 * some sites cap contexts per process), a protection domain each, and registrations that could
 * not be shared. Contexts that choose the same device now share one ibv_context and protection
 * domain (as UCX's workers share one memory domain per device); what a context drives alone
 * stays its own (completion channel, CQs, QPs, SRQ, buffers: verbs_dev_t). verbs_share_device 0
 * keeps one device per context. Opening and closing are not hot paths: one mutex for the table.
 *
 * The device has one async event fd. Whichever member's thread reads it (under the device's
 * lock) routes each event to the member(s) it concerns: a QP's, CQ's or SRQ's to the context
 * that created the object (its qp_context, cq_context's owner, srq_context), a port's or the
 * device's to every member, once each. Each member has an inbox; a member other than the reader
 * is woken through its wake fd, and its progress finds the inbox by one relaxed load of its
 * count (verbs_dev_async_waiting), so a context with nothing pending takes no lock.
 */
#include "verbs/hca.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ibmsg/status.h>

#include "util/fork_locks.h"
#include "util/log.h"
#include "verbs/mw.h"

static pthread_mutex_t hca_table_lock = PTHREAD_MUTEX_INITIALIZER;
UTIL_FORK_LOCK(UTIL_FORK_LOCK_HCA_TABLE, hca_table_lock, 0)
static verbs_hca_t *hca_table; /* the shared ones, under hca_table_lock */
static uint64_t hca_opens;     /* ibv_open_device of a context's device, ever */

static int hca_open(struct ibv_device *ibdev, verbs_hca_t **hca_p)
{
    const char *name = ibv_get_device_name(ibdev);
    verbs_hca_t *hca = calloc(1, sizeof(*hca));
    int status, fl;

    if (hca == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    snprintf(hca->name, sizeof(hca->name), "%s", name);
    hca->mw_status = 1;
    hca->pid = getpid();
    hca->ctx = ibv_open_device(ibdev);
    if (hca->ctx == NULL) {
        util_error("%s: cannot open: %s", name, strerror(errno));
        free(hca);
        return IBMSG_ERR_NO_DEVICE;
    }
    hca->pd = ibv_alloc_pd(hca->ctx);
    if (hca->pd == NULL) {
        status = verbs_errno_status(errno);
        util_error("%s: ibv_alloc_pd failed: %s", name, strerror(errno));
        goto err_close;
    }
    /* Events are read from progress (verbs/async.h), which must never block on them. */
    fl = fcntl(hca->ctx->async_fd, F_GETFL);
    if (fl < 0 || fcntl(hca->ctx->async_fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        status = verbs_errno_status(errno);
        util_error("%s: the async event fd cannot be made non-blocking: %s", name, strerror(errno));
        goto err_dealloc;
    }
    pthread_mutex_init(&hca->lock, NULL);
    hca_opens++;
    *hca_p = hca;
    return IBMSG_OK;

err_dealloc:
    ibv_dealloc_pd(hca->pd);
err_close:
    ibv_close_device(hca->ctx);
    free(hca);
    return status;
}

int verbs_hca_acquire(struct ibv_device *ibdev, int share, verbs_hca_t **hca_p)
{
    const char *name = ibv_get_device_name(ibdev);
    verbs_hca_t *hca = NULL;
    int status = IBMSG_OK;

    pthread_mutex_lock(&hca_table_lock);
    /* A forked child inherits the table, but the parent's ibv_context is not the child's to use
       (the kernel refuses its commands with EACCES): the child opens the device again. */
    for (hca = share ? hca_table : NULL; hca != NULL; hca = hca->next) {
        if (strcmp(hca->name, name) == 0 && hca->pid == getpid()) {
            break;
        }
    }
    if (hca == NULL) {
        status = hca_open(ibdev, &hca);
        if (status == IBMSG_OK && share) {
            hca->shared = 1;
            hca->next = hca_table;
            hca_table = hca;
        }
    }
    if (status == IBMSG_OK) {
        hca->refs++;
        *hca_p = hca;
    }
    pthread_mutex_unlock(&hca_table_lock);
    return status;
}

void verbs_hca_put(verbs_hca_t *hca)
{
    int last;

    pthread_mutex_lock(&hca_table_lock);
    last = --hca->refs == 0;
    if (last && hca->shared) {
        verbs_hca_t **p = &hca_table;
        while (*p != hca) {
            p = &(*p)->next;
        }
        *p = hca->next;
    }
    pthread_mutex_unlock(&hca_table_lock);
    if (!last) {
        return;
    }
    if (ibv_dealloc_pd(hca->pd) != 0) {
        util_warn("%s: ibv_dealloc_pd failed: %s (resources still in use)", hca->name,
                  strerror(errno));
    }
    ibv_close_device(hca->ctx);
    pthread_mutex_destroy(&hca->lock);
    free(hca);
}

void verbs_hca_join(verbs_dev_t *dev)
{
    verbs_hca_t *hca = dev->hca;

    pthread_mutex_lock(&hca->lock);
    dev->next_member = hca->members;
    hca->members = dev;
    pthread_mutex_unlock(&hca->lock);
}

void verbs_hca_leave(verbs_dev_t *dev)
{
    verbs_hca_t *hca = dev->hca;
    verbs_dev_t **p;

    pthread_mutex_lock(&hca->lock);
    for (p = &hca->members; *p != NULL && *p != dev; p = &(*p)->next_member) {
    }
    if (*p == dev) {
        *p = dev->next_member;
    }
    if (dev->inbox_n != 0) {
        util_debug("%s: %u async event(s) of a closing context dropped", hca->name, dev->inbox_n);
    }
    free(dev->inbox);
    dev->inbox = NULL;
    __atomic_store_n(&dev->inbox_n, 0, __ATOMIC_RELAXED);
    pthread_mutex_unlock(&hca->lock);
    verbs_hca_put(hca);
}

int verbs_hca_mw_probe(verbs_dev_t *dev)
{
    int status;

    pthread_mutex_lock(&dev->hca->lock);
    if (dev->hca->mw_status == 1) {
        dev->hca->mw_status = verbs_mw_probe(dev);
    }
    status = dev->hca->mw_status;
    pthread_mutex_unlock(&dev->hca->lock);
    return status;
}

/* The member that created the event's object: NULL for the device's and ports' events (every
   member), or one whose object it is not known to be (the reader's then). */
static verbs_dev_t *event_owner(const verbs_hca_t *hca, const struct ibv_async_event *e,
                                verbs_dev_t *reader)
{
    void *owner;

    switch (e->event_type) {
    case IBV_EVENT_QP_FATAL:
    case IBV_EVENT_QP_REQ_ERR:
    case IBV_EVENT_QP_ACCESS_ERR:
    case IBV_EVENT_COMM_EST:
    case IBV_EVENT_SQ_DRAINED:
    case IBV_EVENT_PATH_MIG:
    case IBV_EVENT_PATH_MIG_ERR:
    case IBV_EVENT_QP_LAST_WQE_REACHED:
        owner = e->element.qp->qp_context;
        break;
    case IBV_EVENT_CQ_ERR:
        owner = e->element.cq->cq_context != NULL
                    ? ((const verbs_cq_notify_t *)e->element.cq->cq_context)->owner
                    : NULL;
        break;
    case IBV_EVENT_SRQ_ERR:
    case IBV_EVENT_SRQ_LIMIT_REACHED:
        owner = e->element.srq->srq_context;
        break;
    case IBV_EVENT_WQ_FATAL:
        return reader;
    default:
        return NULL; /* port, GID, LID, P_Key, SM, client re-register, device fatal */
    }
    for (verbs_dev_t *m = hca->members; m != NULL; m = m->next_member) {
        if (m == owner) {
            return m;
        }
    }
    return reader; /* an object of no context's (the window probe's) */
}

static void inbox_push(verbs_dev_t *m, const verbs_async_event_t *ev)
{
    if (m->inbox_n == m->inbox_cap) {
        uint32_t cap = m->inbox_cap != 0 ? 2 * m->inbox_cap : 8;
        verbs_async_event_t *p = realloc(m->inbox, cap * sizeof(*p));
        if (p == NULL) {
            util_error("%s: no memory for an async event (%s): lost", m->info.name,
                       verbs_async_string(ev));
            return;
        }
        m->inbox = p;
        m->inbox_cap = cap;
    }
    m->inbox[m->inbox_n] = *ev;
    __atomic_store_n(&m->inbox_n, m->inbox_n + 1, __ATOMIC_RELAXED);
}

/* Route e (read from the fd by reader's thread, or injected) to its member(s). Under the lock. */
static void hca_route(verbs_hca_t *hca, verbs_dev_t *reader, const struct ibv_async_event *e)
{
    verbs_dev_t *owner = event_owner(hca, e, reader);
    verbs_async_event_t ev;
    uint64_t one = 1;

    verbs_async_translate(e, &ev);
    for (verbs_dev_t *m = hca->members; m != NULL; m = m->next_member) {
        if (owner != NULL && m != owner) {
            continue;
        }
        inbox_push(m, &ev);
        if (m != reader && m->wake_fd >= 0 && write(m->wake_fd, &one, sizeof(one)) < 0 &&
            errno != EAGAIN) {
            util_warn("%s: waking a context for an async event: %s", hca->name, strerror(errno));
        }
    }
}

int verbs_dev_poll_async(verbs_dev_t *dev, verbs_async_event_t *ev)
{
    verbs_hca_t *hca = dev->hca;
    struct ibv_async_event e;
    int status = 0;

    pthread_mutex_lock(&hca->lock);
    /* The fd is non-blocking (hca_open): EAGAIN means nothing is pending. */
    while (ibv_get_async_event(hca->ctx, &e) == 0) {
        hca_route(hca, dev, &e);
        ibv_ack_async_event(&e); /* after the routing read its object */
    }
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
        status = verbs_errno_status(errno);
    }
    if (dev->inbox_n != 0) {
        *ev = dev->inbox[0];
        memmove(dev->inbox, dev->inbox + 1, (dev->inbox_n - 1) * sizeof(*ev));
        __atomic_store_n(&dev->inbox_n, dev->inbox_n - 1, __ATOMIC_RELAXED);
        status = 1;
    }
    pthread_mutex_unlock(&hca->lock);
    return status;
}

void verbs_dev_async_route(verbs_dev_t *dev, const struct ibv_async_event *e)
{
    pthread_mutex_lock(&dev->hca->lock);
    hca_route(dev->hca, dev, e);
    pthread_mutex_unlock(&dev->hca->lock);
}

const uint32_t *verbs_dev_async_waiting(const verbs_dev_t *dev)
{
    return &dev->inbox_n;
}

void verbs_dev_set_wake_fd(verbs_dev_t *dev, int fd)
{
    pthread_mutex_lock(&dev->hca->lock);
    dev->wake_fd = fd;
    pthread_mutex_unlock(&dev->hca->lock);
}

unsigned verbs_dev_sharers(const verbs_dev_t *dev)
{
    unsigned refs;

    pthread_mutex_lock(&hca_table_lock);
    refs = dev->hca->refs;
    pthread_mutex_unlock(&hca_table_lock);
    return refs;
}

int verbs_dev_shares_with(const verbs_dev_t *a, const verbs_dev_t *b)
{
    return a->hca == b->hca && a->ctx == b->ctx && a->pd == b->pd;
}

uint64_t verbs_dev_opens(void)
{
    uint64_t n;

    pthread_mutex_lock(&hca_table_lock);
    n = hca_opens;
    pthread_mutex_unlock(&hca_table_lock);
    return n;
}
