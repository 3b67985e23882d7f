// Failures on a real device (Soft-RoCE in the guest): keepalive probes between live peers, a
// peer killed in the middle of a stream seen by a survivor that keeps talking to a third
// process, a receive-only survivor that learns of the death by keepalive, and queue pairs and
// registrations that run out (an rdma cgroup limit) without leaking.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"
#include "core_fixture.h"
#include "peer.h"
#include "ibmsg/ibmsg.h"

namespace
{

using core_test::kSkip;

// Transport settings set low so a dead peer shows quickly: ACK timeout 4.096 us * 2^10 = 4.2 ms,
// one retry. The keepalive probes endpoints silent for kKeepaliveMs.
constexpr int kTimeout = 10, kRetry = 1, kKeepaliveMs = 300, kCredits = 16;
constexpr double kMarginMs = core_test::kGuestMarginMs;

using core_test::since_ms;

// The bound of failure.h for these settings.
double bound_ms()
{
    return core_test::failure_bound_ms(kKeepaliveMs, kRetry, kTimeout, kMarginMs);
}

using core_test::payload;

// The transport and keepalive settings of these tests, set after the device.
core_test::InfoFn settings(int keepalive_ms = kKeepaliveMs, int credits = kCredits,
                           int cq_size = 4096, int sq_depth = 128, int srq = -1)
{
    return [=](ibmsg_info_t info) {
        if (srq >= 0) {
            ibmsg_info_set_int(info, "core_srq", srq);
        }
        ibmsg_info_set_int(info, "verbs_timeout", kTimeout);
        ibmsg_info_set_int(info, "verbs_retry_cnt", kRetry);
        ibmsg_info_set_int(info, "core_keepalive_ms", keepalive_ms);
        ibmsg_info_set_int(info, "core_credits", credits);
        ibmsg_info_set_int(info, "core_cq_size", cq_size);
        ibmsg_info_set_int(info, "core_sq_depth", sq_depth);
    };
}

int open_context(ibmsg_context_t *ctx, const char *device, int keepalive_ms = kKeepaliveMs,
                 int credits = kCredits, int cq_size = 4096, int sq_depth = 128, int srq = -1)
{
    return core_test::open_context(ctx, device,
                                   settings(keepalive_ms, credits, cq_size, sq_depth, srq));
}

bool have_device()
{
    return core_test::have_device(settings());
}

uint64_t cnt(const cnt_shard_t *block, cnt_id_t id)
{
    return cnt_read(block, id, CNT_READ_VALUE);
}

// Tags of the three-process protocol.
enum : uint64_t {
    kTagStream = 1, // A -> peer: the stream, payload pattern(seq)
    kTagEcho = 2,   // A -> peer: echo this back with kTagEchoed
    kTagEchoed = 3,
    kTagDone = 9,  // A -> peer: report how many stream messages arrived (kTagCount)
    kTagCount = 8, // peer -> A
    kTagAny = 77,  // peer -> A: matched by A's wildcard receive
    kTagBye = 10,  // A -> peer: exit now
};
constexpr size_t kMsgLen = 300; // above the inline limit: bounce buffers too

// B and C: receive and verify the stream in order, echo what asks for it; exit 0 when all
// was right. Any mismatch exits with a code naming it.
[[noreturn]] void run_peer(uint16_t port, const char *device)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    if (open_context(&ctx, device) != IBMSG_OK ||
        core_test::join_parent(ctx, port, &ep, &conn) != IBMSG_OK) {
        _exit(10);
    }
    std::vector<uint8_t> buf(kMsgLen);
    uint64_t seq = 0;
    for (;;) {
        ibmsg_tag_status_t st;
        if (ibmsg_tag_recv(ctx, ep, buf.data(), buf.size(), 0, IBMSG_TAG_MASK_ANY, &st) !=
            IBMSG_OK) {
            _exit(11);
        }
        if (st.tag == kTagStream) {
            if (st.length != kMsgLen || buf != payload(seq, kMsgLen)) {
                _exit(12);
            }
            seq++;
        } else if (st.tag == kTagEcho) {
            if (ibmsg_tag_send(ep, buf.data(), st.length, kTagEchoed) != IBMSG_OK) {
                _exit(13);
            }
        } else if (st.tag == kTagDone) {
            uint64_t any = 0x5eed;
            if (ibmsg_tag_send(ep, &seq, sizeof(seq), kTagCount) != IBMSG_OK ||
                ibmsg_tag_send(ep, &any, sizeof(any), kTagAny) != IBMSG_OK) {
                _exit(14);
            }
        } else if (st.tag == kTagBye) {
            break;
        } else {
            _exit(15);
        }
    }
    int ok = cnt(ctx->cnt, CNT_CORE_EP_FAILURES) == 0 && cnt(ctx->cnt, CNT_VERBS_WC_ERRORS) == 0;
    ibmsg_oob_close(conn);
    ibmsg_context_destroy(ctx);
    _exit(ok ? 0 : 16);
}

