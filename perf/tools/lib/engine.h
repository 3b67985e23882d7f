/* Private to perf/tools/lib: what the measured loops of engine.c, write.c and atomic.c share. */
#ifndef IBMSG_PERF_LIB_ENGINE_H
#define IBMSG_PERF_LIB_ENGINE_H

#include <ibmsg/ibmsg.h>
#include <ibmsg/rma.h>

#include "perf/tools/lib/counters.h"
#include "perf/tools/lib/perf.h"
#include "perf/tools/lib/report.h"

#define PERF_OOB_TIMEOUT 60000 /* ms: the peer may be slow to start under emulation */

typedef struct perf_conn {
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t oob;
} perf_conn_t;

/** A message buffer of size bytes (at least 1), page-aligned as perftest's are, so both tools'
 *  messages span the same pages; NULL without memory. Freed with free(). */
void *perf_buffer(size_t size);
/** Seconds of CLOCK_MONOTONIC. */
double perf_now(void);
/** Print what failed to stderr; return status. */
int perf_fail(const char *what, int status);
/** Both sides reach this point before either goes on (a TCP frame each way). */
int perf_barrier(perf_conn_t *c);

/**
 * Server of a one-sided test (rma_keys.c): map [buf, buf + size) with flags (*mem; NULL on
 * failure), send its packed key to the client, then the barrier. Errors are printed.
 */
int perf_rma_offer(perf_conn_t *c, void *buf, size_t size, unsigned flags, ibmsg_mem_t *mem);
/** Client: receive the server's key and unpack it on c->ep (*rkey); *raddr is its base. */
int perf_rma_accept(perf_conn_t *c, ibmsg_rkey_t *rkey, uint64_t *raddr);

/* What perf_window_run posts: operation i, with req (non-NULL) for every g-th and the last. */
typedef struct perf_window_ops {
    const char *what; /* for the error messages ("put": "put", "put completion") */
    int (*post)(void *arg, long i, ibmsg_request_t *req);
    /* Optional: the operations before done have completed (check their results). */
    int (*completed)(void *arg, long done);
    void *arg;
} perf_window_ops_t;

/**
 * The client's stream of one-sided operations (window.c; ibmsg_write_bw, ibmsg_atomic_bw): at
 * most -t posted ahead of their completions; every g-th (-Q, else default_g, at most half the
 * depth) and the last carry a request, and since they complete in order its completion says the
 * ones before it have too (perftest's CQ moderation, with ibmsg's selective signalling); -n of
 * them or -D seconds, then one flush. Fills row (bytes each; the peak: the best window of
 * completions). Errors are printed; after one nothing is left in flight.
 */
int perf_window_run(const perf_options_t *o, perf_conn_t *c, long default_g,
                    const perf_window_ops_t *ops, size_t bytes, perf_row_t *row);

/** One size of the one-sided write bandwidth test (write.c), client or server side. */
int perf_write_run(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc, size_t size,
                   perf_row_t *row, perf_result_t *res);

/** The atomic tests (atomic.c): one run of 8-byte atomics, client or server side. */
int perf_atomic_run(const perf_options_t *o, perf_conn_t *c, perf_counters_t *pc, size_t size,
                    perf_row_t *row, perf_result_t *res);

#endif
