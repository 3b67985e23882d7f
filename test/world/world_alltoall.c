/*
 * A rank program for the world tests, launched by mpirun (PMIx) in the Soft-RoCE guest.
 *
 *   world_alltoall [-n msgs] [-s bytes]   every rank sends msgs messages of bytes to every other
 *       rank and receives as many from each (one round by endpoint, one round from any source),
 *       checks every byte, tag, length and source, then barriers and checks the counters.
 *   world_alltoall -x R                    rank R leaves right after init; the others must see
 *       its endpoint fail (IBMSG_ERR_PEER_FAILED) within 60 s, then still talk among themselves.
 *       -c C: rank R exits with status C (after finalizing), to see what the launcher does.
 *   world_alltoall -r [-n msgs]            ring with on-demand wireup: each rank posts a receive
 *       from any source BEFORE it has any endpoint, then sends to the next rank only; the
 *       message from the previous rank (which connected to us) must match it. Each rank must end
 *       with exactly 2 endpoints (1 with 2 ranks), whatever the job size.
 *   world_alltoall -t R -T ms -M ms        rank R makes no progress after init (it answers no
 *       connect request); the others, run with IBMSG_WORLD_CONNECT_TIMEOUT_MS=ms, must see their
 *       send to it fail with IBMSG_ERR_PEER_FAILED between ms and ms + M after it was issued.
 *   world_alltoall -k R                    rank R kills itself (SIGKILL) after a barrier; the
 *       others print whether their endpoint to it failed within 10 s and world_peers_failed
 *       (a measurement of the launcher's termination events, for docs/scaling.md).
 *   -e  the world is expected to be wired eagerly (IBMSG_WORLD_WIREUP=0): counters differ.
 *
 * The all-to-all also prints the launcher's fence costs: init's data-collecting fence
 * (world_init_fence_time_ns) and the median of 5 barriers (PMIx_Fence without data).
 *
 * Prints one line per rank; exits 0 on success, 1 on any mismatch or error.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <signal.h>
#include <unistd.h>

#include <ibmsg/ibmsg.h>
#include <ibmsg/tool.h>
#include <ibmsg/world.h>

static uint32_t me;

#define CHECK(what, expr)                                                  \
    do {                                                                   \
        int rc_ = (expr);                                                  \
        if (rc_ != IBMSG_OK) {                                             \
            fprintf(stderr, "rank %u: %s: %s (%d) at line %d\n", me, what, \
                    ibmsg_status_string(rc_), rc_, __LINE__);              \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

#define FAIL(...)                         \
    do {                                  \
        fprintf(stderr, "rank %u: ", me); \
        fprintf(stderr, __VA_ARGS__);     \
        fprintf(stderr, "\n");            \
        exit(1);                          \
    } while (0)

static unsigned char pattern(uint32_t from, uint32_t to, uint32_t k, size_t i)
{
    return (unsigned char)(from * 131u + to * 17u + k * 7u + i * 3u + 1u);
}

static uint64_t tag_of(uint32_t round, uint32_t from, uint32_t k)
{
    return ((uint64_t)round << 56) | ((uint64_t)from << 24) | k;
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

typedef struct pvar {
    ibmsg_t_pvar_handle_t h;
} pvar_t;

static ibmsg_t_pvar_session_t session;

static pvar_t pvar_open(const char *name, int var_class, void *obj)
{
    pvar_t pv;
    int index, count;

    CHECK(name, ibmsg_t_pvar_get_index(name, var_class, &index));
    CHECK(name, ibmsg_t_pvar_handle_alloc(session, index, obj, &pv.h, &count));
    if (count != 1) {
        FAIL("%s: count %d", name, count);
    }
    /* The core's counters count from start; the world's are continuous. */
    int ret = ibmsg_t_pvar_start(session, pv.h);
    if (ret != IBMSG_OK && ret != IBMSG_T_ERR_PVAR_NO_STARTSTOP) {
        FAIL("%s: start: %d", name, ret);
    }
    return pv;
}

static int eager_expected;

static unsigned long long pvar_read(pvar_t pv)
{
    unsigned long long v = 0;
    CHECK("pvar_read", ibmsg_t_pvar_read(session, pv.h, &v));
    return v;
}

