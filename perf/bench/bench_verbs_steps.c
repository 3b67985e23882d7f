/*
 * bench_verbs_steps: a ping-pong on bare verbs (one RC queue pair, no ibmsg) to which the
 * ingredients of an eager tagged-message protocol are added one at a time, so the latency of
 * ibmsg_send_lat can be taken apart into what the device charges for each of them and what the
 * library's own code adds (perf/bench/compare --steps runs the ladder; perf/README.md).
 *
 * Without options it is ib_send_lat's loop: one registered buffer on each side, SEND, every send
 * signalled, one completion queue. The steps:
 *   --imm            SEND_WITH_IMM (ibmsg's compact messages carry their header in the immediate)
 *   --recv-bufs N    N receive buffers of --buf-size bytes, reposted as they complete (ibmsg:
 *                    the credits), instead of one
 *   --send-bufs N    send from a ring of N such buffers (ibmsg's bounce buffers) instead of one
 *   --copy-send      copy the message into the send buffer first (ibmsg's sender bounce copy)
 *   --copy-recv      copy it out of the receive buffer into the user's (ibmsg's delivery)
 *   --send-cq        a completion queue of its own for the sends, polled with the receives
 *   --signal N       signal one send in N (ibmsg: core_signal_interval)
 * Each side checks every message it receives: its first 8 bytes carry the iteration number.
 * The queue pairs' addresses and two barriers go over ibmsg's TCP helper (ibmsg_oob), outside
 * the measured loop.
 * Timing as ibmsg_send_lat's: one TSC stamp per round trip anchored to CLOCK_MONOTONIC
 * (perf/tools/lib/stamp.h), half round trips, the two largest dropped, the median as typical.
 *
 * Usage: bench_verbs_steps [options] [server host]   (server: no host; client: the host)
 *   -d DEV  -i IB_PORT  -x GID_INDEX  -p TCP_PORT  -s SIZE  -n ITERATIONS  --buf-size BYTES
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <infiniband/verbs.h>

#include "perf/tools/lib/perf.h"
#include "perf/tools/lib/stamp.h"

typedef struct steps {
    int imm, copy_send, copy_recv, send_cq;
    long recv_bufs, send_bufs, signal;
} steps_t;

typedef struct opts {
    const char *dev, *host;
    int ib_port, gid_index, tcp_port;
    size_t size, buf_size;
    long iters;
    steps_t st;
} opts_t;

typedef struct peer_info {
    uint32_t qpn, psn;
    union ibv_gid gid;
} peer_info_t;

static int fail(const char *what)
{
    fprintf(stderr, "bench_verbs_steps: %s: %s\n", what, errno != 0 ? strerror(errno) : "failed");
    return 1;
}

#define OOB_TIMEOUT_MS 60000 /* as the perf tools': the peer may be slow to start */

/* The TCP connection beside the queue pair: ibmsg's out-of-band helper (set-up only, never in
   the measured loop). The server listens on tcp_port. NULL on failure (reported). */
static ibmsg_oob_t oob_open(const opts_t *o)
{
    ibmsg_oob_t listener, conn = NULL;
    int ret;

    if (o->host != NULL) {
        ret = ibmsg_oob_connect(o->host, (uint16_t)o->tcp_port, OOB_TIMEOUT_MS, &conn);
    } else if ((ret = ibmsg_oob_listen(NULL, (uint16_t)o->tcp_port, &listener)) == IBMSG_OK) {
        ret = ibmsg_oob_accept(listener, -1, &conn);
        ibmsg_oob_close(listener);
    }
    if (ret != IBMSG_OK) {
        fprintf(stderr, "bench_verbs_steps: TCP connection: %s\n", ibmsg_status_string(ret));
        return NULL;
    }
    return conn;
}

/* Send len bytes of mine and receive exactly len into theirs: the address exchange, and with
   one byte a barrier. */
static int oob_swap(ibmsg_oob_t conn, const void *mine, void *theirs, size_t len)
{
    size_t got = len;
    int ret = ibmsg_oob_send(conn, mine, len, OOB_TIMEOUT_MS);

    if (ret == IBMSG_OK) {
        ret = ibmsg_oob_recv(conn, theirs, &got, OOB_TIMEOUT_MS);
    }
    if (ret == IBMSG_OK && got != len) {
        ret = IBMSG_ERR_PROTOCOL;
    }
    if (ret != IBMSG_OK) {
        fprintf(stderr, "bench_verbs_steps: TCP exchange: %s\n", ibmsg_status_string(ret));
    }
    return ret;
}

