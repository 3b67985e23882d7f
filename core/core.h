/*
 * Private to core/: the structures behind the public handles and the functions the core's
 * files share. One context is used by one thread at a time, so nothing here is locked.
 */
#ifndef IBMSG_CORE_CORE_H
#define IBMSG_CORE_CORE_H

#include <stdint.h>
#include <string.h>

#include <ibmsg/ibmsg.h>
#include <ibmsg/tool.h>

#include "core/config.h"
#include "core/core_counters.h"
#include "core/core_events.h"
#include "core/credit.h"
#include "core/ep_addr.h"
#include "core/failure.h"
#include "core/iov.h"
#include "core/match.h"
#include "core/qpt.h"
#include "core/rndv.h"
#include "core/rma.h"
#include "core/wire.h"
#include "verbs/cq.h"
#include "verbs/device.h"
#include "verbs/mr.h"
#include "verbs/pool.h"
#include "verbs/qp.h"
#include "verbs/reg_cache.h"
#include "verbs/srq.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A receive bounce buffer: posted to the SRQ or an endpoint's RQ, or held in the unexpected queue.
 */
typedef struct core_rdesc {
    verbs_buf_t buf; /* first: the pool's part */
    core_mq_entry_t mq;
    struct ibmsg_ep_s *ep;
    uint32_t offset; /* where the payload starts in buf, while unexpected */
    uint32_t length; /* payload bytes, while unexpected */
    uint8_t type;    /* CORE_WIRE_EAGER or CORE_WIRE_RTS, while unexpected */
} core_rdesc_t;

/* One send-queue entry of an endpoint: its bounce buffer (NULL when inline). */
typedef struct core_sslot {
    struct ibmsg_ep_s *ep;
    verbs_buf_t *buf;
    struct ibmsg_request_s *rndv;   /* an RDMA READ of this receive's rendezvous pull */
    struct ibmsg_request_s *req;    /* a one-sided operation this entry ends (rma.c), or NULL */
    struct ibmsg_request_s *unbind; /* a LOCAL_INV of this rendezvous send's window */
    uint8_t signaled;               /* posted with a completion requested (signals_outstanding) */
} core_sslot_t;

typedef enum core_req_state {
    CORE_REQ_FREE = 0,
    CORE_REQ_POSTED, /* receive in the posted queue, or send waiting in its endpoint's queue */
    CORE_REQ_COMPLETE,
    CORE_REQ_ACTIVE, /* one-sided: partly or fully posted (no longer cancellable) */
} core_req_state_t;

typedef enum core_req_type {
    CORE_REQ_SEND = 1,
    CORE_REQ_RECV,
    CORE_REQ_RMA, /* put, get or flush (rma.c) */
    CORE_REQ_MSG, /* a message taken out of matching by ibmsg_tag_mprobe (probe.c) */
} core_req_type_t;

struct ibmsg_request_s {
    core_mq_entry_t mq; /* posted queue (receives) or the endpoint's pending sends */
    struct ibmsg_context_s *ctx;
    struct ibmsg_ep_s *ep;
    void *buf;
    size_t len;
    uint8_t type;
    uint8_t state;
    ibmsg_tag_status_t status;
    struct ibmsg_request_s *free_next;
    core_rdesc_t *desc; /* CORE_REQ_MSG: the message's buffer (NULL once its endpoint is gone) */
    core_rndv_req_t rndv;
    core_rma_req_t rma;
    core_iov_req_t iov; /* a vector operation's entries (iov.h); iov.iov NULL: buf and len */
};

typedef enum core_ep_state {
    CORE_EP_CREATED = 0,
    CORE_EP_CONNECTED,
    CORE_EP_FAILED,
    CORE_EP_CLOSING,
    CORE_EP_CONNECTING, /* on-demand wireup (wireup.c): sends queue until the peer answers */
} core_ep_state_t;

struct ibmsg_ep_s {
    struct ibmsg_context_s *ctx;
    verbs_qp_t *qp;
    uint32_t qpn;
    uint8_t state;
    uint8_t dirty;       /* on the context's dirty list */
    uint32_t tx_seq;     /* next sequence number to send */
    uint32_t rx_seq;     /* next sequence number expected */
    uint32_t peer_limit; /* the agreed eager limit (core_ep_eager_max) */
    core_credit_t cr;
    cnt_shard_t *cnt; /* its counter block, a child of the context's */

    /* Send queue: entries [sq_tail, sq_head) are posted (or held: core_ep_flush) and not known
     * complete. */
    core_sslot_t *sring;
    uint32_t sq_depth; /* ring entries, a power of two */
    uint32_t sq_room;  /* entries posted at most: <= sq_depth and the granted depth */
    uint32_t sq_mask;
    uint32_t signal_interval;
    uint32_t send_batch; /* messages held for one post (core_send_batch; 1: none held) */
    int32_t inline_max;  /* largest payload that goes inline; -1: none */
    uint64_t sq_head;
    uint64_t sq_tail;
    uint64_t sq_last_signal;
    uint32_t signals_outstanding;

