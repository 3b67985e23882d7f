/*
 * bench_counters: what a counter update costs on the hot path, and what a merged read costs.
 *
 * Update loops, per thread, with 1 and 2 threads (pinned to CPUs 0 and 1):
 *   none        the loop alone (the baseline)
 *   shard       cnt_inc() on the thread's own shard (relaxed load + store)
 *   atomic      __atomic_fetch_add on one counter shared by all threads (LOCK XADD)
 *   atomic_own  __atomic_fetch_add on a per-thread, padded counter (LOCK XADD, uncontended)
 * Each figure is the median over the repetitions of (slowest thread's time / updates); scaling is
 * 2 threads' updates per second over 1 thread's. An empty asm on the loop counter keeps the
 * compiler from folding or vectorising the loop; nothing is put on the update itself.
 *
 * Merged read: cnt_read() of a counter summed over 1, 2 and 16 shards (the main thread's and
 * blocks).
 *
 * Usage: bench_counters [-n updates per thread] [-r repetitions]
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ibmsg/tool.h>
#include "counters/shards/shard.h"

#define MAX_THREADS 2
#define MAX_REPS    51

typedef enum { V_NONE, V_SHARD, V_ATOMIC_SHARED, V_ATOMIC_OWN, V_COUNT } variant_t;

static const char *const variant_names[V_COUNT] = {"none", "shard", "atomic", "atomic_own"};

static uint64_t shared_counter UTIL_CACHE_ALIGNED;
static struct {
    uint64_t value;
} UTIL_CACHE_ALIGNED own_counter[MAX_THREADS];

struct run {
    variant_t variant;
    int index, threads;
    uint64_t iters;
    pthread_barrier_t *barrier;
    uint64_t ns;
};

static UTIL_NOINLINE void loop_none(uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        __asm__ volatile("" : "+r"(i));
    }
}

static UTIL_NOINLINE void loop_shard(cnt_shard_t *shard, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        cnt_inc(shard, CNT_CORE_EAGER_MSGS_SENT);
        __asm__ volatile("" : "+r"(i));
    }
}

static UTIL_NOINLINE void loop_atomic(uint64_t *counter, uint64_t n)
{
    for (uint64_t i = 0; i < n; i++) {
        __atomic_fetch_add(counter, 1, __ATOMIC_RELAXED);
        __asm__ volatile("" : "+r"(i));
    }
}

static void *run_thread(void *arg)
{
    struct run *r = arg;
    cnt_shard_t *shard = cnt_shard_get(); /* created before the clock starts */
    uint64_t t0, t1;
    cpu_set_t set;

    CPU_ZERO(&set);
    CPU_SET(r->index % (int)sysconf(_SC_NPROCESSORS_ONLN), &set);
    pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
    pthread_barrier_wait(r->barrier);
    t0 = cnt_tick_monotonic_ns();
    switch (r->variant) {
    case V_NONE:
        loop_none(r->iters);
        break;
    case V_SHARD:
        loop_shard(shard, r->iters);
        break;
    case V_ATOMIC_SHARED:
        loop_atomic(&shared_counter, r->iters);
        break;
    case V_ATOMIC_OWN:
        loop_atomic(&own_counter[r->index].value, r->iters);
        break;
    default:
        break;
    }
    t1 = cnt_tick_monotonic_ns();
    r->ns = t1 - t0;
    return NULL;
}

