/*
 * bench_scale: what N endpoints in one context cost (issue 23). The process is the client; a
 * forked server holds the N peer endpoints (its own context) and answers every message.
 *   - create: ibmsg_ep_create x N in the client, per endpoint;
 *   - connect: the client's N addresses to the server (a socketpair), the server connects its
 *     N (made beforehand) and answers with theirs, the client connects its N: per endpoint;
 *   - memory of the client: VmRSS and VmPin (registered memory is pinned) after the context is
 *     made and after the N endpoints are connected (before any message), /proc/self/status;
 *   - 8 B round trips over an endpoint drawn at random each time (half of it: latency),
 *     median and 90th percentile of --iters after 100 unmeasured.
 * Prints one line: "ibmsg N create_us connect_us rss0_kib rss_kib pin0_kib pin_kib lat_med_us
 * lat_p90_us". perf/bench/bench_scale_ucx.c does the same with UCX; perf/bench/compare --scale
 * runs both in one boot of the guest (perf/bench/scale_run) and tabulates them.
 *
 * Reproduce: build/perf/bench_scale -n 256 [-i 1000]     Not a test.
 */
#include <ibmsg/ibmsg.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scale_common.h"

#define TAG_PING 1
#define TAG_STOP 2

#define CHECK(what, expr)                                                                      \
    do {                                                                                       \
        int rc_ = (expr);                                                                      \
        if (rc_ != IBMSG_OK) {                                                                 \
            fprintf(stderr, "bench_scale: %s: %s (line %d)\n", what, ibmsg_status_string(rc_), \
                    __LINE__);                                                                 \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

typedef struct blob {
    uint32_t len;
    uint8_t data[IBMSG_EP_ADDRESS_MAX];
} blob_t;

static void addresses(ibmsg_ep_t *ep, uint32_t n, blob_t *b)
{
    for (uint32_t i = 0; i < n; i++) {
        size_t len = sizeof(b[i].data);
        CHECK("ep_address", ibmsg_ep_address(ep[i], b[i].data, &len));
        b[i].len = (uint32_t)len;
    }
}

/* The server: N endpoints, connected to the client's; echoes pings until the stop. */
static int serve(int fd, uint32_t n)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t *ep = calloc(n, sizeof(*ep));
    blob_t *b = calloc(n, sizeof(*b));
    uint64_t msg;
    ibmsg_tag_status_t st;

    CHECK("context_create", ibmsg_context_create(IBMSG_INFO_NULL, &ctx));
    for (uint32_t i = 0; i < n; i++) {
        CHECK("ep_create", ibmsg_ep_create(ctx, &ep[i]));
    }
    scale_xfer(fd, "r", 1, 1);
    scale_xfer(fd, b, n * sizeof(*b), 0);
    for (uint32_t i = 0; i < n; i++) {
        CHECK("ep_connect", ibmsg_ep_connect(ep[i], b[i].data, b[i].len));
    }
    addresses(ep, n, b);
    scale_xfer(fd, b, n * sizeof(*b), 1);
    for (;;) {
        CHECK("recv",
              ibmsg_tag_recv(ctx, IBMSG_EP_NULL, &msg, sizeof(msg), 0, IBMSG_TAG_MASK_ANY, &st));
        if (st.tag == TAG_STOP) {
            break;
        }
        CHECK("send", ibmsg_tag_send(st.source, &msg, sizeof(msg), TAG_PING));
    }
    scale_xfer(fd, "d", 1, 1); /* the client destroys its endpoints before ours go */
    scale_xfer(fd, &msg, 1, 0);
    for (uint32_t i = 0; i < n; i++) {
        ibmsg_ep_destroy(ep[i]);
    }
    ibmsg_context_destroy(ctx);
    return 0;
}

int main(int argc, char **argv)
{
    uint32_t n = 16, iters = 1000;
    int opt, sv[2], status = 0;
    pid_t pid;

    while ((opt = getopt(argc, argv, "n:i:")) != -1) {
        switch (opt) {
        case 'n':
            n = (uint32_t)strtoul(optarg, NULL, 0);
            break;
        case 'i':
            iters = (uint32_t)strtoul(optarg, NULL, 0);
            break;
        default:
            fprintf(stderr, "usage: %s [-n endpoints] [-i round trips]\n", argv[0]);
            return 2;
        }
    }
    if (n == 0 || iters == 0 || socketpair(AF_UNIX, SOCK_STREAM, 0, sv) != 0) {
        fprintf(stderr, "bench_scale: bad -n / -i, or no socketpair\n");
        return 2;
    }
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        close(sv[0]);
        _exit(serve(sv[1], n));
    }
    close(sv[1]);

    ibmsg_context_t ctx;
    ibmsg_ep_t *ep = calloc(n, sizeof(*ep));
    blob_t *b = calloc(n, sizeof(*b));
    double *rtt = calloc(iters, sizeof(*rtt));
    uint64_t msg = 0x8badf00d, back;
    char c;

    CHECK("context_create", ibmsg_context_create(IBMSG_INFO_NULL, &ctx));
    ibmsg_context_progress(ctx, NULL);
    const long rss0 = scale_status_kib("VmRSS"), pin0 = scale_status_kib("VmPin");
    double t0 = scale_now_us();
    for (uint32_t i = 0; i < n; i++) {
        CHECK("ep_create", ibmsg_ep_create(ctx, &ep[i]));
    }
    const double create_us = (scale_now_us() - t0) / n;
    scale_xfer(sv[0], &c, 1, 0); /* the server's endpoints exist */
    t0 = scale_now_us();
    addresses(ep, n, b);
    scale_xfer(sv[0], b, n * sizeof(*b), 1);
    scale_xfer(sv[0], b, n * sizeof(*b), 0);
    for (uint32_t i = 0; i < n; i++) {
        CHECK("ep_connect", ibmsg_ep_connect(ep[i], b[i].data, b[i].len));
    }
    const double connect_us = (scale_now_us() - t0) / n;
    ibmsg_context_progress(ctx, NULL);
    const long rss = scale_status_kib("VmRSS"), pin = scale_status_kib("VmPin");
    srand(12345);
    for (uint32_t k = 0; k < iters + 100; k++) {
        ibmsg_ep_t e = ep[(uint32_t)rand() % n];
        ibmsg_request_t r;
        double s = scale_now_us();
        CHECK("irecv",
              ibmsg_tag_irecv(ctx, e, &back, sizeof(back), TAG_PING, IBMSG_TAG_MASK_EXACT, &r));
        CHECK("send", ibmsg_tag_send(e, &msg, sizeof(msg), TAG_PING));
        CHECK("wait", ibmsg_request_wait(&r, NULL));
        if (back != msg) {
            fprintf(stderr, "bench_scale: echo %llx\n", (unsigned long long)back);
            return 1;
        }
        if (k >= 100) {
            rtt[k - 100] = (scale_now_us() - s) / 2;
        }
        msg++;
    }
    CHECK("stop", ibmsg_tag_send(ep[0], &msg, sizeof(msg), TAG_STOP));
    scale_xfer(sv[0], &c, 1, 0);
    for (uint32_t i = 0; i < n; i++) {
        CHECK("ep_destroy", ibmsg_ep_destroy(ep[i]));
    }
    scale_xfer(sv[0], "x", 1, 1);
    waitpid(pid, &status, 0);
    scale_print("ibmsg", n, create_us, connect_us, rss0, rss, pin0, pin, rtt, iters);
    ibmsg_context_destroy(ctx);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