/* Round 0: receives bound to each endpoint; round 1: receives from any source. */
static void alltoall(ibmsg_world_t world, uint32_t size, uint32_t n, size_t bytes, uint32_t round)
{
    uint32_t npeers = size - 1, nreq = npeers * n;
    ibmsg_context_t ctx;
    ibmsg_request_t *rreq = calloc(nreq, sizeof(*rreq)), *sreq = calloc(nreq, sizeof(*sreq));
    unsigned char *rbuf = malloc(nreq * bytes + 1), *sbuf = malloc(nreq * bytes + 1);
    uint32_t *seen = calloc(size, sizeof(*seen));

    if (!rreq || !sreq || !rbuf || !sbuf || !seen) {
        FAIL("out of memory");
    }
    CHECK("world_context", ibmsg_world_context(world, &ctx));
    for (uint32_t j = 0, p = 0; p < size; p++) {
        ibmsg_ep_t ep;
        if (p == me) {
            continue;
        }
        CHECK("world_ep", ibmsg_world_ep(world, p, &ep));
        for (uint32_t k = 0; k < n; k++, j++) {
            if (round == 0) {
                CHECK("irecv",
                      ibmsg_tag_irecv(ctx, ep, rbuf + (size_t)j * bytes, bytes, tag_of(round, p, k),
                                      IBMSG_TAG_MASK_EXACT, &rreq[j]));
            } else {
                /* Any source, any sender: only the round must match. */
                CHECK("irecv", ibmsg_tag_irecv(ctx, IBMSG_EP_NULL, rbuf + (size_t)j * bytes, bytes,
                                               tag_of(round, 0, 0), 0xffull << 56, &rreq[j]));
            }
        }
    }
    for (uint32_t j = 0, p = 0; p < size; p++) {
        ibmsg_ep_t ep;
        if (p == me) {
            continue;
        }
        CHECK("world_ep", ibmsg_world_ep(world, p, &ep));
        for (uint32_t k = 0; k < n; k++, j++) {
            unsigned char *b = sbuf + (size_t)j * bytes;
            for (size_t i = 0; i < bytes; i++) {
                b[i] = pattern(me, p, k, i);
            }
            CHECK("isend", ibmsg_tag_isend(ep, b, bytes, tag_of(round, me, k), &sreq[j]));
        }
    }
    for (uint32_t j = 0; j < nreq; j++) {
        ibmsg_tag_status_t st;
        uint32_t from, k;
        ibmsg_ep_t ep;

        CHECK("send wait", ibmsg_request_wait(&sreq[j], NULL));
        CHECK("recv wait", ibmsg_request_wait(&rreq[j], &st));
        CHECK("ep_rank", ibmsg_world_ep_rank(world, st.source, &from));
        k = (uint32_t)(st.tag & 0xffffff);
        if (st.length != bytes || (uint32_t)(st.tag >> 24 & 0xffffffff) != from ||
            (st.tag >> 56) != round || k >= n || from == me) {
            FAIL("round %u recv %u: length %zu tag %#llx from rank %u", round, j, st.length,
                 (unsigned long long)st.tag, from);
        }
        CHECK("world_ep", ibmsg_world_ep(world, from, &ep));
        if (ep != st.source) {
            FAIL("round %u: source endpoint is not rank %u's", round, from);
        }
        for (size_t i = 0; i < bytes; i++) {
            if (rbuf[(size_t)j * bytes + i] != pattern(from, me, k, i)) {
                FAIL("round %u: byte %zu of message %u from rank %u differs", round, i, k, from);
            }
        }
        seen[from]++;
    }
    for (uint32_t p = 0; p < size; p++) {
        if (p != me && seen[p] != n) {
            FAIL("round %u: %u messages from rank %u, expected %u", round, seen[p], p, n);
        }
    }
    free(rreq);
    free(sreq);
    free(rbuf);
    free(sbuf);
    free(seen);
}

