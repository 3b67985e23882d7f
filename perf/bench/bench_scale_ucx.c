/*
 * bench_scale_ucx: perf/bench/bench_scale.c's figures for UCX (ucp, active messages): N
 * endpoints in one worker, each to a forked server's worker, which answers every message on the
 * reply endpoint UCX gives it.
 *   - create: ucp_ep_create x N (to the server's worker address, from a socketpair), per
 *     endpoint; UCX starts its wireup here;
 *   - connect: ucp_ep_flush_nbx on every endpoint until all complete (the wireup done), per
 *     endpoint;
 *   - memory of the client: VmRSS and VmPin after the worker is made (and progressed) and after
 *     the N endpoints are connected (before any message of ours);
 *   - 8 B round trips over an endpoint drawn at random each time (half of it: latency).
 * Prints "ucx N create_us connect_us rss0_kib rss_kib pin0_kib pin_kib lat_med_us lat_p90_us".
 * The transports come from the environment: perf/bench/scale_run sets UCX_TLS=rc_v (RC verbs,
 * UD for wireup) and the device, as perf/bench/compare_run does for ucx_perftest.
 *
 * Reproduce: UCX_TLS=rc_v UCX_NET_DEVICES=rxe0:1 build/perf/bench_scale_ucx -n 256  Not a test.
 */
#include <ucp/api/ucp.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "scale_common.h"

enum { AM_PING = 1, AM_PONG = 2, AM_STOP = 3 };

#define UCHECK(what, expr)                                                                       \
    do {                                                                                         \
        ucs_status_t st_ = (expr);                                                               \
        if (st_ != UCS_OK) {                                                                     \
            fprintf(stderr, "bench_scale_ucx: %s: %s (line %d)\n", what, ucs_status_string(st_), \
                    __LINE__);                                                                   \
            exit(1);                                                                             \
        }                                                                                        \
    } while (0)

static ucp_context_h context;
static ucp_worker_h worker;
static int stop;
static uint64_t pong, pong_count;
static uint64_t echo[64]; /* the server's replies in flight (a ring: one at a time here) */
static unsigned echo_next;

static void setup(void)
{
    ucp_params_t params = {.field_mask = UCP_PARAM_FIELD_FEATURES, .features = UCP_FEATURE_AM};
    ucp_worker_params_t wp = {.field_mask = UCP_WORKER_PARAM_FIELD_THREAD_MODE,
                              .thread_mode = UCS_THREAD_MODE_SINGLE};
    ucp_config_t *config;

    UCHECK("config_read", ucp_config_read(NULL, NULL, &config));
    UCHECK("init", ucp_init(&params, config, &context));
    ucp_config_release(config);
    UCHECK("worker_create", ucp_worker_create(context, &wp, &worker));
}

static void wait_req(ucs_status_ptr_t req, const char *what)
{
    if (req == NULL) {
        return;
    }
    if (UCS_PTR_IS_ERR(req)) {
        UCHECK(what, UCS_PTR_STATUS(req));
    }
    while (ucp_request_check_status(req) == UCS_INPROGRESS) {
        ucp_worker_progress(worker);
    }
    UCHECK(what, ucp_request_check_status(req));
    ucp_request_free(req);
}

static void set_handler(unsigned id, ucp_am_recv_callback_t cb)
{
    ucp_am_handler_param_t hp = {.field_mask =
                                     UCP_AM_HANDLER_PARAM_FIELD_ID | UCP_AM_HANDLER_PARAM_FIELD_CB,
                                 .id = id,
                                 .cb = cb};
    UCHECK("set_am_recv_handler", ucp_worker_set_am_recv_handler(worker, &hp));
}

/* Server: answer on the reply endpoint. The send may complete later: its request is let go. */
static ucs_status_t on_ping(void *arg, const void *header, size_t header_length, void *data,
                            size_t length, const ucp_am_recv_param_t *param)
{
    ucp_request_param_t rp = {.op_attr_mask = 0};
    ucs_status_ptr_t req;
    uint64_t *e = &echo[echo_next++ % 64];

    (void)arg, (void)header, (void)header_length;
    if (length != sizeof(*e) || !(param->recv_attr & UCP_AM_RECV_ATTR_FIELD_REPLY_EP)) {
        fprintf(stderr, "bench_scale_ucx: ping of %zu B without a reply endpoint\n", length);
        exit(1);
    }
    memcpy(e, data, sizeof(*e));
    req = ucp_am_send_nbx(param->reply_ep, AM_PONG, NULL, 0, e, sizeof(*e), &rp);
    if (UCS_PTR_IS_ERR(req)) {
        UCHECK("reply", UCS_PTR_STATUS(req));
    } else if (req != NULL) {
        ucp_request_free(req);
    }
    return UCS_OK;
}

static ucs_status_t on_stop(void *arg, const void *header, size_t header_length, void *data,
                            size_t length, const ucp_am_recv_param_t *param)
{
    (void)arg, (void)header, (void)header_length, (void)data, (void)length, (void)param;
    stop = 1;
    return UCS_OK;
}

