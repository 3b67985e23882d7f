/*
 * On-demand wireup: each process has one UD queue pair (verbs/ud.c), the connection manager,
 * whose address every process publishes once through PMIx. An RC endpoint to a rank is created
 * only when asked for (ibmsg_world_ep) or when that rank asks us, by a three-way handshake over
 * UD, like the IB CM's REQ / REP / RTU:
 *
 *   A: create endpoint (CONNECTING: sends queue)   --REQ(nonce, A's blob)-->  B
 *   B: create endpoint (or reuse its own pending one), connect it, but hold its sends: A's queue
 *      pair is not ready to receive yet   <--REP(nonce, B's blob)--
 *   A: connect; its queued sends go         --RTU(nonce)-->  B: release its held sends
 *
 * Why RTU: a message B sent before A's queue pair reached RTR would be dropped and retried by
 * the RC transport only after the ACK timeout (67 ms at verbs_timeout 14).
 * Simultaneous connects (A and B ask each other at once) must give ONE endpoint pair: the
 * request of the lower rank wins. A process that receives a REQ while its own REQ to that rank
 * is pending answers it only when the requester's rank is lower, with its pending endpoint (so
 * no second one is made), and ignores it otherwise (the peer then answers ours the same way).
 * Datagrams may be lost: REQ and REP are resent with a doubling timeout until answered or
 * world_connect_timeout_ms passes (then the endpoint fails).
 *
 * Every datagram is untrusted: size, magic, version, type, ranks, job size, source queue pair
 * (it must be the UD QP the claimed rank published) and nonce are checked, the RC blob is
 * validated by ibmsg_ep_connect, and rejections are counted (world_connect_rejected).
 * The hot path pays one ibv_poll_cq on an empty CQ per progress call (user space, no syscall)
 * and a clock read only while handshakes are pending.
 */
#include "world/wireup.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "world/world_counters.h"
#include "world/world_events.h"
#include "util/log.h"
#include "verbs/addr.h"
#include "verbs/notify.h"
#include "verbs/ud.h"

#define WU_MAGIC     0x69627775u /* "ibwu" */
#define WU_VERSION   1
#define WU_HDR       28
#define WU_RETRY_NS  20000000ull   /* first resend after 20 ms, doubling */
#define WU_RETRY_MAX 1000000000ull /* ... up to 1 s */
#define WU_NRECV     256
#define WU_NSEND     64

enum { WU_REQ = 1, WU_REP = 2, WU_RTU = 3, WU_BYE = 4 };

typedef enum wu_state {
    WU_NONE = 0,
    WU_REQ_SENT,  /* we asked; waiting for REP */
    WU_AWAIT_RTU, /* we answered; sends held until RTU */
    WU_CONNECTED,
    WU_FAILED,
} wu_state_t;

typedef struct wu_peer {
    verbs_ah_t *ah;
    uint32_t ud_qpn; /* 0: address not fetched yet */
    uint8_t state;
    uint8_t requester; /* our REQ made this connection */
    uint8_t raced;     /* a REQ of the peer crossed ours */
    uint32_t nonce;
    uint32_t held_credits; /* AWAIT_RTU: the credits the peer granted, released by RTU */
    uint32_t next_pending; /* list of peers with a handshake in flight (UINT32_MAX: end) */
    uint64_t started_ns;
    uint64_t retry_ns; /* when to resend */
    uint64_t backoff_ns;
} wu_peer_t;

struct world_wireup {
    ibmsg_context_t ctx;
    uint32_t rank;
    uint32_t size;
    ibmsg_ep_t *eps;
    verbs_ud_t *ud;
    world_wireup_lookup_cb_t lookup;
    wu_peer_t *peers;
    uint32_t pending; /* head of the pending list */
    uint32_t npending;
    uint32_t nonce_seq;
    uint64_t timeout_ns;
    _Atomic(uint8_t) *dead; /* set by world_wireup_peer_died (any thread) */
    atomic_uint dead_any;
};

static void wireup_goodbye(world_wireup_t *wu);

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static int wireup_progress(void *arg);
static int wireup_arm(void *arg, int *timeout_ms);