    /* Its own receive queue (no SRQ; rq_depth 0 with one): rq_posted buffers posted; nrepost
     * consumed ones wait to be reposted. */
    uint32_t rq_depth;
    uint32_t rq_posted;
    uint32_t nrepost;
    /* While messages arrive, reposts wait until this many are due (rq_depth / 4, 1..64): the
     * peer then still has rq_depth - (rq_depth / 4 - 1) - (credit threshold rq_depth / 2 - 1)
     * >= 2 credits (core/credit.h), so it never stalls on them; an idle progress call posts
     * the rest. */
    uint32_t repost_batch;
    core_rdesc_t **repost;

    core_mq_list_t pending; /* sends waiting for credits or send-queue room, in order */
    uint64_t rejected_logged;
    uint32_t world_rank; /* the peer's rank when the endpoint belongs to a world (world.c) */
    core_rndv_ep_t rndv;
    struct ibmsg_ep_s *dirty_next;
    struct ibmsg_ep_s *next, *prev; /* the context's endpoints */
    core_rma_ep_t rma;
    core_ep_keepalive_t ka; /* failure.c */
    core_ep_events_t ev;    /* core_events.c */
    /* The peer's window over the shared receive queue (core/srq.c): data credits it holds that
     * count against the SRQ's budget, credits this call may return beyond it (a waiter's turn),
     * and its place among the endpoints whose returns wait for room. */
    uint32_t srq_lent;
    uint32_t srq_ticket;
    uint32_t srq_seen_rx; /* rx_seq at the last stall (core_srq_serve) */
    uint8_t srq_waiting;
    struct ibmsg_ep_s *srq_wait_next;
};

/*
 * The next send-queue entry (sq_head), cleared and owned by ep, for a work request other than
 * a message send (core_ep_post_hdr fills its own); the caller advances sq_head once posted.
 */
static inline core_sslot_t *core_sslot_take(struct ibmsg_ep_s *ep)
{
    core_sslot_t *slot = &ep->sring[ep->sq_head & ep->sq_mask];

    memset(slot, 0, sizeof(*slot));
    slot->ep = ep;
    return slot;
}

typedef struct core_req_chunk core_req_chunk_t;

/*
 * Work of a layer above the core that progress must drive (the job layer's connection manager):
 * called at the start of every core_progress while fn is set. The core calls it and knows
 * nothing else of it; the layer sets and clears it with core_context_set_progress_hook.
 */
typedef struct core_progress_hook {
    int (*fn)(void *arg); /* returns what it handled (counted in progress's events) */
    void *arg;
} core_progress_hook_t;

/*
 * How a layer above lets the context sleep (core/wait.c): arm its CQs (they report to the
 * device's completion channel, which the context's fd holds) and lower *timeout_ms to its next
 * timer; returns 1 when it has work now (no sleep), 0, or an error.
 */
typedef struct core_wait_hook {
    int (*arm)(void *arg, int *timeout_ms);
    void *arg;
} core_wait_hook_t;

/* A blocking call's wait (core_wait_block): when its adaptive spin began (0: not yet). */
typedef struct core_waiter {
    uint64_t spin_since_ns;
} core_waiter_t;

