/*
 * bench_events: what an event costs. Three numbers, ns per raise site reached, of a type with
 * the core's largest instance (core_rndv_completed's 5 elements, 32 bytes) raised as the core
 * raises: the inline test (cnt_event_listening) and, when somebody listens, cnt_event_raise.
 *   - not listened to: the test alone (the price every raise site pays in the messaging path);
 *   - one registration, its callback reading one element (ibmsg_t_event_read): a delivered
 *     instance, timestamp, registry lock twice, the callback;
 *   - one registration with no callback valid where it is raised: a counted drop.
 * Each repetition times --raises back-to-back raises with CLOCK_MONOTONIC; the table gives the
 * median, min and 90th percentile over --reps repetitions (short ones, so most run undisturbed
 * on a busy machine). Single thread; the source is never busy. Every delivered instance is
 * checked (its element and the count of callbacks).
 *
 * Reproduce: build/perf/bench_events            (defaults: --reps 501 --raises 1000)
 * Not a test: run by hand; perf/README.md has the numbers.
 */
#include "counters/registry/registry.h"

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct bench_elems {
    uint64_t tag, bytes;
    uint32_t id;
    int32_t role, status;
} bench_elems_t;

static cnt_event_t bench_ev = CNT_EVENT_INIT;
static unsigned long long bench_delivered, bench_bad;

static double bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench_cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void bench_cb(ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t reg,
                     ibmsg_t_cb_safety_t level, void *user_data)
{
    uint64_t bytes = 0;

    (void)reg, (void)level, (void)user_data;
    if (ibmsg_t_event_read(inst, 1, &bytes) != IBMSG_OK || bytes != 4096) {
        bench_bad++;
    }
    bench_delivered++;
}

/* Raise the event n times as a raise site does; the elements change as the core's would. */
static void bench_raise(long n)
{
    for (long i = 0; i < n; i++) {
        if (cnt_event_listening(&bench_ev)) {
            bench_elems_t e = {.tag = (uint64_t)i, .bytes = 4096, .id = (uint32_t)i};
            cnt_event_raise(&bench_ev, NULL, &e, IBMSG_T_CB_REQUIRE_MPI_RESTRICTED);
        }
        __asm__ volatile("" ::: "memory"); /* one site per iteration, not hoisted */
    }
}

static void bench_case(const char *what, int reps, long raises)
{
    double *ns = malloc(sizeof(double) * (size_t)reps);

    if (ns == NULL) {
        fprintf(stderr, "bench_events: out of memory\n");
        exit(1);
    }
    bench_raise(raises); /* warm */
    for (int r = 0; r < reps; r++) {
        double t0 = bench_now_ns();
        bench_raise(raises);
        ns[r] = (bench_now_ns() - t0) / (double)raises;
    }
    qsort(ns, (size_t)reps, sizeof(double), bench_cmp);
    printf("%-44s %9.2f %9.2f %9.2f\n", what, ns[reps / 2], ns[0], ns[reps * 9 / 10]);
    free(ns);
}

int main(int argc, char **argv)
{
    static const ibmsg_t_datatype_t types[] = {IBMSG_T_UNSIGNED_LONG_LONG,
                                               IBMSG_T_UNSIGNED_LONG_LONG, IBMSG_T_UNSIGNED,
                                               IBMSG_T_INT, IBMSG_T_INT};
    static const char *const names[] = {"tag", "bytes", "id", "role", "status"};
    int reps = 501, provided;
    long raises = 1000;
    ibmsg_t_event_registration_t reg;

    for (int i = 1; i + 1 < argc; i += 2) {
        if (strcmp(argv[i], "--reps") == 0) {
            reps = atoi(argv[i + 1]);
        } else if (strcmp(argv[i], "--raises") == 0) {
            raises = atol(argv[i + 1]);
        }
    }
    if (reps < 1 || raises < 1) {
        fprintf(stderr, "usage: bench_events [--reps N] [--raises N]\n");
        return 2;
    }
    cnt_event_desc_t d = {
        .name = "bench_event",
        .verbosity = IBMSG_T_VERBOSITY_MPIDEV_ALL,
        .bind = IBMSG_T_BIND_ENDPOINT,
        .num_elements = 5,
        .datatypes = types,
        .element_names = names,
        .desc = "bench_events' event",
    };
    if (ibmsg_t_init_thread(IBMSG_T_THREAD_MULTIPLE, &provided) != IBMSG_OK ||
        cnt_event_register(&d, &bench_ev) != IBMSG_OK ||
        ibmsg_t_event_handle_alloc(bench_ev.index, NULL, IBMSG_INFO_NULL, &reg) != IBMSG_OK) {
        fprintf(stderr, "bench_events: cannot set up the event\n");
        return 1;
    }
    printf("%d repetitions of %ld raises; ns per raise site\n", reps, raises);
    printf("%-44s %9s %9s %9s\n", "case", "median", "min", "p90");
    /* Dropped first (the registration has no callback yet), then delivered, then nobody. */
    bench_case("listened, no valid callback (dropped)", reps, raises);
    if (ibmsg_t_event_register_callback(reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE, IBMSG_INFO_NULL, NULL,
                                        bench_cb) != IBMSG_OK) {
        fprintf(stderr, "bench_events: cannot register the callback\n");
        return 1;
    }
    bench_case("delivered to one callback (reads an element)", reps, raises);
    unsigned long long want = (unsigned long long)raises * (unsigned long long)(reps + 1);
    if (ibmsg_t_event_handle_free(reg, NULL, NULL) != IBMSG_OK) {
        fprintf(stderr, "bench_events: cannot free the registration\n");
        return 1;
    }
    bench_case("not listened to (the inline test)", reps, raises);
    ibmsg_t_finalize();
    if (bench_delivered != want || bench_bad != 0) {
        fprintf(stderr, "bench_events: %llu instances delivered (%llu wrong), expected %llu\n",
                bench_delivered, bench_bad, want);
        return 1;
    }
    return 0;
}
