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
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include <ibmsg/rma.h>

#include "perf/tools/lib/engine.h"

static int perf_write_client(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc,
                             size_t size, perf_row_t *row, perf_result_t *res)
{
    long depth = o->tx_depth, limit = o->duration > 0 ? LONG_MAX : o->iters;
    long g = o->cq_mod > 0 ? o->cq_mod : 16, nreq, posted = 0, done = 0, head = 0, tail = 0;
    ibmsg_rkey_t rkey = IBMSG_RKEY_NULL;
    ibmsg_mem_t mem = IBMSG_MEM_NULL;
    ibmsg_request_t *ring = NULL;
    long *mark = NULL;
    double *when = NULL, best = 0, t0, t1, end;
    char *buf = perf_buffer(size);
    uint64_t raddr = 0, count;
    int ret, stop;

    (void)res; /* no messages: the count goes over TCP */

    g = g > depth / 2 ? (depth / 2 > 0 ? depth / 2 : 1) : g;
    nreq = depth / g + 2;
    ring = calloc((size_t)nreq, sizeof(*ring));
    mark = calloc((size_t)nreq, sizeof(*mark));
    when = calloc((size_t)nreq, sizeof(*when));
    if (buf == NULL || ring == NULL || mark == NULL || when == NULL) {
        ret = IBMSG_ERR_NO_MEMORY;
        goto out;
    }
    memset(buf, 0x5a, size);
    if ((ret = perf_rma_accept(c, &rkey, &raddr)) != IBMSG_OK) {
        goto out;
    }
    ret = ibmsg_mem_map(c->ctx, buf, size, 0, &mem);
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
    t0 = perf_now();
    end = t0 + o->duration;
    while (posted < limit || tail < head) {
        while (posted < limit && posted - done < depth) {
            int explicit = (posted + 1) % g == 0 || posted + 1 == limit;
            ret =
                ibmsg_put(c->ep, buf, size, mem, raddr, rkey, explicit ? &ring[head % nreq] : NULL);
            if (ret != IBMSG_OK) {
                perf_fail("put", ret);
                goto out;
            }
            posted++;
            if (explicit) {
                mark[head % nreq] = posted;
                head++;
            }
        }
        if (tail < head) {
            int complete = 0;
            ret = ibmsg_request_test(&ring[tail % nreq], &complete, NULL);
            if (ret != IBMSG_OK) {
                perf_fail("put completion", ret);
                goto out;
            }
            if (complete) {
                double now = perf_now();
                long w = nreq - 2; /* peak: the best window of this many completions */
                when[tail % nreq] = now;
                done = mark[tail % nreq];
                if (w > 0 && tail >= w) {
                    long k = (tail - w) % nreq;
                    double per = (now - when[k]) / (double)(done - mark[k]);
                    if (per > 0 && (best == 0 || per < best)) {
                        best = per;
                    }
                }
                tail++;
                if (o->duration > 0 && now >= end && limit == LONG_MAX) {
                    limit = posted; /* stop posting; the flush below completes the rest */
                }
            }
        } else if (posted >= limit) {
            break;
        }
    }
    ret = ibmsg_ep_flush_wait(c->ep);
    t1 = perf_now();
    if (ret != IBMSG_OK) {
        perf_fail("flush", ret);
        goto out;
    }
    done = posted;
    count = (uint64_t)done;
    ret = ibmsg_oob_send(c->oob, &count, sizeof(count), PERF_OOB_TIMEOUT);
    if (pc != NULL && (stop = perf_counters_stop(pc)) != IBMSG_OK) {
        ret = perf_fail("stop counters", stop);
        goto out;
    }
    if (ret != IBMSG_OK) {
        perf_fail("send done", ret);
        goto out;
    }
    row->bytes = size;
    row->iters = done;
    row->seconds = t1 - t0;
    row->msg_rate = (double)done / row->seconds;
    row->bw_avg = row->msg_rate * (double)size;
    row->bw_peak = best > 0 ? (double)size / best : row->bw_avg;
out:
    for (long i = tail; i < head; i++) {
        ibmsg_request_wait(&ring[i % nreq], NULL); /* after an error: free what is left */
    }
    if (rkey != IBMSG_RKEY_NULL) {
        ibmsg_rkey_destroy(rkey);
    }
    if (mem != IBMSG_MEM_NULL) {
        ibmsg_ep_flush_wait(c->ep); /* after an error: nothing may still read the buffer */
        ibmsg_mem_unmap(mem);       /* BUSY if the endpoint failed: the context frees it */
    }
    free(when);
    free(mark);
    free(ring);
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
    row->bytes = size;
    row->iters = (long)count;
    row->seconds = t1 - t0;
    row->msg_rate = (double)count / row->seconds;
    row->bw_avg = row->msg_rate * (double)size;
    row->bw_peak = row->bw_avg; /* the target sees no completions: no peak of its own */
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