static int early_exit(ibmsg_world_t world, uint32_t size, uint32_t gone, int code)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_request_t rreq;
    unsigned char msg[64], rmsg[64];
    double t0, dt;
    int completed = 0, status = IBMSG_OK;
    int32_t pid = (int32_t)getpid();
    ibmsg_tag_status_t st;
    long sends = 0;

    CHECK("world_context", ibmsg_world_context(world, &ctx));
    if (me == gone) {
        /* Tell the others which process to watch (all ranks share one node in this test), then
           leave without a word at the ibmsg level. */
        for (uint32_t p = 0; p < size; p++) {
            if (p != me) {
                CHECK("world_ep", ibmsg_world_ep(world, p, &ep));
                CHECK("send pid", ibmsg_tag_send(ep, &pid, sizeof(pid), 4));
            }
        }
        CHECK("barrier", ibmsg_world_barrier(world));
        CHECK("world_finalize", ibmsg_world_finalize(world));
        printf("rank %u: left early, exit status %d\n", me, code);
        return code;
    }
    CHECK("world_ep", ibmsg_world_ep(world, gone, &ep));
    CHECK("recv pid", ibmsg_tag_recv(ctx, ep, &pid, sizeof(pid), 4, IBMSG_TAG_MASK_EXACT, NULL));
    CHECK("barrier", ibmsg_world_barrier(world));
    /* A receive bound to the departed rank must complete with PEER_FAILED, not hang. */
    CHECK("irecv", ibmsg_tag_irecv(ctx, ep, rmsg, sizeof(rmsg), 1, IBMSG_TAG_MASK_EXACT, &rreq));
    t0 = now_s();
    while (kill((pid_t)pid, 0) == 0) {
        if (now_s() - t0 > 60) {
            FAIL("rank %u (pid %d) did not exit within 60 s", gone, (int)pid);
        }
        usleep(10000);
    }
    /* The queue pair's peer is gone: the next message finds no responder, the transport's
       retries run out (verbs_timeout, verbs_retry_cnt) and the endpoint fails. Every wait is
       bounded by polling with a deadline. */
    memset(msg, 0x5a, sizeof(msg));
    t0 = now_s();
    while (status == IBMSG_OK) {
        ibmsg_request_t sreq;
        int done = 0;

        status = ibmsg_tag_isend(ep, msg, sizeof(msg), 2, &sreq);
        if (status != IBMSG_OK) {
            break;
        }
        sends++;
        while (status == IBMSG_OK && !done) {
            if (now_s() - t0 > 60) {
                FAIL("rank %u's endpoint did not fail within 60 s (%ld sends)", gone, sends);
            }
            status = ibmsg_request_test(&sreq, &done, NULL);
        }
    }
    /* The receive is failed with the endpoint; make progress until it shows. */
    dt = now_s() - t0;
    if (status != IBMSG_ERR_PEER_FAILED) {
        FAIL("send to departed rank %u: %s, expected PEER_FAILED", gone,
             ibmsg_status_string(status));
    }
    status = ibmsg_request_test(&rreq, &completed, &st);
    if (!completed || status != IBMSG_ERR_PEER_FAILED || st.error != IBMSG_ERR_PEER_FAILED) {
        FAIL("receive from departed rank %u: completed %d, %s", gone, completed,
             ibmsg_status_string(status));
    }
    /* The survivors' endpoints still work: a ring among them. */
    {
        uint32_t next = (me + 1) % size, prev = (me + size - 1) % size;
        uint32_t token = me, got = UINT32_MAX;
        ibmsg_ep_t to, from;
        ibmsg_request_t s;

        if (next == gone) {
            next = (next + 1) % size;
        }
        if (prev == gone) {
            prev = (prev + size - 1) % size;
        }
        CHECK("world_ep", ibmsg_world_ep(world, next, &to));
        CHECK("world_ep", ibmsg_world_ep(world, prev, &from));
        CHECK("isend", ibmsg_tag_isend(to, &token, sizeof(token), 3, &s));
        CHECK("recv", ibmsg_tag_recv(ctx, from, &got, sizeof(got), 3, IBMSG_TAG_MASK_EXACT, NULL));
        CHECK("send wait", ibmsg_request_wait(&s, NULL));
        if (got != prev) {
            FAIL("survivor ring: got %u from rank %u", got, prev);
        }
    }
    printf("rank %u: rank %u reported failed after %.3f s (%ld sends); survivors' ring ok\n", me,
           gone, dt, sends);
    fflush(stdout);
    /* No barrier: it would include the departed rank. Each survivor waits a little so its ring
       partner's messages are not cut off by its own exit. */
    sleep(1);
    CHECK("world_finalize", ibmsg_world_finalize(world));
    return 0;
}

/* The job layer's events (tool.h), counted by type: the requests sent and taken, the races. */
static const char *const ev_names[] = {"world_connect_req_sent", "world_connect_req_recvd",
                                       "world_connect_race"};
static unsigned ev_count[3];
static uint32_t ev_peer[3];

static void ev_counted(ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t reg,
                       ibmsg_t_cb_safety_t level, void *user_data)
{
    unsigned *count = user_data;
    size_t t = (size_t)(count - ev_count);

    (void)reg;
    (void)level;
    (*count)++;
    if (ibmsg_t_event_read(inst, 0, &ev_peer[t]) != IBMSG_OK) { /* element 0: the peer rank */
        ev_peer[t] = UINT32_MAX;
    }
}

static void ev_listen(ibmsg_t_event_registration_t regs[3])
{
    for (int t = 0; t < 3; t++) {
        int index;
        CHECK(ev_names[t], ibmsg_t_event_get_index(ev_names[t], &index));
        CHECK("event_handle_alloc",
              ibmsg_t_event_handle_alloc(index, NULL, IBMSG_INFO_NULL, &regs[t]));
        CHECK("event_register_callback",
              ibmsg_t_event_register_callback(regs[t], IBMSG_T_CB_REQUIRE_MPI_RESTRICTED,
                                              IBMSG_INFO_NULL, &ev_count[t], ev_counted));
    }
}

/* The connect timeout: rank silent makes no progress for hold_s seconds after init, so it
   answers no connect request. The others, with world_connect_timeout_ms = timeout_ms (checked
   through the tool interface), connect to it: the send fails with IBMSG_ERR_PEER_FAILED no
   sooner than the timeout and at most margin_ms after it; then they talk among themselves. */