// A forked peer process and the listener its parent accepts it on (the test closes it).
struct Child {
    pid_t pid = -1;
    ibmsg_oob_t listener = nullptr;
};

// A peer forked by core_test::fork_peer (peer.h) that joins this process
// (core_test::join_parent) and ends with _exit, never returning into the test.
template <typename Fn> Child start_peer(Fn peer)
{
    Child c;
    c.pid = core_test::fork_peer(&c.listener, peer);
    return c;
}

// This process's endpoint *ep of ctx connected to child's, through the TCP helper (*conn).
int accept_child(ibmsg_context_t ctx, const Child &child, ibmsg_ep_t *ep, ibmsg_oob_t *conn)
{
    int ret = ibmsg_ep_create(ctx, ep);
    if (ret == IBMSG_OK) {
        ret = ibmsg_oob_accept(child.listener, 20000, conn);
    }
    if (ret == IBMSG_OK) {
        ret = ibmsg_oob_ep_connect(*conn, *ep, 20000);
    }
    return ret;
}

void expect_exit_ok(pid_t pid, const char *who)
{
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status)) << who;
    EXPECT_EQ(WEXITSTATUS(status), 0) << who << " failed (exit code: see run_peer)";
}

} // namespace

// Live peers: the probes of idle endpoints are acknowledged, invisible to the peer, counted,
// and leave the connection usable (sequence numbers and credits untouched).
TEST(Failure, KeepaliveProbesBetweenLivePeersAreHarmless)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t a, b;
    core_test::open_pair(&ctx, &a, &b, settings(50));
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    auto t0 = std::chrono::steady_clock::now();
    while (since_ms(t0) < 600) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    EXPECT_GE(cnt(a->cnt, CNT_CORE_KEEPALIVES_SENT), 2u);
    EXPECT_GE(cnt(b->cnt, CNT_CORE_KEEPALIVES_SENT), 2u);
    EXPECT_LE(cnt(a->cnt, CNT_CORE_KEEPALIVES_SENT), 12u) << "one per 50 ms of silence at most";
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_WC_ERRORS), 0u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_EP_FAILURES), 0u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_EAGER_MSGS_RECVD), 0u) << "probes are not messages";
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_WIRE_REJECTED), 0u);
    EXPECT_EQ(ibmsg_ep_status(a), IBMSG_OK);
    EXPECT_EQ(ibmsg_ep_status(nullptr), IBMSG_ERR_INVALID);
    for (uint64_t i = 0; i < 100; i++) {
        auto out = payload(i, kMsgLen);
        std::vector<uint8_t> in(kMsgLen);
        ibmsg_request_t r;
        ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in.data(), in.size(), i, IBMSG_TAG_MASK_EXACT, &r),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_send(a, out.data(), out.size(), i), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
        ASSERT_EQ(in, out);
    }
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_ENDPOINTS), 2u);
    EXPECT_EQ(ibmsg_ep_destroy(a), IBMSG_OK);
    EXPECT_EQ(ibmsg_ep_destroy(b), IBMSG_OK);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_ENDPOINTS), 0u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted))
        << "only the shared receive queue's posted buffers are out";
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// A streams to B and C; B is killed (SIGKILL) while A keeps streaming to it. A sees the A-B
// endpoint fail within the bound, every request on it still outstanding completes with
// IBMSG_ERR_PEER_FAILED (exactly those), new operations on it fail at once, a wildcard receive
// stays posted, and A keeps exchanging verified messages with C.
TEST(FailureProcesses, PeerKilledMidStream)
{
    if (!have_device()) {
        IBMSG_TEST_MISSING(kSkip);
    }
    const char *dev_a = getenv("IBMSG_VM_DEV_A"), *dev_b = getenv("IBMSG_VM_DEV_B");
    auto peer = [=](uint16_t port) { run_peer(port, dev_b); };
    Child b = start_peer(peer);
    ASSERT_GT(b.pid, 0);
    Child c = start_peer(peer);
    ASSERT_GT(c.pid, 0);

    ibmsg_context_t ctx;
    ibmsg_ep_t ab, ac;
    ibmsg_oob_t conn_b, conn_c;
    ASSERT_EQ(open_context(&ctx, dev_a), IBMSG_OK);
    ASSERT_EQ(accept_child(ctx, b, &ab, &conn_b), IBMSG_OK);
    ASSERT_EQ(accept_child(ctx, c, &ac, &conn_c), IBMSG_OK);

    // Receives posted before the failure: one bound to B (fails with it), one for any
    // endpoint (stays posted; C satisfies it at the end).
    uint64_t from_b = 0, any = 0;
    ibmsg_request_t rb, rany;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, ab, &from_b, 8, kTagCount, IBMSG_TAG_MASK_EXACT, &rb), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_irecv(ctx, nullptr, &any, 8, kTagAny, IBMSG_TAG_MASK_EXACT, &rany),
              IBMSG_OK);

    // The stream: payloads stay alive until their requests complete.
    const int before = 300, after_kill = kCredits + 8;
    std::vector<std::vector<uint8_t>> out_b, out_c;
    out_b.reserve(before + after_kill);
    out_c.reserve(2 * before + after_kill);
    std::vector<ibmsg_request_t> req_b, req_c;
    auto send = [&](ibmsg_ep_t ep, std::vector<std::vector<uint8_t>> &out,
                    std::vector<ibmsg_request_t> &reqs) {
        out.push_back(payload(out.size(), kMsgLen));
        ibmsg_request_t r;
        int ret = ibmsg_tag_isend(ep, out.back().data(), kMsgLen, kTagStream, &r);
        if (ret == IBMSG_OK) {
            reqs.push_back(r);
        }
        return ret;
    };
    for (int i = 0; i < before; i++) {
        ASSERT_EQ(send(ab, out_b, req_b), IBMSG_OK);
        ASSERT_EQ(send(ac, out_c, req_c), IBMSG_OK);
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }

    // Kill B mid-stream; once waitpid returns its queue pair is gone.
    ASSERT_EQ(kill(b.pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(b.pid, &status, 0), b.pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    auto t_kill = std::chrono::steady_clock::now();
    const uint64_t ka_before = cnt(ab->cnt, CNT_CORE_KEEPALIVES_SENT);

    // More than B's credits: some go out and time out, the rest must wait for credits.
    for (int i = 0; i < after_kill; i++) {
        ASSERT_EQ(send(ab, out_b, req_b), IBMSG_OK) << "failed before it could be detected";
        ASSERT_EQ(send(ac, out_c, req_c), IBMSG_OK);
    }
    auto outstanding = [&]() {
        size_t n = 0;
        for (ibmsg_request_t r : req_b) {
            n += r != IBMSG_REQUEST_NULL && r->state == CORE_REQ_POSTED;
        }
        return n;
    };
    size_t pending_before = outstanding();
    while (ibmsg_ep_status(ab) == IBMSG_OK && since_ms(t_kill) < bound_ms() + 5000) {
        pending_before = outstanding();
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    const double detect_ms = since_ms(t_kill);
    ASSERT_EQ(ibmsg_ep_status(ab), IBMSG_ERR_PEER_FAILED) << "not detected after " << detect_ms;
    EXPECT_LT(detect_ms, bound_ms());
    printf("peer killed mid-stream: A-B endpoint failed %.1f ms after the kill (bound %.0f ms; "
           "keepalive probes meanwhile: %llu)\n",
           detect_ms, bound_ms(),
           (unsigned long long)(cnt(ab->cnt, CNT_CORE_KEEPALIVES_SENT) - ka_before));
    EXPECT_GE(pending_before, 1u) << "some sends had to wait for credits the dead peer owed";
    EXPECT_EQ(ibmsg_ep_status(ac), IBMSG_OK);

    // New operations on the failed endpoint fail at once.
    ibmsg_request_t r = IBMSG_REQUEST_NULL;
    EXPECT_EQ(ibmsg_tag_isend(ab, out_b[0].data(), kMsgLen, kTagStream, &r), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(ibmsg_tag_irecv(ctx, ab, &from_b, 8, 1234, IBMSG_TAG_MASK_EXACT, &r),
              IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(r, IBMSG_REQUEST_NULL);

    // Every request to B completed: the ones waiting when the failure came with PEER_FAILED.
    size_t ok = 0, failed = 0;
    for (ibmsg_request_t &q : req_b) {
        int completed = 0;
        ibmsg_tag_status_t st{};
        int e = ibmsg_request_test(&q, &completed, &st);
        ASSERT_EQ(completed, 1) << "a request on the failed endpoint is still outstanding";
        ASSERT_TRUE(e == IBMSG_OK || e == IBMSG_ERR_PEER_FAILED) << ibmsg_status_string(e);
        EXPECT_EQ(st.error, e);
        (e == IBMSG_OK ? ok : failed)++;
    }
    EXPECT_EQ(ok + failed, size_t(before + after_kill));
    EXPECT_EQ(failed, pending_before);
    ibmsg_tag_status_t st{};
    EXPECT_EQ(ibmsg_request_wait(&rb, &st), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(st.error, IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(cnt(ab->cnt, CNT_CORE_PEER_FAILED_REQS), failed + 1);
    EXPECT_EQ(cnt(ab->cnt, CNT_CORE_EP_FAILURES), 1u);
    EXPECT_GE(cnt(ab->cnt, CNT_VERBS_WC_ERRORS), 1u);
    int done = 0;
    EXPECT_EQ(ibmsg_request_test(&rany, &done, nullptr), IBMSG_OK);
    EXPECT_EQ(done, 0) << "the wildcard receive stays posted";

    // The failed endpoint goes; A and C keep talking, verified both ways.
    EXPECT_EQ(ibmsg_ep_destroy(ab), IBMSG_OK);
    for (uint64_t i = 0; i < 200; i++) {
        auto msg = payload(1000 + i, kMsgLen);
        std::vector<uint8_t> in(kMsgLen);
        ibmsg_request_t rr;
        ASSERT_EQ(
            ibmsg_tag_irecv(ctx, ac, in.data(), in.size(), kTagEchoed, IBMSG_TAG_MASK_EXACT, &rr),
            IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_send(ac, msg.data(), msg.size(), kTagEcho), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rr, &st), IBMSG_OK);
        ASSERT_EQ(in, msg) << "echo " << i;
    }
    for (ibmsg_request_t &q : req_c) {
        ASSERT_EQ(ibmsg_request_wait(&q, nullptr), IBMSG_OK);
    }
    uint64_t count = 0;
    ibmsg_request_t rc;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, ac, &count, 8, kTagCount, IBMSG_TAG_MASK_EXACT, &rc), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(ac, nullptr, 0, kTagDone), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&rc, nullptr), IBMSG_OK);
    EXPECT_EQ(count, uint64_t(before + after_kill)) << "C got the whole stream, in order";
    ASSERT_EQ(ibmsg_request_wait(&rany, &st), IBMSG_OK);
    EXPECT_EQ(st.source, ac);
    EXPECT_EQ(any, 0x5eedu);
    ASSERT_EQ(ibmsg_tag_send(ac, nullptr, 0, kTagBye), IBMSG_OK);
    expect_exit_ok(c.pid, "C");

    EXPECT_EQ(cnt(ac->cnt, CNT_CORE_EP_FAILURES), 0u);
    EXPECT_EQ(cnt(ac->cnt, CNT_VERBS_WC_ERRORS), 0u);
    EXPECT_EQ(cnt(ac->cnt, CNT_CORE_PEER_FAILED_REQS), 0u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_EP_FAILURES), 1u) << "the destroyed endpoint's count stays";
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_PEER_FAILED_REQS), failed + 1);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_ENDPOINTS), 1u);
    EXPECT_EQ(ibmsg_ep_destroy(ac), IBMSG_OK);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_ENDPOINTS), 0u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted))
        << "every bounce buffer came back (the SRQ's stay posted)";
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_POSTED_RECVQ), 0u);
    ibmsg_oob_close(conn_b);
    ibmsg_oob_close(conn_c);
    ibmsg_oob_close(b.listener);
    ibmsg_oob_close(c.listener);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// The survivor only receives: nothing it sends would time out, so the keepalive probe finds the