static int oob_barrier(ibmsg_oob_t conn)
{
    char mine = 'b', theirs = 0;
    return oob_swap(conn, &mine, &theirs, 1);
}

/* RESET -> INIT: receives can be posted from here on. */
static int qp_init(struct ibv_qp *qp, const opts_t *o)
{
    struct ibv_qp_attr a;

    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_INIT;
    a.port_num = (uint8_t)o->ib_port;
    return ibv_modify_qp(qp, &a,
                         IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

/* INIT -> RTR -> RTS towards the peer. */
static int qp_connect(struct ibv_qp *qp, const opts_t *o, const peer_info_t *peer)
{
    struct ibv_port_attr pa;
    struct ibv_qp_attr a;

    if (ibv_query_port(qp->context, (uint8_t)o->ib_port, &pa) != 0) {
        return -1;
    }
    memset(&a, 0, sizeof(a));
    a.qp_state = IBV_QPS_RTR;
    a.path_mtu = pa.active_mtu;
    a.dest_qp_num = peer->qpn;
    a.rq_psn = peer->psn;
    a.max_dest_rd_atomic = 1;
    a.min_rnr_timer = 12;
    a.ah_attr.port_num = (uint8_t)o->ib_port;
    a.ah_attr.dlid = pa.lid;
    if (o->gid_index >= 0) {
        a.ah_attr.is_global = 1;
        a.ah_attr.grh.dgid = peer->gid;
        a.ah_attr.grh.sgid_index = (uint8_t)o->gid_index;
        a.ah_attr.grh.hop_limit = 1;
    }
    if (ibv_modify_qp(qp, &a,
                      IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
                          IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER)) {
        return -1;
    }
    a.qp_state = IBV_QPS_RTS;
    a.timeout = 14;
    a.retry_cnt = 7;
    a.rnr_retry = 7;
    a.sq_psn = 0;
    a.max_rd_atomic = 1;
    return ibv_modify_qp(qp, &a,
                         IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
                             IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

typedef struct pp {
    const opts_t *o;
    struct ibv_qp *qp;
    struct ibv_cq *rcq, *scq;
    struct ibv_mr *mr;
    char *rbufs, *sbufs, *user_out, *user_in;
    uint64_t sent, unsignalled;
    long outstanding; /* signalled sends not yet completed */
} pp_t;

/* The posts return their error rather than set errno: set it for fail(). */
static int verbs_ret(int ret)
{
    if (ret != 0) {
        errno = ret;
    }
    return ret;
}

static int post_recv(pp_t *p, uint64_t slot)
{
    struct ibv_sge sge = {(uintptr_t)(p->rbufs + slot * p->o->buf_size), (uint32_t)p->o->buf_size,
                          p->mr->lkey};
    struct ibv_recv_wr wr = {.wr_id = slot, .sg_list = &sge, .num_sge = 1}, *bad;

    return verbs_ret(ibv_post_recv(p->qp, &wr, &bad));
}

static int send_one(pp_t *p)
{
    const steps_t *st = &p->o->st;
    char *src = p->sbufs + (p->sent % (uint64_t)st->send_bufs) * p->o->buf_size;
    struct ibv_sge sge = {(uintptr_t)src, (uint32_t)p->o->size, p->mr->lkey};
    struct ibv_send_wr wr = {.sg_list = &sge, .num_sge = 1}, *bad;

    if (p->o->size >= sizeof(uint64_t)) {
        memcpy(st->copy_send ? p->user_out : src, &p->sent, sizeof(uint64_t));
    }
    if (st->copy_send) {
        memcpy(src, p->user_out, p->o->size);
    }
    wr.opcode = st->imm ? IBV_WR_SEND_WITH_IMM : IBV_WR_SEND;
    wr.imm_data = htonl(7);
    if (++p->unsignalled >= (uint64_t)st->signal) {
        wr.send_flags = IBV_SEND_SIGNALED;
        p->unsignalled = 0;
        p->outstanding++;
    }
    p->sent++;
    return verbs_ret(ibv_post_send(p->qp, &wr, &bad));
}

/* Wait for the next message (number expect); send completions are taken on the way. */
static int recv_one(pp_t *p, uint64_t expect)
{
    const steps_t *st = &p->o->st;
    struct ibv_wc wc;

    for (;;) {
        if (st->send_cq && p->outstanding > 0) {
            int m = ibv_poll_cq(p->scq, 1, &wc);
            if (m < 0 || (m > 0 && wc.status != IBV_WC_SUCCESS)) {
                return fail("send completion");
            }
            p->outstanding -= m;
        }
        int n = ibv_poll_cq(p->rcq, 1, &wc);
        if (n < 0 || (n > 0 && wc.status != IBV_WC_SUCCESS)) {
            fprintf(stderr, "bench_verbs_steps: completion error: %s\n",
                    n < 0 ? "poll failed" : ibv_wc_status_str(wc.status));
            return 1;
        }
        if (n == 0) {
            continue;
        }
        if (!(wc.opcode & IBV_WC_RECV)) {
            p->outstanding--; /* a send, on the shared CQ */
            continue;
        }
        const char *data = p->rbufs + wc.wr_id * p->o->buf_size;
        uint64_t got = expect;
        if (wc.byte_len != p->o->size || ((wc.wc_flags & IBV_WC_WITH_IMM) != 0) != st->imm) {
            fprintf(stderr, "bench_verbs_steps: message %" PRIu64 ": %u bytes%s\n", expect,
                    wc.byte_len, wc.wc_flags & IBV_WC_WITH_IMM ? " with an immediate" : "");
            return 1;
        }
        if (st->copy_recv) {
            memcpy(p->user_in, data, wc.byte_len);
            data = p->user_in;
        }
        if (p->o->size >= sizeof(uint64_t)) {
            memcpy(&got, data, sizeof(got));
        }
        if (got != expect) {
            fprintf(stderr, "bench_verbs_steps: message %" PRIu64 " carries %" PRIu64 "\n", expect,
                    got);
            return 1;
        }
        return post_recv(p, wc.wr_id) != 0 ? fail("repost") : 0;
    }
}

static int run(const opts_t *o)
{
    const steps_t *st = &o->st;
    struct ibv_device **list = ibv_get_device_list(NULL);
    struct ibv_device *dev = NULL;
    struct ibv_context *ctx = NULL;
    struct ibv_pd *pd = NULL;
    pp_t p = {.o = o};
    perf_stamp_clock_t clk = {0};
    uint64_t *stamp = NULL;
    double *sample = NULL;
    size_t rlen = o->buf_size * (size_t)st->recv_bufs, slen = o->buf_size * (size_t)st->send_bufs;
    char *mem = NULL;
    ibmsg_oob_t conn = NULL;
    int rc = 1;

    for (int i = 0; list != NULL && list[i] != NULL && dev == NULL; i++) {
        if (o->dev == NULL || strcmp(ibv_get_device_name(list[i]), o->dev) == 0) {
            dev = list[i];
        }
    }
    if (dev == NULL) {
        fprintf(stderr, "bench_verbs_steps: no RDMA device%s%s\n", o->dev ? " " : "",
                o->dev ? o->dev : "");
        goto out;
    }
    /* Receive buffers, send buffers and the user's two buffers: page-aligned, one MR. */
    if ((ctx = ibv_open_device(dev)) == NULL || (pd = ibv_alloc_pd(ctx)) == NULL ||
        posix_memalign((void **)&mem, 4096, rlen + slen + 2 * o->buf_size) != 0) {
        fail("device, protection domain or memory");
        goto out;
    }
    memset(mem, 0x5a, rlen + slen + 2 * o->buf_size);
    p.rbufs = mem;
    p.sbufs = mem + rlen;
    p.user_out = p.sbufs + slen;
    p.user_in = p.user_out + o->buf_size;
    if ((p.mr = ibv_reg_mr(pd, mem, rlen + slen + 2 * o->buf_size, IBV_ACCESS_LOCAL_WRITE)) ==
            NULL ||
        (p.rcq = ibv_create_cq(ctx, (int)st->recv_bufs + 256, NULL, NULL, 0)) == NULL ||
        (p.scq = st->send_cq ? ibv_create_cq(ctx, 256, NULL, NULL, 0) : p.rcq) == NULL) {
        fail("memory registration or completion queue");
        goto out;
    }
    struct ibv_qp_init_attr qia = {.send_cq = p.scq,
                                   .recv_cq = p.rcq,
                                   .qp_type = IBV_QPT_RC,
                                   .cap = {.max_send_wr = 128,
                                           .max_recv_wr = (uint32_t)st->recv_bufs + 16,
                                           .max_send_sge = 1,
                                           .max_recv_sge = 1}};
    if ((p.qp = ibv_create_qp(pd, &qia)) == NULL) {
        fail("queue pair");
        goto out;
    }
    peer_info_t mine = {.qpn = p.qp->qp_num}, peer;
    if (o->gid_index >= 0 && ibv_query_gid(ctx, (uint8_t)o->ib_port, o->gid_index, &mine.gid)) {
        fail("GID");
        goto out;
    }
    if (qp_init(p.qp, o) != 0) {
        fail("queue pair to INIT");
        goto out;
    }
    for (long i = 0; i < st->recv_bufs; i++) {
        if (post_recv(&p, (uint64_t)i) != 0) {
            fail("post receive");
            goto out;
        }
    }
    if ((conn = oob_open(o)) == NULL || oob_swap(conn, &mine, &peer, sizeof(peer)) != IBMSG_OK) {
        goto out;
    }
    if (qp_connect(p.qp, o, &peer) != 0) {
        fail("queue pair to RTS");
        goto out;
    }
    if (oob_barrier(conn) != IBMSG_OK) { /* both can receive now */
        goto out;
    }
    stamp = malloc(sizeof(*stamp) * (size_t)(o->iters + 1));
    sample = malloc(sizeof(*sample) * (size_t)o->iters);
    if (stamp == NULL || sample == NULL || perf_stamp_init(&clk, o->iters + 1) != 0) {
        fail("memory");
        goto out;
    }
    stamp[0] = perf_stamp(&clk);
    perf_stamp_anchor(&clk, 0, stamp[0]);
    for (long i = 0; i < o->iters; i++) {
        if (o->host != NULL) { /* client: ping, wait for the echo */
            if (send_one(&p) != 0) {
                fail("post send");
                goto out;
            }
            if (recv_one(&p, (uint64_t)i) != 0) {
                goto out;
            }
        } else { /* server: wait, echo */
            if (recv_one(&p, (uint64_t)i) != 0) {
                goto out;
            }
            if (send_one(&p) != 0) {
                fail("post send");
                goto out;
            }
        }
        stamp[i + 1] = perf_stamp(&clk);
        if ((i + 1) % PERF_STAMP_ANCHOR_EVERY == 0) {
            perf_stamp_anchor(&clk, i + 1, stamp[i + 1]);
        }
    }
    perf_stamp_anchor(&clk, o->iters, stamp[o->iters]);
    if (oob_barrier(conn) != IBMSG_OK) { /* the peer saw every message too */
        goto out;
    }
    if (o->host != NULL) {
        perf_lat_stats_t ls;
        long backwards = perf_stamp_to_ns(&clk, stamp, o->iters + 1), n = 0;
        for (long i = 0; i < o->iters; i++) {
            if (stamp[i + 1] >= stamp[i]) {
                sample[n++] = (double)(stamp[i + 1] - stamp[i]) / 2000.0; /* half, in us */
            }
        }
        if (n < 3) {
            fprintf(stderr, "bench_verbs_steps: %ld usable round trips (%ld went backwards)\n", n,
                    backwards);
            goto out;
        }
        perf_lat_stats(sample, (size_t)n, &ls);
        /* ib_send_lat's table, so perf/bench/compare reads it as it reads perftest's. */
        printf(" Steps: imm=%d recv_bufs=%ld send_bufs=%ld copy_send=%d copy_recv=%d send_cq=%d "
               "signal=%ld\n",
               st->imm, st->recv_bufs, st->send_bufs, st->copy_send, st->copy_recv, st->send_cq,
               st->signal);
        printf(" #bytes #iterations    t_min[usec]    t_max[usec]  t_typical[usec]    "
               "t_avg[usec]    t_stdev[usec]   99%% percentile[usec]   99.9%% percentile[usec]\n");
        printf(" %-7zu %-10ld %-13.2f %-13.2f %-13.2f %-13.2f %-13.2f %-13.2f %-13.2f\n", o->size,
               o->iters, ls.min, ls.max, ls.typical, ls.avg, ls.stdev, ls.p99, ls.p999);
    }
    rc = 0;
out:
    perf_stamp_fini(&clk);
    free(sample);
    free(stamp);
    if (conn != NULL) {
        ibmsg_oob_close(conn);
    }
    if (p.qp != NULL) {
        ibv_destroy_qp(p.qp);
    }
    if (p.scq != NULL && p.scq != p.rcq) {
        ibv_destroy_cq(p.scq);
    }
    if (p.rcq != NULL) {
        ibv_destroy_cq(p.rcq);
    }
    if (p.mr != NULL) {
        ibv_dereg_mr(p.mr);
    }
    free(mem);
    if (pd != NULL) {
        ibv_dealloc_pd(pd);
    }
    if (ctx != NULL) {
        ibv_close_device(ctx);
    }
    if (list != NULL) {
        ibv_free_device_list(list);
    }
    return rc;
}

static int parse_long(const char *arg, const char *name, long min, long max, long *v)
{
    char *end;
    errno = 0;
    long x = strtol(arg, &end, 10);
    if (errno != 0 || end == arg || *end != '\0' || x < min || x > max) {
        fprintf(stderr, "bench_verbs_steps: %s wants %ld..%ld, not '%s'\n", name, min, max, arg);
        return -1;
    }
    *v = x;
    return 0;
}

int main(int argc, char **argv)
{
    static const struct option longopts[] = {{"imm", no_argument, NULL, 'I'},
                                             {"recv-bufs", required_argument, NULL, 'R'},
                                             {"send-bufs", required_argument, NULL, 'S'},
                                             {"copy-send", no_argument, NULL, 'c'},
                                             {"copy-recv", no_argument, NULL, 'r'},
                                             {"send-cq", no_argument, NULL, 'q'},
                                             {"signal", required_argument, NULL, 'g'},
                                             {"buf-size", required_argument, NULL, 'b'},
                                             {"help", no_argument, NULL, 'h'},
                                             {NULL, 0, NULL, 0}};
    opts_t o = {.ib_port = 1,
                .gid_index = -1,
                .tcp_port = 18515,
                .size = 8,
                .iters = 1000,
                .buf_size = 8192,
                .st = {.recv_bufs = 1, .send_bufs = 1, .signal = 1}};
    long v = 0;
    int c;

    while ((c = getopt_long(argc, argv, "d:i:x:p:s:n:h", longopts, NULL)) != -1) {
        int bad = 0;
        switch (c) {
        case 'd':
            o.dev = optarg;
            break;
        case 'i':
            bad = parse_long(optarg, "-i", 1, 255, &v);
            o.ib_port = (int)v;
            break;
        case 'x':
            bad = parse_long(optarg, "-x", -1, 255, &v);
            o.gid_index = (int)v;
            break;
        case 'p':
            bad = parse_long(optarg, "-p", 1, 65535, &v);
            o.tcp_port = (int)v;
            break;
        case 's':
            bad = parse_long(optarg, "-s", 1, 1 << 20, &v);
            o.size = (size_t)v;
            break;
        case 'n':
            bad = parse_long(optarg, "-n", 3, 100000000, &v);
            o.iters = v;
            break;
        case 'b':
            bad = parse_long(optarg, "--buf-size", 1, 1 << 20, &v);
            o.buf_size = (size_t)v;
            break;
        case 'R':
            bad = parse_long(optarg, "--recv-bufs", 1, 4096, &o.st.recv_bufs);
            break;
        case 'S':
            bad = parse_long(optarg, "--send-bufs", 1, 4096, &o.st.send_bufs);
            break;
        case 'g':
            bad = parse_long(optarg, "--signal", 1, 64, &o.st.signal);
            break;
        case 'I':
            o.st.imm = 1;
            break;
        case 'c':
            o.st.copy_send = 1;
            break;
        case 'r':
            o.st.copy_recv = 1;
            break;
        case 'q':
            o.st.send_cq = 1;
            break;
        case 'h':
            printf("usage: bench_verbs_steps [-d DEV] [-i IB_PORT] [-x GID_INDEX] [-p TCP_PORT] "
                   "[-s SIZE] [-n ITERS] [--buf-size B]\n"
                   "       [--imm] [--recv-bufs N] [--send-bufs N] [--copy-send] [--copy-recv] "
                   "[--send-cq] [--signal N] [HOST]\n(see the comment at the top of "
                   "perf/bench/bench_verbs_steps.c)\n");
            return 0;
        default:
            return 2;
        }
        if (bad) {
            return 2;
        }
    }
    if (optind < argc) {
        o.host = argv[optind++];
    }
    if (optind < argc) {
        fprintf(stderr, "bench_verbs_steps: unexpected argument '%s'\n", argv[optind]);
        return 2;
    }
    if (o.size > o.buf_size) {
        fprintf(stderr, "bench_verbs_steps: -s %zu is larger than --buf-size %zu\n", o.size,
                o.buf_size);
        return 2;
    }
    return run(&o);
}
