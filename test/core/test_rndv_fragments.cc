// The fragmented rendezvous on a real device (Soft-RoCE in the guest): messages pulled in many
// READs (a small core_rndv_chunk so this runs fast), every size class from the eager limit to
// 64 MiB, odd and exactly at fragment boundaries, byte-verified both ways with the registration
// cache on and off, READs and their overlap counted exactly; and a peer killed in the middle of
// a fragmented transfer, seen by the survivor as either side of it.
// Its own executable: 64 MiB each way needs more locked memory than core_unprivileged's
// ulimit -l 65536 grants (test_core_rdma runs there too).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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
#include "rndv_fixture.h"

using rndv_test::fill;
using rndv_test::first_bad;
using rndv_test::Hints;
using rndv_test::kMiB;
using rndv_test::open_context;
using rndv_test::RndvTest;

namespace
{

constexpr size_t kChunk = 16384;

// Cache on (1) or off (0).
struct RndvFragments : RndvTest, ::testing::WithParamInterface<int> {
};

// Sizes above the eager limit: odd ones, and each fragment boundary that changes what the pull
// does (one READ, two, the QP's limit of READs in flight, one past it), ascending.
std::vector<size_t> fragment_sizes(size_t limit, size_t chunk, size_t reads_max, bool big)
{
    std::vector<size_t> s = {limit + 1, limit + 3};
    for (size_t k :
         {size_t(1), size_t(2), reads_max - 1, reads_max, reads_max + 1, 3 * reads_max}) {
        for (size_t z : {k * chunk - 1, k * chunk, k * chunk + 1}) {
            s.push_back(z);
        }
    }
    for (size_t z : {3 * reads_max * chunk + 4097, kMiB, kMiB + 1, 8 * kMiB - 1}) {
        s.push_back(z);
    }
    if (big) {
        s.push_back(64 * kMiB);
    }
    std::sort(s.begin(), s.end());
    s.erase(std::unique(s.begin(), s.end()), s.end());
    s.erase(std::remove_if(s.begin(), s.end(), [limit](size_t z) { return z <= limit; }), s.end());
    return s;
}

} // namespace

// Each message: exactly ceil(len / chunk) READs; the READs in flight reach exactly the smaller of
// the QP's limit and the message's fragments (all posted at once: the watermark, ascending sizes);
// the bytes exact and nothing written past them, both ways.
TEST_P(RndvFragments, EveryBoundaryBothWaysByteExactAndCounted)
{
    const bool cache = GetParam() != 0;
    open({{"core_rndv_chunk", "16384"}, {"verbs_reg_cache", cache ? "1" : "0"}});
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    ASSERT_EQ(a->rndv.chunk, kChunk);
    ASSERT_EQ(b->rndv.reads_max, a->rndv.reads_max);
    const size_t reads_max = a->rndv.reads_max;
    ASSERT_GE(reads_max, 2u) << "the boundaries below assume READs can overlap";
    ASSERT_GE(a->sq_depth, reads_max + 8) << "the send queue must not cap the READs in flight";
    // 64 MiB once each way, with the cache (the emulated guest moves about 50 MB/s).
    const auto sizes = fragment_sizes(limit, kChunk, reads_max, cache);
    const size_t max = sizes.back();
    std::vector<uint8_t> out(max), in(max + 64);
    uint64_t tag = 1, msgs = 0, bytes = 0, most = 0;
    for (size_t s : sizes) {
        const uint64_t frags = (s + kChunk - 1) / kChunk;
        for (int dir = 0; dir < 2; dir++) {
            std::memset(in.data() + s, 0xee, 64);
            const uint64_t posted = cnt(CNT_CORE_RNDV_READS_POSTED);
            transfer(dir == 0 ? a : b, dir == 0 ? b : a, out.data(), s, in.data(), s, tag++);
            if (HasFatalFailure()) {
                return;
            }
            for (size_t i = s; i < s + 64; i++) {
                ASSERT_EQ(in[i], 0xee) << "written past " << s << " bytes at " << i;
            }
            EXPECT_EQ(cnt(CNT_CORE_RNDV_READS_POSTED) - posted, frags) << s << " bytes";
            most = std::max(most, frags);
            EXPECT_EQ(cnt(CNT_CORE_RNDV_READS_OUTSTANDING, CNT_READ_HIGH),
                      std::min<uint64_t>(reads_max, most))
                << s << " bytes";
            EXPECT_EQ(cnt(CNT_CORE_RNDV_READS_OUTSTANDING), 0u) << s << " bytes";
            msgs++;
            bytes += s;
        }
    }
    printf("%zu sizes from %zu B to %zu B both ways in %zu B READs, at most %zu in flight, "
           "cache %s\n",
           sizes.size(), sizes.front(), max, kChunk, reads_max, cache ? "on" : "off");
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_SENT), msgs);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_RECVD), msgs);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_BYTES_RECVD), bytes);
    EXPECT_EQ(cnt(CNT_CORE_EAGER_MSGS_SENT), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REJECTED), 0u);
    EXPECT_EQ(cnt(CNT_CORE_EP_FAILURES), 0u);
    if (cache) {
        // A lookup for the source and one for the destination of every message.
        EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_HITS) + cnt(CNT_VERBS_REG_CACHE_MISSES), 2 * msgs);
        EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_INVALIDATIONS), 0u);
    } else {
        EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_MISSES), 2 * msgs) << "a source and a destination each";
        EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_HITS), 0u);
        EXPECT_EQ(cnt(CNT_VERBS_REG_BYTES), 0u) << "released after every transfer";
    }
}