// death: exactly one probe, one failure, one failed request.
TEST(FailureProcesses, ReceiveOnlySurvivorDetectsByKeepalive)
{
    if (!have_device()) {
        IBMSG_TEST_MISSING(kSkip);
    }
    const char *dev_a = getenv("IBMSG_VM_DEV_A"), *dev_b = getenv("IBMSG_VM_DEV_B");
    Child peer = start_peer([=](uint16_t port) {
        // The peer: one message, then nothing until it is killed.
        ibmsg_context_t pctx;
        ibmsg_ep_t ep;
        ibmsg_oob_t conn;
        uint64_t v = 42;
        if (open_context(&pctx, dev_b, 0) != IBMSG_OK ||
            core_test::join_parent(pctx, port, &ep, &conn) != IBMSG_OK ||
            ibmsg_tag_send(ep, &v, sizeof(v), 5) != IBMSG_OK) {
            _exit(10);
        }
        for (;;) {
            pause();
        }
    });
    ASSERT_GT(peer.pid, 0);
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    ASSERT_EQ(open_context(&ctx, dev_a), IBMSG_OK);
    ASSERT_EQ(accept_child(ctx, peer, &ep, &conn), IBMSG_OK);
    uint64_t v = 0;
    ASSERT_EQ(ibmsg_tag_recv(ctx, ep, &v, 8, 5, IBMSG_TAG_MASK_EXACT, nullptr), IBMSG_OK);
    auto t_rx = std::chrono::steady_clock::now(); // the last thing the peer sent
    EXPECT_EQ(v, 42u);

    // A slow set-up may have probed the live peer: let that probe finish first, so the one
    // probe counted below is the one that meets the dead peer.
    auto t_settle = std::chrono::steady_clock::now();
    while (ep->ka.probing && since_ms(t_settle) < 2000) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    ASSERT_EQ(ep->ka.probing, 0) << "a probe of the live peer did not complete";
    ASSERT_EQ(kill(peer.pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(peer.pid, &status, 0), peer.pid);
    auto t_kill = std::chrono::steady_clock::now();
    const uint64_t ka_before = cnt(ep->cnt, CNT_CORE_KEEPALIVES_SENT);

    ibmsg_request_t r;
    ibmsg_tag_status_t st{};
    ASSERT_EQ(ibmsg_tag_irecv(ctx, ep, &v, 8, 6, IBMSG_TAG_MASK_EXACT, &r), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&r, &st), IBMSG_ERR_PEER_FAILED);
    const double detect_ms = since_ms(t_kill);
    EXPECT_EQ(st.error, IBMSG_ERR_PEER_FAILED);
    EXPECT_LT(detect_ms, bound_ms());
    EXPECT_GE(since_ms(t_rx), kKeepaliveMs * 0.9) << "no probe before the interval of silence";
    printf("receive-only survivor: failure seen %.1f ms after the kill (keepalive %d ms, "
           "bound %.0f ms)\n",
           detect_ms, kKeepaliveMs, bound_ms());
    EXPECT_EQ(ibmsg_ep_status(ep), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(ibmsg_tag_isend(ep, &v, 8, 7, &r), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(cnt(ep->cnt, CNT_CORE_KEEPALIVES_SENT) - ka_before, 1u);
    EXPECT_EQ(cnt(ep->cnt, CNT_CORE_EP_FAILURES), 1u);
    EXPECT_EQ(cnt(ep->cnt, CNT_CORE_PEER_FAILED_REQS), 1u);
    EXPECT_EQ(cnt(ep->cnt, CNT_VERBS_WC_ERRORS), 1u) << "the probe's retry-exceeded completion";
    EXPECT_EQ(ibmsg_ep_destroy(ep), IBMSG_OK);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_ENDPOINTS), 0u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted))
        << "only the shared receive queue's posted buffers are out";
    ibmsg_oob_close(conn);
    ibmsg_oob_close(peer.listener);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// Messages that arrived before the failure are still received (ibmsg.h, "Failures"): eager
