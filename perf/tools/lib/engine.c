/*
 * The measured loops. Protocol, per size (both sides run the same sequence):
 *   1. out-of-band barrier (TCP frame each way), after the server has posted its receives;
 *   2. counters start (one instant), timer start;
 *   3. bw:  the client keeps up to -t sends in flight; the server keeps up to -r receives
 *           posted. With -D the client stops posting after the duration and sends one 0-byte
 *           END message with the data tag. The server answers with one 0-byte ACK once it has
 *           every message, and the client's timer stops when the ACK arrives, so the time
 *           covers delivery, not only local completion.
 *      lat: the client sends, posts its receive, waits; the server echoes, then posts its
 *           receive for the next ping. With -D the client ends with one 0-byte END message
 *           that is not answered.
 *   4. timer stop, counters stop.
 * So in the measured intervals, with N iterations in total over S sizes:
 *   bw  client: sent N (+1 per size with -D), received S;  server: received N (+END), sent S
 *   lat client: sent N (+1 with -D), received N;            server: the same, mirrored.
 * The bandwidth loops' timestamps are clock_gettime(CLOCK_MONOTONIC): perftest's rdtsc
 * calibration fails under emulation. The latency loop stamps every round trip with the TSC and
 * maps the stamps onto CLOCK_MONOTONIC, read every 64th round trip (perf/tools/lib/stamp.h).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "perf/tools/lib/counters.h"
#include "perf/tools/lib/engine.h"
#include "perf/tools/lib/perf.h"
#include "perf/tools/lib/report.h"
#include "perf/tools/lib/stamp.h"

/* --empty-polls under callgrind: the measured interval and the empty polls after it each in a
   dump of their own (OUT.1 and OUT.2 of --callgrind-out-file=OUT), costs and calls counted from
   zero (start-up, the session's start and stop and the report are left out). */
#if defined(__has_include)
#if __has_include(<valgrind/callgrind.h>)
#include <valgrind/callgrind.h>
#define PERF_COLLECT_BEGIN(o)       \
    do {                            \
        if ((o)->empty_polls > 0) { \
            CALLGRIND_ZERO_STATS;   \
        }                           \
    } while (0)
#define PERF_COLLECT_END(o, what)          \
    do {                                   \
        if ((o)->empty_polls > 0) {        \
            CALLGRIND_DUMP_STATS_AT(what); \
        }                                  \
    } while (0)
#endif
#endif
#ifndef PERF_COLLECT_BEGIN
#define PERF_COLLECT_BEGIN(o)     ((void)(o))
#define PERF_COLLECT_END(o, what) ((void)(o))
#endif

/* Tags within IBMSG_TAG_COMPACT_MAX: no header bytes on the wire, as perftest sends none. */
#define PERF_TAG_DATA     1u
#define PERF_TAG_ACK      2u
#define PERF_TAG_NEVER    3u /* --empty-polls: a receive nothing is sent to */
#define PERF_PARAMS_MAGIC 0x69626d7366ull

/* What the client runs, sent to the server so both sides agree (validated there). */
typedef struct perf_params {
    uint64_t magic;
    uint32_t test;
    uint32_t all_sizes;
    uint64_t size;
    int64_t iters;
    int32_t duration;
    int32_t atomic_type; /* -A: both sides check the final word by it */
} perf_params_t;

void *perf_buffer(size_t size)
{
    long page = sysconf(_SC_PAGESIZE);
    void *p = NULL;

    return posix_memalign(&p, page > 0 ? (size_t)page : 4096, size > 0 ? size : 1) == 0 ? p : NULL;
}

double perf_now(void)
{
    return (double)perf_stamp_monotonic_ns() * 1e-9;
}

int perf_fail(const char *what, int status)
{
    fprintf(stderr, "ibmsg perf: %s: %s\n", what, ibmsg_status_string(status));
    return status;
}

