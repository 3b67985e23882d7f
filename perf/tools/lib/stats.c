/*
 * Latency statistics as perftest computes them (so numbers compare at a glance), except that the
 * standard deviation is taken in floating point.
 */
#include <math.h>
#include <stdlib.h>

#include "perf/tools/lib/perf.h"

/* perftest's LAT_MEASURE_TAIL: the largest samples are usually a page fault or a timer tick. */
#define PERF_LAT_TAIL 2

static int perf_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double perf_percentile(const double *sorted, size_t n, double p)
{
    /* Nearest rank: the smallest sample with at least p% of the samples at or below it. */
    /* The epsilon keeps p * n that is an integer in exact arithmetic (99.9 * 1000) from
     * rounding up to the next rank through 99.9's binary representation. */
    size_t rank = (size_t)ceil(p * (double)n / 100.0 - 1e-9);

    if (rank < 1) {
        rank = 1;
    }
    if (rank > n) {
        rank = n;
    }
    return sorted[rank - 1];
}

void perf_lat_stats(double *s, size_t n, perf_lat_stats_t *out)
{
    double sum = 0.0, sq = 0.0;
    size_t m;

    qsort(s, n, sizeof(*s), perf_cmp_double);
    m = n > PERF_LAT_TAIL ? n - PERF_LAT_TAIL : n;
    for (size_t i = 0; i < m; i++) {
        sum += s[i];
    }
    out->samples = m;
    out->avg = sum / (double)m;
    for (size_t i = 0; i < m; i++) {
        sq += (s[i] - out->avg) * (s[i] - out->avg);
    }
    out->stdev = sqrt(sq / (double)m);
    out->min = s[0];
    out->max = s[m - 1];
    out->typical = s[m / 2];
    out->p99 = perf_percentile(s, m, 99.0);
    out->p999 = perf_percentile(s, m, 99.9);
}