// ones with their data, by a bound or a wildcard receive, while a new bound receive fails at
// once. A rendezvous whose RTS arrived can no longer be read from the dead peer: its receive
// completes with IBMSG_ERR_PEER_FAILED (it used to wait forever: the pull was queued on a
// failed endpoint that never services it).
TEST(FailureProcesses, ArrivedBeforeFailureStillReceivable)
{
    if (!have_device()) {
        IBMSG_TEST_MISSING(kSkip);
    }
    const char *dev_a = getenv("IBMSG_VM_DEV_A"), *dev_b = getenv("IBMSG_VM_DEV_B");
    constexpr size_t kRndvLen = 64 * 1024; // above any eager limit
    Child peer = start_peer([=](uint16_t port) {
        // The peer: eager tags 1-3, a rendezvous tag 4 (its RTS), then silence until killed.
        ibmsg_context_t pctx;
        ibmsg_ep_t ep;
        ibmsg_oob_t conn;
        static std::vector<uint8_t> big = payload(4, kRndvLen);
        ibmsg_request_t r;
        if (open_context(&pctx, dev_b) != IBMSG_OK ||
            core_test::join_parent(pctx, port, &ep, &conn) != IBMSG_OK) {
            _exit(10);
        }
        for (uint64_t tag = 1; tag <= 3; tag++) {
            auto v = payload(tag, kMsgLen);
            if (ibmsg_tag_send(ep, v.data(), v.size(), tag) != IBMSG_OK) {
                _exit(11);
            }
        }
        if (ibmsg_tag_isend(ep, big.data(), big.size(), 4, &r) != IBMSG_OK) {
            _exit(12);
        }
        for (int i = 0; i < 1000; i++) {
            ibmsg_context_progress(pctx, nullptr); // posts the held RTS
        }
        for (;;) {
            pause();
        }
    });
    ASSERT_GT(peer.pid, 0);
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    ASSERT_EQ(open_context(&ctx, dev_a), IBMSG_OK);
    ASSERT_EQ(accept_child(ctx, peer, &ep, &conn), IBMSG_OK);
    auto t0 = std::chrono::steady_clock::now();
    while (cnt(ctx->cnt, CNT_CORE_UNEXPECTED_RECVQ) < 4 && since_ms(t0) < 20000) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    ASSERT_EQ(cnt(ctx->cnt, CNT_CORE_UNEXPECTED_RECVQ), 4u) << "three eager messages and an RTS";
    ASSERT_EQ(kill(peer.pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(peer.pid, &status, 0), peer.pid);
    auto t_kill = std::chrono::steady_clock::now();
    while (ibmsg_ep_status(ep) == IBMSG_OK && since_ms(t_kill) < bound_ms() + 5000) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    ASSERT_EQ(ibmsg_ep_status(ep), IBMSG_ERR_PEER_FAILED) << "keepalive found no death";

    std::vector<uint8_t> in(kMsgLen);
    ibmsg_tag_status_t st{};
    ASSERT_EQ(ibmsg_tag_recv(ctx, ep, in.data(), in.size(), 1, IBMSG_TAG_MASK_EXACT, &st),
              IBMSG_OK);
    EXPECT_EQ(in, payload(1, kMsgLen));
    ASSERT_EQ(ibmsg_tag_recv(ctx, nullptr, in.data(), in.size(), 2, IBMSG_TAG_MASK_EXACT, &st),
              IBMSG_OK);
    EXPECT_EQ(in, payload(2, kMsgLen));
    EXPECT_EQ(st.source, ep);
    ibmsg_request_t r = IBMSG_REQUEST_NULL;
    EXPECT_EQ(ibmsg_tag_irecv(ctx, ep, in.data(), in.size(), 99, IBMSG_TAG_MASK_EXACT, &r),
              IBMSG_ERR_PEER_FAILED)
        << "nothing with tag 99 arrived";
    EXPECT_EQ(r, IBMSG_REQUEST_NULL);
    ASSERT_EQ(ibmsg_tag_recv(ctx, ep, in.data(), in.size(), 0, IBMSG_TAG_MASK_ANY, &st), IBMSG_OK);
    EXPECT_EQ(st.tag, 3u) << "a wildcard takes the oldest";
    EXPECT_EQ(in, payload(3, kMsgLen));

    std::vector<uint8_t> big(kRndvLen);
    ASSERT_EQ(ibmsg_tag_irecv(ctx, ep, big.data(), big.size(), 4, IBMSG_TAG_MASK_EXACT, &r),
              IBMSG_OK);
    int done = 0, ret = IBMSG_OK;
    auto t_rndv = std::chrono::steady_clock::now();
    while (!done && since_ms(t_rndv) < 2000) {
        ret = ibmsg_request_test(&r, &done, &st);
    }
    ASSERT_EQ(done, 1) << "the rendezvous receive never completes";
    EXPECT_EQ(ret, IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(st.error, IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(st.tag, 4u);
    EXPECT_EQ(st.length, kRndvLen);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_UNEXPECTED_RECVQ), 0u);
    EXPECT_EQ(cnt(ep->cnt, CNT_CORE_RNDV_BYTES_RECVD), 0u);
    EXPECT_EQ(cnt(ep->cnt, CNT_CORE_PEER_FAILED_REQS), 1u) << "the rendezvous receive";
    EXPECT_EQ(ibmsg_ep_destroy(ep), IBMSG_OK);
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted))
        << "only the shared receive queue's posted buffers are out";
    ibmsg_oob_close(conn);
    ibmsg_oob_close(peer.listener);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// Completion queues of core_cq_size 64 do not cap the endpoints: 300 of them (4 credits, 8 send
