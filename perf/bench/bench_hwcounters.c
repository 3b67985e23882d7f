/*
 * bench_hwcounters: what a reading of the hardware counter sources costs, so the NIC backend and
 * the PAPI read path can be chosen on figures (nic_backend.h, papi_source.h).
 *
 * NIC: for every device port under the sysfs root (default /sys/class/infiniband), the same port
 * opened twice, once with the pread backend (one pread per counter file) and once with RDMA
 * netlink (one RDMA_NLDEV_CMD_STAT_GET message for all hw_counters); per backend, a whole-port
 * snapshot and a one-counter read. PAPI: cnt_papi_thread_read (of the calling thread, through its
 * attached set) of one event and of every available event of the list (one PAPI_read of the calling
 * thread's event set either way).
 *
 * Each figure is the median over the repetitions of (time of a loop / iterations), in
 * microseconds. Under the QEMU guest (TCG) everything is several times slower than on hardware:
 * compare backends within one run only.
 *
 * Usage: bench_hwcounters [-n iterations] [-r repetitions] [-e PAPI event list]
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ibmsg/status.h>
#include "counters/nic/nic_port.h"
#include "counters/papi/papi_source.h"
#include "counters/shards/shard.h"

#define MAX_REPS 51

static double now_us(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec * 1e6 + (double)t.tv_nsec / 1e3;
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

enum { WHAT_SNAPSHOT, WHAT_ONE, WHAT_COUNT };

/* Mean cost of one reading of port over iters readings, in us; negative when a reading fails. */
static double nic_loop(ibmsg_t_port_t port, int what, int iters, uint64_t *v)
{
    int one = port->source.num_counters - 1; /* the last: a hw_counters file where there are */
    double t0 = now_us();

    for (int i = 0; i < iters; i++) {
        int ret = what == WHAT_SNAPSHOT ? cnt_nic_port_snapshot(port, v)
                                        : cnt_nic_port_read(port, 1, &one, v);
        if (ret != IBMSG_OK) {
            return -1;
        }
    }
    return (now_us() - t0) / iters;
}

/*
 * The backends of one port measured interleaved (pread, netlink, pread, ... within each
 * repetition), so that load from other processes falls on both alike.
 */
static void bench_nic_port(ibmsg_t_port_t ports[2], int nl, int iters, int reps)
{
    double t[2][WHAT_COUNT][MAX_REPS];
    int nb = nl == IBMSG_OK ? 2 : 1;
    uint64_t *v = calloc((size_t)ports[0]->source.num_counters + 1, sizeof(*v));

    if (v == NULL) {
        return;
    }
    for (int r = 0; r < reps; r++) {
        for (int w = 0; w < WHAT_COUNT; w++) {
            for (int k = 0; k < nb; k++) {
                t[k][w][r] = nic_loop(ports[k], w, iters, v);
            }
        }
    }
    for (int k = 0; k < 2; k++) {
        if (k >= nb) {
            printf("%-12s %4d %8d %-13s %s\n", ports[k]->dev_name, ports[k]->port_num,
                   ports[k]->source.num_counters, "rdma-netlink", ibmsg_status_string(nl));
            continue;
        }
        printf("%-12s %4d %8d %-13s %14.2f %14.2f\n", ports[k]->dev_name, ports[k]->port_num,
               ports[k]->source.num_counters, ports[k]->source.ops->name,
               median(t[k][WHAT_SNAPSHOT], reps), median(t[k][WHAT_ONE], reps));
    }
    free(v);
}

static void bench_nic(int iters, int reps)
{
    cnt_nic_t *a = NULL, *b = NULL;

    if (cnt_nic_open(NULL, &a) != IBMSG_OK || cnt_nic_open(NULL, &b) != IBMSG_OK) {
        printf("nic: cannot open the ports\n");
        goto out;
    }
    if (a->num_ports == 0) {
        printf("nic: no RDMA device ports here (run in the guest: test/vm/run -- %s)\n",
               "build/perf/bench_hwcounters");
    }
    printf("%-12s %4s %8s %-13s %14s %14s\n", "device", "port", "counters", "backend",
           "snapshot[us]", "one[us]");
    for (int p = 0; p < a->num_ports; p++) {
        ibmsg_t_port_t ports[2] = {a->ports[p], b->ports[p]};
        bench_nic_port(ports, cnt_nic_netlink_attach(ports[1]), iters, reps);
    }
out:
    cnt_nic_close(a);
    cnt_nic_close(b);
}

static void bench_papi(const char *events, int iters, int reps)
{
    int idx[CNT_PAPI_MAX_EVENTS], n = 0;
    uint64_t v[CNT_PAPI_MAX_EVENTS];
    char why[1024];

    if (!cnt_papi_compiled()) {
        printf("papi: not compiled in\n");
        return;
    }
    if (cnt_papi_setup(events) != IBMSG_OK) {
        printf("papi: bad event list \"%s\"\n", events);
        return;
    }
    for (int i = 0; i < cnt_papi_num_events(); i++) {
        if (cnt_papi_event(i)->available) {
            idx[n++] = i;
        }
    }
    cnt_papi_unavailable(why, sizeof(why));
    if (why[0] != '\0') {
        printf("papi: unavailable: %s\n", why);
    }
    if (n == 0) {
        printf("papi: no event can be counted here\n");
        return;
    }
    cnt_shard_t *self = cnt_shard_get(); /* this thread, counted by an attached event set */
    for (int k = 0; k < 2; k++) {
        int num = k == 0 ? 1 : n;
        double t[MAX_REPS];

        for (int r = 0; r < reps; r++) {
            double t0 = now_us();
            for (int i = 0; i < iters; i++) {
                if (cnt_papi_thread_read(self, self->meta.tid, true, num, idx, v) != IBMSG_OK) {
                    printf("papi: read failed\n");
                    return;
                }
            }
            t[r] = (now_us() - t0) / iters;
        }
        printf("papi: read of %d event%s (%s%s): %.2f us\n", num, num > 1 ? "s" : "",
               cnt_papi_event(idx[0])->event, num > 1 ? ", ..." : "", median(t, reps));
    }
}

int main(int argc, char **argv)
{
    int iters = 2000, reps = 7, opt;
    const char *events = CNT_PAPI_DEFAULT_EVENTS;

    while ((opt = getopt(argc, argv, "n:r:e:")) != -1) {
        switch (opt) {
        case 'n':
            iters = atoi(optarg);
            break;
        case 'r':
            reps = atoi(optarg);
            break;
        case 'e':
            events = optarg;
            break;
        default:
            fprintf(stderr, "usage: %s [-n iterations] [-r repetitions] [-e PAPI events]\n",
                    argv[0]);
            return 2;
        }
    }
    if (iters < 1 || reps < 1 || reps > MAX_REPS) {
        fprintf(stderr, "%s: -n >= 1, 1 <= -r <= %d\n", argv[0], MAX_REPS);
        return 2;
    }
    printf("# bench_hwcounters: -n %d -r %d; median over repetitions of the mean per reading\n",
           iters, reps);
    bench_nic(iters, reps);
    bench_papi(events, iters, reps);
    return 0;
}
