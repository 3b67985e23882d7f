/*
 * Sleeping instead of spinning. A context's fd is an epoll set of three: the device's completion
 * channel (every CQ of the context, and the job layer's, report there once armed), the device's
 * asynchronous event fd, and an eventfd other threads write to wake the sleeper (the job layer's
 * launcher callbacks). All three are level-triggered, so a wakeup stays visible until read.
 *
 * No lost wakeup (the pattern of ucp_worker_arm): arm every CQ first, then poll them once more.
 * A completion that came before the arm is found by that poll (IBMSG_ERR_BUSY: no sleep); one
 * that comes after it puts an event on the channel, which makes the fd readable.
 */
#include <errno.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <time.h>
#include <unistd.h>

#include "core/core.h"
#include "util/log.h"
#include "verbs/async.h"
#include "verbs/notify.h"

enum { WAIT_COMP = 1, WAIT_ASYNC, WAIT_WAKE };

static int wait_add(int epfd, int fd, uint32_t what)
{
    struct epoll_event e = {.events = EPOLLIN, .data.u32 = what};

    return epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &e);
}

int core_wait_init(ibmsg_context_t ctx)
{
    ctx->wait_fd = epoll_create1(EPOLL_CLOEXEC);
    ctx->wake_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (ctx->wait_fd < 0 || ctx->wake_fd < 0 ||
        wait_add(ctx->wait_fd, verbs_dev_comp_fd(ctx->dev), WAIT_COMP) != 0 ||
        wait_add(ctx->wait_fd, verbs_dev_async_fd(ctx->dev), WAIT_ASYNC) != 0 ||
        wait_add(ctx->wait_fd, ctx->wake_fd, WAIT_WAKE) != 0) {
        util_error("context: its wait fd: %s", strerror(errno));
        core_wait_cleanup(ctx);
        return IBMSG_ERR_NO_RESOURCE;
    }
    /* Another context's thread that reads an event of ours from the shared device wakes us. */
    verbs_dev_set_wake_fd(ctx->dev, ctx->wake_fd);
    return IBMSG_OK;
}

void core_wait_cleanup(ibmsg_context_t ctx)
{
    if (ctx->dev != NULL) {
        verbs_dev_set_wake_fd(ctx->dev, -1); /* before it is closed: other threads write it */
    }
    if (ctx->wait_fd >= 0) {
        close(ctx->wait_fd);
    }
    if (ctx->wake_fd >= 0) {
        close(ctx->wake_fd);
    }
    ctx->wait_fd = ctx->wake_fd = -1;
}

void core_context_set_wait_hook(ibmsg_context_t ctx, int (*arm)(void *arg, int *timeout_ms),
                                void *arg)
{
    ctx->wait_hook.arm = arm;
    ctx->wait_hook.arg = arm != NULL ? arg : NULL;
}

void core_context_wake(ibmsg_context_t ctx)
{
    uint64_t one = 1;

    if (write(ctx->wake_fd, &one, sizeof(one)) < 0 && errno != EAGAIN) {
        util_warn("context: wake: %s", strerror(errno));
    }
}

/* Whether a wake was asked for since the last look (and forget it). */
static int wait_woken(ibmsg_context_t ctx)
{
    uint64_t v;

    return read(ctx->wake_fd, &v, sizeof(v)) == (ssize_t)sizeof(v);
}

/* Lower *t (ms, -1: none) to ns from now, rounded up so a timer is due when the sleep ends. */
static void wait_cap(int *t, uint64_t ns)
{
    uint64_t ms = (ns + 999999) / 1000000;

    if (*t < 0 || (uint64_t)*t > ms) {
        *t = (int)UTIL_MIN(ms, (uint64_t)INT32_MAX);
    }
}

