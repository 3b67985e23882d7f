/*
 * ibmsg_write_bw: perftest's ib_write_bw over ibmsg_put. Per size, both sides:
 *   1. the server maps a buffer of the size for remote write and sends its packed key over the
 *      TCP connection; the client unpacks it and maps its own source buffer;
 *   2. out-of-band barrier, counters start, timer start;
 *   3. client: puts of the size to the server's buffer, at most -t in flight. Puts are implicit
 *      (no request) except every g-th (g: -Q, else the library's signal interval) and the last,
 *      which carry a request: puts complete in order, so when that request completes the ones
 *      before it have too (perftest's CQ moderation, with ibmsg's selective signalling). Then
 *      one flush, so every put is in the server's memory, and the timer stops; then the count
 *      goes to the server over the TCP connection.
 *      server: blocks on the TCP connection for the count (like perftest's server, it does not
 *      poll: on a software device its polling would take CPU from the device), timer stop;
 *   4. counters stop; the mappings go.
 * So in the measured interval: client N puts and 1 flush; no message on either side.
 */
#include <stdlib.h>
#include <string.h>

#include <ibmsg/rma.h>

#include "perf/tools/lib/engine.h"

typedef struct perf_write_stream {
    perf_conn_t *c;
    const char *buf;
    size_t size;
    ibmsg_mem_t mem;
    uint64_t raddr;
    ibmsg_rkey_t rkey;
} perf_write_stream_t;

static int perf_write_post(void *arg, long i, ibmsg_request_t *req)
{
    const perf_write_stream_t *w = arg;

    (void)i; /* every put writes the same bytes to the same place */
    return ibmsg_put(w->c->ep, w->buf, w->size, w->mem, w->raddr, w->rkey, req);
}

static int perf_write_client(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc,
                             size_t size, perf_row_t *row, perf_result_t *res)
{
    char *buf = perf_buffer(size);
    perf_write_stream_t w = {
        .c = c, .buf = buf, .size = size, .mem = IBMSG_MEM_NULL, .rkey = IBMSG_RKEY_NULL};
    perf_window_ops_t ops = {.what = "put", .post = perf_write_post, .completed = NULL, .arg = &w};
    uint64_t count;
    int ret, stop;

    (void)res; /* no messages: the count goes over TCP */
    if (buf == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    memset(buf, 0x5a, size);
    if ((ret = perf_rma_accept(c, &w.rkey, &w.raddr)) != IBMSG_OK) {
        goto out;
    }
    ret = ibmsg_mem_map(c->ctx, buf, size, 0, &w.mem);
    if (ret != IBMSG_OK) {
        perf_fail("map the source buffer", ret);
        goto out;
    }
    if ((ret = perf_barrier(c)) != IBMSG_OK) {
        goto out;
    }
    if (pc != NULL && (ret = perf_counters_start(pc)) != IBMSG_OK) {
        perf_fail("start counters", ret);
        goto out;
    }
    ret = perf_window_run(o, c, 16, &ops, size, row);
    if (ret != IBMSG_OK) {
        goto out;
    }
    count = (uint64_t)row->iters;
    ret = ibmsg_oob_send(c->oob, &count, sizeof(count), PERF_OOB_TIMEOUT);
    if (pc != NULL && (stop = perf_counters_stop(pc)) != IBMSG_OK) {
        ret = perf_fail("stop counters", stop);
        goto out;
    }
    if (ret != IBMSG_OK) {
        perf_fail("send done", ret);
    }
out:
    if (w.rkey != IBMSG_RKEY_NULL) {
        ibmsg_rkey_destroy(w.rkey);
    }
    if (w.mem != IBMSG_MEM_NULL) {
        ibmsg_mem_unmap(w.mem); /* BUSY if the endpoint failed: the context frees it */
    }
    free(buf);
    return ret;
}

static int perf_write_server(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc,
                             size_t size, perf_row_t *row, perf_result_t *res)
{
    char *buf = perf_buffer(size);
    ibmsg_mem_t mem = IBMSG_MEM_NULL;
    size_t clen = sizeof(uint64_t);
    uint64_t count = 0;
    double t0, t1;
    int ret, stop;

    (void)o;
    (void)res;
    if (buf == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    memset(buf, 0, size);
    if ((ret = perf_rma_offer(c, buf, size, IBMSG_MEM_REMOTE_WRITE, &mem)) != IBMSG_OK) {
        goto out;
    }
    if (pc != NULL && (ret = perf_counters_start(pc)) != IBMSG_OK) {
        perf_fail("start counters", ret);
        goto out;
    }
    t0 = perf_now();
    ret = ibmsg_oob_recv(c->oob, &count, &clen, 10 * PERF_OOB_TIMEOUT);
    t1 = perf_now();
    if (pc != NULL && (stop = perf_counters_stop(pc)) != IBMSG_OK) {
        ret = perf_fail("stop counters", stop);
        goto out;
    }
    if (ret != IBMSG_OK || clen != sizeof(count) || count == 0) {
        ret = perf_fail("receive done", ret != IBMSG_OK ? ret : IBMSG_ERR_PROTOCOL);
        goto out;
    }
    perf_row_rate(row, size, (long)count, t1 - t0, 0); /* no completions here: no peak */
out:
    if (mem != IBMSG_MEM_NULL) {
        ibmsg_mem_unmap(mem);
    }
    free(buf);
    return ret;
}

int perf_write_run(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc, size_t size,
                   perf_row_t *row, perf_result_t *res)
{
    return o->host != NULL ? perf_write_client(o, c, pc, size, row, res)
                           : perf_write_server(o, c, pc, size, row, res);
}