INSTANTIATE_TEST_SUITE_P(Cache, RndvFragments, ::testing::Values(1, 0),
                         [](const ::testing::TestParamInfo<int> &p) {
                             return std::string(p.param ? "On" : "Off");
                         });

namespace
{

// A dead peer shows quickly (failure.h): ACK timeout 4.096 us * 2^10, one retry, a probe after
// 300 ms of silence. The bound is failure.h's, with the margin for the emulated guest (peer.h).
constexpr int kTimeout = 10, kRetry = 1, kKeepaliveMs = 300;
constexpr double kMarginMs = core_test::kGuestMarginMs;
constexpr size_t kLen = 16 * kMiB, kKillChunk = 65536; // 256 READs

using core_test::since_ms;

double bound_ms()
{
    return core_test::failure_bound_ms(kKeepaliveMs, kRetry, kTimeout, kMarginMs);
}

const Hints kKillHints = {{"core_rndv_chunk", "65536"},
                          {"verbs_timeout", "10"},
                          {"verbs_retry_cnt", "1"},
                          {"core_keepalive_ms", "300"}};

uint64_t reads_posted(ibmsg_context_t ctx)
{
    return cnt_read(ctx->cnt, CNT_CORE_RNDV_READS_POSTED, CNT_READ_VALUE);
}

enum Survivor { kReceiver, kSender };

struct RndvPeerKilled : ::testing::TestWithParam<Survivor> {
    void SetUp() override
    {
#if !IBMSG_HAVE_CORE_COUNTERS
        GTEST_SKIP() << "counters compiled out (IBMSG_CORE_COUNTERS=OFF)";
#endif
    }
};

// The peer: sends kLen bytes (the survivor pulls them) and waits for a FIN that never comes; or
// receives them, says through the pipe once it has posted more READs than the QP keeps in flight
// (some done, most not), and stops progressing: the transfer stays in the middle until the kill.
[[noreturn]] void run_peer(Survivor survivor, uint16_t port, const char *device, int pipe_w)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    if (open_context(&ctx, kKillHints, device) != IBMSG_OK ||
        core_test::join_parent(ctx, port, &ep, &conn) != IBMSG_OK) {
        _exit(10);
    }
    std::vector<uint8_t> buf(kLen);
    ibmsg_request_t req;
    if (survivor == kReceiver) {
        fill(buf.data(), kLen, 5);
        if (ibmsg_tag_isend(ep, buf.data(), kLen, 5, &req) != IBMSG_OK) {
            _exit(11);
        }
        ibmsg_request_wait(&req, nullptr); // killed in here
        _exit(12);
    }
    if (ibmsg_tag_irecv(ctx, ep, buf.data(), kLen, 5, IBMSG_TAG_MASK_EXACT, &req) != IBMSG_OK) {
        _exit(13);
    }
    while (reads_posted(ctx) <= ep->rndv.reads_max) {
        int done = 0;
        if (ibmsg_request_test(&req, &done, nullptr) != IBMSG_OK || done) {
            _exit(14);
        }
    }
    const char c = 'r';
    if (write(pipe_w, &c, 1) != 1) {
        _exit(15);
    }
    for (;;) {
        pause();
    }
}

} // namespace