static int perf_conn_open(const perf_options_t *o, perf_conn_t *c)
{
    ibmsg_info_t info;
    int ret;

    memset(c, 0, sizeof(*c));
    ret = perf_options_info(o, &info);
    if (ret != IBMSG_OK) {
        return perf_fail("info hint", ret);
    }
    ret = ibmsg_context_create(info, &c->ctx);
    ibmsg_info_free(&info);
    if (ret != IBMSG_OK) {
        return perf_fail("context (device, port, GID or -u/-Q/-I value)", ret);
    }
    ret = ibmsg_ep_create(c->ctx, &c->ep);
    if (ret != IBMSG_OK) {
        perf_fail("endpoint", ret);
        goto err_destroy_ctx;
    }
    if (o->host == NULL) {
        ibmsg_oob_t listener;
        ret = ibmsg_oob_listen(NULL, o->tcp_port, &listener);
        if (ret != IBMSG_OK) {
            perf_fail("listen", ret);
            goto err_destroy_ctx;
        }
        ret = ibmsg_oob_accept(listener, -1, &c->oob);
        ibmsg_oob_close(listener);
        if (ret != IBMSG_OK) {
            perf_fail("accept", ret);
            goto err_destroy_ctx;
        }
    } else {
        ret = ibmsg_oob_connect(o->host, o->tcp_port, PERF_OOB_TIMEOUT, &c->oob);
        if (ret != IBMSG_OK) {
            perf_fail("connect to the server", ret);
            goto err_destroy_ctx;
        }
    }
    ret = ibmsg_oob_ep_connect(c->oob, c->ep, PERF_OOB_TIMEOUT);
    if (ret != IBMSG_OK) {
        perf_fail("endpoint exchange", ret);
        goto err_close_oob;
    }
    return IBMSG_OK;

err_close_oob:
    ibmsg_oob_close(c->oob);
err_destroy_ctx:
    ibmsg_context_destroy(c->ctx);
    return ret;
}

static void perf_conn_close(perf_conn_t *c)
{
    ibmsg_oob_close(c->oob);
    ibmsg_ep_destroy(c->ep);
    ibmsg_context_destroy(c->ctx);
}

/* Both sides reach this point before either goes on. */
int perf_barrier(perf_conn_t *c)
{
    char b = 'b';
    size_t len = 1;
    int ret = ibmsg_oob_send(c->oob, &b, 1, PERF_OOB_TIMEOUT);

    if (ret == IBMSG_OK) {
        ret = ibmsg_oob_recv(c->oob, &b, &len, PERF_OOB_TIMEOUT);
    }
    if (ret == IBMSG_OK && (len != 1 || b != 'b')) {
        ret = IBMSG_ERR_PROTOCOL;
    }
    return ret == IBMSG_OK ? ret : perf_fail("barrier", ret);
}

static int perf_params_exchange(const perf_options_t *o, perf_conn_t *c)
{
    perf_params_t mine = {
        .magic = PERF_PARAMS_MAGIC,
        .test = (uint32_t)o->test,
        .all_sizes = o->all_sizes,
        .size = o->all_sizes ? 0 : o->size,
        .iters = o->duration > 0 ? 0 : o->iters,
        .duration = o->duration,
        .atomic_type = (int32_t)o->atomic_type,
    };
    perf_params_t peer;
    size_t len = sizeof(peer);
    int ret;

    if (o->host != NULL) {
        ret = ibmsg_oob_send(c->oob, &mine, sizeof(mine), PERF_OOB_TIMEOUT);
        if (ret != IBMSG_OK) {
            return perf_fail("send parameters", ret);
        }
        ret = ibmsg_oob_recv(c->oob, &peer, &len, PERF_OOB_TIMEOUT);
        if (ret != IBMSG_OK || len != 1) {
            fprintf(stderr, "ibmsg perf: the server refused this run's parameters (see its "
                            "output: both sides need the same test, -s, -n, -a and -D)\n");
            return ret != IBMSG_OK ? ret : IBMSG_ERR_PROTOCOL;
        }
        return IBMSG_OK;
    }
    ret = ibmsg_oob_recv(c->oob, &peer, &len, PERF_OOB_TIMEOUT);
    if (ret != IBMSG_OK) {
        return perf_fail("receive parameters", ret);
    }
    if (len != sizeof(peer) || peer.magic != mine.magic) {
        fprintf(stderr, "ibmsg perf: the client sent no valid parameters\n");
        ret = IBMSG_ERR_PROTOCOL;
    } else if (memcmp(&peer, &mine, sizeof(mine)) != 0) {
        fprintf(stderr,
                "ibmsg perf: the client runs test %u, size %llu, all %u, iterations %lld, "
                "duration %d; this server test %u, size %llu, all %u, iterations %lld, duration "
                "%d: give both the same -s/-n/-a/-D\n",
                peer.test, (unsigned long long)peer.size, peer.all_sizes, (long long)peer.iters,
                peer.duration, mine.test, (unsigned long long)mine.size, mine.all_sizes,
                (long long)mine.iters, mine.duration);
        ret = IBMSG_ERR_PROTOCOL;
    }
    {
        char ok = ret == IBMSG_OK ? 'y' : 'n';
        int r2 = ibmsg_oob_send(c->oob, &ok, ret == IBMSG_OK ? 1 : 0, PERF_OOB_TIMEOUT);
        if (ret == IBMSG_OK) {
            ret = r2;
        }
    }
    return ret;
}