/* One repetition: the slowest thread's wall time in ns. */
static uint64_t run_once(variant_t variant, int threads, uint64_t iters)
{
    pthread_t tid[MAX_THREADS];
    struct run runs[MAX_THREADS];
    pthread_barrier_t barrier;
    uint64_t slowest = 0;

    pthread_barrier_init(&barrier, NULL, (unsigned)threads);
    for (int t = 0; t < threads; t++) {
        runs[t] = (struct run){.variant = variant,
                               .index = t,
                               .threads = threads,
                               .iters = iters,
                               .barrier = &barrier};
        if (pthread_create(&tid[t], NULL, run_thread, &runs[t]) != 0) {
            perror("pthread_create");
            exit(1);
        }
    }
    for (int t = 0; t < threads; t++) {
        pthread_join(tid[t], NULL);
        if (runs[t].ns > slowest) {
            slowest = runs[t].ns;
        }
    }
    pthread_barrier_destroy(&barrier);
    return slowest;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof(*v), cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Median ns per cnt_read() summed over n shards (the caller's plus n - 1 blocks). */
static double bench_read(int n, int reps)
{
    static int owners[64];
    cnt_shard_t *blocks[64];
    double per[MAX_REPS];
    const int reads = 200000;
    volatile uint64_t sink = 0;

    cnt_inc(cnt_shard_get(), CNT_CORE_EAGER_MSGS_SENT);
    for (int b = 0; b < n - 1; b++) {
        if (cnt_block_create(IBMSG_T_BIND_ENDPOINT, &owners[b], &blocks[b]) != IBMSG_OK) {
            fprintf(stderr, "cnt_block_create failed\n");
            exit(1);
        }
        cnt_inc(blocks[b], CNT_CORE_EAGER_MSGS_SENT);
    }
    for (int r = 0; r < reps; r++) {
        uint64_t t0 = cnt_tick_monotonic_ns();
        for (int i = 0; i < reads; i++) {
            sink += cnt_read(NULL, CNT_CORE_EAGER_MSGS_SENT, CNT_READ_VALUE);
        }
        per[r] = (double)(cnt_tick_monotonic_ns() - t0) / reads;
    }
    for (int b = 0; b < n - 1; b++) {
        cnt_block_destroy(blocks[b]);
    }
    (void)sink;
    return median(per, reps);
}

int main(int argc, char **argv)
{
    uint64_t iters = 200000000;
    int reps = 7, opt;
    double ns[V_COUNT][MAX_THREADS + 1];

    while ((opt = getopt(argc, argv, "n:r:h")) != -1) {
        switch (opt) {
        case 'n':
            iters = strtoull(optarg, NULL, 0);
            break;
        case 'r':
            reps = atoi(optarg);
            break;
        default:
            fprintf(stderr, "usage: %s [-n updates per thread] [-r repetitions (1..%d)]\n", argv[0],
                    MAX_REPS);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (iters == 0 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "bad -n or -r\n");
        return 2;
    }

    printf("# bench_counters: %llu updates per thread, median of %d repetitions, %ld CPUs\n",
           (unsigned long long)iters, reps, sysconf(_SC_NPROCESSORS_ONLN));
    printf("# merged read (cnt_read of one counter summed over N shards)\n");
    printf("%-8s %12s\n", "shards", "ns/read");
    for (int n = 1; n <= 16; n *= 2) {
        if (n == 1 || n == 2 || n == 16) {
            printf("%-8d %12.1f\n", n, bench_read(n, reps));
        }
    }

    for (int v = 0; v < V_COUNT; v++) {
        for (int threads = 1; threads <= MAX_THREADS; threads++) {
            double per[MAX_REPS];
            for (int r = 0; r < reps; r++) {
                per[r] = (double)run_once((variant_t)v, threads, iters) / (double)iters;
            }
            ns[v][threads] = median(per, reps);
        }
    }
    printf("# update cost, ns per update per thread (2 threads: the slower thread)\n");
    printf("%-12s %10s %10s %14s %16s\n", "variant", "1 thread", "2 threads", "2-thr scaling",
           "1-thr over none");
    for (int v = 0; v < V_COUNT; v++) {
        printf("%-12s %10.3f %10.3f %13.2fx %+16.3f\n", variant_names[v], ns[v][1], ns[v][2],
               2.0 * ns[v][1] / ns[v][2], ns[v][1] - ns[V_NONE][1]);
    }
    return 0;
}
