/*
 * What bench_scale.c (ibmsg) and bench_scale_ucx.c (UCX) share: the clock, /proc/self/status,
 * the socketpair to the forked server and the result line, so the two measure alike. Header
 * only: the UCX program links UCX alone.
 */
#ifndef IBMSG_PERF_BENCH_SCALE_COMMON_H
#define IBMSG_PERF_BENCH_SCALE_COMMON_H

#include <errno.h> /* program_invocation_short_name */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

static inline double scale_now_us(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e6 + (double)ts.tv_nsec / 1e3;
}

/* KiB of a /proc/self/status field (VmRSS, VmPin); -1 when absent. */
static inline long scale_status_kib(const char *field)
{
    char line[256];
    size_t n = strlen(field);
    long v = -1;
    FILE *f = fopen("/proc/self/status", "r");

    while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
        if (strncmp(line, field, n) == 0 && line[n] == ':') {
            v = strtol(line + n + 1, NULL, 10);
        }
    }
    if (f != NULL) {
        fclose(f);
    }
    return v;
}

/* All of len bytes over the socketpair (out: write, else read); exits on failure. */
static inline void scale_xfer(int fd, void *buf, size_t len, int out)
{
    uint8_t *p = buf;
    while (len > 0) {
        ssize_t k = out ? write(fd, p, len) : read(fd, p, len);
        if (k <= 0) {
            fprintf(stderr, "%s: socket %s failed\n", program_invocation_short_name,
                    out ? "write" : "read");
            exit(1);
        }
        p += k;
        len -= (size_t)k;
    }
}

static inline int scale_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The result line perf/bench/scale_report.py reads; sorts rtt (iters half round trips, us). */
static inline void scale_print(const char *lib, uint32_t n, double create_us, double connect_us,
                               long rss0, long rss, long pin0, long pin, double *rtt,
                               uint32_t iters)
{
    qsort(rtt, iters, sizeof(*rtt), scale_cmp_double);
    printf("%s %u %.1f %.1f %ld %ld %ld %ld %.2f %.2f\n", lib, n, create_us, connect_us, rss0, rss,
           pin0, pin, rtt[iters / 2], rtt[iters * 9 / 10]);
}

#endif
