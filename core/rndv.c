/* The rendezvous protocol (see rndv.h). */
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "util/log.h"
#include "verbs/mw.h"

#define RNDV_MASK (CORE_RNDV_MAX - 1)

UTIL_STATIC_ASSERT((CORE_RNDV_MAX & RNDV_MASK) == 0, "CORE_RNDV_MAX is a power of two");

/* The endpoint's request queues (pulls to post, windows to invalidate), linked by rndv.next. */
static void req_fifo_push(struct ibmsg_request_s **head, struct ibmsg_request_s **tail,
                          struct ibmsg_request_s *req)
{
    req->rndv.next = NULL;
    if (*tail != NULL) {
        (*tail)->rndv.next = req;
    } else {
        *head = req;
    }
    *tail = req;
}

static void req_fifo_pop(struct ibmsg_request_s **head, struct ibmsg_request_s **tail)
{
    struct ibmsg_request_s *req = *head;

    *head = req->rndv.next;
    if (*head == NULL) {
        *tail = NULL;
    }
    req->rndv.next = NULL;
}

int core_rndv_ep_init(ibmsg_ep_t ep)
{
    core_rndv_ep_t *rv = &ep->rndv;
    const verbs_dev_info_t *info = verbs_dev_info(ep->ctx->dev);
    verbs_qp_params_t caps;
    uint64_t chunk = (uint64_t)ep->ctx->cfg.rndv_chunk;

    rv->tx = calloc(CORE_RNDV_MAX, sizeof(*rv->tx));
    rv->fin = calloc(CORE_RNDV_MAX, sizeof(*rv->fin));
    if (rv->tx == NULL || rv->fin == NULL) {
        free(rv->tx);
        free(rv->fin);
        rv->tx = NULL;
        rv->fin = NULL;
        return IBMSG_ERR_NO_MEMORY;
    }
    verbs_qp_caps(ep->qp, &caps);
    rv->reads_max = UTIL_MAX(1u, caps.max_rd_atomic);
    /* A port reporting no limit gets 1 GiB chunks: READ lengths are 32-bit. */
    if (chunk == 0 || (info->max_msg_sz != 0 && chunk > info->max_msg_sz)) {
        chunk = info->max_msg_sz != 0 ? info->max_msg_sz : (1u << 30);
    }
    rv->chunk = (uint32_t)chunk;
    rv->windows = info->mw_type2 && ep->ctx->cfg.rndv_windows != 0;
    rv->window_max = (uint64_t)ep->ctx->cfg.rndv_window_max;
    return IBMSG_OK;
}

void core_rndv_ep_cleanup(ibmsg_ep_t ep)
{
    core_window_t *w;

    while ((w = ep->rndv.win_free) != NULL) {
        ep->rndv.win_free = w->next;
        verbs_mw_free(w->mw);
        free(w);
    }
    free(ep->rndv.tx);
    free(ep->rndv.fin);
    ep->rndv.tx = NULL;
    ep->rndv.fin = NULL;
}

/*
 * A new window: once per level of concurrency an endpoint reaches, then reused. Out of line, and
 * by this name perf/bench/compare leaves the pool's growth out of the instructions per message.
 */
