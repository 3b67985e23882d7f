/*
 * bench_tool: the cost of reading a performance variable through the tool interface, the call a
 * tool makes in its sampling loop. Measures ns per ibmsg_t_pvar_read of a started COUNTER bound
 * to no object, at thread level MULTIPLE, while 0, 1 and 2 other threads update the counter's
 * source. The counter is registered through counters/registry/registry.h with the registry's
 * default read (a relaxed load through the context pointer), as a subsystem's plain counter is.
 *
 * The writers use a relaxed fetch_add: two threads on one word need it to keep the counter
 * monotonic, and it keeps the cache line as busy as it can be, the reader's worst case (ibmsg's
 * own hot-path counters are per-thread shards without LOCK-prefixed updates; that is not what
 * is measured here). With two or more CPUs the reader is pinned to the first and the writers to
 * the others, so a writer never takes the reader's CPU.
 *
 * Each repetition times --reads back-to-back reads with CLOCK_MONOTONIC; the table gives the
 * median (and min, 90th percentile) over --reps repetitions. Repetitions are short (about 10 us
 * by default, well inside a scheduler time slice), so on a busy machine most of them run
 * undisturbed and the median is the cost of a read, not of the other processes. Every value read is
 * checked: a read that fails or a counter that goes backwards ends the run with an error.
 *
 * Reproduce: build/perf/bench_tool            (defaults: --reps 2001 --reads 1000)
 * Target: <= 5 ns per read.
 */
#include "counters/registry/registry.h"

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define BENCH_MAX_WRITERS 2

/* The counter's source, on its own cache line so only the writers and the reader touch it. */
static _Alignas(64) _Atomic unsigned long long bench_counter;
static _Alignas(64) atomic_bool bench_stop;
static _Alignas(64) atomic_int bench_writers_running;

typedef struct bench_writer {
    pthread_t thread;
    int cpu; /* -1: not pinned */
} bench_writer_t;

static double bench_now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int bench_pin(pthread_t thread, int cpu)
{
    cpu_set_t set;

    if (cpu < 0) {
        return 0;
    }
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return pthread_setaffinity_np(thread, sizeof(set), &set);
}

static void *bench_writer_main(void *arg)
{
    (void)arg;
    atomic_fetch_add(&bench_writers_running, 1);
    while (!atomic_load_explicit(&bench_stop, memory_order_relaxed)) {
        atomic_fetch_add_explicit(&bench_counter, 1, memory_order_relaxed);
    }
    return NULL;
}

static int bench_compare(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;

    return (x > y) - (x < y);
}

static int bench_fail(int rc, const char *what)
{
    fprintf(stderr, "bench_tool: %s: %s (%d)\n", what, ibmsg_status_string(rc), rc);
    return 1;
}

/* Reads the handle `reads` times; *last carries the previous value to check monotonicity. */
static int bench_rep(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle, long reads,
                     unsigned long long *last, double *ns_per_read)
{
    double t0 = bench_now_ns();

    for (long i = 0; i < reads; i++) {
        unsigned long long value;
        int rc = ibmsg_t_pvar_read(session, handle, &value);

        if (rc != IBMSG_OK) {
            return bench_fail(rc, "ibmsg_t_pvar_read");
        }
        if (value < *last) {
            fprintf(stderr, "bench_tool: the counter went backwards: %llu after %llu\n", value,
                    *last);
            return 1;
        }
        *last = value;
    }
    *ns_per_read = (bench_now_ns() - t0) / (double)reads;
    return 0;
}

static long bench_parse_long(const char *opt, const char *arg, long min, long max)
{
    char *end;
    long v;

    errno = 0;
    v = arg != NULL ? strtol(arg, &end, 10) : 0;
    if (arg == NULL || errno != 0 || end == arg || *end != '\0' || v < min || v > max) {
        fprintf(stderr, "bench_tool: %s needs a number in [%ld, %ld], got '%s'\n", opt, min, max,
                arg != NULL ? arg : "");
        return -1;
    }
    return v;
}