int core_wait_arm(ibmsg_context_t ctx, const struct ibmsg_request_s *req, int *timeout_ms)
{
    int busy = 0, events = 0, ret;

    /* The events that woke us are read: the fd stays readable until they are. */
    if (verbs_dev_comp_drain(ctx->dev) < 0) {
        return IBMSG_ERR_IO;
    }
    busy |= wait_woken(ctx);
    busy |= core_async_poll(ctx) > 0;
    ret = verbs_cq_arm(ctx->rcq);
    if (ret == IBMSG_OK) {
        ret = verbs_cq_arm(ctx->scq);
    }
    if (ret == IBMSG_OK && ctx->wait_hook.arm != NULL) {
        ret = ctx->wait_hook.arm(ctx->wait_hook.arg, timeout_ms);
        busy |= ret > 0;
        ret = ret > 0 ? IBMSG_OK : ret;
    }
    if (ret != IBMSG_OK) {
        return ret;
    }
    /* Armed: whatever came before is found now, whatever comes later raises an event. */
    ret = core_progress(ctx, &events);
    if (ret != IBMSG_OK) {
        return ret;
    }
    if (busy || events > 0 || (req != NULL && req->state == CORE_REQ_COMPLETE)) {
        core_cnt_inc(ctx->cnt, CNT_CORE_WAIT_ARM_BUSY);
        return IBMSG_ERR_BUSY;
    }
    /* Timers progress must run while nothing completes: the keepalive check, the SRQ's stall. */
    uint64_t now = core_coarse_now_ns();
    if (ctx->ka.deadline_ns != UINT64_MAX) {
        wait_cap(timeout_ms, ctx->ka.deadline_ns > now ? ctx->ka.deadline_ns - now : 0);
    }
    if (ctx->srq_wait_head != NULL || ctx->srq_stall_ns != 0) {
        wait_cap(timeout_ms, ctx->srq_stall_after_ns);
    }
    return IBMSG_OK;
}

/* Sleep on the fd for at most timeout_ms (-1: no limit): 1 when woken by it, 0 by the time. */
static int wait_sleep(ibmsg_context_t ctx, int timeout_ms)
{
    struct epoll_event evs[3];
    int n;

    if (timeout_ms == 0) {
        return 0; /* the arm's progress just looked */
    }
    core_cnt_inc(ctx->cnt, CNT_CORE_WAIT_SLEEPS);
    n = epoll_wait(ctx->wait_fd, evs, 3, timeout_ms);
    if (n <= 0) {
        return n < 0 && errno == EINTR; /* a signal: the caller looks again */
    }
    core_cnt_inc(ctx->cnt, CNT_CORE_WAIT_WAKEUPS);
    for (int i = 0; i < n; i++) {
        if (evs[i].data.u32 == WAIT_ASYNC) {
            core_async_poll(ctx);
        } else if (evs[i].data.u32 == WAIT_WAKE) {
            wait_woken(ctx);
        }
    }
    return 1;
}

void core_wait_block_slow(ibmsg_context_t ctx, core_waiter_t *w, const struct ibmsg_request_s *req)
{
    int timeout = -1;

    if (ctx->cfg.wait_mode == CORE_WAIT_ADAPTIVE) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts); /* vDSO: no syscall while spinning */
        uint64_t now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        if (w->spin_since_ns == 0) {
            w->spin_since_ns = now;
        }
        if (now - w->spin_since_ns < (uint64_t)ctx->cfg.wait_spin_us * 1000u) {
            return;
        }
        w->spin_since_ns = 0; /* after this sleep, spin again first: work tends to come in runs */
    }
    if (core_wait_arm(ctx, req, &timeout) == IBMSG_OK) {
        wait_sleep(ctx, timeout);
    }
}

int ibmsg_context_get_fd(ibmsg_context_t ctx, int *fd)
{
    if (ctx == NULL || fd == NULL) {
        return IBMSG_ERR_INVALID;
    }
    *fd = ctx->wait_fd;
    return IBMSG_OK;
}

int ibmsg_context_arm(ibmsg_context_t ctx)
{
    int timeout = -1;

    if (ctx == NULL) {
        return IBMSG_ERR_INVALID;
    }
    return core_wait_arm(ctx, NULL, &timeout);
}

int ibmsg_context_wait(ibmsg_context_t ctx, int timeout_ms)
{
    uint64_t deadline = 0;
    int events = 0, ret;

    if (ctx == NULL) {
        return IBMSG_ERR_INVALID;
    }
    ret = core_progress(ctx, &events);
    if (ret != IBMSG_OK || events > 0) {
        return ret;
    }
    if (timeout_ms >= 0) {
        deadline = core_coarse_now_ns() + (uint64_t)timeout_ms * 1000000u;
    }
    for (;;) {
        int t = -1;
        uint64_t now;

        if (timeout_ms >= 0) {
            now = core_coarse_now_ns();
            t = now >= deadline ? 0 : (int)((deadline - now + 999999) / 1000000);
        }
        ret = core_wait_arm(ctx, NULL, &t);
        if (ret == IBMSG_ERR_BUSY) {
            return IBMSG_OK; /* the arm's progress handled it */
        }
        if (ret != IBMSG_OK) {
            return ret;
        }
        if (wait_sleep(ctx, t) > 0) {
            return core_progress(ctx, NULL);
        }
        if (timeout_ms >= 0 && core_coarse_now_ns() >= deadline) {
            return IBMSG_ERR_TIMEOUT;
        }
        /* A timer of the context ended the sleep: the next arm's progress runs it. */
    }
}