struct ibmsg_context_s {
    cnt_shard_t *cnt; /* its counter block (counters/shards/counter_table.h, CONTEXT entries) */
    core_config_t cfg;
    verbs_dev_t *dev;
    verbs_cq_t *scq;
    verbs_cq_t *rcq;
    verbs_pool_t *rpool;
    verbs_pool_t *spool;
    core_mq_t mq;
    core_mq_list_t mprobed; /* messages taken by ibmsg_tag_mprobe, not yet received (probe.c) */
    struct ibmsg_request_s *req_free;
    core_req_chunk_t *req_chunks;
    struct ibmsg_ep_s *eps;
    struct ibmsg_ep_s *zombies; /* endpoints whose queue pair did not drain: freed last */
    struct ibmsg_ep_s *dirty;
    /* The shared receive queue (NULL: per-endpoint receive queues, core/srq.h). */
    verbs_srq_t *srq;
    uint32_t srq_posted; /* buffers posted now */
    uint32_t
        srq_target;     /* what refills bring it back to: core_srq_depth, doubled on limit events */
    uint32_t srq_max;   /* core_srq_max, capped by the device */
    uint32_t srq_limit; /* the armed limit: target / 4 */
    uint32_t srq_batch; /* a refill while messages arrive waits for this many */
    uint8_t srq_empty;  /* every posted buffer was consumed (counted once until a refill) */
    uint8_t srq_pool_logged;
    /* Credits lent over the SRQ (core/srq.c): the data credits its endpoints' peers hold, tickets
       included, kept within core_srq_budget once the queue ran low (srq_pressure); endpoints
       owed returns that wait for room, in order; when the wait began with nothing arriving
       (0: none). */
    uint8_t srq_pressure;
    uint32_t srq_lent;
    uint32_t srq_nwait;
    struct ibmsg_ep_s *srq_wait_head, *srq_wait_tail;
    uint64_t srq_stall_ns;
    uint64_t srq_stall_after_ns; /* CORE_SRQ_STALL_NS or two ACK timeouts if longer */
    core_qpt_t qpt;              /* QP number -> endpoint, for the SRQ's completions */
    /* Send CQ budget: work requests of all endpoints posted and not known complete (a QP in
       error flushes each with a completion, signalled or not) never exceed the CQ's entries. */
    uint64_t sq_out;
    uint64_t sq_budget;
    uint8_t sq_stalled;    /* a post waited for the budget: completions wake the endpoints */
    uint32_t rcq_reserved; /* per-endpoint receive queues only: their buffers posted at most */
    uint32_t signals_outstanding; /* of all its endpoints: core_progress polls the send CQ by it */
    /* Poll the send CQ at the next call whatever came (progress.c); set by a sync of the SRQ's
       levels during a poll too (a send or a kept buffer), so that call ends in the full sync
       (core_srq_sync_polled()). */
    uint8_t scq_due;
    uint32_t eager_limit;
    uint32_t eager_hdr_max;   /* largest eager payload that arrives with the header (wire.h) */
    uint32_t buf_size;        /* bounce buffer bytes (core_wire_buf_size) */
    verbs_mr_cache_t *rcache; /* registrations of user buffers (rendezvous; verbs/mr.h) */
    uint8_t progress_slow;    /* CORE_PROGRESS_SLOW_*: what sends core_progress the slow way */
    core_progress_hook_t progress_hook; /* a layer above progressed with the CQs (the job layer) */
    core_wait_hook_t wait_hook;         /* ... and armed with them before a sleep */
    int wait_fd;                        /* epoll: the completion channel, async events, wake_fd */
    int wake_fd;                        /* eventfd: core_context_wake, from any thread */
    uint8_t port_down; /* the port's last state change read was a port error (core/async.c) */
    const uint32_t *async_waiting; /* events routed to this context (verbs_dev_async_waiting) */
    core_rma_ctx_t rma;
    core_iov_ctx_t iovs;     /* vector operations' extensions (iov.c) */
    core_ctx_keepalive_t ka; /* failure.c */
};

/* request.c */
/** Reserve the context's first chunk of requests (at its creation): IBMSG_ERR_NO_MEMORY. */
int core_req_reserve(struct ibmsg_context_s *ctx);
struct ibmsg_request_s *core_req_alloc(struct ibmsg_context_s *ctx);
void core_req_release(struct ibmsg_request_s *req);
void core_req_free_all(struct ibmsg_context_s *ctx);
static inline void core_req_complete(struct ibmsg_request_s *req, int error)
{
    if (util_unlikely(error == IBMSG_ERR_PEER_FAILED)) {
        /* Counted here, once, whichever path (queued, in flight, bound receive) ends it. */
        struct ibmsg_ep_s *ep = req->ep != NULL ? req->ep : req->status.source;
        if (ep != NULL) {
            core_cnt_inc(ep->cnt, CNT_CORE_PEER_FAILED_REQS);
        }
    }
    req->status.error = error;
    req->state = CORE_REQ_COMPLETE;
}

/** Copy n bytes of a message into receive req: its buffer, or its vector's entries. */
static inline void core_req_copy_in(struct ibmsg_request_s *req, const void *src, size_t n)
{
    if (util_unlikely(req->iov.iov != NULL)) {
        core_iov_scatter(req->iov.iov, req->iov.cnt, src, n);
    } else {
        memcpy(req->buf, src, n);
    }
}

/* tag.c */
/**
 * Receive req (type RECV, buf and len set) takes the unexpected message d (out of matching):
 * copied, or pulled when a rendezvous; d goes back to its pool.
 */
void core_tag_take_unexpected(struct ibmsg_context_s *ctx, struct ibmsg_request_s *req,
                              core_rdesc_t *d);

/* probe.c */
/** ep is being destroyed: the messages mprobed from it give up their buffers (CANCELED). */
void core_probe_ep_gone(struct ibmsg_ep_s *ep);
/** The context ends (its endpoints gone): messages never received leave the level. */
void core_probe_ctx_cleanup(struct ibmsg_context_s *ctx);

