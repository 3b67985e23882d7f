/*
 * The results of a run and their presentation: perftest's test-info block, 87-dash lines and
 * table columns, then the counters, and the same as JSON.
 */
#ifndef IBMSG_PERF_LIB_REPORT_H
#define IBMSG_PERF_LIB_REPORT_H

#include <stdio.h>

#include "perf/tools/lib/counters.h"
#include "perf/tools/lib/perf.h"

#define PERF_MAX_ROWS 32

typedef struct perf_row {
    size_t bytes;
    long iters;
    double seconds;
    double bw_peak;  /* bytes per second */
    double bw_avg;   /* bytes per second */
    double msg_rate; /* messages per second */
    perf_lat_stats_t lat;
} perf_row_t;

/**
 * A bandwidth row from its measured interval: iters operations of bytes each in seconds; best:
 * the best seconds per operation over a window of completions, or 0 where the side sees none
 * (the peak is then the average).
 */
void perf_row_rate(perf_row_t *row, size_t bytes, long iters, double seconds, double best);

typedef struct perf_result {
    const perf_options_t *opts;
    ibmsg_context_attr_t attr;
    int num_rows;
    perf_row_t rows[PERF_MAX_ROWS];
    long total_iters;
    double total_seconds;
    /* Messages this process sent and received in the measured intervals (the handshakes of
     * the protocol included; see engine.c). */
    long long msgs_sent, msgs_recvd;
    perf_counters_t *counters; /* NULL without --counters */
} perf_result_t;

void perf_report_header(const perf_result_t *r, FILE *out);
void perf_report_row(const perf_result_t *r, const perf_row_t *row, FILE *out);
void perf_report_footer(const perf_result_t *r, FILE *out);
void perf_report_counters(const perf_result_t *r, FILE *out);
void perf_report_output(const perf_result_t *r, FILE *out); /* --output= */
int perf_report_json(const perf_result_t *r, FILE *out);

#endif
