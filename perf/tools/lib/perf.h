/*
 * perf/tools/lib: the engine of the perftest-style tools (ibmsg_send_bw, ibmsg_send_lat). The mains
 * only pick the test; everything else (options, connection, timed loops, statistics, the report,
 * counters and JSON) is here so every tool behaves the same way.
 *
 * Not part of the installed API: the tools use the public headers only (ibmsg.h, tool.h), as
 * users do. Not thread safe: one tool run per process.
 */
#ifndef IBMSG_PERF_LIB_PERF_H
#define IBMSG_PERF_LIB_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <ibmsg/ibmsg.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum perf_test {
    PERF_TEST_SEND_BW = 1,
    PERF_TEST_SEND_LAT = 2,
    PERF_TEST_WRITE_BW = 3,   /* one-sided puts (perf/tools/lib/write.c) */
    PERF_TEST_ATOMIC_LAT = 4, /* remote atomics, one in flight (perf/tools/lib/atomic.c) */
    PERF_TEST_ATOMIC_BW = 5,  /* remote atomics, many in flight */
} perf_test_t;

/* A latency test (one operation in flight, per-operation samples), else a bandwidth test. */
static inline bool perf_test_is_lat(perf_test_t t)
{
    return t == PERF_TEST_SEND_LAT || t == PERF_TEST_ATOMIC_LAT;
}

/* An atomic test: 8-byte operations, -A picks the kind. */
static inline bool perf_test_is_atomic(perf_test_t t)
{
    return t == PERF_TEST_ATOMIC_LAT || t == PERF_TEST_ATOMIC_BW;
}

/* -A, --atomic_type (perftest's names). */
typedef enum perf_atomic_type {
    PERF_ATOMIC_FETCH_AND_ADD = 0,
    PERF_ATOMIC_CMP_AND_SWAP = 1,
} perf_atomic_type_t;

/* --output: the whole report, or one number. */
typedef enum perf_output {
    PERF_OUTPUT_REPORT = 0,
    PERF_OUTPUT_BANDWIDTH,
    PERF_OUTPUT_MESSAGE_RATE,
    PERF_OUTPUT_LATENCY,
} perf_output_t;

#define PERF_DEFAULT_TCP_PORT 18515
#define PERF_DEFAULT_ITERS    1000
#define PERF_DEFAULT_CQ_MOD   100 /* perftest's CQ moderation: one completion per 100 sends */
#define PERF_MAX_SIZE         (1ul << 23) /* -a goes up to 8 MiB, like perftest */
#define PERF_MAX_DEPTH        16384

/* What the command line asked for. Numbers are -1 (or 0 / false) when not given. */
typedef struct perf_options {
    perf_test_t test;
    const char *prog;
    const char *host; /* NULL: server */
    const char *device;
    int ib_port;    /* -i */
    int gid_index;  /* -x */
    int qp_timeout; /* -u: RC local ACK timeout exponent, -1: the library's */
    uint16_t tcp_port;
    size_t size;
    bool size_set;
    long iters;
    bool iters_set;
    bool all_sizes;
    int duration; /* -D seconds, 0: iteration mode */
    int tx_depth;
    int rx_depth;
    int cq_mod;                     /* -Q, -1: library default */
    int inline_size;                /* -I, -1: library default */
    int post_list;                  /* -l, -1: library default (core_send_batch) */
    perf_atomic_type_t atomic_type; /* -A */
    int outs;                       /* -o: atomics outstanding at the device, -1: its default */
    bool cpu_freq_ok;
    bool report_gbits;
    perf_output_t output;
    bool counters;
    char counter_categories[256]; /* comma separated; empty: core, verbs, nic, papi */
    bool idle_session;            /* every class started, never read (without --counters) */
    long empty_polls;             /* --empty-polls: 2n progress calls that find nothing after the
                                     interval; under callgrind the interval and the last n are
                                     dumped apart (0: neither) */
    const char *json_path;        /* NULL: no JSON; "-": stdout */
} perf_options_t;

/** The library hints the options ask for (perftest's flags in ibmsg's terms: -u verbs_timeout,
 *  -t core_sq_depth, ...) in a new info object for ibmsg_context_create; *info is the caller's
 *  to free; on an error no info is left. */
int perf_options_info(const perf_options_t *o, ibmsg_info_t *info);

/* perf_options_parse results besides 0. */
#define PERF_PARSE_ERROR 1
#define PERF_PARSE_HELP  2

/**
 * Parse the command line of a tool of the given test. Unknown flags, bad numbers and flags that
 * conflict or do not apply to the test are errors: a message naming the flag goes to err.
 * -h prints the usage to out.
 * @return 0, PERF_PARSE_ERROR or PERF_PARSE_HELP.
 */
int perf_options_parse(perf_options_t *opts, perf_test_t test, int argc, char **argv, FILE *out,
                       FILE *err);

/** Print the usage of a test's tool. */
void perf_options_usage(perf_test_t test, const char *prog, FILE *out);

/* Latency statistics of one size, perftest's: two largest samples dropped, median as typical,
 * nearest-rank percentiles, all in microseconds. */
typedef struct perf_lat_stats {
    size_t samples; /* used after dropping */
    double min, max, typical, avg, stdev, p99, p999;
} perf_lat_stats_t;

/**
 * Compute the statistics of n samples (microseconds; sorted in place). n must be at least 1;
 * the two largest are dropped when n > 2.
 */
void perf_lat_stats(double *samples, size_t n, perf_lat_stats_t *out);

/** Nearest-rank percentile p (0 < p <= 100) of n sorted samples. */
double perf_percentile(const double *sorted, size_t n, double p);

/** Run the tool: connect, measure, report. @return the process exit status. */
int perf_run(const perf_options_t *opts);

#ifdef __cplusplus
}
#endif

#endif