/* progress.c */
int core_progress_plain(struct ibmsg_context_s *ctx, int *events);
int core_progress_hooked(struct ibmsg_context_s *ctx, int *events);
#if IBMSG_HAVE_CORE_COUNTERS
int core_progress_timed(struct ibmsg_context_s *ctx, int *events); /* none compiled out */
#endif

/*
 * The bits of ctx->progress_slow: a progress hook is set; a handle of core_progress_time runs
 * (the counter block mirrors the timer's gate here: cnt_block_watch_timer()). Set and cleared
 * with atomic read-modify-writes, from any thread; the progress call reads the byte.
 */
enum { CORE_PROGRESS_SLOW_HOOK = 1, CORE_PROGRESS_SLOW_TIMER = 2 };

/*
 * One progress call. What is rare about it (a hook to call, the call to time) is one byte of the
 * context, tested here in the caller, inline: a compare and a jump for all of them, where the
 * global timer gate was a test of its own. Which copy a rare call takes is chosen here too: in
 * a callee the test came after the prologue (GCC does not shrink-wrap the call's frame), which
 * a timed call then paid twice, and a dispatcher between costs each of them a call.
 */
static UTIL_ALWAYS_INLINE int core_progress(struct ibmsg_context_s *ctx, int *events)
{
    if (cnt_gate_open(&ctx->progress_slow)) {
#if IBMSG_HAVE_CORE_COUNTERS
        if (__atomic_load_n(&ctx->progress_slow, __ATOMIC_RELAXED) & CORE_PROGRESS_SLOW_TIMER) {
            return core_progress_timed(ctx, events);
        }
#endif
        return core_progress_hooked(ctx, events);
    }
    return core_progress_plain(ctx, events);
}
/* Set (fn non-NULL) or clear (fn NULL) the context's progress hook; returns the one it replaces. */
core_progress_hook_t core_context_set_progress_hook(struct ibmsg_context_s *ctx,
                                                    int (*fn)(void *arg), void *arg);
/**
 * Poll the send CQ once and handle what it returned: the count, or an error (< 0). The caller
 * counts the poll (verbs_cq_polls, verbs_cq_polls_empty).
 */
int core_poll_send_cq(struct ibmsg_context_s *ctx);
void core_ep_mark_dirty(struct ibmsg_ep_s *ep);
/** Post the endpoint's queued sends while credits and send-queue room last; return credits. */
void core_ep_service(struct ibmsg_ep_s *ep);
/**
 * Post one message now (credits and room checked by the caller) with header flags; invalidate:
 * NULL, or the peer's window key the message invalidates (SEND_WITH_INV).
 */
int core_ep_post_hdr(struct ibmsg_ep_s *ep, uint8_t type, uint8_t flags, uint64_t tag,
                     const void *buf, uint32_t len, const uint32_t *invalidate);
/** Post one eager message gathered from a vector of len bytes now (as core_ep_post_msg). */
int core_ep_post_iov(struct ibmsg_ep_s *ep, uint64_t tag, const ibmsg_iov_t *iov, uint32_t cnt,
                     uint32_t len);
/** Post one eager message now (as core_ep_post_msg). */
int core_ep_post_eager(struct ibmsg_ep_s *ep, uint64_t tag, const void *buf, uint32_t len);
/** Post one message now, no flags (credits and room checked by the caller). */
static inline int core_ep_post_msg(struct ibmsg_ep_s *ep, uint8_t type, uint64_t tag,
                                   const void *buf, uint32_t len)
{
    return type == CORE_WIRE_EAGER ? core_ep_post_eager(ep, tag, buf, len)
                                   : core_ep_post_hdr(ep, type, 0, tag, buf, len, NULL);
}
/** Post ep's held messages in one post list; a failed post fails the endpoint (returned). */
int core_ep_flush(struct ibmsg_ep_s *ep);
/** VERBS_SEND_DEFER when ep holds work requests for one post (core_send_batch > 1), else 0. */
static inline unsigned core_ep_defer(const struct ibmsg_ep_s *ep)
{
    return ep->send_batch > 1 ? (unsigned)VERBS_SEND_DEFER : 0u;
}
/**
 * A work request of ep was just handed to verbs with flags: posted at once (one post counted),
 * or held (the batch is posted when full, else ep is marked for progress). A failed post of a
 * full batch fails the endpoint (returned).
 */
int core_ep_handed(struct ibmsg_ep_s *ep, unsigned flags);
/**
 * Post the held messages of every endpoint of ctx. Every call that makes progress or reports a
 * completion does this first: a send reported complete has reached the device.
 */