/* --- progress line -------------------------------------------------------------------------- */

/* Long runs (-a, -D) show a progress line on stderr when stdout is a terminal: which size runs,
 * and with -D how many of its seconds have passed (updated from clock reads the loops make
 * anyway). Decided once per run: isatty is a system call. */
static int perf_progress_on = -1;
static int perf_progress_last = -1;

static bool perf_progress_shown(const perf_options_t *o)
{
    if (perf_progress_on < 0) {
        perf_progress_on =
            (o->all_sizes || o->duration > 0) && isatty(STDOUT_FILENO) && o->json_path == NULL;
    }
    return perf_progress_on;
}

static void perf_progress_tick(const perf_options_t *o, size_t size, double elapsed)
{
    if (perf_progress_on == 1 && o->duration > 0 && (int)elapsed != perf_progress_last) {
        perf_progress_last = (int)elapsed;
        fprintf(stderr, "\r running %zu bytes: %d of %d s ", size, perf_progress_last, o->duration);
    }
}

/* --- bandwidth ------------------------------------------------------------------------------- */

/* Peak: the best rate over any window of `depth` consecutive completions (perftest's own peak
 * is per-message post-to-completion time, which says little once sends queue). The clock is
 * read at every PERF_PEAK_STRIDE-th completion only: in the emulated guest the clocksource is
 * the HPET and clock_gettime is a trapped MMIO read of several microseconds, a cost per message
 * no other tool pays. Windows then start and end on those completions. */
#define PERF_PEAK_STRIDE 16

typedef struct perf_peak {
    double *t; /* the last depth / stride sample times, a ring */
    long depth, slots, n;
    double best; /* seconds per message */
} perf_peak_t;

static perf_peak_t perf_peak_make(long depth)
{
    perf_peak_t p = {.depth = depth,
                     .slots = depth >= PERF_PEAK_STRIDE ? depth / PERF_PEAK_STRIDE : 1};

    p.t = calloc((size_t)p.slots, sizeof(double));
    return p;
}

static void perf_peak_add(perf_peak_t *p)
{
    long stride = p->depth >= PERF_PEAK_STRIDE ? PERF_PEAK_STRIDE : p->depth, k, slot;
    double now;

    if (++p->n % stride != 0) {
        return;
    }
    now = perf_now();
    k = p->n / stride - 1; /* sample number */
    slot = k % p->slots;
    if (k >= p->slots) {
        double per = (now - p->t[slot]) / (double)(p->slots * stride);
        if (per > 0 && (p->best == 0 || per < p->best)) {
            p->best = per;
        }
    }
    p->t[slot] = now;
}

/*
 * Test req until it completes or limit tests were made; *complete says which. The waiting of
 * every wait in a measured interval (perf_await) and the empty polls measured after it
 * (perf_poll_empty): an empty progress call costs the same in both, so what the report subtracts
 * for the interval's empty calls is what they cost, loop included. Its own function, so that
 * callgrind gives its instructions and tests apart.
 */
static __attribute__((noinline)) int perf_spin(ibmsg_request_t *req, ibmsg_tag_status_t *st,
                                               long limit, int *complete)
{
    int ret = IBMSG_OK;

    *complete = 0;
    for (long i = 0; i < limit; i++) {
        ret = ibmsg_request_test(req, complete, st);
        if (ret != IBMSG_OK || *complete) {
            break;
        }
    }
    return ret;
}

