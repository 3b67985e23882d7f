/*
 * ibmsg_atomic_lat / ibmsg_atomic_bw: perftest's ib_atomic_lat / ib_atomic_bw over
 * ibmsg_atomic_fetch_add64 and ibmsg_atomic_cswap64 (-A). Both sides:
 *   1. the server maps a word for remote atomics and sends its packed key over the TCP
 *      connection; the client unpacks it;
 *   2. out-of-band barrier, counters start, timer start;
 *   3. client, operation i: fetch-and-add of 1, or compare-and-swap of i for i + 1, so every
 *      result is known (i) and the word ends at the count.
 *      latency: one atomic with a request at a time, timed from issue to completion (the full
 *      round trip, as perftest's); every result is checked.
 *      bandwidth: at most -t in flight; implicit except every g-th (g: -Q, else 100, at most
 *      -t / 2) and the last, which carry a request (atomics complete in order); then one flush
 *      and the timer stops.
 *      Then the count (and, for latency, the row) goes to the server over the TCP connection.
 *      server: blocks on the TCP connection for it (no polling: the device serves the atomics),
 *      timer stop, and checks the word equals the count;
 *   4. counters stop; the mappings go.
 */
#include <stdlib.h>
#include <string.h>

#include <ibmsg/rma.h>

#include "perf/tools/lib/engine.h"

#define PERF_ATOMIC_REGION 4096

/* What the client tells the server at the end. */
typedef struct perf_atomic_done {
    uint64_t count;
    perf_row_t row; /* latency: the client's row, which the server prints too */
} perf_atomic_done_t;

static int perf_atomic_post(const perf_options_t *o, perf_conn_t *c, uint64_t i, uint64_t *result,
                            uint64_t raddr, ibmsg_rkey_t rkey, ibmsg_request_t *req)
{
    if (o->atomic_type == PERF_ATOMIC_CMP_AND_SWAP) {
        return ibmsg_atomic_cswap64(c->ep, i, i + 1, result, raddr, rkey, req);
    }
    return ibmsg_atomic_fetch_add64(c->ep, 1, result, raddr, rkey, req);
}