static inline void core_flush_held(struct ibmsg_context_s *ctx)
{
    for (struct ibmsg_ep_s *ep = ctx->dirty; ep != NULL; ep = ep->dirty_next) {
        core_ep_flush(ep);
    }
}
/** Count a work request posted at once (its own post, behind any held messages). */
static inline void core_cnt_posted_now(struct ibmsg_ep_s *ep)
{
    core_cnt_inc(ep->cnt, CNT_VERBS_SEND_WRS_POSTED);
    core_cnt_inc(ep->cnt, CNT_VERBS_SEND_DOORBELLS);
}
/** A signalled work request of ep was posted: its completion is due on the send CQ. */
static inline void core_signal_posted(struct ibmsg_ep_s *ep)
{
    ep->signals_outstanding++;
    ep->ctx->signals_outstanding++;
}
/** n signalled work requests of ep completed, or will never complete (dropped before posting). */
static inline void core_signals_done(struct ibmsg_ep_s *ep, uint32_t n)
{
    ep->signals_outstanding -= n;
    ep->ctx->signals_outstanding -= n;
}
/**
 * VERBS_SEND_FENCE for a WRITE or SEND about to be posted on ep when a get's RDMA READ may still
 * be in flight, else 0. IB orders a READ only before later READs: a later WRITE or SEND may
 * reach the peer first, so a put after a get could change the bytes the get returns (rma.h
 * promises issue order). The first WRITE or SEND behind the READs carries the fence; later ones
 * queue behind it (the send queue starts its work requests in order), so they need none.
 * Rendezvous READs need no fence: the bytes they read stay the peer's send buffer until this
 * side's FIN, posted after they completed.
 */
static inline unsigned core_ep_fence(const struct ibmsg_ep_s *ep)
{
    /* None: no get READ since the last fence, or all are known complete. */
    return util_likely(ep->rma.read_end <= ep->sq_tail) ? 0u : (unsigned)VERBS_SEND_FENCE;
}
/** A work request was posted (or held) with flags: a fence covers the READs before it. */
static inline void core_ep_fenced(struct ibmsg_ep_s *ep, unsigned flags)
{
    if (util_unlikely(flags & VERBS_SEND_FENCE)) {
        ep->rma.read_end = 0;
        core_cnt_inc(ep->cnt, CNT_CORE_RMA_FENCED_WRS);
    }
}
/* cq_budget.c */
/** Out of line: grow the send CQ so n more entries fit the budget, or mark the stall (0). */
int core_scq_grow(struct ibmsg_context_s *ctx, uint32_t n);
/** Completions freed send CQ entries after a stall: every connected endpoint is serviced again. */
void core_scq_wake(struct ibmsg_context_s *ctx);
/** Reserve n receive CQ entries (per-endpoint receive queues), growing the CQ when needed. */
int core_rcq_reserve(struct ibmsg_context_s *ctx, uint32_t n);
/** Whether n more work requests may be posted on ep: its send queue and the send CQ's budget. */
static inline int core_sq_room(struct ibmsg_ep_s *ep, uint32_t n)
{
    struct ibmsg_context_s *ctx = ep->ctx;

    if (ep->sq_head - ep->sq_tail + n > ep->sq_room) {
        return 0;
    }
    return util_likely(ctx->sq_out + n <= ctx->sq_budget) || core_scq_grow(ctx, n);
}
/** A work request of ep was posted (or held) in slot sq_head. */
static inline void core_sq_push(struct ibmsg_ep_s *ep)
{
    ep->sq_head++;
    ep->ctx->sq_out++;
}
/** The peer's send window on ep: core_credits (the buffers posted for it, without an SRQ). */
static inline uint32_t core_ep_window(const struct ibmsg_ep_s *ep)
{
    return (uint32_t)ep->ctx->cfg.credits;
}
/*
 * The SRQ's credit budget (core/srq.c): the data credits senders may hold at once. Returns go
 * after the refill, which leaves fewer than srq_batch buffers missing, so each credit lent has a
 * buffer posted for it and no sender meets an empty queue; as many again are kept for what
 * the budget does not count (explicit credit returns: a peer's last credit).
 */