/*
 * Wait for req: one test here (a bandwidth run's requests are mostly complete by then, and the
 * call into perf_spin would add its own instructions to every message), then perf_spin. The
 * report bounds what the one test outside the spin leaves (its residue).
 */
static inline int perf_await(ibmsg_request_t *req, ibmsg_tag_status_t *st, int *complete)
{
    int ret = ibmsg_request_test(req, complete, st);

    if (ret == IBMSG_OK && !*complete) {
        ret = perf_spin(req, st, LONG_MAX, complete);
    }
    return ret;
}

/* n tests of a receive nothing is sent to: each one progress call that finds nothing (the peer
   is done). */
static __attribute__((noinline)) void perf_poll_empty(ibmsg_request_t *req, long n)
{
    int complete;

    (void)perf_spin(req, NULL, n, &complete);
}

/*
 * Wait for req in a measured interval: the library's wait (which honours core_wait_mode), or
 * under --empty-polls perf_spin, every test in it: the latency loop's waits find nothing at
 * first, so each of their empty calls is one the report subtracts exactly (perf_await's first
 * test would leave a residue per wait).
 */
static int perf_wait(const perf_options_t *o, ibmsg_request_t *req, ibmsg_tag_status_t *st)
{
    int complete;

    if (o->empty_polls == 0) {
        return ibmsg_request_wait(req, st);
    }
    return perf_spin(req, st, LONG_MAX, &complete);
}

/*
 * --empty-polls: after the interval, with the session as it was in it, what a progress call
 * that finds nothing costs; perf/bench/compare --counters-cost subtracts that from the interval
 * for each such call in it (core_keepalive_idle counts them), so the waiting is left out.
 */
static int perf_empty_polls(const perf_options_t *o, perf_conn_t *c)
{
    ibmsg_request_t req = IBMSG_REQUEST_NULL;
    int ret;

    if (o->empty_polls == 0) {
        return IBMSG_OK;
    }
    ret = ibmsg_tag_irecv(c->ctx, c->ep, NULL, 0, PERF_TAG_NEVER, IBMSG_TAG_MASK_EXACT, &req);
    if (ret != IBMSG_OK) {
        return perf_fail("post the receive of --empty-polls", ret);
    }
    /* The first n, not collected, do what the interval left behind (held reposts, credit
       returns, a pending refill of the shared receive queue); the next n are measured. */
    perf_poll_empty(&req, o->empty_polls);
    PERF_COLLECT_BEGIN(o);
    perf_poll_empty(&req, o->empty_polls);
    PERF_COLLECT_END(o, "empty polls");
    ret = ibmsg_request_cancel(req);
    if (ret == IBMSG_OK) {
        ret = ibmsg_request_wait(&req, NULL);
    }
    return ret == IBMSG_ERR_CANCELED ? IBMSG_OK
                                     : perf_fail("cancel the receive of --empty-polls", ret);
}

/* The end of the measured interval: its callgrind dump, then --empty-polls if it went well. */
static int perf_interval_end(const perf_options_t *o, perf_conn_t *c, int ret)
{
    PERF_COLLECT_END(o, "interval");
    return ret == IBMSG_OK ? perf_empty_polls(o, c) : ret;
}

