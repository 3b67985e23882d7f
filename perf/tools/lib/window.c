/*
 * The client's stream of one-sided operations (ibmsg_write_bw, ibmsg_atomic_bw): see engine.h,
 * perf_window_run.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#include "perf/tools/lib/engine.h"

int perf_window_run(const perf_options_t *o, perf_conn_t *c, long default_g,
                    const perf_window_ops_t *ops, size_t bytes, perf_row_t *row)
{
    long depth = o->tx_depth, limit = o->duration > 0 ? LONG_MAX : o->iters;
    long g = o->cq_mod > 0 ? o->cq_mod : default_g, nreq, posted = 0, done = 0;
    long head = 0, tail = 0;
    ibmsg_request_t *ring;
    long *mark;
    double *when, best = 0, t0, t1, end;
    int ret = IBMSG_OK;

    g = g > depth / 2 ? (depth / 2 > 0 ? depth / 2 : 1) : g;
    nreq = depth / g + 2;
    ring = calloc((size_t)nreq, sizeof(*ring));
    mark = calloc((size_t)nreq, sizeof(*mark));
    when = calloc((size_t)nreq, sizeof(*when));
    if (ring == NULL || mark == NULL || when == NULL) {
        ret = IBMSG_ERR_NO_MEMORY;
        goto out;
    }
    t0 = perf_now();
    end = t0 + o->duration;
    while (posted < limit || tail < head) {
        while (posted < limit && posted - done < depth) {
            int explicit = (posted + 1) % g == 0 || posted + 1 == limit;
            ret = ops->post(ops->arg, posted, explicit ? &ring[head % nreq] : NULL);
            if (ret != IBMSG_OK) {
                perf_fail(ops->what, ret);
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
                char what[64];
                snprintf(what, sizeof(what), "%s completion", ops->what);
                perf_fail(what, ret);
                goto out;
            }
            if (complete) {
                double now = perf_now();
                long w = nreq - 2; /* peak: the best window of this many completions */
                when[tail % nreq] = now;
                done = mark[tail % nreq];
                if (ops->completed != NULL && (ret = ops->completed(ops->arg, done)) != IBMSG_OK) {
                    goto out;
                }
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
    perf_row_rate(row, bytes, posted, t1 - t0, best);
out:
    for (long i = tail; i < head; i++) {
        ibmsg_request_wait(&ring[i % nreq], NULL); /* after an error: free what is left */
    }
    if (ret != IBMSG_OK) {
        ibmsg_ep_flush_wait(c->ep); /* nothing may still read or write the buffers */
    }
    free(when);
    free(mark);
    free(ring);
    return ret;
}