static inline uint32_t core_srq_budget(const struct ibmsg_context_s *ctx)
{
    return ctx->srq_target > 2 * ctx->srq_batch ? ctx->srq_target - 2 * ctx->srq_batch : 1;
}
/** Data credits ep's peer holds (sent and in flight or unused): its window less those owed. */
static inline uint32_t core_srq_peer_data(const struct ibmsg_ep_s *ep)
{
    uint32_t w = core_ep_window(ep);

    return ep->cr.to_return + 1 < w ? w - 1 - ep->cr.to_return : 0;
}
/** Credits owed to ep's peer that may go back now, at most max: with an SRQ, within its budget. */
static inline uint32_t core_ep_return_max(const struct ibmsg_ep_s *ep, uint32_t max)
{
    const struct ibmsg_context_s *ctx = ep->ctx;
    uint32_t allow, budget;

    if (util_likely(ctx->srq == NULL || !ctx->srq_pressure)) {
        return max;
    }
    allow = ep->srq_ticket;
    budget = core_srq_budget(ctx);
    if (ctx->srq_wait_head == NULL && ctx->srq_lent < budget) {
        allow += budget - ctx->srq_lent; /* nobody waits: any room is ep's */
    }
    return UTIL_MIN(allow, max);
}
/** n credits went back to ep's peer (SRQ): they count against the budget, a ticket first. */
static inline void core_srq_returned(struct ibmsg_ep_s *ep, uint32_t n)
{
    struct ibmsg_context_s *ctx = ep->ctx;
    uint32_t from_ticket = UTIL_MIN(n, ep->srq_ticket);
    uint32_t lent = UTIL_MIN(ep->srq_lent + n, core_srq_peer_data(ep));

    ep->srq_ticket -= from_ticket;
    ctx->srq_lent += lent - ep->srq_lent;
    ctx->srq_lent -= from_ticket;
    ep->srq_lent = lent;
}
/** A buffer ep's peer filled was consumed (SRQ): its credit is owed, no longer lent. */
static inline void core_srq_consumed(struct ibmsg_ep_s *ep)
{
    uint32_t data;

    core_credit_reposted(&ep->cr, 1);
    data = core_srq_peer_data(ep);
    if (ep->srq_lent > data) {
        ep->ctx->srq_lent -= ep->srq_lent - data;
        ep->srq_lent = data;
    }
}
#if IBMSG_HAVE_CORE_COUNTERS
/*
 * The SRQ's buffers taken since the last sync, negative: core_srq_posted's own slot still holds
 * srq_posted as of then (only the SRQ code moves it).
 */
static UTIL_ALWAYS_INLINE int64_t core_srq_unsynced(const struct ibmsg_context_s *ctx,
                                                    const cnt_shard_t *cnt)
{
    return (int64_t)ctx->srq_posted - cnt_level_own(cnt, CNT_CORE_SRQ_POSTED);
}

/*
 * Both levels down by the buffers taken (fell, negative), the pool's less the kept ones still in
 * use: one value for both, so one subtraction. No low mark: a read takes the min with the level,
 * so a fall's low mark is needed only when the level next rises, and every rise after a sync
 * marks first (core_srq_sync_rise(), the refill).
 */
static UTIL_ALWAYS_INLINE void core_srq_fall(cnt_shard_t *cnt, int64_t fell, int64_t kept)
{
    cnt_level_run_add(cnt, CNT_CORE_SRQ_POSTED, fell);
    cnt_level_run_add(cnt, CNT_VERBS_BUF_POOL_IN_USE, fell + kept);
}
#endif

/*
 * Bring core_srq_posted and verbs_buf_pool_in_use up to the buffers taken from the SRQ since the
 * last sync: at the end of a poll of the receive CQ, and before anything else could move either
 * level in a poll (a send buffer taken, a buffer kept; refills come after the sync). Only falls
 * happen in between, so one update each gives the same levels.
 */
static UTIL_ALWAYS_INLINE void core_srq_sync_shard(struct ibmsg_context_s *ctx, cnt_shard_t *cnt)
{
#if IBMSG_HAVE_CORE_COUNTERS
    core_srq_fall(cnt, core_srq_unsynced(ctx, cnt), 0);
#else
    (void)ctx;
    (void)cnt;
#endif
}

/* core_srq_sync_shard() with ctx's shard; the progress call passes the one it loaded. */
static UTIL_ALWAYS_INLINE void core_srq_sync(struct ibmsg_context_s *ctx)
{
    core_srq_sync_shard(ctx, ctx->cnt);
}

/*
 * The sync at the end of a poll that found n > 0 arrivals when nothing synced during it: each
 * arrival took one buffer (srq_taken() in core/progress.c) and gave it back, so both levels fall
 * by n from where the last sync left them. Two instructions where the difference takes four. A
 * sync that finds buffers taken can only be one during a poll (between calls the levels are
 * synced), as is a kept buffer's; both set ctx->scq_due, so that call ends in
 * core_srq_sync_shard() instead.
 */
static UTIL_ALWAYS_INLINE void core_srq_sync_polled(int n, cnt_shard_t *cnt)
{
#if IBMSG_HAVE_CORE_COUNTERS
    cnt_level_run_sub(cnt, CNT_CORE_SRQ_POSTED, (uint64_t)n);
    cnt_level_run_sub(cnt, CNT_VERBS_BUF_POOL_IN_USE, (uint64_t)n);
#else
    (void)n;
    (void)cnt;
#endif
}

