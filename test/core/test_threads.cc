// Different contexts from different threads (ibmsg.h: "Different contexts are independent and
// may be used by different threads at once"): threads with a context each, all started
// together, every message verified byte by byte and counted exactly, while another thread reads
// the sums through the tool interface. Labels rdma and tsan: a ThreadSanitizer run in the guest
// selects it (-L rdma -L tsan in build/tsan).
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"
#include "core_fixture.h"
#include "ibmsg/ibmsg.h"
#include "ibmsg/tool.h"

namespace
{

constexpr int kThreads = 4;
constexpr int kRounds = 40; // of every size below: 240 messages per thread

uint8_t pattern(uint64_t seed, size_t i)
{
    return uint8_t(seed * 131 + i * 7 + 1);
}

// The sizes of one round: empty, inline, a bounce buffer, the largest eager, the smallest
// rendezvous and 1 MiB.
std::vector<size_t> sizes(size_t limit)
{
    return {0, 8, 300, limit - 24, limit + 1, size_t(1) << 20};
}

struct Result {
    std::string error; // empty: every message arrived intact and every count was exact
};

// One thread's work on its own context: a pair a <-> b, each message sent a -> b and verified.
void run(int t, std::atomic<int> *ready, Result *res)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t a, b;
    if (core_test::open_context(&ctx) != IBMSG_OK) {
        res->error = "no context";
        ready->fetch_add(1);
        return;
    }
    ibmsg_context_attr_t attr;
    if (ibmsg_ep_create(ctx, &a) != IBMSG_OK || ibmsg_ep_create(ctx, &b) != IBMSG_OK ||
        core_test::connect_pair(a, b) != IBMSG_OK || ibmsg_context_query(ctx, &attr) != IBMSG_OK) {
        res->error = "no connected pair";
    }
    // All threads start their traffic together, so it overlaps.
    for (ready->fetch_add(1); ready->load() < kThreads;) {
        std::this_thread::yield();
    }
    const auto sz = sizes(attr.eager_limit);
    std::vector<uint8_t> out(sz.back()), in(sz.back() + 1);
    uint64_t eager = 0, rndv = 0, seq = 0;
    for (int round = 0; round < kRounds && res->error.empty(); round++) {
        for (size_t len : sz) {
            uint64_t tag = uint64_t(t) << 32 | seq++;
            for (size_t i = 0; i < len; i++) {
                out[i] = pattern(tag, i);
            }
            ibmsg_request_t r;
            ibmsg_tag_status_t st{};
            if (ibmsg_tag_irecv(ctx, b, in.data(), in.size(), tag, IBMSG_TAG_MASK_EXACT, &r) !=
                    IBMSG_OK ||
                ibmsg_tag_send(a, out.data(), len, tag) != IBMSG_OK ||
                ibmsg_request_wait(&r, &st) != IBMSG_OK) {
                res->error = "transfer of " + std::to_string(len) + " bytes failed";
                break;
            }
            if (st.length != len || std::memcmp(in.data(), out.data(), len) != 0) {
                res->error = "message " + std::to_string(seq) + " corrupted";
                break;
            }
            (len > attr.eager_limit ? rndv : eager)++;
        }
    }
    if (res->error.empty()) {
        uint64_t e = cnt_read(ctx->cnt, CNT_CORE_EAGER_MSGS_SENT, CNT_READ_VALUE);
        uint64_t r = cnt_read(ctx->cnt, CNT_CORE_RNDV_MSGS_SENT, CNT_READ_VALUE);
        uint64_t rr = cnt_read(ctx->cnt, CNT_CORE_RNDV_MSGS_RECVD, CNT_READ_VALUE);
        if (e != eager || r != rndv || rr != rndv) {
            res->error = "counts: eager " + std::to_string(e) + " of " + std::to_string(eager) +
                         ", rendezvous " + std::to_string(r) + "/" + std::to_string(rr) + " of " +
                         std::to_string(rndv);
        }
    }
    ibmsg_ep_destroy(a);
    ibmsg_ep_destroy(b);
    if (ibmsg_context_destroy(ctx) != IBMSG_OK && res->error.empty()) {
        res->error = "context destroy failed";
    }
}

} // namespace

TEST(Threads, ContextPerThreadAllTrafficVerified)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    int provided;
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_MULTIPLE, &provided), IBMSG_T_SUCCESS);
    ibmsg_t_pvar_session_t s;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_T_SUCCESS);
    ibmsg_t_pvar_handle_t h =
        core_test::pvar_handle(s, "core_eager_msgs_sent", IBMSG_T_PVAR_CLASS_COUNTER, nullptr);
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);

    std::atomic<int> ready{0};
    std::atomic<bool> done{false};
    std::atomic<int> backwards{0}, reads{0};
    // The tool reader: the sum over every thread's shards never goes back.
    std::thread reader([&] {
        unsigned long long last = 0, v = 0;
        while (!done.load()) {
            if (ibmsg_t_pvar_read(s, h, &v) != IBMSG_T_SUCCESS || v < last) {
                backwards++;
            }
            last = v;
            reads++;
        }
    });
    std::vector<Result> res(kThreads);
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
        threads.emplace_back(run, t, &ready, &res[t]);
    }
    for (auto &th : threads) {
        th.join();
    }
    done = true;
    reader.join();
    for (int t = 0; t < kThreads; t++) {
        EXPECT_EQ(res[t].error, "") << "thread " << t;
    }
    EXPECT_EQ(backwards.load(), 0);
    EXPECT_GT(reads.load(), 0);
    unsigned long long total = 0;
    ASSERT_EQ(ibmsg_t_pvar_read(s, h, &total), IBMSG_T_SUCCESS);
    EXPECT_EQ(total, uint64_t(kThreads) * kRounds * 4) << "4 eager sizes per round";
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
}