static int perf_bw_client(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc, size_t size,
                          perf_row_t *row, perf_result_t *res)
{
    long depth = o->tx_depth, posted = 0, done = 0, limit = o->duration > 0 ? LONG_MAX : o->iters;
    ibmsg_request_t *req = calloc((size_t)depth, sizeof(*req));
    char *buf = perf_buffer(size);
    perf_peak_t peak = perf_peak_make(depth);
    ibmsg_request_t ack = IBMSG_REQUEST_NULL;
    double t0, t1, end;
    int ret, stop;

    if (req == NULL || buf == NULL || peak.t == NULL) {
        ret = IBMSG_ERR_NO_MEMORY;
        goto out;
    }
    memset(buf, 0x5a, size);
    ret = perf_barrier(c);
    if (ret != IBMSG_OK) {
        goto out;
    }
    if (pc != NULL && (ret = perf_counters_start(pc)) != IBMSG_OK) {
        perf_fail("start counters", ret);
        goto out;
    }
    PERF_COLLECT_BEGIN(o);
    t0 = perf_now();
    end = t0 + o->duration;
    while (done < limit || done < posted) {
        while (posted < limit && posted - done < depth) {
            ret = ibmsg_tag_isend(c->ep, buf, size, PERF_TAG_DATA, &req[posted % depth]);
            if (ret != IBMSG_OK) {
                perf_fail("send", ret);
                goto out;
            }
            posted++;
        }
        /* Retire every send that has completed, then refill the window: sends started back to
         * back leave together in one post (core_send_batch), as perftest's do with -l. */
        while (done < posted) {
            int complete = 0;
            if (posted - done == depth || posted == limit) {
                /* Nothing to post until the oldest completes: what the loop did, in one wait. */
                ret = perf_await(&req[done % depth], NULL, &complete);
            } else {
                ret = ibmsg_request_test(&req[done % depth], &complete, NULL);
            }
            if (ret != IBMSG_OK) {
                perf_fail("send completion", ret);
                goto out;
            }
            if (!complete) {
                break;
            }
            done++;
            perf_peak_add(&peak);
            if (o->duration > 0 && (done & 63) == 0) {
                double now = perf_now();
                if (now >= end) {
                    limit = posted; /* stop posting, drain */
                }
                perf_progress_tick(o, size, now - t0);
            }
        }
    }
    if (o->duration > 0) {
        ret = ibmsg_tag_send(c->ep, NULL, 0, PERF_TAG_DATA); /* END */
        if (ret != IBMSG_OK) {
            perf_fail("send end", ret);
            goto out;
        }
        res->msgs_sent++;
    }
    ret = ibmsg_tag_irecv(c->ctx, c->ep, NULL, 0, PERF_TAG_ACK, IBMSG_TAG_MASK_EXACT, &ack);
    if (ret == IBMSG_OK) {
        ret = perf_wait(o, &ack, NULL);
    }
    t1 = perf_now();
    ret = perf_interval_end(o, c, ret);
    if (pc != NULL && (stop = perf_counters_stop(pc)) != IBMSG_OK) {
        ret = perf_fail("stop counters", stop);
        goto out;
    }
    if (ret != IBMSG_OK) {
        perf_fail("receive ack", ret);
        goto out;
    }
    res->msgs_sent += done;
    res->msgs_recvd += 1;
    perf_row_rate(row, size, done, t1 - t0, peak.best);
out:
    free(peak.t);
    free(buf);
    free(req);
    return ret;
}