int world_wireup_create(ibmsg_context_t ctx, uint32_t rank, uint32_t size, ibmsg_ep_t *eps,
                        int on_demand, world_wireup_lookup_cb_t lookup, world_wireup_t **wu_p)
{
    world_wireup_t *wu = calloc(1, sizeof(*wu));
    int status;

    if (wu == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    wu->ctx = ctx;
    wu->rank = rank;
    wu->size = size;
    wu->eps = eps;
    wu->lookup = lookup;
    wu->pending = UINT32_MAX;
    wu->timeout_ns = (uint64_t)ctx->cfg.connect_timeout_ms * 1000000u;
    wu->nonce_seq = (uint32_t)world_now_ns() ^ (rank << 20);
    wu->peers = calloc(size, sizeof(*wu->peers));
    wu->dead = calloc(size, sizeof(*wu->dead));
    if (wu->peers == NULL || wu->dead == NULL) {
        status = IBMSG_ERR_NO_MEMORY;
        goto err_free;
    }
    if (on_demand) {
        status = verbs_ud_create(ctx->dev, WU_NRECV, WU_NSEND, &wu->ud);
        if (status != IBMSG_OK) {
            goto err_free;
        }
    }
    core_context_set_progress_hook(ctx, wireup_progress, wu);
    core_context_set_wait_hook(ctx, wireup_arm, wu);
    *wu_p = wu;
    return IBMSG_OK;

err_free:
    free(wu->dead);
    free(wu->peers);
    free(wu);
    return status;
}

void world_wireup_destroy(world_wireup_t *wu)
{
    if (wu == NULL) {
        return;
    }
    core_context_set_progress_hook(wu->ctx, NULL, NULL);
    core_context_set_wait_hook(wu->ctx, NULL, NULL);
    wireup_goodbye(wu);
    for (uint32_t p = 0; p < wu->size; p++) {
        verbs_ud_ah_destroy(wu->peers[p].ah);
    }
    verbs_ud_destroy(wu->ud);
    free(wu->dead);
    free(wu->peers);
    free(wu);
}

int world_wireup_address(world_wireup_t *wu, void *buf, size_t *len)
{
    verbs_addr_t a;

    if (wu->ud == NULL || *len < VERBS_ADDR_PACKED_SIZE) {
        return IBMSG_ERR_INVALID;
    }
    verbs_ud_addr(wu->ud, &a);
    *len = VERBS_ADDR_PACKED_SIZE;
    return verbs_addr_pack(&a, buf, VERBS_ADDR_PACKED_SIZE);
}

/* The peer's UD address, fetched once (PMIx_Get is a local lookup after the fence). */
static int peer_resolve(world_wireup_t *wu, uint32_t r)
{
    wu_peer_t *p = &wu->peers[r];
    uint8_t blob[VERBS_ADDR_PACKED_SIZE + 8];
    size_t len = sizeof(blob);
    verbs_addr_t a;
    int status;

    if (p->ah != NULL) {
        return IBMSG_OK;
    }
    status = wu->lookup(r, blob, &len);
    if (status == IBMSG_OK) {
        status = verbs_addr_unpack(blob, len, &a);
    }
    if (status == IBMSG_OK) {
        status = verbs_ud_ah_create(wu->ud, &a, &p->ah);
    }
    if (status != IBMSG_OK) {
        util_error("world: rank %u's connection manager address: %s", r,
                   ibmsg_status_string(status));
        return status;
    }
    p->ud_qpn = a.qpn;
    return IBMSG_OK;
}

static void wu_send(world_wireup_t *wu, uint32_t r, uint8_t type)
{
    wu_peer_t *p = &wu->peers[r];
    uint8_t msg[WU_HDR + IBMSG_EP_ADDRESS_MAX];
    size_t blen = 0;
    if (type == WU_REQ || type == WU_REP) {
        blen = IBMSG_EP_ADDRESS_MAX;
        if (ibmsg_ep_address(wu->eps[r], msg + WU_HDR, &blen) != IBMSG_OK) {
            return;
        }
    }
    put32(msg, WU_MAGIC);
    msg[4] = WU_VERSION;
    msg[5] = type;
    msg[6] = (uint8_t)((WU_HDR + blen) >> 8);
    msg[7] = (uint8_t)(WU_HDR + blen);
    put32(msg + 8, wu->rank);
    put32(msg + 12, r);
    put32(msg + 16, p->nonce);
    put32(msg + 20, wu->size);
    put32(msg + 24, (uint32_t)blen);
    /* When every send slot is in flight this one is dropped like a lost datagram: REQ and REP
       are resent by their timers, a lost RTU by the peer resending its REP. */
    (void)verbs_ud_send(wu->ud, p->ah, p->ud_qpn, msg, WU_HDR + blen);
}

/*
 * Tell the peers we have endpoints with that we leave, so their endpoints fail now rather than
 * when a send times out (best effort: a lost BYE leaves it to keepalive and launcher events).
 */
static void wireup_goodbye(world_wireup_t *wu)
{
    for (uint32_t p = 0; wu->ud != NULL && p < wu->size; p++) {
        if (wu->eps[p] != NULL && wu->peers[p].ah != NULL && wu->peers[p].state != WU_FAILED) {
            if (verbs_ud_flush(wu->ud, 0) == IBMSG_OK) {
                wu_send(wu, p, WU_BYE);
            }
        }
    }
    if (wu->ud != NULL) {
        (void)verbs_ud_flush(wu->ud, 1000); /* the datagrams leave before the queue pair goes */
    }
}

static void pending_add(world_wireup_t *wu, uint32_t r, uint64_t now)
{
    wu_peer_t *p = &wu->peers[r];

    p->started_ns = now;
    p->backoff_ns = WU_RETRY_NS;
    p->retry_ns = now + WU_RETRY_NS;
    p->next_pending = wu->pending;
    wu->pending = r;
    wu->npending++;
}

static void pending_remove(world_wireup_t *wu, uint32_t r)
{
    uint32_t *pp = &wu->pending;

    while (*pp != UINT32_MAX) {
        if (*pp == r) {
            *pp = wu->peers[r].next_pending;
            wu->npending--;
            return;
        }
        pp = &wu->peers[*pp].next_pending;
    }
}

static int ep_new(world_wireup_t *wu, uint32_t r)
{
    ibmsg_ep_t ep;
    int status = ibmsg_ep_create(wu->ctx, &ep);

    if (status != IBMSG_OK) {
        util_error("world: endpoint to rank %u: %s", r, ibmsg_status_string(status));
        return status;
    }
    ep->world_rank = r;
    ep->state = CORE_EP_CONNECTING;
    /* Sends queue until the peer's limit is known; those above it fail then (wireup_connect). */
    ep->peer_limit = wu->ctx->eager_limit;
    wu->eps[r] = ep;
    world_cnt.eps++;
    world_cnt.eps_on_demand++;
    return IBMSG_OK;
}

/* cause: IBMSG_T_EP_FAIL_* for the endpoint's core_ep_failed event (a goodbye overrides it). */
static void peer_fail(world_wireup_t *wu, uint32_t r, int cause, const char *why)
{
    wu_peer_t *p = &wu->peers[r];
    int left = wu->dead[r] == 2; /* said goodbye: an orderly exit, not worth a warning */

    if (p->state == WU_REQ_SENT || p->state == WU_AWAIT_RTU) {
        pending_remove(wu, r);
    }
    p->state = WU_FAILED;
    if (wu->eps[r] != NULL) {
        if (left) {
            util_debug("world: rank %u left the world: its endpoint fails", r);
        } else {
            util_warn("world: endpoint to rank %u failed: %s", r, why);
        }
        wu->eps[r]->ev.fail_cause = (uint8_t)(left ? IBMSG_T_EP_FAIL_GOODBYE : cause);
        core_ep_fail(wu->eps[r], IBMSG_ERR_PEER_FAILED);
    }
    world_cnt.peers_failed += !left;
    world_cnt.peers_departed += left;
}

/* Connect our endpoint to r's blob; on success it is CONNECTED (credits as the blob says). */
static int wireup_connect(world_wireup_t *wu, uint32_t r, const uint8_t *blob, size_t len)
{
    ibmsg_ep_t ep = wu->eps[r];
    int status;

    ep->state = CORE_EP_CREATED;
    status = ibmsg_ep_connect(ep, blob, len);
    if (status != IBMSG_OK) {
        ep->state = CORE_EP_CONNECTING;
        return status;
    }
    /* Sends queued while connecting leave from core_ep_service, eager or rendezvous by the peer's
       eager limit now known. */
    return IBMSG_OK;
}

int world_wireup_ep(world_wireup_t *wu, uint32_t r, ibmsg_ep_t *ep_p)
{
    wu_peer_t *p = &wu->peers[r];
    int status;

    if (wu->eps[r] != NULL) {
        *ep_p = wu->eps[r];
        return IBMSG_OK;
    }
    if (wu->ud == NULL) {
        return IBMSG_ERR_NOT_FOUND;
    }
    status = peer_resolve(wu, r);
    if (status == IBMSG_OK) {
        status = ep_new(wu, r);
    }
    if (status != IBMSG_OK) {
        return status;
    }
    p->state = WU_REQ_SENT;
    p->requester = 1;
    p->nonce = ++wu->nonce_seq;
    pending_add(wu, r, world_now_ns());
    wu_send(wu, r, WU_REQ);
    world_cnt.connect_reqs_sent++;
    if (core_ev_on(world_ev_connect_req_sent)) {
        world_ev_req_raise(&world_ev_connect_req_sent, wu->eps[r], r, p->nonce);
    }
    *ep_p = wu->eps[r];
    return IBMSG_OK;
}

static void reject(const char *why, uint32_t src, uint32_t type)
{
    world_cnt.connect_rejected++;
    if (world_cnt.connect_rejected <= 8) {
        util_warn("world: rejected a connect message (type %u, from rank %u): %s", type, src, why);
    }
}

/*
 * r's first REQ crossed ours: the race's events (the lower rank wins, its request makes the one
 * connection), then the request's, raised here once whether we answer it or not.
 */
static void on_race(world_wireup_t *wu, uint32_t r, uint32_t nonce)
{
    ibmsg_ep_t ep = wu->eps[r];
    uint32_t winner = UTIL_MIN(r, wu->rank);

    if (core_ev_on(world_ev_connect_race)) {
        world_ev_race_raise(ep, r, winner, winner == wu->rank ? WORLD_RACE_WON : WORLD_RACE_LOST);
    }
    if (core_ev_on(world_ev_connect_req_recvd)) {
        world_ev_req_raise(&world_ev_connect_req_recvd, ep, r, nonce);
    }
}

/* REQ from r: answer it (accept), unless our own pending REQ wins. */
static void on_req(world_wireup_t *wu, uint32_t r, uint32_t nonce, const uint8_t *blob, size_t len)
{
    wu_peer_t *p = &wu->peers[r];
    ibmsg_ep_t ep;

    world_cnt.connect_reqs_recvd++;
    switch (p->state) {
    case WU_REQ_SENT:
        if (!p->raced) { /* once per crossing, not per resend */
            world_cnt.connect_races++;
            on_race(wu, r, nonce);
        }
        p->raced = 1;
        if (r > wu->rank) {
            return; /* ours wins: r answers our REQ with this very endpoint */
        }
        pending_remove(wu, r); /* theirs wins: our pending endpoint becomes the answer */
        break;
    case WU_AWAIT_RTU:
        if (nonce == p->nonce) {
            wu_send(wu, r, WU_REP); /* our REP was lost */
        } else {
            reject("second request with another nonce", r, WU_REQ);
        }
        return;
    case WU_CONNECTED:
        return; /* a late duplicate: the requester already has our REP */
    case WU_FAILED:
        reject("peer failed", r, WU_REQ);
        return;
    default:
        if (wu->eps[r] != NULL || ep_new(wu, r) != IBMSG_OK) {
            reject("no endpoint", r, WU_REQ);
            return;
        }
    }
    ep = wu->eps[r];
    if (wireup_connect(wu, r, blob, len) != IBMSG_OK) {
        /* A forged or broken request must not cost the real peer its endpoint: undo. */
        reject("malformed endpoint address", r, WU_REQ);
        if (p->state == WU_REQ_SENT) {
            pending_add(wu, r, p->started_ns); /* our own request stays pending */
        } else {
            /* destroy progresses the context: no re-entry here */
            core_progress_hook_t hook = core_context_set_progress_hook(wu->ctx, NULL, NULL);
            ibmsg_ep_destroy(ep);
            core_context_set_progress_hook(wu->ctx, hook.fn, hook.arg);
            wu->eps[r] = NULL;
            world_cnt.eps--;
        }
        return;
    }
    /* Hold our sends: r's queue pair may not be ready to receive before it has our REP. */
    p->held_credits = ep->cr.avail;
    ep->cr.avail = 0;
    p->state = WU_AWAIT_RTU;
    p->requester = 0;
    p->nonce = nonce;
    pending_add(wu, r, world_now_ns());
    wu_send(wu, r, WU_REP);
    if (core_ev_on(world_ev_connect_req_recvd) && !p->raced) {
        world_ev_req_raise(&world_ev_connect_req_recvd, ep, r, nonce);
    }
}

static void on_rep(world_wireup_t *wu, uint32_t r, uint32_t nonce, const uint8_t *blob, size_t len)
{
    wu_peer_t *p = &wu->peers[r];
    uint64_t now;

    if (nonce != p->nonce || !p->requester) {
        reject("reply to no request of ours", r, WU_REP);
        return;
    }
    if (p->state == WU_CONNECTED) {
        wu_send(wu, r, WU_RTU); /* our RTU was lost */
        return;
    }
    if (p->state != WU_REQ_SENT) {
        reject("unexpected reply", r, WU_REP);
        return;
    }
    pending_remove(wu, r);
    if (wireup_connect(wu, r, blob, len) != IBMSG_OK) {
        reject("malformed endpoint address", r, WU_REP);
        peer_fail(wu, r, IBMSG_T_EP_FAIL_CONNECT, "its endpoint address was refused");
        return;
    }
    p->state = WU_CONNECTED;
    wu_send(wu, r, WU_RTU);
    now = world_now_ns();
    world_cnt.connect_time_ns += now - p->started_ns;
    world_cnt.connects++;
    core_ep_mark_dirty(wu->eps[r]); /* the queued sends go */
}

static void on_rtu(world_wireup_t *wu, uint32_t r, uint32_t nonce)
{
    wu_peer_t *p = &wu->peers[r];
    ibmsg_ep_t ep = wu->eps[r];

    if (nonce != p->nonce || p->requester) {
        reject("ready-to-use for no reply of ours", r, WU_RTU);
        return;
    }
    if (p->state != WU_AWAIT_RTU) {
        return; /* a duplicate */
    }
    pending_remove(wu, r);
    p->state = WU_CONNECTED;
    if (ep->state == CORE_EP_CONNECTED) {
        ep->cr.avail += p->held_credits;
        core_ep_mark_dirty(ep);
    }
}

static void on_msg(world_wireup_t *wu, const verbs_ud_msg_t *m)
{
    const uint8_t *d = m->data;
    uint32_t src, dst, nonce, blen, type;

    if (m->len < WU_HDR || get32(d) != WU_MAGIC) {
        reject("not a connect message", UINT32_MAX, 0);
        return;
    }
    type = d[5];
    src = get32(d + 8);
    dst = get32(d + 12);
    nonce = get32(d + 16);
    blen = get32(d + 24);
    if (d[4] != WU_VERSION || type < WU_REQ || type > WU_BYE) {
        reject("unknown version or type", src, type);
        return;
    }
    if ((((uint32_t)d[6] << 8) | d[7]) != m->len || blen != m->len - WU_HDR ||
        blen > IBMSG_EP_ADDRESS_MAX || (type >= WU_RTU) != (blen == 0)) {
        reject("inconsistent length", src, type);
        return;
    }
    if (src >= wu->size || src == wu->rank || dst != wu->rank || get32(d + 20) != wu->size) {
        reject("rank or job size out of range", src, type);
        return;
    }
    /* The datagram must come from the UD queue pair the claimed rank published. */
    if (peer_resolve(wu, src) != IBMSG_OK || m->src_qpn != wu->peers[src].ud_qpn) {
        reject("source queue pair is not the rank's", src, type);
        return;
    }
    if (type == WU_REQ) {
        on_req(wu, src, nonce, d + WU_HDR, blen);
    } else if (type == WU_REP) {
        on_rep(wu, src, nonce, d + WU_HDR, blen);
    } else if (type == WU_RTU) {
        on_rtu(wu, src, nonce);
    } else if (wu->eps[src] != NULL) {
        /* BYE: src finalized. Failed at the next progress, after this one's RC completions. */
        uint8_t none = 0;
        atomic_compare_exchange_strong(&wu->dead[src], &none, 2);
        atomic_store_explicit(&wu->dead_any, 1, memory_order_release);
    }
}

static UTIL_COLD void wireup_timers(world_wireup_t *wu)
{
    uint64_t now = world_now_ns();
    uint32_t r = wu->pending;

    while (r != UINT32_MAX) {
        wu_peer_t *p = &wu->peers[r];
        uint32_t next = p->next_pending;
        uint64_t deadline = p->started_ns + wu->timeout_ns;

        if (now >= p->retry_ns) {
            if (now >= deadline) {
                peer_fail(wu, r, IBMSG_T_EP_FAIL_CONNECT,
                          "no answer to its connect request (world_connect_timeout_ms)");
            } else {
                world_cnt.connect_retries++;
                wu_send(wu, r, p->state == WU_REQ_SENT ? WU_REQ : WU_REP);
                p->backoff_ns = UTIL_MIN(p->backoff_ns * 2, WU_RETRY_MAX);
                /* Woken at the deadline, not at the next resend after it: the timeout holds
                   to within a progress call (a resend up to 1 s later would overshoot it). */
                p->retry_ns = UTIL_MIN(now + p->backoff_ns, deadline);
            }
        }
        r = next;
    }
}

static UTIL_COLD void wireup_reap_dead(world_wireup_t *wu)
{
    atomic_store_explicit(&wu->dead_any, 0, memory_order_relaxed);
    for (uint32_t r = 0; r < wu->size; r++) {
        if (atomic_load_explicit(&wu->dead[r], memory_order_acquire) != 0 &&
            wu->peers[r].state != WU_FAILED) {
            peer_fail(wu, r, IBMSG_T_EP_FAIL_LAUNCHER, "the launcher reports the process gone");
        }
    }
}

/* The context's progress hook: take connect messages, resend the unanswered ones, fail the dead
   peers. */
static int wireup_progress(void *arg)
{
    world_wireup_t *wu = arg;
    verbs_ud_msg_t m;
    uint64_t errors = 0;
    int n = 0;

    /* Dead peers first: a BYE taken below fails its endpoint only at the next call, after that
       call's poll of the RC completions (messages the peer sent before leaving). */
    if (util_unlikely(atomic_load_explicit(&wu->dead_any, memory_order_relaxed) != 0)) {
        wireup_reap_dead(wu);
        n++;
    }
    if (wu->ud != NULL) {
        while (verbs_ud_poll(wu->ud, &m, &errors) == 1) {
            on_msg(wu, &m);
            n++;
        }
        world_cnt.connect_rejected += errors;
        if (wu->npending > 0) {
            wireup_timers(wu);
        }
    }
    return n;
}

/* The context's wait hook: the UD CQ reports to the context's fd too; handshakes in flight
   wake the sleeper for their resends (WU_RETRY_NS, the first backoff, at most). */
static int wireup_arm(void *arg, int *timeout_ms)
{
    world_wireup_t *wu = arg;

    if (atomic_load_explicit(&wu->dead_any, memory_order_relaxed) != 0) {
        return 1;
    }
    if (wu->ud == NULL) {
        return 0;
    }
    if (wu->npending > 0 && (*timeout_ms < 0 || *timeout_ms > (int)(WU_RETRY_NS / 1000000u))) {
        *timeout_ms = (int)(WU_RETRY_NS / 1000000u);
    }
    return verbs_ud_arm(wu->ud);
}

void world_wireup_peer_died(world_wireup_t *wu, uint32_t rank)
{
    if (wu == NULL || rank >= wu->size || rank == wu->rank) {
        return;
    }
    atomic_store_explicit(&wu->dead[rank], 1, memory_order_release);
    atomic_store_explicit(&wu->dead_any, 1, memory_order_release);
    core_context_wake(wu->ctx); /* a sleeping wait sees it now */
}