static ucs_status_t on_pong(void *arg, const void *header, size_t header_length, void *data,
                            size_t length, const ucp_am_recv_param_t *param)
{
    (void)arg, (void)header, (void)header_length, (void)param;
    if (length == sizeof(pong)) {
        memcpy(&pong, data, sizeof(pong));
        pong_count++;
    }
    return UCS_OK;
}

static int serve(int fd)
{
    ucp_address_t *addr;
    size_t len;
    char c;

    setup();
    set_handler(AM_PING, on_ping);
    set_handler(AM_STOP, on_stop);
    UCHECK("worker_get_address", ucp_worker_get_address(worker, &addr, &len));
    scale_xfer(fd, &len, sizeof(len), 1);
    scale_xfer(fd, addr, len, 1);
    ucp_worker_release_address(worker, addr);
    while (!stop) {
        ucp_worker_progress(worker);
    }
    scale_xfer(fd, "d", 1, 1);
    scale_xfer(fd, &c, 1, 0); /* the client closed its endpoints */
    ucp_worker_destroy(worker);
    ucp_cleanup(context);
    return 0;
}

static ucs_status_ptr_t send_am(ucp_ep_h ep, unsigned id, uint64_t *v)
{
    ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                              .flags = UCP_AM_SEND_FLAG_REPLY};
    return ucp_am_send_nbx(ep, id, NULL, 0, v, sizeof(*v), &rp);
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
        fprintf(stderr, "bench_scale_ucx: bad -n / -i, or no socketpair\n");
        return 2;
    }
    fflush(NULL);
    pid = fork();
    if (pid == 0) {
        close(sv[0]);
        _exit(serve(sv[1]));
    }
    close(sv[1]);

    ucp_ep_h *ep = calloc(n, sizeof(*ep));
    ucs_status_ptr_t *req = calloc(n, sizeof(*req));
    double *rtt = calloc(iters, sizeof(*rtt));
    size_t len;
    uint64_t msg = 0x8badf00d;
    char c;

    setup();
    set_handler(AM_PONG, on_pong);
    for (int i = 0; i < 100; i++) {
        ucp_worker_progress(worker);
    }
    const long rss0 = scale_status_kib("VmRSS"), pin0 = scale_status_kib("VmPin");
    scale_xfer(sv[0], &len, sizeof(len), 0);
    void *addr = malloc(len);
    scale_xfer(sv[0], addr, len, 0);
    double t0 = scale_now_us();
    for (uint32_t i = 0; i < n; i++) {
        ucp_ep_params_t ep_params = {.field_mask = UCP_EP_PARAM_FIELD_REMOTE_ADDRESS,
                                     .address = addr};
        UCHECK("ep_create", ucp_ep_create(worker, &ep_params, &ep[i]));
    }
    const double create_us = (scale_now_us() - t0) / n;
    t0 = scale_now_us();
    for (uint32_t i = 0; i < n; i++) {
        ucp_request_param_t rp = {.op_attr_mask = 0};
        req[i] = ucp_ep_flush_nbx(ep[i], &rp);
    }
    for (uint32_t i = 0; i < n; i++) {
        wait_req(req[i], "ep_flush");
    }
    const double connect_us = (scale_now_us() - t0) / n;
    const long rss = scale_status_kib("VmRSS"), pin = scale_status_kib("VmPin");
    srand(12345);
    for (uint32_t k = 0; k < iters + 100; k++) {
        ucp_ep_h e = ep[(uint32_t)rand() % n];
        uint64_t want = pong_count + 1;
        double s = scale_now_us();
        wait_req(send_am(e, AM_PING, &msg), "ping");
        while (pong_count < want) {
            ucp_worker_progress(worker);
        }
        if (pong != msg) {
            fprintf(stderr, "bench_scale_ucx: echo %llx\n", (unsigned long long)pong);
            return 1;
        }
        if (k >= 100) {
            rtt[k - 100] = (scale_now_us() - s) / 2;
        }
        msg++;
    }
    wait_req(send_am(ep[0], AM_STOP, &msg), "stop");
    scale_xfer(sv[0], &c, 1, 0);
    for (uint32_t i = 0; i < n; i++) {
        ucp_request_param_t rp = {.op_attr_mask = UCP_OP_ATTR_FIELD_FLAGS,
                                  .flags = UCP_EP_CLOSE_FLAG_FORCE};
        req[i] = ucp_ep_close_nbx(ep[i], &rp);
    }
    for (uint32_t i = 0; i < n; i++) {
        if (req[i] != NULL && !UCS_PTR_IS_ERR(req[i])) {
            while (ucp_request_check_status(req[i]) == UCS_INPROGRESS) {
                ucp_worker_progress(worker);
            }
            ucp_request_free(req[i]);
        }
    }
    scale_xfer(sv[0], "x", 1, 1);
    waitpid(pid, &status, 0);
    scale_print("ucx", n, create_us, connect_us, rss0, rss, pin0, pin, rtt, iters);
    free(addr);
    ucp_worker_destroy(worker);
    ucp_cleanup(context);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