/*
 * An SRQ buffer stays with an unexpected message. Every other buffer taken from the SRQ goes
 * back to the pool before the poll ends, so the common path counts nothing; this one does not.
 * The sync happens here with it left in use: every buffer taken since the last sync but this one
 * comes off verbs_buf_pool_in_use, so the level is a real one at once (an add of the kept buffer
 * before the poll's sync showed a reader on another thread, until that sync, a level above any
 * the pool had), and the call ends in the full sync (ctx->scq_due).
 */
static UTIL_ALWAYS_INLINE void core_srq_kept(struct ibmsg_context_s *ctx)
{
#if IBMSG_HAVE_CORE_COUNTERS
    core_srq_fall(ctx->cnt, core_srq_unsynced(ctx, ctx->cnt), 1);
    ctx->scq_due = 1;
#else
    (void)ctx;
#endif
}

/*
 * Before verbs_buf_pool_in_use rises by a send buffer: the sync, and the low mark it left. A sync
 * that moves the levels is one during a poll: the call ends in the full sync (see above).
 */
static UTIL_ALWAYS_INLINE void core_srq_sync_rise(struct ibmsg_context_s *ctx)
{
#if IBMSG_HAVE_CORE_COUNTERS
    cnt_shard_t *cnt = ctx->cnt;
    int64_t fell = core_srq_unsynced(ctx, cnt);

    if (util_unlikely(fell != 0)) {
        core_srq_fall(cnt, fell, 0);
        ctx->scq_due = 1;
    }
    cnt_level_mark_low(cnt, CNT_VERBS_BUF_POOL_IN_USE);
#else
    (void)ctx;
#endif
}

/** Whether a data message may be posted on ep now. */
static inline int core_ep_can_send(struct ibmsg_ep_s *ep)
{
    return core_credit_can_send_data(&ep->cr) && core_sq_room(ep, 1);
}
/** The largest payload sent eagerly on ep with tag: longer ones go by rendezvous. */
static inline uint32_t core_ep_eager_max(const struct ibmsg_ep_s *ep, uint64_t tag)
{
    return core_wire_eager_max(ep->peer_limit, tag);
}
/**
 * Post a signalled marker (a zero-length RDMA WRITE: no data, memory or key) in the next
 * send-queue slot; its completion comes after those of everything posted before it.
 */
int core_ep_post_marker(struct ibmsg_ep_s *ep);
/** Fail an endpoint: its queued sends and the receives bound to it complete with error. */
void core_ep_fail(struct ibmsg_ep_s *ep, int error);

/* ep.c */
int core_ep_repost(struct ibmsg_ep_s *ep);

/* srq.c */
/** Create the context's SRQ and post its first buffers: IBMSG_ERR_NOT_SUPPORTED for none. */
int core_srq_init(struct ibmsg_context_s *ctx);
/** Destroy it (every QP gone) and give its posted buffers back to the pool. */
void core_srq_cleanup(struct ibmsg_context_s *ctx);
/** Post up to want buffers to the SRQ. */
void core_srq_refill(struct ibmsg_context_s *ctx, uint32_t want);
/** ep connected: its peer's first window counts against the SRQ's budget. */
void core_srq_ep_connected(struct ibmsg_ep_s *ep);
/** ep failed or closes: its credits leave the budget and it waits no more. */
void core_srq_ep_release(struct ibmsg_ep_s *ep);
/** A credit return of ep found no room: it waits for its turn (core_srq_serve). */
void core_srq_wait(struct ibmsg_ep_s *ep);
/**
 * Give waiting endpoints tickets from the budget's room, in order; called by progress after the
 * refill while any wait. idle: nothing arrived in this call; when nothing has arrived for
 * CORE_SRQ_STALL_NS while endpoints waited, the credits of peers silent since the previous such
 * stall are forgiven (idle holders).
 */
void core_srq_serve(struct ibmsg_context_s *ctx, int idle);
/** The SRQ's limit event came: it grows (up to core_srq_max) and is armed again. */
void core_srq_limit_reached(struct ibmsg_context_s *ctx);
/** Poll and handle the receive CQ until it is empty (an endpoint's QP was just destroyed). */
void core_drain_recv_cq(struct ibmsg_context_s *ctx);

/* wait.c */
/** Open the context's fd (epoll set) and wake eventfd. */
int core_wait_init(struct ibmsg_context_s *ctx);
/** Close them (after every CQ is gone). */
void core_wait_cleanup(struct ibmsg_context_s *ctx);
/** Set (arm non-NULL) or clear the context's wait hook. */
void core_context_set_wait_hook(struct ibmsg_context_s *ctx, int (*arm)(void *arg, int *timeout_ms),
                                void *arg);