// entries) are all created (per-endpoint receive queues grow the receive CQ: 1,200 entries
// posted), and destroying them all brings every level back to where the context began.
TEST(FailureResources, EndpointsAreNotCappedByCompletionQueues)
{
    ibmsg_context_t ctx;
    int ret = open_context(&ctx, nullptr, kKeepaliveMs, 4, 64, 8);
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(kSkip);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    const uint64_t srq_bufs = ctx->srq_posted; // the shared receive queue's (0 without)
    std::vector<ibmsg_ep_t> eps;
    ibmsg_ep_t ep;
    for (int i = 0; i < 300; i++) {
        ASSERT_EQ(ibmsg_ep_create(ctx, &ep), IBMSG_OK) << "endpoint " << i;
        eps.push_back(ep);
    }
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_ENDPOINTS), 300u);
    if (ctx->srq == nullptr) {
        EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE), 4u * 300);
        EXPECT_GT(cnt(ctx->cnt, CNT_CORE_CQ_RESIZES), 0u) << "the receive CQ grew";
        EXPECT_GE(verbs_cq_size(ctx->rcq), 4 * 300);
    } else {
        EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE), srq_bufs) << "nothing per endpoint";
    }
    for (ibmsg_ep_t e : eps) {
        EXPECT_EQ(ibmsg_ep_destroy(e), IBMSG_OK);
    }
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_ENDPOINTS), 0u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE), srq_bufs);
    ASSERT_EQ(ibmsg_ep_create(ctx, &ep), IBMSG_OK) << "room again";
    EXPECT_EQ(ibmsg_ep_destroy(ep), IBMSG_OK);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