static void bench_usage(FILE *out)
{
    fprintf(out,
            "usage: bench_tool [--reps N] [--reads N]\n"
            "ns per ibmsg_t_pvar_read of a COUNTER bound to no object, with 0, 1 and %d\n"
            "threads updating it; median over N repetitions of --reads reads each.\n",
            BENCH_MAX_WRITERS);
}

int main(int argc, char **argv)
{
    static const cnt_pvar_desc_t desc = {
        .name = "bench_tool_counter",
        .var_class = IBMSG_T_PVAR_CLASS_COUNTER,
        .datatype = IBMSG_T_UNSIGNED_LONG_LONG,
        .enumtype = IBMSG_T_ENUM_NULL,
        .verbosity = IBMSG_T_VERBOSITY_MPIDEV_ALL,
        .bind = IBMSG_T_BIND_NO_OBJECT,
        .flags = CNT_PVAR_READONLY,
        .category = NULL,
        .desc = "bench_tool's counter, updated by its writer threads",
        .ctx = (void *)&bench_counter,
    };
    bench_writer_t writers[BENCH_MAX_WRITERS];
    ibmsg_t_pvar_session_t session = IBMSG_T_PVAR_SESSION_NULL;
    ibmsg_t_pvar_handle_t handle = IBMSG_T_PVAR_HANDLE_NULL;
    long reps = 2001, reads = 1000;
    int provided = 0, index = -1, count = 0, rc, status = 1, ncpus, reader_cpu = -1;
    double *samples = NULL;
    unsigned long long last = 0;
    cpu_set_t allowed;
    int cpus[CPU_SETSIZE];

    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--reps") == 0) {
            reps = bench_parse_long("--reps", i + 1 < argc ? argv[++i] : NULL, 1, 100000);
        } else if (strcmp(argv[i], "--reads") == 0) {
            reads = bench_parse_long("--reads", i + 1 < argc ? argv[++i] : NULL, 1, 1000000000);
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            bench_usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "bench_tool: unknown option '%s'\n", argv[i]);
            bench_usage(stderr);
            return 2;
        }
        if (reps < 0 || reads < 0) {
            return 2;
        }
    }

    /* Reader on the first allowed CPU, writers on the others (when there are others). */
    ncpus = 0;
    if (sched_getaffinity(0, sizeof(allowed), &allowed) == 0) {
        for (int c = 0; c < CPU_SETSIZE; c++) {
            if (CPU_ISSET(c, &allowed)) {
                cpus[ncpus++] = c;
            }
        }
    }
    if (ncpus >= 2) {
        reader_cpu = cpus[0];
        if (bench_pin(pthread_self(), reader_cpu) != 0) {
            reader_cpu = -1;
        }
    }

    samples = calloc((size_t)reps, sizeof(*samples));
    if (samples == NULL) {
        fprintf(stderr, "bench_tool: out of memory\n");
        return 1;
    }
    rc = ibmsg_t_init_thread(IBMSG_T_THREAD_MULTIPLE, &provided);
    if (rc != IBMSG_OK) {
        free(samples);
        return bench_fail(rc, "ibmsg_t_init_thread");
    }
    if (provided != IBMSG_T_THREAD_MULTIPLE) {
        fprintf(stderr, "bench_tool: thread level MULTIPLE not provided (%d)\n", provided);
        goto err_finalize;
    }
    rc = cnt_pvar_register(&desc, &index);
    if (rc != IBMSG_OK) {
        bench_fail(rc, "cnt_pvar_register");
        goto err_finalize;
    }
    rc = ibmsg_t_pvar_session_create(&session);
    if (rc != IBMSG_OK) {
        bench_fail(rc, "ibmsg_t_pvar_session_create");
        goto err_finalize;
    }
    rc = ibmsg_t_pvar_handle_alloc(session, index, NULL, &handle, &count);
    if (rc != IBMSG_OK || count != 1) {
        bench_fail(rc != IBMSG_OK ? rc : IBMSG_T_ERR_INVALID, "ibmsg_t_pvar_handle_alloc");
        goto err_free_session;
    }
    rc = ibmsg_t_pvar_start(session, handle);
    if (rc != IBMSG_OK) {
        bench_fail(rc, "ibmsg_t_pvar_start");
        goto err_free_session;
    }

    printf("# bench_tool: ns per ibmsg_t_pvar_read of a started COUNTER (UNSIGNED_LONG_LONG, "
           "bind NO_OBJECT), thread level MULTIPLE\n");
    printf("# command:");
    for (int i = 0; i < argc; i++) {
        printf(" %s", argv[i]);
    }
    printf("\n# reps %ld x %ld reads; reader on cpu %d, writers on %s; target <= 5 ns/read\n", reps,
           reads, reader_cpu, ncpus >= 2 ? "the other cpus" : "any cpu (not pinned)");
    printf("%8s %14s %10s %10s %16s %15s\n", "writers", "median ns/read", "min", "p90", "updates/s",
           "reps kept");

    for (int nwriters = 0; nwriters <= BENCH_MAX_WRITERS; nwriters++) {
        unsigned long long before, after;
        double t_start, t_end;
        int started = 0;

        atomic_store(&bench_stop, false);
        atomic_store(&bench_writers_running, 0);
        for (int w = 0; w < nwriters; w++) {
            writers[w].cpu = ncpus >= 2 ? cpus[1 + w % (ncpus - 1)] : -1;
            if (pthread_create(&writers[w].thread, NULL, bench_writer_main, NULL) != 0) {
                fprintf(stderr, "bench_tool: pthread_create failed\n");
                break;
            }
            started++;
            bench_pin(writers[w].thread, writers[w].cpu);
        }
        while (atomic_load(&bench_writers_running) < started) {
            sched_yield();
        }
        /* Warm up (caches, branch predictors, the writers reaching full speed), then measure. */
        double ns;
        status = started == nwriters ? 0 : 1;
        for (int r = 0; r < 100 && status == 0; r++) {
            status = bench_rep(session, handle, reads, &last, &ns);
        }
        /*
         * With writers, a repetition counts only if the counter moved while it ran: on a busy
         * machine the writers are sometimes descheduled, and a read of a quiet cache line is not
         * what the row is about. At most 20 times --reps repetitions are tried.
         */
        long kept = 0, tried = 0;
        before = atomic_load(&bench_counter);
        t_start = bench_now_ns();
        while (kept < reps && tried < 20 * reps && status == 0) {
            unsigned long long first = last;

            status = bench_rep(session, handle, reads, &last, &samples[kept]);
            tried++;
            if (nwriters == 0 || last != first) {
                kept++;
            }
        }
        t_end = bench_now_ns();
        after = atomic_load(&bench_counter);
        atomic_store(&bench_stop, true);
        for (int w = 0; w < started; w++) {
            pthread_join(writers[w].thread, NULL);
        }
        if (status != 0) {
            goto err_free_session;
        }
        if (kept == 0) {
            fprintf(stderr, "bench_tool: the writers never ran during a repetition\n");
            status = 1;
            goto err_free_session;
        }
        qsort(samples, (size_t)kept, sizeof(*samples), bench_compare);
        double median =
            kept % 2 == 1 ? samples[kept / 2] : (samples[kept / 2 - 1] + samples[kept / 2]) / 2;
        printf("%8d %14.2f %10.2f %10.2f %16.3g %11ld/%ld\n", nwriters, median, samples[0],
               samples[(kept * 9) / 10], (double)(after - before) / ((t_end - t_start) / 1e9), kept,
               tried);
        fflush(stdout);
    }
    status = 0;

err_free_session:
    rc = ibmsg_t_pvar_session_free(&session);
    if (rc != IBMSG_OK) {
        status = bench_fail(rc, "ibmsg_t_pvar_session_free");
    }
err_finalize:
    rc = ibmsg_t_finalize();
    if (rc != IBMSG_OK) {
        status = bench_fail(rc, "ibmsg_t_finalize");
    }
    free(samples);
    return status;
}