static int perf_atomic_lat_client(const perf_options_t *o, perf_conn_t *c, uint64_t raddr,
                                  ibmsg_rkey_t rkey, perf_row_t *row, long *count)
{
    double *sample = malloc((size_t)o->iters * sizeof(*sample));
    long i;
    int ret = IBMSG_OK;

    if (sample == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    for (i = 0; i < o->iters; i++) {
        uint64_t result = UINT64_MAX;
        ibmsg_request_t req;
        double t0 = perf_now();
        ret = perf_atomic_post(o, c, (uint64_t)i, &result, raddr, rkey, &req);
        if (ret == IBMSG_OK) {
            ret = ibmsg_request_wait(&req, NULL);
        }
        sample[i] = (perf_now() - t0) * 1e6;
        if (ret != IBMSG_OK) {
            perf_fail("atomic", ret);
            break;
        }
        if (result != (uint64_t)i) {
            fprintf(stderr, "ibmsg perf: atomic %ld returned %llu, expected %ld\n", i,
                    (unsigned long long)result, i);
            ret = IBMSG_ERR_PROTOCOL;
            break;
        }
    }
    if (ret == IBMSG_OK) {
        row->iters = i;
        perf_lat_stats(sample, (size_t)i, &row->lat);
        *count = i;
    }
    free(sample);
    return ret;
}

typedef struct perf_atomic_stream {
    const perf_options_t *o;
    perf_conn_t *c;
    uint64_t *results; /* one per operation in flight: -t */
    uint64_t raddr;
    ibmsg_rkey_t rkey;
} perf_atomic_stream_t;

static int perf_atomic_stream_post(void *arg, long i, ibmsg_request_t *req)
{
    const perf_atomic_stream_t *a = arg;

    return perf_atomic_post(a->o, a->c, (uint64_t)i, &a->results[i % a->o->tx_depth], a->raddr,
                            a->rkey, req);
}

/* Operations complete in order: the last one before done returned done - 1. */
static int perf_atomic_stream_completed(void *arg, long done)
{
    const perf_atomic_stream_t *a = arg;
    uint64_t got = a->results[(done - 1) % a->o->tx_depth];

    if (got != (uint64_t)(done - 1)) {
        fprintf(stderr, "ibmsg perf: atomic %ld returned %llu\n", done - 1,
                (unsigned long long)got);
        return IBMSG_ERR_PROTOCOL;
    }
    return IBMSG_OK;
}

static int perf_atomic_bw_client(const perf_options_t *o, perf_conn_t *c, uint64_t raddr,
                                 ibmsg_rkey_t rkey, perf_row_t *row, long *count)
{
    perf_atomic_stream_t a = {.o = o, .c = c, .raddr = raddr, .rkey = rkey};
    perf_window_ops_t ops = {.what = "atomic",
                             .post = perf_atomic_stream_post,
                             .completed = perf_atomic_stream_completed,
                             .arg = &a};
    int ret;

    a.results = calloc((size_t)o->tx_depth, sizeof(*a.results));
    if (a.results == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    ret = perf_window_run(o, c, PERF_DEFAULT_CQ_MOD, &ops, 8, row);
    if (ret == IBMSG_OK) {
        *count = row->iters;
    }
    free(a.results);
    return ret;
}

static int perf_atomic_client(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc,
                              perf_row_t *row)
{
    ibmsg_rkey_t rkey = IBMSG_RKEY_NULL;
    perf_atomic_done_t done;
    uint64_t raddr = 0; /* the server's word */
    long count = 0;
    int ret, stop;

    memset(&done, 0, sizeof(done));
    if ((ret = perf_rma_accept(c, &rkey, &raddr)) != IBMSG_OK) {
        return ret;
    }
    if ((ret = perf_barrier(c)) != IBMSG_OK) {
        goto out;
    }
    if (pc != NULL && (ret = perf_counters_start(pc)) != IBMSG_OK) {
        perf_fail("start counters", ret);
        goto out;
    }
    row->bytes = 8;
    ret = o->test == PERF_TEST_ATOMIC_LAT ? perf_atomic_lat_client(o, c, raddr, rkey, row, &count)
                                          : perf_atomic_bw_client(o, c, raddr, rkey, row, &count);
    if (pc != NULL && (stop = perf_counters_stop(pc)) != IBMSG_OK && ret == IBMSG_OK) {
        ret = perf_fail("stop counters", stop);
    }
    done.count = ret == IBMSG_OK ? (uint64_t)count : 0; /* 0: the server fails too */
    done.row = *row;
    stop = ibmsg_oob_send(c->oob, &done, sizeof(done), PERF_OOB_TIMEOUT);
    if (ret == IBMSG_OK && stop != IBMSG_OK) {
        ret = perf_fail("send done", stop);
    }
out:
    ibmsg_rkey_destroy(rkey);
    return ret;
}

static int perf_atomic_server(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc,
                              perf_row_t *row)
{
    size_t dlen;
    volatile uint64_t *word = perf_buffer(PERF_ATOMIC_REGION);
    ibmsg_mem_t mem = IBMSG_MEM_NULL;
    perf_atomic_done_t done;
    double t0, t1;
    int ret, stop;

    if (word == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    memset((void *)word, 0, PERF_ATOMIC_REGION);
    ret = perf_rma_offer(c, (void *)word, PERF_ATOMIC_REGION, IBMSG_MEM_REMOTE_ATOMIC, &mem);
    if (ret != IBMSG_OK) {
        goto out;
    }
    if (pc != NULL && (ret = perf_counters_start(pc)) != IBMSG_OK) {
        perf_fail("start counters", ret);
        goto out;
    }
    t0 = perf_now();
    dlen = sizeof(done);
    ret = ibmsg_oob_recv(c->oob, &done, &dlen, 10 * PERF_OOB_TIMEOUT);
    t1 = perf_now();
    if (pc != NULL && (stop = perf_counters_stop(pc)) != IBMSG_OK) {
        ret = perf_fail("stop counters", stop);
        goto out;
    }
    if (ret != IBMSG_OK || dlen != sizeof(done) || done.count == 0) {
        ret = perf_fail("receive done", ret != IBMSG_OK ? ret : IBMSG_ERR_PROTOCOL);
        goto out;
    }
    if (*word != done.count) {
        fprintf(stderr, "ibmsg perf: the word is %llu after %llu atomics\n",
                (unsigned long long)*word, (unsigned long long)done.count);
        ret = IBMSG_ERR_PROTOCOL;
        goto out;
    }
    if (o->test == PERF_TEST_ATOMIC_LAT) {
        *row = done.row; /* the server times nothing: it prints the client's samples */
    } else {
        perf_row_rate(row, 8, (long)done.count, t1 - t0, 0); /* no completions here: no peak */
    }
out:
    if (mem != IBMSG_MEM_NULL) {
        ibmsg_mem_unmap(mem);
    }
    free((void *)word);
    return ret;
}

int perf_atomic_run(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc, size_t size,
                    perf_row_t *row, perf_result_t *res)
{
    (void)size; /* always 8 */
    (void)res;  /* no messages: the count goes over TCP */
    return o->host != NULL ? perf_atomic_client(o, c, pc, row) : perf_atomic_server(o, c, pc, row);
}