namespace
{

bool write_file(const std::string &path, const std::string &text)
{
    int fd = open(path.c_str(), O_WRONLY);
    if (fd < 0) {
        return false;
    }
    bool ok = write(fd, text.data(), text.size()) == ssize_t(text.size());
    close(fd);
    return ok;
}

// "rxe0 hca_handle=1 hca_object=5" -> 5 (the line of device dev in rdma.current).
long read_objects(const std::string &path, const std::string &dev)
{
    FILE *f = fopen(path.c_str(), "r");
    char line[256];
    long n = -1;
    while (f != nullptr && fgets(line, sizeof(line), f) != nullptr) {
        const char *p = strstr(line, "hca_object=");
        if (strncmp(line, dev.c_str(), dev.size()) == 0 && line[dev.size()] == ' ' &&
            p != nullptr) {
            n = strtol(p + 11, nullptr, 10);
        }
    }
    if (f != nullptr) {
        fclose(f);
    }
    return n;
}

// In a child moved into an rdma cgroup whose hca_object limit leaves room for `room` more
// verbs objects after the context: endpoints (credits 64: endpoint 1 takes one QP, every later
// one a QP and a registered chunk) until creation fails. Returns the exit code: 0 when the
// failure is `want` with levels back to 0 after destroying all, 77 when cgroups are not usable.
[[noreturn]] void run_limited(int room, int want, size_t want_eps)
{
    const char *devname = getenv("IBMSG_TEST_DEVICE");
    std::string dev = devname != nullptr ? devname : "rxe0";
    std::string mnt = std::string(getenv("TMPDIR") != nullptr ? getenv("TMPDIR") : "/tmp") +
                      "/ibmsg-cg-" + std::to_string(getpid());
    if (mkdir(mnt.c_str(), 0700) != 0 || mount("none", mnt.c_str(), "cgroup2", 0, nullptr) != 0) {
        fprintf(stderr, "cannot mount cgroup2 on %s: %s\n", mnt.c_str(), strerror(errno));
        rmdir(mnt.c_str());
        _exit(77);
    }
    std::string grp = mnt + "/t";
    int code = 77;
    if (write_file(mnt + "/cgroup.subtree_control", "+rdma") &&
        (mkdir(grp.c_str(), 0700) == 0 || errno == EEXIST) &&
        write_file(grp + "/cgroup.procs", std::to_string(getpid()))) {
        ibmsg_context_t ctx;
        code = 20;
        // Per-endpoint receive queues (core_srq 0): what is counted is a QP and a chunk each.
        if (open_context(&ctx, devname, kKeepaliveMs, 64, 4096, 128, 0) == IBMSG_OK) {
            long used = read_objects(grp + "/rdma.current", dev);
            code = 21;
            if (used > 0 &&
                write_file(grp + "/rdma.max", dev + " hca_object=" + std::to_string(used + room))) {
                std::vector<ibmsg_ep_t> eps;
                ibmsg_ep_t ep;
                int ret;
                while ((ret = ibmsg_ep_create(ctx, &ep)) == IBMSG_OK && eps.size() < 100) {
                    eps.push_back(ep);
                }
                long after = read_objects(grp + "/rdma.current", dev);
                code = ret != want                                                   ? 22
                       : eps.size() != want_eps                                      ? 23
                       : cnt(ctx->cnt, CNT_CORE_ENDPOINTS) != eps.size()             ? 24
                       : cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE) != 64 * eps.size() ? 25
                                                                                     : 0;
                fprintf(stderr, "limit %ld objects: %zu endpoints, then %s (%ld objects)\n",
                        used + room, eps.size(), ibmsg_status_string(ret), after);
                for (ibmsg_ep_t e : eps) {
                    ibmsg_ep_destroy(e);
                }
                if (code == 0 && (cnt(ctx->cnt, CNT_CORE_ENDPOINTS) != 0 ||
                                  cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE) != 0)) {
                    code = 26;
                }
                if (code == 0 && read_objects(grp + "/rdma.current", dev) > after) {
                    code = 27;
                }
            }
            ibmsg_context_destroy(ctx);
            if (code == 0 && read_objects(grp + "/rdma.current", dev) > 0) {
                code = 28; // a verbs object outlived its context
            }
        }
    }
    write_file(mnt + "/cgroup.procs", std::to_string(getpid()));
    rmdir(grp.c_str());
    umount(mnt.c_str());
    rmdir(mnt.c_str());
    _exit(code);
}