static int perf_bw_server(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc, size_t size,
                          perf_row_t *row, perf_result_t *res)
{
    long depth = o->rx_depth, posted = 0, done = 0, limit = o->duration > 0 ? LONG_MAX : o->iters;
    ibmsg_request_t *req = calloc((size_t)depth, sizeof(*req));
    char *buf = perf_buffer(size);
    perf_peak_t peak = perf_peak_make(depth);
    bool ended = false;
    double t0, t1;
    int ret = IBMSG_OK, stop;

    if (req == NULL || buf == NULL || peak.t == NULL) {
        ret = IBMSG_ERR_NO_MEMORY;
        goto out;
    }
    for (; posted < limit && posted < depth && ret == IBMSG_OK; posted++) {
        ret = ibmsg_tag_irecv(c->ctx, c->ep, buf, size, PERF_TAG_DATA, IBMSG_TAG_MASK_EXACT,
                              &req[posted % depth]);
    }
    if (ret != IBMSG_OK || (ret = perf_barrier(c)) != IBMSG_OK) {
        perf_fail("post receives", ret);
        goto out;
    }
    if (pc != NULL && (ret = perf_counters_start(pc)) != IBMSG_OK) {
        perf_fail("start counters", ret);
        goto out;
    }
    PERF_COLLECT_BEGIN(o);
    t0 = perf_now();
    while (done < limit && !ended) {
        ibmsg_tag_status_t st;
        int complete = 0;

        /* The next message in order: nothing else to do until it is here. */
        ret = perf_await(&req[done % depth], &st, &complete);
        if (ret != IBMSG_OK) {
            perf_fail("receive", ret);
            goto out;
        }
        if (!complete) {
            continue;
        }
        if (st.length == 0) { /* END of a -D run */
            ended = true;
            res->msgs_recvd++;
            done++;
            break;
        }
        if (st.length != size) {
            fprintf(stderr, "ibmsg perf: received %zu bytes, expected %zu\n", st.length, size);
            ret = IBMSG_ERR_PROTOCOL;
            goto out;
        }
        perf_peak_add(&peak);
        if (posted < limit) {
            ret = ibmsg_tag_irecv(c->ctx, c->ep, buf, size, PERF_TAG_DATA, IBMSG_TAG_MASK_EXACT,
                                  &req[done % depth]);
            if (ret != IBMSG_OK) {
                perf_fail("post receive", ret);
                goto out;
            }
            posted++;
        }
        done++;
    }
    ret = ibmsg_tag_send(c->ep, NULL, 0, PERF_TAG_ACK);
    t1 = perf_now();
    ret = perf_interval_end(o, c, ret);
    if (pc != NULL && (stop = perf_counters_stop(pc)) != IBMSG_OK) {
        ret = perf_fail("stop counters", stop);
        goto out;
    }
    if (ret != IBMSG_OK) {
        perf_fail("send ack", ret);
        goto out;
    }
    /* -D: receives still posted after END are cancelled (outside the interval). */
    for (long i = done; i < posted; i++) {
        int r = ibmsg_request_cancel(req[i % depth]);
        if (r == IBMSG_OK) {
            r = ibmsg_request_wait(&req[i % depth], NULL);
        }
        if (r != IBMSG_ERR_CANCELED && r != IBMSG_OK) {
            ret = perf_fail("cancel receive", r);
        }
    }
    if (ended) {
        done--; /* END carries no data */
    }
    res->msgs_recvd += done;
    res->msgs_sent += 1;
    perf_row_rate(row, size, done, t1 - t0, peak.best);
out:
    free(peak.t);
    free(buf);
    free(req);
    return ret;
}

/* --- latency --------------------------------------------------------------------------------- */