static int connect_timeout(ibmsg_world_t world, uint32_t size, uint32_t silent, long timeout_ms,
                           long margin_ms, unsigned hold_s)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_request_t s;
    ibmsg_t_cvar_handle_t cv;
    int provided, index, count, status, done = 0;
    long long cvar = 0;
    uint32_t word = me;
    double t0, ms;

    CHECK("world_context", ibmsg_world_context(world, &ctx));
    if (me != silent) {
        CHECK("t_init", ibmsg_t_init_thread(0, &provided));
        CHECK("cvar index", ibmsg_t_cvar_get_index("world_connect_timeout_ms", &index));
        CHECK("cvar handle", ibmsg_t_cvar_handle_alloc(index, NULL, &cv, &count));
        CHECK("cvar read", ibmsg_t_cvar_read(cv, &cvar));
        CHECK("cvar free", ibmsg_t_cvar_handle_free(&cv));
        CHECK("t_finalize", ibmsg_t_finalize());
        if (count != 1 || cvar != timeout_ms) {
            FAIL(
                "world_connect_timeout_ms is %lld (%d elements), expected %ld from the environment",
                cvar, count, timeout_ms);
        }
    }
    /* The timeout holds between the others too: they leave this barrier together and progress
       from then on (the waits below), so none leaves another's request unanswered for longer
       (a rank still in start-up when the first asked failed the ring). */
    CHECK("barrier", ibmsg_world_barrier(world));
    if (me == silent) {
        sleep(hold_s); /* no progress: connect requests wait unanswered in the UD queue */
        CHECK("barrier", ibmsg_world_barrier(world));
        CHECK("world_finalize", ibmsg_world_finalize(world));
        printf("rank %u: silent for %u s\n", me, hold_s);
        return 0;
    }
    t0 = now_s(); /* before the endpoint: its connect request starts the timeout */
    CHECK("world_ep", ibmsg_world_ep(world, silent, &ep));
    CHECK("isend", ibmsg_tag_isend(ep, &word, sizeof(word), 5, &s));
    status = ibmsg_request_wait(&s, NULL);
    ms = (now_s() - t0) * 1e3;
    if (status != IBMSG_ERR_PEER_FAILED || ibmsg_ep_status(ep) != IBMSG_ERR_PEER_FAILED) {
        FAIL("send to silent rank %u: %s (endpoint: %s), expected PEER_FAILED", silent,
             ibmsg_status_string(status), ibmsg_status_string(ibmsg_ep_status(ep)));
    }
    if (ms < (double)timeout_ms || ms > (double)(timeout_ms + margin_ms)) {
        FAIL("connect to silent rank %u failed after %.1f ms, expected %ld ms to %ld ms", silent,
             ms, timeout_ms, timeout_ms + margin_ms);
    }
    /* The others connect among themselves as usual (a ring without the silent rank). */
    {
        uint32_t next = (me + 1) % size, prev = (me + size - 1) % size, got = UINT32_MAX;
        ibmsg_ep_t to, from;

        next = next == silent ? (next + 1) % size : next;
        prev = prev == silent ? (prev + size - 1) % size : prev;
        CHECK("world_ep", ibmsg_world_ep(world, next, &to));
        CHECK("world_ep", ibmsg_world_ep(world, prev, &from));
        CHECK("isend", ibmsg_tag_isend(to, &word, sizeof(word), 6, &s));
        CHECK("recv", ibmsg_tag_recv(ctx, from, &got, sizeof(got), 6, IBMSG_TAG_MASK_EXACT, NULL));
        while (!done) {
            CHECK("send test", ibmsg_request_test(&s, &done, NULL));
        }
        if (got != prev) {
            FAIL("ring without the silent rank: got %u from rank %u", got, prev);
        }
    }
    printf("rank %u: connect to silent rank %u failed (PEER_FAILED) after %.1f ms "
           "(world_connect_timeout_ms %ld, margin %ld ms)\n",
           me, silent, ms, timeout_ms, margin_ms);
    fflush(stdout);
    CHECK("barrier", ibmsg_world_barrier(world));
    CHECK("world_finalize", ibmsg_world_finalize(world));
    return 0;
}

/* A rank killed by a signal (no PMIx_Finalize, no goodbye): does the launcher report it? Rank
   killed connects with every other rank, all barrier, then it SIGKILLs itself. The others, with
   the keepalive off (IBMSG_CORE_KEEPALIVE_MS=0: nothing but an event can fail the endpoint),
   progress for up to wait_s seconds and print what they saw: the endpoint's status and
   world_peers_failed (the launcher's events). A measurement: exits 0 either way. */