/** Wake the context's sleeper, if any (any thread; async-signal-safe: one write()). */
void core_context_wake(struct ibmsg_context_s *ctx);
/**
 * Arm for a sleep: drain the fd's events, arm every CQ (and the hook's), then progress once.
 * IBMSG_ERR_BUSY when that found work (or req, if given, completed): do not sleep. Else
 * IBMSG_OK and *timeout_ms lowered to the context's timers (keepalive, SRQ stall, the hook's).
 */
int core_wait_arm(struct ibmsg_context_s *ctx, const struct ibmsg_request_s *req, int *timeout_ms);
/** The sleeping part of core_wait_block (out of line). */
void core_wait_block_slow(struct ibmsg_context_s *ctx, core_waiter_t *w,
                          const struct ibmsg_request_s *req);
/**
 * A blocking call found its condition unmet after a progress call: wait as core_wait_mode says.
 * spin returns at once (one branch); sleep arms and sleeps on the context's fd until it is
 * readable or a timer of the context is due; adaptive spins core_wait_spin_us first. The caller
 * progresses and checks its condition again either way.
 */
static inline void core_wait_block(struct ibmsg_context_s *ctx, core_waiter_t *w,
                                   const struct ibmsg_request_s *req)
{
    if (util_likely(ctx->cfg.wait_mode == CORE_WAIT_SPIN)) {
        return;
    }
    core_wait_block_slow(ctx, w, req);
}

/* async.c */
/**
 * Read and handle the device's pending asynchronous events and those another context's thread
 * routed here (a syscall and the shared device's mutex each, none blocks): the
 * SRQ limit, QP and CQ errors, the port going down or up, its GID table or LID changing.
 * Returns how many were read.
 */
int core_async_poll(struct ibmsg_context_s *ctx);

struct ibv_async_event;

/**
 * Test-only: handle e, a real event naming the context's own objects (e.g. IBV_EVENT_QP_FATAL
 * with element.qp an endpoint's QP), as if the device had reported it: the same dispatch as
 * core_async_poll, on the thread that owns ctx's progress. For the events a device cannot be made
 * to report (Soft-RoCE never reports a queue pair fatal); nothing in the library calls it.
 */
void core_async_inject(struct ibmsg_context_s *ctx, const struct ibv_async_event *e);

/**
 * Test-only: e as if ctx's thread had read it from the device, which every context that shares
 * it gets (a port or device event) or its object's context (verbs/hca.c); ctx handles its share
 * now (core_async_poll), the others at their next progress.
 */
void core_async_inject_device(struct ibmsg_context_s *ctx, const struct ibv_async_event *e);

/**
 * The bytes ctx pins itself, whatever it sends (for the registration cache's share of
 * RLIMIT_MEMLOCK): its receive buffers at their most (the shared receive queue grown to
 * core_srq_max, or one endpoint's credits without it), one chunk of send buffers, and its CQ
 * rings (64-byte entries, as mlx5's). Not counted: each endpoint's further buffers and rings.
 */
uint64_t core_context_pinned(const struct ibmsg_context_s *ctx, int srq);

/* failure.c */
/** Set up a new context's keepalive clock from its settings. */
void core_keepalive_init(struct ibmsg_context_s *ctx);
/** The keepalive check, out of line: probe the endpoints silent for the interval. */
void core_keepalive_run(struct ibmsg_context_s *ctx, uint64_t now_ns);
/** Read the coarse clock and run the keepalive check when it is due; the countdown restarts. */
static UTIL_ALWAYS_INLINE void core_keepalive_due(struct ibmsg_context_s *ctx)
{
    ctx->ka.countdown = CORE_KA_CALLS;
    uint64_t now = core_coarse_now_ns();
    if (util_unlikely(now >= ctx->ka.deadline_ns)) {
        core_keepalive_run(ctx, now);
    }
}

/**
 * core_keepalive_due for a progress call that found nothing (both polls empty), out of line:
 * such a call is waiting, and perf/bench/compare --counters-cost counts a side's empty progress
 * calls as the calls of this function (callgrind), to leave the waiting out of its instructions
 * per message. Never inlined, in every build.
 */
UTIL_NOINLINE void core_keepalive_idle(struct ibmsg_context_s *ctx);

/**
 * Called by progress after its polls (idle: both came back empty): every CORE_KA_CALLS calls,
 * or when idle, read the coarse clock and run the check when it is due. No syscall (the coarse
 * clock is read from the vDSO), no branch on the setting (off: the deadline never comes).
 */
static UTIL_ALWAYS_INLINE void core_keepalive_poll(struct ibmsg_context_s *ctx, int idle)
{
    if (idle) {
        core_keepalive_idle(ctx);
    } else if (util_unlikely(--ctx->ka.countdown == 0)) {
        core_keepalive_due(ctx);
    }
}

#ifdef __cplusplus
}
#endif

#endif