void expect_limited(int room, int want, size_t want_eps, bool *skipped)
{
    fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        run_limited(room, want, want_eps);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    *skipped = WEXITSTATUS(status) == 77;
    if (!*skipped) {
        EXPECT_EQ(WEXITSTATUS(status), 0) << "room " << room << ": see run_limited's codes";
    }
}

} // namespace

// Out of queue pairs and out of registrations, for real: the kernel's rdma cgroup caps the
// verbs objects of a child process. Endpoint 2 needs a QP and a registration (its receive
// buffers start a new chunk): room for 1 more object fails at its QP, room for 2 at its
// ibv_reg_mr. Both are IBMSG_ERR_NO_RESOURCE with a log line, and nothing is left behind.
TEST(FailureResources, QueuePairsAndRegistrationsRunOut)
{
    if (!have_device()) {
        IBMSG_TEST_MISSING(kSkip);
    }
    if (geteuid() != 0) {
        IBMSG_TEST_MISSING("needs root to mount a cgroup (the guest runs as root)");
    }
    bool skipped = false;
    expect_limited(1, IBMSG_ERR_NO_RESOURCE, 1, &skipped);
    if (skipped) {
        IBMSG_TEST_MISSING("no cgroup2 with the rdma controller here");
    }
    expect_limited(2, IBMSG_ERR_NO_RESOURCE, 1, &skipped);
    expect_limited(4, IBMSG_ERR_NO_RESOURCE, 2, &skipped);
}