static int perf_lat_run(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc, size_t size,
                        perf_row_t *row, perf_result_t *res)
{
    bool client = o->host != NULL;
    long cap = o->duration > 0 ? 1L << 22 : o->iters; /* -D: at most 4M samples kept */
    long limit = o->duration > 0 ? LONG_MAX : o->iters, i = 0, n;
    uint64_t *stamp = malloc(sizeof(uint64_t) * (size_t)(cap + 1));
    double *sample = malloc(sizeof(double) * (size_t)(cap + 1));
    perf_stamp_clock_t clk;
    int clk_ok = perf_stamp_init(&clk, cap + 1) == 0;
    char *sbuf = perf_buffer(size), *rbuf = perf_buffer(size);
    ibmsg_request_t rreq = IBMSG_REQUEST_NULL;
    ibmsg_tag_status_t st;
    uint64_t t0, now;
    long backwards, kept;
    int ret = IBMSG_OK, stop;

    if (stamp == NULL || sample == NULL || !clk_ok || sbuf == NULL || rbuf == NULL) {
        ret = IBMSG_ERR_NO_MEMORY;
        goto out;
    }
    memset(sbuf, 0, size);
    if (!client) {
        ret =
            ibmsg_tag_irecv(c->ctx, c->ep, rbuf, size, PERF_TAG_DATA, IBMSG_TAG_MASK_EXACT, &rreq);
    }
    if (ret != IBMSG_OK || (ret = perf_barrier(c)) != IBMSG_OK) {
        goto out;
    }
    if (pc != NULL && (ret = perf_counters_start(pc)) != IBMSG_OK) {
        perf_fail("start counters", ret);
        goto out;
    }
    PERF_COLLECT_BEGIN(o);
    stamp[0] = perf_stamp(&clk);
    t0 = now = perf_stamp_anchor(&clk, 0, stamp[0]);
    for (i = 0; i < limit && i < cap; i++) {
        if (client) {
            /* -D: checked at the anchors, the only clock reads (slow under emulation) */
            if (o->duration > 0 && i % PERF_STAMP_ANCHOR_EVERY == 0) {
                if ((double)(now - t0) * 1e-9 >= o->duration) {
                    break;
                }
                perf_progress_tick(o, size, (double)(now - t0) * 1e-9);
            }
            /* The ping first, then the receive for its echo (as UCX's tag_lat does), so posting
               the receive is off the round trip; an echo back before it (a round trip shorter
               than the post) would match from the unexpected queue. */
            ret = ibmsg_tag_send(c->ep, sbuf, size, PERF_TAG_DATA);
            if (ret == IBMSG_OK) {
                ret = ibmsg_tag_irecv(c->ctx, c->ep, rbuf, size, PERF_TAG_DATA,
                                      IBMSG_TAG_MASK_EXACT, &rreq);
            }
            if (ret == IBMSG_OK) {
                ret = perf_wait(o, &rreq, &st);
            }
        } else {
            ret = perf_wait(o, &rreq, &st);
            if (ret == IBMSG_OK && st.length == 0) {
                res->msgs_recvd++; /* END */
                break;
            }
            /* The echo first, then the receive for the next ping: the client cannot send it
               before it has the echo, so the receive is posted in time, off the round trip. */
            if (ret == IBMSG_OK) {
                ret = ibmsg_tag_send(c->ep, sbuf, size, PERF_TAG_DATA);
            }
            if (ret == IBMSG_OK && i + 1 < limit) {
                ret = ibmsg_tag_irecv(c->ctx, c->ep, rbuf, size, PERF_TAG_DATA,
                                      IBMSG_TAG_MASK_EXACT, &rreq);
            }
        }
        if (ret != IBMSG_OK) {
            perf_fail(client ? "ping" : "pong", ret);
            goto out;
        }
        if (st.length != size) {
            fprintf(stderr, "ibmsg perf: received %zu bytes, expected %zu\n", st.length, size);
            ret = IBMSG_ERR_PROTOCOL;
            goto out;
        }
        stamp[i + 1] = perf_stamp(&clk);
        if ((i + 1) % PERF_STAMP_ANCHOR_EVERY == 0) {
            now = perf_stamp_anchor(&clk, i + 1, stamp[i + 1]);
        }
    }
    perf_stamp_anchor(&clk, i, stamp[i]); /* the last stamp (once, if it already is one) */
    if (client && o->duration > 0) {
        ret = ibmsg_tag_send(c->ep, NULL, 0, PERF_TAG_DATA); /* END */
        if (ret != IBMSG_OK) {
            perf_fail("send end", ret);
            goto out;
        }
        res->msgs_sent++;
    }
    if ((ret = perf_interval_end(o, c, ret)) != IBMSG_OK) {
        goto out;
    }
    if (pc != NULL && (stop = perf_counters_stop(pc)) != IBMSG_OK) {
        ret = perf_fail("stop counters", stop);
        goto out;
    }
    n = i;
    res->msgs_sent += n;
    res->msgs_recvd += n;
    if (n < 3) {
        fprintf(stderr, "ibmsg perf: only %ld round trips: too few for statistics\n", n);
        ret = IBMSG_ERR_INVALID;
        goto out;
    }
    backwards = perf_stamp_to_ns(&clk, stamp, n + 1);
    if (backwards > 0) {
        fprintf(stderr,
                "ibmsg perf: the TSC went backwards %ld times (unsynchronized between CPUs?): "
                "those round trips are dropped; pin the tool to one CPU with taskset\n",
                backwards);
    }
    /* Samples: round trip / 2, in microseconds. On the server a round trip is from one reply to
     * the next; its first interval includes the client's start, so it is dropped. */
    kept = 0;
    for (long k = client ? 0 : 1; k < n; k++) {
        if (stamp[k + 1] >= stamp[k]) {
            sample[kept++] = (double)(stamp[k + 1] - stamp[k]) * 1e-3 / 2.0;
        }
    }
    if (kept == 0) {
        fprintf(stderr, "ibmsg perf: no round trip left to time\n");
        ret = IBMSG_ERR_INVALID;
        goto out;
    }
    row->bytes = size;
    row->iters = n;
    row->seconds = 0;
    perf_lat_stats(sample, (size_t)kept, &row->lat);
out:
    perf_stamp_fini(&clk);
    free(stamp);
    free(sample);
    free(sbuf);
    free(rbuf);
    return ret;
}