static UTIL_NOINLINE int window_new(ibmsg_ep_t ep, core_window_t **w_p)
{
    core_window_t *w = malloc(sizeof(*w));
    int status;

    if (w == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    status = verbs_mw_alloc(ep->ctx->dev, &w->mw);
    if (status != IBMSG_OK) {
        free(w);
        return status;
    }
    *w_p = w;
    return IBMSG_OK;
}

/* A window to bind: a free one, or a new one. */
static int window_get(ibmsg_ep_t ep, core_window_t **w_p)
{
    core_window_t *w = ep->rndv.win_free;

    if (w != NULL) {
        ep->rndv.win_free = w->next;
        *w_p = w;
        return IBMSG_OK;
    }
    return window_new(ep, w_p);
}

/* A window comes back: reusable once known invalidated, else freed (which invalidates it). */
static void window_put(ibmsg_ep_t ep, core_window_t *w, int invalidated)
{
    if (invalidated) {
        w->next = ep->rndv.win_free;
        ep->rndv.win_free = w;
        return;
    }
    verbs_mw_free(w->mw);
    free(w);
}

/* A window could not be had for req: its key will be a registration of exactly its bytes. A
   device without windows (EOPNOTSUPP at run time, past the probe) has none for this endpoint
   from now on. */
static UTIL_COLD void window_refused(ibmsg_ep_t ep, int status)
{
    if (status == IBMSG_ERR_NOT_SUPPORTED && ep->rndv.windows) {
        ep->rndv.windows = 0;
        util_warn("qp 0x%x: memory windows not supported after all: rendezvous keys are "
                  "registrations of exactly each message from now on",
                  ep->qpn);
    }
}

/* Bind a window over exactly the message (unsignalled: a failed bind completes with an error
   anyway, and the RTS behind it cannot start before it). A window that cannot be allocated is
   IBMSG_ERR_NOT_SUPPORTED or _NO_MEMORY, and the endpoint is unharmed. */
static int window_bind(ibmsg_ep_t ep, struct ibmsg_request_s *req)
{
    core_window_t *w;
    int status = window_get(ep, &w);
    core_sslot_t *slot;

    if (status != IBMSG_OK) {
        window_refused(ep, status);
        return status == IBMSG_ERR_NO_RESOURCE ? IBMSG_ERR_NO_MEMORY : status;
    }
    slot = core_sslot_take(ep);
    /* Held wherever the QP holds sends, even for a blocking send (ep->send_batch 1): the RTS
       posted right behind it takes it along, one post and one doorbell for both. */
    status = verbs_qp_post_bind(ep->qp, w->mw, req->rndv.reg, (uintptr_t)req->buf, req->len,
                                VERBS_SEND_DEFER, (uintptr_t)slot);
    if (status != IBMSG_OK) {
        window_put(ep, w, 1); /* never bound */
        if (verbs_post_refused(status)) {
            return IBMSG_ERR_NOT_SUPPORTED; /* this bind only: the message goes without one */
        }
        if (status != IBMSG_ERR_NO_RESOURCE) {
            core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
        }
        return status;
    }
    core_sq_push(ep);
    req->rndv.win = w;
    core_cnt_inc(ep->cnt, CNT_CORE_RNDV_WINDOWS_BOUND);
    core_cnt_inc(ep->cnt, CNT_VERBS_SEND_WRS_POSTED);
    if (verbs_qp_held(ep->qp) == 0) { /* a QP that holds nothing posted it at once */
        return core_ep_handed(ep, 0);
    }
    if (ep->send_batch == 1) {
        core_ep_mark_dirty(ep); /* the RTS takes it along; should that fail, progress does */
        return IBMSG_OK;
    }
    return core_ep_handed(ep, VERBS_SEND_DEFER);
}

void core_rndv_send_drop(ibmsg_ep_t ep, struct ibmsg_request_s *req)
{
    /* The window first: a registration with a window bound cannot be released. */
    if (req->rndv.win != NULL) {
        window_put(ep, req->rndv.win, 0);
        req->rndv.win = NULL;
    }
    if (req->rndv.reg != NULL) {
        verbs_mr_put(ep->ctx->rcache, req->rndv.reg);
        req->rndv.reg = NULL;
    }
    req->rndv.active = 0;
}

/* A send whose peer is done with it ends: its window (invalidated) and registration return. */
static void send_end(ibmsg_ep_t ep, struct ibmsg_request_s *req, int invalidated)
{
    if (req->rndv.win != NULL) {
        window_put(ep, req->rndv.win, invalidated);
        req->rndv.win = NULL;
    }
    core_rndv_send_drop(ep, req);
    core_req_complete(req, IBMSG_OK);
    if (core_ev_on(core_ev_rndv_completed)) {
        core_ev_rndv_raise(&core_ev_rndv_completed, ep, req, 0, req->len, IBMSG_OK);
    }
    core_ep_mark_dirty(ep); /* a send may wait for the id */
}

static UTIL_COLD void rndv_reject(ibmsg_ep_t ep, const char *what, const core_wire_rndv_t *b)
{
    core_cnt_inc(ep->cnt, CNT_CORE_RNDV_REJECTED);
    if (ep->rndv.rejected_logged++ < 8) {
        util_error("qp 0x%x: rejected a rendezvous %s (id %u, addr 0x%llx, length %llu, rkey "
                   "0x%x): no such outstanding transfer",
                   ep->qpn, what, b->id, (unsigned long long)b->addr, (unsigned long long)b->length,
                   b->rkey);
    }
}

/* Register a send's buffer: for windows (cached, no remote access of its own), or for remote
   read of exactly its bytes during this transfer only. */
static int send_register(ibmsg_ep_t ep, struct ibmsg_request_s *req, int window)
{
    unsigned access =
        VERBS_ACCESS_EXACT |
        (window ? VERBS_ACCESS_MW_BIND : VERBS_ACCESS_REMOTE_READ | VERBS_ACCESS_UNCACHED);
    int status = verbs_mr_get(ep->ctx->rcache, req->buf, req->len, access, &req->rndv.reg);

    if (status != IBMSG_OK) {
        req->rndv.reg = NULL;
        return status == IBMSG_ERR_NO_RESOURCE ? IBMSG_ERR_NO_MEMORY : status;
    }
    return IBMSG_OK;
}

int core_rndv_send(ibmsg_ep_t ep, struct ibmsg_request_s *req)
{
    core_rndv_ep_t *rv = &ep->rndv;
    uint32_t id = rv->tx_next_id;
    core_wire_rndv_t body;
    int status, window;

    if (rv->tx[id & RNDV_MASK] != NULL) {
        return IBMSG_ERR_NO_RESOURCE; /* CORE_RNDV_MAX sends await their FIN */
    }
    if (util_unlikely(req->iov.iov != NULL) && req->iov.ext == NULL) {
        status = core_iov_stage(req); /* a vector: the peer reads one packed copy */
        if (status != IBMSG_OK) {
            return status;
        }
    }
    /* A window, up to the size one bind takes, unless the registration kept from a retry says
       otherwise; a vector's packed copy lives for this transfer only, and so does its key. */
    window = req->rndv.reg != NULL
                 ? (req->rndv.reg->access & VERBS_ACCESS_MW_BIND) != 0
                 : rv->windows && req->len <= rv->window_max && req->iov.iov == NULL;
    if (window && req->rndv.win == NULL && !core_sq_room(ep, 2)) {
        return IBMSG_ERR_NO_RESOURCE; /* the bind and the RTS go together */
    }
    if (req->rndv.reg == NULL) {
        status = send_register(ep, req, window);
        if (status != IBMSG_OK) {
            return status;
        }
    }
    if ((req->rndv.reg->access & VERBS_ACCESS_MW_BIND) && req->rndv.win == NULL) {
        status = window_bind(ep, req);
        if (status == IBMSG_ERR_NOT_SUPPORTED || status == IBMSG_ERR_NO_MEMORY) {
            /* No window for this one: register exactly its bytes for this transfer instead. */
            verbs_mr_put(ep->ctx->rcache, req->rndv.reg);
            req->rndv.reg = NULL;
            status = send_register(ep, req, 0);
            if (status != IBMSG_OK) {
                return status;
            }
        } else if (status != IBMSG_OK) {
            if (status != IBMSG_ERR_NO_RESOURCE) {
                core_rndv_send_drop(ep, req);
            }
            return status; /* NO_RESOURCE: retried with the registration kept */
        }
    }
    body.addr = (uintptr_t)req->buf;
    body.length = req->len;
    body.rkey = req->rndv.win != NULL ? verbs_mw_rkey(req->rndv.win->mw) : req->rndv.reg->rkey;
    body.id = id;
    status = core_ep_post_hdr(ep, CORE_WIRE_RTS, req->rndv.win != NULL ? CORE_WIRE_FLAG_WINDOW : 0,
                              req->status.tag, &body, sizeof(body), NULL);
    if (status != IBMSG_OK) {
        if (status != IBMSG_ERR_NO_RESOURCE) {
            core_rndv_send_drop(ep, req);
        }
        return status; /* on NO_RESOURCE the registration and window are kept for the retry */
    }
    rv->tx[id & RNDV_MASK] = req;
    rv->tx_next_id++;
    req->rndv.id = id;
    req->rndv.rkey = body.rkey;
    req->rndv.active = 1;
    cnt_shard_t *cnt = ep->cnt; /* loaded once: the compiler cannot keep it across updates */
    core_cnt_inc(cnt, CNT_CORE_RNDV_MSGS_SENT);
    core_cnt_add(cnt, CNT_CORE_RNDV_BYTES_SENT, req->len);
    core_cnt_add(cnt, CNT_CORE_RNDV_REGISTERED_SENDS, (uint64_t)(req->rndv.win == NULL));
    if (core_ev_on(core_ev_rndv_started)) {
        core_ev_rndv_raise(&core_ev_rndv_started, ep, req, 0, req->len, IBMSG_OK);
    }
    return IBMSG_OK;
}

void core_rndv_stray_invalidation(ibmsg_ep_t ep, uint32_t rkey)
{
    core_cnt_inc(ep->cnt, CNT_CORE_RNDV_REJECTED);
    if (ep->rndv.rejected_logged++ < 8) {
        util_error("qp 0x%x: the peer invalidated key 0x%x outside a FIN", ep->qpn, rkey);
    }
}

/*
 * The FIN of a send: check it names exactly an outstanding transfer, then end it. Its
 * CORE_WIRE_FLAG_INVALIDATED says the peer sent it with invalidate of the window's key: then no
 * LOCAL_INV (on a window already free it fails, and with it the endpoint), whether or not the
 * device reported the invalidation (bnxt_re does not set IBV_WC_WITH_INV). A window the device
 * saw invalidated is reused; one only the peer's word says is freed, as deallocation
 * invalidates a window whatever its state: a peer claiming an invalidation it did not do keeps
 * no access.
 */
static void rndv_fin(ibmsg_ep_t ep, const core_wire_hdr_t *hdr, const core_wire_rndv_t *fin,
                     const verbs_wc_t *wc)
{
    struct ibmsg_request_s **slot = &ep->rndv.tx[fin->id & RNDV_MASK];
    struct ibmsg_request_s *req = *slot;
    int invalidated = (wc->flags & VERBS_WC_INVALIDATED) != 0;
    int said = (hdr->flags & CORE_WIRE_FLAG_INVALIDATED) != 0;

    if (req == NULL || req->rndv.id != fin->id || (uintptr_t)req->buf != fin->addr ||
        req->rndv.rkey != fin->rkey || fin->length > req->len ||
        (said && req->rndv.win == NULL)) { /* only a window's key is invalidated */
        rndv_reject(ep, "FIN", fin);
        if (invalidated) {
            core_rndv_stray_invalidation(ep, wc->ex);
        }
        return;
    }
    *slot = NULL;
    if (req->rndv.win == NULL) {
        send_end(ep, req, 1);
        return;
    }
    if (invalidated && wc->ex == req->rndv.rkey) {
        core_cnt_inc(ep->cnt, CNT_CORE_RNDV_REMOTE_INVALIDATIONS);
        send_end(ep, req, 1); /* the device saw the FIN kill exactly its key */
        return;
    }
    if (invalidated) {
        core_rndv_stray_invalidation(ep, wc->ex); /* some other key of ours */
    }
    if (said) {
        core_cnt_inc(ep->cnt, CNT_CORE_RNDV_REMOTE_INVALIDATIONS);
        send_end(ep, req, 0); /* the window is freed, not reused */
        return;
    }
    /* Not invalidated by the peer: do it here before the send completes. */
    req_fifo_push(&ep->rndv.unbind_head, &ep->rndv.unbind_tail, req);
    core_ep_mark_dirty(ep);
}

void core_rndv_unbound(ibmsg_ep_t ep, struct ibmsg_request_s *req, int wc_status)
{
    /* The FIN said the data was read: the send succeeded whatever the LOCAL_INV did; a failed
       or flushed one leaves the window in doubt, so it is freed rather than reused. */
    send_end(ep, req, wc_status == VERBS_WC_SUCCESS);
}

/* Post the LOCAL_INVs of sends whose FIN did not invalidate their window, in order. */
static void unbind_service(ibmsg_ep_t ep)
{
    core_rndv_ep_t *rv = &ep->rndv;
    struct ibmsg_request_s *req;

    while ((req = rv->unbind_head) != NULL && core_sq_room(ep, 1)) {
        core_sslot_t *slot = core_sslot_take(ep);
        slot->unbind = req;
        slot->signaled = 1;
        if (verbs_qp_post_local_inv(ep->qp, req->rndv.rkey, VERBS_SEND_SIGNALED, (uintptr_t)slot) !=
            IBMSG_OK) {
            slot->unbind = NULL;
            slot->signaled = 0;
            core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
            return;
        }
        req_fifo_pop(&rv->unbind_head, &rv->unbind_tail);
        core_sq_push(ep);
        ep->sq_last_signal = ep->sq_head;
        core_signal_posted(ep);
        core_cnt_inc(ep->cnt, CNT_CORE_RNDV_LOCAL_INVALIDATIONS);
        core_cnt_posted_now(ep);
    }
}

int core_rndv_arrival(ibmsg_ep_t ep, const core_wire_hdr_t *hdr, const verbs_wc_t *wc)
{
    const core_wire_rndv_t *body = (const core_wire_rndv_t *)(const void *)(hdr + 1);
    core_rndv_ep_t *rv = &ep->rndv;
    core_mq_entry_t *e;

    if (hdr->type == CORE_WIRE_FIN) {
        rndv_fin(ep, hdr, body, wc);
        return 0;
    }
    /* An RTS: the next id, of a size the eager protocol would not carry, within the window. */
    if (body->id != rv->rx_next_id || body->length <= core_ep_eager_max(ep, hdr->tag) ||
        rv->rx_active >= CORE_RNDV_MAX) {
        rndv_reject(ep, "RTS", body);
        return 0;
    }
    rv->rx_next_id++;
    rv->rx_active++;
    core_cnt_inc(ep->cnt, CNT_CORE_RNDV_MSGS_RECVD);
    e = core_mq_match_arrival(&ep->ctx->mq, ep, hdr->tag);
    if (e == NULL) {
        return 1;
    }
    core_rndv_pull(ep, util_container_of(e, struct ibmsg_request_s, mq), hdr);
    return 0;
}

static void pull_service(ibmsg_ep_t ep);

static void fin_queue(ibmsg_ep_t ep, const struct ibmsg_request_s *req, uint64_t bytes)
{
    core_rndv_ep_t *rv = &ep->rndv;
    core_rndv_fin_t *f = &rv->fin[rv->fin_head++ & RNDV_MASK];

    f->body.addr = req->rndv.raddr;
    f->body.length = bytes;
    f->body.rkey = req->rndv.rkey;
    f->body.id = req->rndv.id;
    f->invalidate = req->rndv.window;
    core_ep_mark_dirty(ep);
}

/* Every READ of req is done (or will never be posted): FIN to the sender, complete req. */
static void pull_finish(ibmsg_ep_t ep, struct ibmsg_request_s *req)
{
    int ok = req->rndv.error == IBMSG_OK || req->rndv.error == IBMSG_ERR_TRUNCATED;

    if (req->rndv.reg != NULL) {
        verbs_mr_put(ep->ctx->rcache, req->rndv.reg);
        req->rndv.reg = NULL;
    }
    if (req->rndv.vector) {
        core_iov_unregister(ep->ctx, &req->iov);
        req->rndv.vector = 0;
    }
    if (ok) {
        core_cnt_add(ep->cnt, CNT_CORE_RNDV_BYTES_RECVD, req->rndv.want);
    }
    if (ep->state == CORE_EP_CONNECTED) {
        /* A failed pull still FINs (0 bytes): the sender must not wait forever. */
        fin_queue(ep, req, ok ? req->rndv.want : 0);
    } else {
        ep->rndv.rx_active--;
    }
    req->rndv.active = 0;
    core_req_complete(req, req->rndv.error);
    if (core_ev_on(core_ev_rndv_completed)) {
        core_ev_rndv_raise(&core_ev_rndv_completed, ep, req, 1, ok ? req->rndv.want : 0,
                           req->rndv.error);
    }
}

void core_rndv_pull(ibmsg_ep_t ep, struct ibmsg_request_s *req, const core_wire_hdr_t *hdr)
{
    const core_wire_rndv_t *rts = (const core_wire_rndv_t *)(const void *)(hdr + 1);
    core_rndv_ep_t *rv = &ep->rndv;
    core_rndv_req_t *r = &req->rndv;

    req->ep = ep;
    req->status.source = ep;
    req->status.tag = hdr->tag;
    req->status.length = rts->length;
    r->raddr = rts->addr;
    r->rkey = rts->rkey;
    r->id = rts->id;
    r->want = UTIL_MIN((uint64_t)req->len, rts->length);
    r->posted = 0;
    r->reads_out = 0;
    r->active = 1;
    r->window = (hdr->flags & CORE_WIRE_FLAG_WINDOW) != 0;
    r->vector = 0;
    r->error = IBMSG_OK;
    r->next = NULL;
    if (util_unlikely(ep->state != CORE_EP_CONNECTED)) {
        /* An RTS that arrived before the endpoint failed: the data is no longer readable, and a
           queued pull would never be serviced (only connected endpoints post). */
        r->want = 0;
        r->error = IBMSG_ERR_PEER_FAILED;
        pull_finish(ep, req);
        return;
    }
    if (rts->length > req->len) {
        core_cnt_inc(ep->cnt, CNT_CORE_TRUNCATED_MSGS);
        r->error = IBMSG_ERR_TRUNCATED;
    }
    if (core_ev_on(core_ev_rndv_started)) {
        core_ev_rndv_raise(&core_ev_rndv_started, ep, req, 1, rts->length, IBMSG_OK);
    }
    if (r->want > 0 && util_unlikely(req->iov.iov != NULL)) {
        /* A vector: each entry registered, read into with a scatter list (no copy). */
        int status = core_iov_register(ep->ctx, &req->iov, r->want);
        if (status != IBMSG_OK) {
            r->error = status;
        } else {
            r->vector = 1;
        }
    } else if (r->want > 0) {
        int status =
            verbs_mr_get(ep->ctx->rcache, req->buf, r->want, VERBS_ACCESS_LOCAL_WRITE, &r->reg);
        if (status != IBMSG_OK) {
            r->reg = NULL;
            r->error = status;
        }
    }
    if (r->reg == NULL && !r->vector) {
        pull_finish(ep, req); /* nothing to read, or the buffer cannot be registered */
        return;
    }
    req_fifo_push(&rv->pull_head, &rv->pull_tail, req);
    if (ep->state == CORE_EP_CONNECTED) {
        pull_service(ep); /* at once: the data moves while the caller goes on */
    }
}

void core_rndv_read_done(ibmsg_ep_t ep, struct ibmsg_request_s *req, int wc_status)
{
    core_rndv_req_t *r = &req->rndv;

    ep->rndv.reads_out--;
    r->reads_out--;
    core_level_add(ep->ctx->cnt, CNT_CORE_RNDV_READS_OUTSTANDING, -1);
    if (wc_status != VERBS_WC_SUCCESS &&
        (r->error == IBMSG_OK || r->error == IBMSG_ERR_TRUNCATED)) {
        r->error = IBMSG_ERR_PEER_FAILED; /* the endpoint fails next and stops the pull */
    }
    /* posted < want: still queued for more READs (core_rndv_ep_fail takes it out on error). */
    if (r->reads_out == 0 && r->posted == r->want) {
        pull_finish(ep, req);
    }
    core_ep_mark_dirty(ep);
}

/* Post the READs of the queued pulls, in match order, within the QP's limits. */
static void pull_service(ibmsg_ep_t ep)
{
    core_rndv_ep_t *rv = &ep->rndv;
    struct ibmsg_request_s *req;

    while ((req = rv->pull_head) != NULL) {
        core_rndv_req_t *r = &req->rndv;
        while (r->posted < r->want) {
            core_sslot_t *slot;
            uint32_t n = (uint32_t)UTIL_MIN((uint64_t)rv->chunk, r->want - r->posted);
            int status, nsge = 1;
            if (rv->reads_out >= rv->reads_max || !core_sq_room(ep, 1)) {
                return; /* resumed when a READ or send completes */
            }
            verbs_sge_t sge[VERBS_QP_SGE_MAX];
            if (util_unlikely(r->vector)) {
                /* As many entries as one READ scatters to; the rest in the next READs. */
                n = core_iov_sges(&req->iov, r->posted, n, ep->rma.sge_rd, sge, &nsge);
            } else {
                sge[0] = (verbs_sge_t){(uintptr_t)req->buf + r->posted, n, r->reg->lkey};
            }

            slot = core_sslot_take(ep);
            slot->rndv = req;
            slot->signaled = 1;
            /* Every READ is signalled: its completion frees a read slot and may end the pull.
               Held when messages are: the READs of one progress call go in one post. */
            status = verbs_qp_post_rdma(ep->qp, VERBS_RDMA_READ, sge, nsge, r->raddr + r->posted,
                                        r->rkey, VERBS_SEND_SIGNALED | core_ep_defer(ep),
                                        (uintptr_t)slot);
            if (status != IBMSG_OK) {
                slot->rndv = NULL;
                core_ep_fail(ep, IBMSG_ERR_PEER_FAILED);
                return;
            }
            core_sq_push(ep);
            ep->sq_last_signal = ep->sq_head;
            core_signal_posted(ep);
            rv->reads_out++;
            r->reads_out++;
            core_level_add(ep->ctx->cnt, CNT_CORE_RNDV_READS_OUTSTANDING, 1);
            r->posted += n;
            core_cnt_inc(ep->cnt, CNT_CORE_RNDV_READS_POSTED);
            core_cnt_inc(ep->cnt, CNT_VERBS_SEND_WRS_POSTED);
            if (core_ep_handed(ep, core_ep_defer(ep)) != IBMSG_OK) {
                return; /* the endpoint failed */
            }
        }
        req_fifo_pop(&rv->pull_head, &rv->pull_tail);
    }
}

void core_rndv_service(ibmsg_ep_t ep)
{
    core_rndv_ep_t *rv = &ep->rndv;

    if (rv->unbind_head != NULL) {
        unbind_service(ep);
    }
    while (rv->fin_tail != rv->fin_head && core_ep_can_send(ep)) {
        const core_rndv_fin_t *f = &rv->fin[rv->fin_tail & RNDV_MASK];
        if (core_ep_post_hdr(ep, CORE_WIRE_FIN, f->invalidate ? CORE_WIRE_FLAG_INVALIDATED : 0, 0,
                             &f->body, sizeof(f->body),
                             f->invalidate ? &f->body.rkey : NULL) != IBMSG_OK) {
            break; /* no bounce buffer (retried later) or the endpoint failed */
        }
        rv->fin_tail++;
        rv->rx_active--;
    }
    if (rv->pull_head != NULL && ep->state == CORE_EP_CONNECTED) {
        pull_service(ep);
    }
}

void core_rndv_ep_fail(ibmsg_ep_t ep, int error)
{
    core_rndv_ep_t *rv = &ep->rndv;
    struct ibmsg_request_s *req, *next;

    if (rv->tx == NULL) {
        return;
    }
    /* Sends: the peer can no longer read them (the QP is in error or about to be, and their
       windows are freed). */
    for (uint32_t i = 0; i < CORE_RNDV_MAX; i++) {
        req = rv->tx[i];
        if (req != NULL) {
            rv->tx[i] = NULL;
            core_rndv_send_drop(ep, req);
            core_req_complete(req, error);
            if (core_ev_on(core_ev_rndv_completed)) {
                core_ev_rndv_raise(&core_ev_rndv_completed, ep, req, 0, 0, error);
            }
        }
    }
    /* Sends whose FIN came: the data was read, so they succeeded; the QP being in error, their
       windows are unreachable and are freed. */
    while ((req = rv->unbind_head) != NULL) {
        req_fifo_pop(&rv->unbind_head, &rv->unbind_tail);
        send_end(ep, req, 0);
    }
    /* Pulls: post nothing more; those with READs in flight end when the READs come back. */
    for (req = rv->pull_head; req != NULL; req = next) {
        next = req->rndv.next;
        req->rndv.next = NULL;
        req->rndv.want = req->rndv.posted;
        req->rndv.error = error;
        if (req->rndv.reads_out == 0) {
            pull_finish(ep, req);
        }
    }
    rv->pull_head = rv->pull_tail = NULL;
    rv->rx_active -= rv->fin_head - rv->fin_tail;
    rv->fin_tail = rv->fin_head;
}
