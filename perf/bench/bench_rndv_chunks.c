/*
 * bench_rndv_chunks: what the rendezvous READ size (core_rndv_chunk) does to large messages,
 * every chunk side by side in one process so that the emulated guest's slow drifts hit all alike.
 * One context per chunk, each with two endpoints connected to each other (one thread progresses
 * both sides: on Soft-RoCE the kernel moves the bytes either way). Every round measures each
 * size with each chunk, in an order rotated from round to round:
 *   - bw: --bytes worth of messages (at least 4) a -> b, all posted at once, MB/s (2^20 B/s)
 *     from the first post to the last completion;
 *   - lat: --bytes / 4 worth of round trips (at least 5) a -> b -> a, half of the mean round trip.
 * Then the medians over the rounds, and the paired ratios: each round's value over the first
 * chunk's in the same round (0 by default: one READ per message), median and range. A warm-up
 * message each way per context first (the registration cache's misses are not measured).
 *
 * Reproduce (in the guest):
 *   build/perf/bench_rndv_chunks [-r rounds] [-b bytes] [-s "sizes"] [-c "chunks"]
 * defaults: 5 rounds, 16 MiB, sizes 262144 1048576 4194304 8388608, chunks 0 65536 131072
 * 262144 524288 1048576. Not a test.
 */
#include <ibmsg/ibmsg.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_LIST   16
#define MAX_ROUNDS 64

#define CHECK(what, expr)                                                  \
    do {                                                                   \
        int rc_ = (expr);                                                  \
        if (rc_ != IBMSG_OK) {                                             \
            fprintf(stderr, "bench_rndv_chunks: %s: %s (line %d)\n", what, \
                    ibmsg_status_string(rc_), __LINE__);                   \
            exit(1);                                                       \
        }                                                                  \
    } while (0)

typedef struct pair {
    ibmsg_context_t ctx;
    ibmsg_ep_t a, b;
} pair_t;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A whitespace-separated list of unsigned numbers; returns how many. */
static int parse_list(const char *s, uint64_t *out)
{
    int n = 0;
    char *end;
    while (*s != '\0' && n < MAX_LIST) {
        out[n] = strtoull(s, &end, 10);
        if (end == s) {
            break;
        }
        n++;
        s = end;
        while (*s == ' ') {
            s++;
        }
    }
    return n;
}

static void open_pair(pair_t *p, uint64_t chunk)
{
    ibmsg_info_t info;
    char value[32];
    uint8_t ba[IBMSG_EP_ADDRESS_MAX], bb[IBMSG_EP_ADDRESS_MAX];
    size_t la = sizeof(ba), lb = sizeof(bb);

    snprintf(value, sizeof(value), "%llu", (unsigned long long)chunk);
    CHECK("info_create", ibmsg_info_create(&info));
    CHECK("info_set", ibmsg_info_set_string(info, "core_rndv_chunk", value));
    CHECK("context_create", ibmsg_context_create(info, &p->ctx));
    ibmsg_info_free(&info);
    CHECK("ep_create", ibmsg_ep_create(p->ctx, &p->a));
    CHECK("ep_create", ibmsg_ep_create(p->ctx, &p->b));
    CHECK("ep_address", ibmsg_ep_address(p->a, ba, &la));
    CHECK("ep_address", ibmsg_ep_address(p->b, bb, &lb));
    CHECK("ep_connect", ibmsg_ep_connect(p->a, bb, lb));
    CHECK("ep_connect", ibmsg_ep_connect(p->b, ba, la));
}