// A peer killed while a 16 MiB message moves in 256 READs: the survivor's request (the pulling
// receive, or the send whose reader died) completes with IBMSG_ERR_PEER_FAILED within
// failure.h's bound, every READ in flight comes back, and the endpoint and context go away.
TEST_P(RndvPeerKilled, MidTransferSurvivorFailsWithinTheBound)
{
    const Survivor survivor = GetParam();
    ibmsg_context_t probe;
    int ret = open_context(&probe, kKillHints);
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(core_test::kSkip);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    ibmsg_context_destroy(probe);
    const char *dev_a = getenv("IBMSG_VM_DEV_A"), *dev_b = getenv("IBMSG_VM_DEV_B");
    ibmsg_oob_t listener;
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    pid_t pid = core_test::fork_peer(&listener, [&](uint16_t port) {
        close(fds[0]);
        run_peer(survivor, port, dev_b, fds[1]);
    });
    ASSERT_GE(pid, 0);
    close(fds[1]);
    ASSERT_EQ(fcntl(fds[0], F_SETFL, O_NONBLOCK), 0);
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    ASSERT_EQ(open_context(&ctx, kKillHints, dev_a), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &ep), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_accept(listener, 20000, &conn), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_ep_connect(conn, ep, 20000), IBMSG_OK);
    ASSERT_EQ(ep->rndv.chunk, kKillChunk);

    std::vector<uint8_t> buf(kLen);
    ibmsg_request_t req;
    if (survivor == kReceiver) {
        ASSERT_EQ(ibmsg_tag_irecv(ctx, ep, buf.data(), kLen, 5, IBMSG_TAG_MASK_EXACT, &req),
                  IBMSG_OK);
    } else {
        fill(buf.data(), kLen, 5);
        ASSERT_EQ(ibmsg_tag_isend(ep, buf.data(), kLen, 5, &req), IBMSG_OK);
    }
    // Until the transfer is under way: our READs past the QP's limit, or the peer's word.
    auto t_start = std::chrono::steady_clock::now();
    for (;;) {
        int done = 0;
        char c;
        ASSERT_EQ(ibmsg_request_test(&req, &done, nullptr), IBMSG_OK);
        ASSERT_FALSE(done) << "the transfer ended before the kill";
        if (survivor == kReceiver ? reads_posted(ctx) > ep->rndv.reads_max
                                  : read(fds[0], &c, 1) == 1) {
            break;
        }
        ASSERT_LT(since_ms(t_start), 60000.0) << "the transfer never started";
    }
    const uint64_t posted = reads_posted(ctx);
    if (survivor == kReceiver) {
        // Without progress no READ is posted after this: most of the 256 are still to come.
        ASSERT_LT(posted, kLen / kKillChunk);
    }
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
        << "the peer exited by itself, code " << WEXITSTATUS(status);
    auto t_kill = std::chrono::steady_clock::now();

    ibmsg_tag_status_t st{};
    EXPECT_EQ(ibmsg_request_wait(&req, survivor == kReceiver ? &st : nullptr),
              IBMSG_ERR_PEER_FAILED);
    const double detect_ms = since_ms(t_kill);
    EXPECT_LT(detect_ms, bound_ms());
    printf("peer killed mid-transfer (survivor: the %s, %llu of %zu READs posted): request failed "
           "%.1f ms after the kill (bound %.0f ms)\n",
           survivor == kReceiver ? "receiver" : "sender", (unsigned long long)posted,
           kLen / kKillChunk, detect_ms, bound_ms());
    EXPECT_EQ(ibmsg_ep_status(ep), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_EP_FAILURES, CNT_READ_VALUE), 1u);
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_PEER_FAILED_REQS, CNT_READ_VALUE), 1u);
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_RNDV_BYTES_RECVD, CNT_READ_VALUE), 0u);
    if (survivor == kReceiver) {
        EXPECT_EQ(st.error, IBMSG_ERR_PEER_FAILED);
        // READs already answered may complete after the kill and free slots for more, but the
        // first error stops the pull far from its end.
        EXPECT_LT(reads_posted(ctx), kLen / kKillChunk) << "the pull stopped at the failure";
        EXPECT_EQ(ep->rndv.reads_out, 0u) << "every READ in flight came back";
        EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_RNDV_READS_OUTSTANDING, CNT_READ_VALUE), 0u);
    } else {
        EXPECT_EQ(reads_posted(ctx), 0u);
    }
    EXPECT_EQ(ibmsg_ep_destroy(ep), IBMSG_OK);
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_ENDPOINTS, CNT_READ_VALUE), 0u);
    ibmsg_oob_close(conn);
    ibmsg_oob_close(listener);
    close(fds[0]);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

INSTANTIATE_TEST_SUITE_P(Survivor, RndvPeerKilled, ::testing::Values(kReceiver, kSender),
                         [](const ::testing::TestParamInfo<Survivor> &p) {
                             return std::string(p.param == kReceiver ? "Receiver" : "Sender");
                         });