static int killed_rank(ibmsg_world_t world, uint32_t size, uint32_t killed, unsigned wait_s)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    uint32_t word = me;
    int provided;
    double t0, ms = 0;

    CHECK("world_context", ibmsg_world_context(world, &ctx));
    if (me == killed) {
        for (uint32_t p = 0; p < size; p++) {
            if (p != me) {
                CHECK("world_ep", ibmsg_world_ep(world, p, &ep));
                CHECK("recv",
                      ibmsg_tag_recv(ctx, ep, &word, sizeof(word), 7, IBMSG_TAG_MASK_EXACT, NULL));
            }
        }
        CHECK("barrier", ibmsg_world_barrier(world));
        printf("rank %u: killing itself (SIGKILL)\n", me);
        fflush(stdout);
        raise(SIGKILL);
        return 1;
    }
    CHECK("world_ep", ibmsg_world_ep(world, killed, &ep));
    CHECK("send", ibmsg_tag_send(ep, &word, sizeof(word), 7));
    CHECK("t_init", ibmsg_t_init_thread(0, &provided));
    CHECK("session", ibmsg_t_pvar_session_create(&session));
    pvar_t failed = pvar_open("world_peers_failed", IBMSG_T_PVAR_CLASS_COUNTER, NULL);
    CHECK("barrier", ibmsg_world_barrier(world));
    t0 = now_s();
    while (ibmsg_ep_status(ep) == IBMSG_OK && now_s() - t0 < wait_s) {
        CHECK("progress", ibmsg_context_progress(ctx, NULL));
    }
    ms = (now_s() - t0) * 1e3;
    printf("rank %u: after rank %u's SIGKILL: endpoint %s after %.1f ms, world_peers_failed %llu\n",
           me, killed, ibmsg_status_string(ibmsg_ep_status(ep)), ms, pvar_read(failed));
    fflush(stdout);
    CHECK("session_free", ibmsg_t_pvar_session_free(&session));
    CHECK("t_finalize", ibmsg_t_finalize());
    CHECK("world_finalize", ibmsg_world_finalize(world));
    return 0;
}