namespace
{

struct Transport {
    int timeout, retry;
};

// The transport alone (keepalive off): a send to a killed peer fails after the retransmission
// timeouts. Prints the measured time next to the IB formula (retry + 1) * 4.096 us * 2^timeout.
// Not 7 retries: Soft-RoCE then retries forever (measured: no failure after 12 s; rxe_comp.c).
class FailureTransport : public ::testing::TestWithParam<Transport>
{
};

} // namespace

TEST_P(FailureTransport, SendToKilledPeerFailsWithinRetryTimeouts)
{
    if (!have_device()) {
        IBMSG_TEST_MISSING(kSkip);
    }
    const Transport tp = GetParam();
    const char *dev_a = getenv("IBMSG_VM_DEV_A"), *dev_b = getenv("IBMSG_VM_DEV_B");
    auto open = [&](ibmsg_context_t *ctx, const char *dev) {
        ibmsg_info_t info;
        ibmsg_info_create(&info);
        if (dev == nullptr) {
            dev = getenv("IBMSG_TEST_DEVICE");
        }
        if (dev != nullptr) {
            ibmsg_info_set_string(info, "device", dev);
        }
        ibmsg_info_set_int(info, "verbs_timeout", tp.timeout);
        ibmsg_info_set_int(info, "verbs_retry_cnt", tp.retry);
        ibmsg_info_set_int(info, "core_keepalive_ms", 0);
        int ret = ibmsg_context_create(info, ctx);
        ibmsg_info_free(&info);
        return ret;
    };
    Child peer = start_peer([=](uint16_t port) {
        ibmsg_context_t pctx;
        ibmsg_ep_t ep;
        ibmsg_oob_t conn;
        if (open(&pctx, dev_b) != IBMSG_OK ||
            core_test::join_parent(pctx, port, &ep, &conn) != IBMSG_OK) {
            _exit(10);
        }
        for (;;) {
            pause();
        }
    });
    ASSERT_GT(peer.pid, 0);
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    ASSERT_EQ(open(&ctx, dev_a), IBMSG_OK);
    ASSERT_EQ(accept_child(ctx, peer, &ep, &conn), IBMSG_OK);
    ASSERT_EQ(kill(peer.pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(peer.pid, &status, 0), peer.pid);
    const double formula_ms = (tp.retry + 1) * 4.096e-3 * double(1u << tp.timeout);
    uint64_t v = 1;
    ibmsg_request_t r;
    auto t0 = std::chrono::steady_clock::now();
    ASSERT_EQ(ibmsg_tag_isend(ep, &v, sizeof(v), 1, &r), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK) << "eager: complete once posted";
    while (ibmsg_ep_status(ep) == IBMSG_OK && since_ms(t0) < 4 * formula_ms + 10000) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    const double ms = since_ms(t0);
    printf("verbs_timeout %2d verbs_retry_cnt %d: send to a killed peer failed after %8.1f ms "
           "(formula %7.1f ms)\n",
           tp.timeout, tp.retry, ms, formula_ms);
    EXPECT_EQ(ibmsg_ep_status(ep), IBMSG_ERR_PEER_FAILED);
    EXPECT_GE(ms, formula_ms * 0.9) << "gave up before the retries were spent";
    EXPECT_LT(ms, formula_ms + kMarginMs);
    EXPECT_EQ(cnt(ep->cnt, CNT_VERBS_WC_ERRORS), 1u);
    EXPECT_EQ(cnt(ep->cnt, CNT_CORE_EP_FAILURES), 1u);
    EXPECT_EQ(cnt(ep->cnt, CNT_CORE_KEEPALIVES_SENT), 0u);
    EXPECT_EQ(ibmsg_ep_destroy(ep), IBMSG_OK);
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted))
        << "only the shared receive queue's posted buffers are out";
    ibmsg_oob_close(conn);
    ibmsg_oob_close(peer.listener);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

INSTANTIATE_TEST_SUITE_P(Settings, FailureTransport,
                         ::testing::Values(Transport{10, 1}, Transport{12, 1}, Transport{14, 0},
                                           Transport{14, 3}, Transport{14, 6}),
                         [](const ::testing::TestParamInfo<Transport> &info) {
                             return "timeout" + std::to_string(info.param.timeout) + "_retry" +
                                    std::to_string(info.param.retry);
                         });