/* n messages of len bytes from -> to, all posted at once; seconds taken. */
static double burst(pair_t *p, ibmsg_ep_t from, ibmsg_ep_t to, uint8_t *out, uint8_t *in,
                    size_t len, int n, ibmsg_request_t *req)
{
    double t0 = now_s();
    for (int i = 0; i < n; i++) {
        CHECK("irecv", ibmsg_tag_irecv(p->ctx, to, in, len, 1, IBMSG_TAG_MASK_EXACT, &req[2 * i]));
        CHECK("isend", ibmsg_tag_isend(from, out, len, 1, &req[2 * i + 1]));
    }
    for (int i = 0; i < 2 * n; i++) {
        CHECK("wait", ibmsg_request_wait(&req[i], NULL));
    }
    return now_s() - t0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

/* The median of v[0..n), and its range in *lo, *hi; v itself is left as it is. */
static double median(const double *v, int n, double *lo, double *hi)
{
    double w[MAX_ROUNDS];
    memcpy(w, v, (size_t)n * sizeof(*w));
    qsort(w, (size_t)n, sizeof(*w), cmp_double);
    if (lo != NULL) {
        *lo = w[0];
        *hi = w[n - 1];
    }
    return n % 2 ? w[n / 2] : (w[n / 2 - 1] + w[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    uint64_t sizes[MAX_LIST], chunks[MAX_LIST], bytes = 16u << 20;
    int nsizes = parse_list("262144 1048576 4194304 8388608", sizes);
    int nchunks = parse_list("0 65536 131072 262144 524288 1048576", chunks);
    int rounds = 5, opt;
    static double bw[MAX_LIST][MAX_LIST][MAX_ROUNDS], lat[MAX_LIST][MAX_LIST][MAX_ROUNDS];
    pair_t pairs[MAX_LIST];
    size_t max = 0;

    while ((opt = getopt(argc, argv, "r:b:s:c:h")) != -1) {
        switch (opt) {
        case 'r':
            rounds = atoi(optarg);
            break;
        case 'b':
            bytes = strtoull(optarg, NULL, 10);
            break;
        case 's':
            nsizes = parse_list(optarg, sizes);
            break;
        case 'c':
            nchunks = parse_list(optarg, chunks);
            break;
        default:
            fprintf(stderr, "usage: bench_rndv_chunks [-r rounds] [-b bytes] [-s \"sizes\"] "
                            "[-c \"chunks\"]\n");
            return opt == 'h' ? 0 : 2;
        }
    }
    if (rounds < 1 || rounds > MAX_ROUNDS || nsizes < 1 || nchunks < 1 || bytes == 0) {
        fprintf(stderr,
                "bench_rndv_chunks: bad arguments (1..%d rounds, 1..%d sizes and "
                "chunks)\n",
                MAX_ROUNDS, MAX_LIST);
        return 2;
    }
    for (int s = 0; s < nsizes; s++) {
        max = sizes[s] > max ? sizes[s] : max;
    }
    uint8_t *out = aligned_alloc(4096, (max + 4095) & ~(size_t)4095);
    uint8_t *in = aligned_alloc(4096, (max + 4095) & ~(size_t)4095);
    int nmax = 4;
    for (int s = 0; s < nsizes; s++) {
        int n = (int)(bytes / sizes[s]);
        nmax = n > nmax ? n : nmax;
    }
    ibmsg_request_t *req = calloc(2 * (size_t)nmax, sizeof(*req));
    if (out == NULL || in == NULL || req == NULL) {
        fprintf(stderr, "bench_rndv_chunks: out of memory\n");
        return 1;
    }
    memset(out, 0x5a, max);
    for (int c = 0; c < nchunks; c++) {
        open_pair(&pairs[c], chunks[c]);
        burst(&pairs[c], pairs[c].a, pairs[c].b, out, in, max, 1, req);
        burst(&pairs[c], pairs[c].b, pairs[c].a, in, out, max, 1, req);
    }
    printf("round\tsize\tchunk\tbw_MBps\tlat_us\n");
    for (int r = 0; r < rounds; r++) {
        for (int s = 0; s < nsizes; s++) {
            size_t len = sizes[s];
            int nbw = (int)(bytes / len), nlat = (int)(bytes / 4 / (2 * len));
            nbw = nbw < 4 ? 4 : nbw;
            nlat = nlat < 5 ? 5 : nlat;
            for (int k = 0; k < nchunks; k++) {
                int c = (k + r + s) % nchunks; /* none always first after the size changes */
                pair_t *p = &pairs[c];
                double t = burst(p, p->a, p->b, out, in, len, nbw, req);
                bw[s][c][r] = (double)len * nbw / t / (1 << 20);
                t = 0;
                for (int i = 0; i < nlat; i++) {
                    t += burst(p, p->a, p->b, out, in, len, 1, req);
                    t += burst(p, p->b, p->a, in, out, len, 1, req);
                }
                lat[s][c][r] = t / (2.0 * nlat) * 1e6;
                printf("%d\t%zu\t%llu\t%.2f\t%.1f\n", r + 1, len, (unsigned long long)chunks[c],
                       bw[s][c][r], lat[s][c][r]);
                fflush(stdout);
            }
        }
    }
    /* Paired: each round's value over the first chunk's of that round (slow drifts cancel), whose
       median and range say more than the ratio of the medians. */
    printf("\nmedians of %d rounds; paired: each round over chunk %llu's in that round, median "
           "(min..max)\n%10s %10s %8s %20s %10s %20s\n",
           rounds, (unsigned long long)chunks[0], "size", "chunk", "bw MB/s", "paired",
           "half RTT us", "paired");
    for (int s = 0; s < nsizes; s++) {
        for (int c = 0; c < nchunks; c++) {
            double rb[MAX_ROUNDS], rl[MAX_ROUNDS];
            for (int r = 0; r < rounds; r++) {
                rb[r] = bw[s][c][r] / bw[s][0][r];
                rl[r] = lat[s][c][r] / lat[s][0][r];
            }
            double b = median(bw[s][c], rounds, NULL, NULL),
                   l = median(lat[s][c], rounds, NULL, NULL);
            double blo, bhi, llo, lhi, mb = median(rb, rounds, &blo, &bhi),
                                       ml = median(rl, rounds, &llo, &lhi);
            printf("%10llu %10llu %8.2f %5.2f (%4.2f..%4.2f) %10.0f %5.2f (%4.2f..%4.2f)\n",
                   (unsigned long long)sizes[s], (unsigned long long)chunks[c], b, mb, blo, bhi, l,
                   ml, llo, lhi);
        }
    }
    for (int c = 0; c < nchunks; c++) {
        CHECK("context_destroy", ibmsg_context_destroy(pairs[c].ctx));
    }
    free(req);
    free(out);
    free(in);
    return 0;
}