/* Ring over on-demand wireup; see the usage above. */
static int ring(ibmsg_world_t world, uint32_t size, uint32_t n)
{
    uint32_t next = (me + 1) % size, prev = (me + size - 1) % size;
    uint32_t want_eps = size > 2 ? 2 : 1;
    ibmsg_context_t ctx;
    ibmsg_ep_t to, from;
    ibmsg_request_t rreq, *sreq = calloc(n, sizeof(*sreq));
    ibmsg_tag_status_t st;
    uint32_t got = UINT32_MAX, rank, *vals = calloc(n, sizeof(*vals));
    int provided;

    if (sreq == NULL || vals == NULL) {
        FAIL("out of memory");
    }
    CHECK("world_context", ibmsg_world_context(world, &ctx));
    CHECK("t_init", ibmsg_t_init_thread(0, &provided));
    CHECK("session", ibmsg_t_pvar_session_create(&session));
    pvar_t eps = pvar_open("world_endpoints", IBMSG_T_PVAR_CLASS_LEVEL, NULL);
    pvar_t od = pvar_open("world_endpoints_on_demand", IBMSG_T_PVAR_CLASS_COUNTER, NULL);
    pvar_t rej = pvar_open("world_connect_rejected", IBMSG_T_PVAR_CLASS_COUNTER, NULL);
    pvar_t conns = pvar_open("world_connects", IBMSG_T_PVAR_CLASS_COUNTER, NULL);
    pvar_t conn_ns = pvar_open("world_connect_time_ns", IBMSG_T_PVAR_CLASS_TIMER, NULL);
    ibmsg_t_event_registration_t regs[3];
    ev_listen(regs);
    if (pvar_read(eps) != 0) {
        FAIL("ring: %llu endpoints before any use, expected 0 (on-demand wireup)", pvar_read(eps));
    }
    /* From any source, before this process has any endpoint: the previous rank's connect
       request creates the endpoint its message arrives on. */
    CHECK("irecv any",
          ibmsg_tag_irecv(ctx, IBMSG_EP_NULL, &got, sizeof(got), 7, IBMSG_TAG_MASK_EXACT, &rreq));
    CHECK("world_ep next", ibmsg_world_ep(world, next, &to));
    for (uint32_t k = 0; k < n; k++) {
        vals[k] = me * 1000003u + k;
        CHECK("isend", ibmsg_tag_isend(to, &vals[k], sizeof(vals[k]), k == 0 ? 7 : 8, &sreq[k]));
    }
    CHECK("recv wait", ibmsg_request_wait(&rreq, &st));
    CHECK("ep_rank", ibmsg_world_ep_rank(world, st.source, &rank));
    if (rank != prev || got != prev * 1000003u || st.length != sizeof(got)) {
        FAIL("ring: got %u (%zu bytes) from rank %u, expected %u from rank %u", got, st.length,
             rank, prev * 1000003u, prev);
    }
    CHECK("world_ep prev", ibmsg_world_ep(world, prev, &from));
    if (from != st.source) {
        FAIL("ring: ibmsg_world_ep(prev) is not the endpoint the message came on");
    }
    for (uint32_t k = 1; k < n; k++) {
        uint32_t v = UINT32_MAX;
        CHECK("recv", ibmsg_tag_recv(ctx, from, &v, sizeof(v), 8, IBMSG_TAG_MASK_EXACT, NULL));
        if (v != prev * 1000003u + k) {
            FAIL("ring: message %u from rank %u is %u", k, prev, v);
        }
    }
    for (uint32_t k = 0; k < n; k++) {
        CHECK("send wait", ibmsg_request_wait(&sreq[k], NULL));
    }
    /* Read before the barrier: once a rank leaves it, it may connect to this one (below), and
       this rank may still be progressing the barrier when that request arrives. */
    unsigned long long v_eps = pvar_read(eps), v_od = pvar_read(od), v_rej = pvar_read(rej),
                       v_c = pvar_read(conns), v_cns = pvar_read(conn_ns);
    unsigned sent = ev_count[0], taken = ev_count[1], races = ev_count[2];
    uint32_t sent_to = ev_peer[0], taken_from = ev_peer[1];
    CHECK("barrier", ibmsg_world_barrier(world));
    /* The events of the connections made: with more than 2 ranks no two ask each other, so one
       request went to the next rank and one came from the previous, and nothing raced. */
    if (size > 2 &&
        (sent != 1 || taken != 1 || races != 0 || sent_to != next || taken_from != prev)) {
        FAIL("ring events: %u requests sent (to rank %u), %u taken (from rank %u), %u races "
             "(want 1 to %u, 1 from %u, 0)",
             sent, sent_to, taken, taken_from, races, next, prev);
    }
    for (int t = 0; t < 3; t++) {
        CHECK("event_handle_free", ibmsg_t_event_handle_free(regs[t], NULL, NULL));
    }
    /* Each rank asked only its next rank; with 2 ranks the requests cross and rank 0's wins. */
    unsigned want_c = size > 2 ? 1u : me == 0;
    if (v_eps != want_eps || v_od != want_eps || v_rej != 0 || v_c != want_c) {
        FAIL("ring counters: world_endpoints %llu world_endpoints_on_demand %llu "
             "world_connect_rejected %llu world_connects %llu (want %u, %u, 0, %u)",
             v_eps, v_od, v_rej, v_c, want_eps, want_eps, want_c);
    }
    printf("ring rank %u/%u: %u msgs from rank %u by wildcard-first; world_endpoints %llu "
           "world_endpoints_on_demand %llu world_connects %llu connect %.3f ms; events: %u "
           "requests sent, %u taken, %u races\n",
           me, size, n, prev, v_eps, v_od, v_c, (double)v_cns / 1e6 / (double)(v_c ? v_c : 1), sent,
           taken, races);
    fflush(stdout);
    /* Connect latency with a peer that is progressing (waiting in a receive): rank r asks
       r + 2, which is not a ring neighbour, and its first send completes once connected. */
    if (size >= 4 && me < 2) {
        ibmsg_ep_t far;
        ibmsg_request_t s;
        uint32_t v = me;
        double t0 = now_s();
        CHECK("world_ep far", ibmsg_world_ep(world, me + 2, &far));
        CHECK("isend far", ibmsg_tag_isend(far, &v, sizeof(v), 9, &s));
        CHECK("send wait far", ibmsg_request_wait(&s, NULL));
        printf("ring rank %u: connect to idle-progressing rank %u: %.3f ms (request to first send "
               "posted)\n",
               me, me + 2, (now_s() - t0) * 1e3);
    } else if (size >= 4 && me < 4) {
        uint32_t v = UINT32_MAX;
        CHECK("recv far",
              ibmsg_tag_recv(ctx, IBMSG_EP_NULL, &v, sizeof(v), 9, IBMSG_TAG_MASK_EXACT, NULL));
        if (v != me - 2) {
            FAIL("far message %u, expected %u", v, me - 2);
        }
    }
    fflush(stdout);
    CHECK("session_free", ibmsg_t_pvar_session_free(&session));
    CHECK("t_finalize", ibmsg_t_finalize());
    free(sreq);
    free(vals);
    CHECK("barrier", ibmsg_world_barrier(world));
    CHECK("world_finalize", ibmsg_world_finalize(world));
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t n = 50, size, local;
    size_t bytes = 100;
    long gone = -1, silent = -1, timeout_ms = 0, margin_ms = 0, killed = -1;
    int opt, provided, ring_mode = 0, code = 0;
    ibmsg_world_t world;
    ibmsg_world_bootstrap_t how;
    ibmsg_context_t ctx;

    while ((opt = getopt(argc, argv, "n:s:x:c:t:T:M:k:re")) != -1) {
        switch (opt) {
        case 'r':
            ring_mode = 1;
            break;
        case 'e':
            eager_expected = 1;
            break;
        case 'n':
            n = (uint32_t)strtoul(optarg, NULL, 0);
            break;
        case 's':
            bytes = strtoul(optarg, NULL, 0);
            break;
        case 'x':
            gone = strtol(optarg, NULL, 0);
            break;
        case 'c':
            code = (int)strtol(optarg, NULL, 0);
            break;
        case 't':
            silent = strtol(optarg, NULL, 0);
            break;
        case 'T':
            timeout_ms = strtol(optarg, NULL, 0);
            break;
        case 'M':
            margin_ms = strtol(optarg, NULL, 0);
            break;
        case 'k':
            killed = strtol(optarg, NULL, 0);
            break;
        default:
            fprintf(stderr,
                    "usage: %s [-n msgs] [-s bytes] [-x rank [-c status]] [-t rank -T ms -M ms] "
                    "[-k rank] [-r] "
                    "[-e]\n",
                    argv[0]);
            return 2;
        }
    }
    if (n == 0 || n > 0xffffff || bytes == 0) {
        fprintf(stderr, "bad -n / -s\n");
        return 2;
    }
    CHECK("world_init", ibmsg_world_init(IBMSG_INFO_NULL, &world));
    CHECK("world_rank", ibmsg_world_rank(world, &me));
    CHECK("world_size", ibmsg_world_size(world, &size));
    CHECK("world_local_rank", ibmsg_world_local_rank(world, &local));
    CHECK("world_bootstrap", ibmsg_world_bootstrap(world, &how));
    CHECK("world_context", ibmsg_world_context(world, &ctx));
    if (how != IBMSG_WORLD_PMIX || size < 2) {
        FAIL("expected a PMIx launch of >= 2 ranks (bootstrap %d, size %u)", (int)how, size);
    }
    if (gone >= 0) {
        if ((uint32_t)gone >= size || size < 3) {
            FAIL("-x needs a rank < size and size >= 3");
        }
        return early_exit(world, size, (uint32_t)gone, code);
    }
    if (silent >= 0) {
        if ((uint32_t)silent >= size || size < 3 || timeout_ms <= 0 || margin_ms < 0) {
            FAIL("-t needs a rank < size, size >= 3, -T > 0 and -M >= 0");
        }
        /* Held past every survivor's timeout and margin, with room for a loaded host. */
        return connect_timeout(world, size, (uint32_t)silent, timeout_ms, margin_ms,
                               (unsigned)((timeout_ms + margin_ms) / 1000 + 3));
    }
    if (killed >= 0) {
        if ((uint32_t)killed >= size) {
            FAIL("-k needs a rank < size");
        }
        return killed_rank(world, size, (uint32_t)killed, 10);
    }
    if (ring_mode) {
        return ring(world, size, n);
    }

    CHECK("t_init", ibmsg_t_init_thread(0, &provided));
    CHECK("session", ibmsg_t_pvar_session_create(&session));
    pvar_t boot = pvar_open("world_bootstrap_time_ns", IBMSG_T_PVAR_CLASS_GENERIC, NULL);
    pvar_t init_fence = pvar_open("world_init_fence_time_ns", IBMSG_T_PVAR_CLASS_GENERIC, NULL);
    pvar_t eps = pvar_open("world_endpoints", IBMSG_T_PVAR_CLASS_LEVEL, NULL);
    pvar_t fences = pvar_open("world_fences", IBMSG_T_PVAR_CLASS_COUNTER, NULL);
    pvar_t fence_ns = pvar_open("world_fence_time_ns", IBMSG_T_PVAR_CLASS_TIMER, NULL);
    pvar_t od = pvar_open("world_endpoints_on_demand", IBMSG_T_PVAR_CLASS_COUNTER, NULL);
    pvar_t rej = pvar_open("world_connect_rejected", IBMSG_T_PVAR_CLASS_COUNTER, NULL);
    pvar_t races = pvar_open("world_connect_races", IBMSG_T_PVAR_CLASS_COUNTER, NULL);
    pvar_t reqs = pvar_open("world_connect_reqs_sent", IBMSG_T_PVAR_CLASS_COUNTER, NULL);
    pvar_t conns = pvar_open("world_connects", IBMSG_T_PVAR_CLASS_COUNTER, NULL);
    pvar_t conn_ns = pvar_open("world_connect_time_ns", IBMSG_T_PVAR_CLASS_TIMER, NULL);
    unsigned long long eps0 = pvar_read(eps);
    pvar_t sent = pvar_open("core_eager_msgs_sent", IBMSG_T_PVAR_CLASS_COUNTER, &ctx);
    pvar_t recvd = pvar_open("core_eager_msgs_recvd", IBMSG_T_PVAR_CLASS_COUNTER, &ctx);
    pvar_t bytes_recvd = pvar_open("core_eager_bytes_recvd", IBMSG_T_PVAR_CLASS_COUNTER, &ctx);

    double t0 = now_s();
    alltoall(world, size, n, bytes, 0);
    alltoall(world, size, n, bytes, 1);
    double t1 = now_s();
    CHECK("barrier", ibmsg_world_barrier(world));
    double t2 = now_s();

    unsigned long long want = 2ull * n * (size - 1);
    unsigned long long v_boot = pvar_read(boot), v_init_fence = pvar_read(init_fence),
                       v_eps = pvar_read(eps), v_f = pvar_read(fences), v_fns = pvar_read(fence_ns),
                       v_sent = pvar_read(sent), v_recvd = pvar_read(recvd),
                       v_bytes = pvar_read(bytes_recvd);
    unsigned long long v_od = pvar_read(od), v_rej = pvar_read(rej), v_races = pvar_read(races),
                       v_reqs = pvar_read(reqs), v_c = pvar_read(conns), v_cns = pvar_read(conn_ns);
    /* On demand: no endpoint before the first world_ep; then exactly one per peer, however the
       simultaneous requests crossed (a requester's and a responder's side never both made). */
    unsigned long long want_od = eager_expected ? 0 : size - 1;
    if (eps0 != (eager_expected ? size - 1 : 0) || v_od != want_od || v_rej != 0 ||
        (!eager_expected && (v_reqs > size - 1 || v_c > v_reqs))) {
        FAIL("wireup counters: endpoints at start %llu, on demand %llu (want %llu), rejected %llu, "
             "requests %llu, connects %llu, races %llu",
             eps0, v_od, want_od, v_rej, v_reqs, v_c, v_races);
    }
    if (v_eps != size - 1 || v_f != 1 || v_fns == 0 || v_boot == 0 || v_init_fence == 0 ||
        v_init_fence >= v_boot || v_sent != want || v_recvd != want || v_bytes != want * bytes) {
        FAIL("counters: endpoints %llu fences %llu fence_ns %llu bootstrap_ns %llu init_fence_ns "
             "%llu sent %llu recvd %llu bytes %llu (want %u endpoints, 1 fence, %llu messages)",
             v_eps, v_f, v_fns, v_boot, v_init_fence, v_sent, v_recvd, v_bytes, size - 1, want);
    }
    /* Barriers alone, for the launcher's fence cost (docs/scaling.md): sorted, the middle one. */
    double barrier_ms[5];
    for (int i = 0; i < 5; i++) {
        double b0 = now_s();
        CHECK("barrier", ibmsg_world_barrier(world));
        barrier_ms[i] = (now_s() - b0) * 1e3;
        for (int j = i; j > 0 && barrier_ms[j] < barrier_ms[j - 1]; j--) {
            double t = barrier_ms[j];
            barrier_ms[j] = barrier_ms[j - 1];
            barrier_ms[j - 1] = t;
        }
    }
    printf(
        "fences of rank %u/%u: init's data-collecting fence %.1f ms, barrier median of 5 %.1f ms "
        "(min %.1f, max %.1f)\n",
        me, size, (double)v_init_fence / 1e6, barrier_ms[2], barrier_ms[0], barrier_ms[4]);
    printf("rank %u/%u (local %u): bootstrap %.1f ms, all-to-all %llu msgs of %zu B in %.1f ms, "
           "barrier %.1f ms; counters: world_endpoints %llu world_fences %llu "
           "world_fence_time_ns %llu core_eager_msgs_sent %llu core_eager_msgs_recvd %llu\n",
           me, size, local, (double)v_boot / 1e6, want, bytes, (t1 - t0) * 1e3, (t2 - t1) * 1e3,
           v_eps, v_f, v_fns, v_sent, v_recvd);
    printf("rank %u wireup: %s, world_endpoints_on_demand %llu world_connect_reqs_sent %llu "
           "world_connects %llu world_connect_races %llu, connect %.3f ms average\n",
           me, eager_expected ? "eager" : "on demand", v_od, v_reqs, v_c, v_races,
           (double)v_cns / 1e6 / (double)(v_c ? v_c : 1));
    fflush(stdout);
    CHECK("session_free", ibmsg_t_pvar_session_free(&session));
    CHECK("t_finalize", ibmsg_t_finalize());
    CHECK("barrier", ibmsg_world_barrier(world));
    CHECK("world_finalize", ibmsg_world_finalize(world));
    return 0;
}