/* --- driver ---------------------------------------------------------------------------------- */

int perf_run(const perf_options_t *o)
{
    perf_result_t res;
    perf_counters_t *pc = NULL;
    perf_conn_t c;
    FILE *out = stdout;
    size_t sizes[PERF_MAX_ROWS];
    int num_sizes = 0, ret, status = 1;

    memset(&res, 0, sizeof(res));
    res.opts = o;
    if (o->json_path != NULL && strcmp(o->json_path, "-") == 0) {
        out = stderr;
    }
    if (o->output != PERF_OUTPUT_REPORT) {
        out = fopen("/dev/null", "w");
        if (out == NULL) {
            return 1;
        }
    }
    ret = perf_conn_open(o, &c);
    if (ret != IBMSG_OK) {
        goto out_file;
    }
    ibmsg_context_query(c.ctx, &res.attr);
    ret = perf_params_exchange(o, &c);
    if (ret != IBMSG_OK) {
        goto out_conn;
    }
    if (o->counters || o->idle_session) {
        pc = malloc(sizeof(*pc));
        if (pc == NULL ||
            perf_counters_open(pc, o->counter_categories, o->idle_session, c.ctx, stderr) != 0) {
            free(pc);
            pc = NULL;
            goto out_conn;
        }
        res.counters = o->counters ? pc : NULL; /* an idle session is started, never read */
    }
    if (o->all_sizes) {
        for (size_t s = 2; s <= PERF_MAX_SIZE; s *= 2) {
            sizes[num_sizes++] = s;
        }
    } else {
        sizes[num_sizes++] = o->size; /* above the eager limit: the rendezvous protocol */
    }
    perf_report_header(&res, out);
    for (int i = 0; i < num_sizes; i++) {
        perf_row_t *row = &res.rows[res.num_rows];

        if (perf_progress_shown(o)) {
            fprintf(stderr, "\r running %zu bytes ...", sizes[i]);
        }
        if (o->test == PERF_TEST_WRITE_BW) {
            ret = perf_write_run(o, &c, pc, sizes[i], row, &res);
        } else if (perf_test_is_atomic(o->test)) {
            ret = perf_atomic_run(o, &c, pc, sizes[i], row, &res);
        } else if (o->test == PERF_TEST_SEND_LAT) {
            ret = perf_lat_run(o, &c, pc, sizes[i], row, &res);
        } else if (o->host != NULL) {
            ret = perf_bw_client(o, &c, pc, sizes[i], row, &res);
        } else {
            ret = perf_bw_server(o, &c, pc, sizes[i], row, &res);
        }
        if (perf_progress_shown(o)) {
            fprintf(stderr, "\r%*s\r", 40, "");
        }
        if (ret != IBMSG_OK) {
            goto out_counters;
        }
        res.num_rows++;
        res.total_iters += row->iters;
        res.total_seconds += row->seconds;
        perf_report_row(&res, row, out);
    }
    perf_report_footer(&res, out);
    if (res.counters != NULL) {
        ret = perf_counters_read(pc);
        if (ret != IBMSG_OK) {
            perf_fail("read counters", ret);
            goto out_counters;
        }
        perf_report_counters(&res, out);
    }
    if (o->output != PERF_OUTPUT_REPORT) {
        perf_report_output(&res, stdout);
    }
    /* Both sides leave together: the last message must have arrived before endpoints go. */
    ret = perf_barrier(&c);
    if (ret != IBMSG_OK) {
        goto out_counters;
    }
    status = 0;
    if (o->json_path != NULL) {
        FILE *j = strcmp(o->json_path, "-") == 0 ? stdout : fopen(o->json_path, "w");
        if (j == NULL || perf_report_json(&res, j) != 0) {
            fprintf(stderr, "%s: cannot write %s\n", o->prog, o->json_path);
            status = 1;
        }
        if (j != NULL && j != stdout) {
            fclose(j);
        }
    }
out_counters:
    if (pc != NULL) {
        perf_counters_close(pc);
        free(pc);
    }
out_conn:
    perf_conn_close(&c);
out_file:
    if (out != stdout && out != stderr) {
        fclose(out);
    }
    return status;
}
