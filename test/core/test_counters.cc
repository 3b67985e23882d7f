// The core's counters through the tool interface, in the Soft-RoCE guest: exact per endpoint
// (two endpoint pairs of one context counted apart), per context (its endpoints summed) and
// summed over everything; queue levels with watermarks; a stopped handle does not move.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"
#include "core_fixture.h"
#include "ibmsg/ibmsg.h"
#include "ibmsg/tool.h"

namespace
{

using core_test::connect_pair;
using core_test::kSkip;
using core_test::open_context;

const int COUNTER = IBMSG_T_PVAR_CLASS_COUNTER;
const int LEVEL = IBMSG_T_PVAR_CLASS_LEVEL;
const int HWM = IBMSG_T_PVAR_CLASS_HIGHWATERMARK;

struct CoreCounters : ::testing::Test {
    ibmsg_context_t ctx = IBMSG_CONTEXT_NULL;
    ibmsg_ep_t a = IBMSG_EP_NULL, b = IBMSG_EP_NULL, c = IBMSG_EP_NULL, d = IBMSG_EP_NULL;
    ibmsg_t_pvar_session_t s = IBMSG_T_PVAR_SESSION_NULL;
    size_t limit = 0;

    void SetUp() override
    {
        int ret = open_context(&ctx);
        if (ret == IBMSG_ERR_NO_DEVICE) {
            IBMSG_TEST_MISSING(kSkip);
        }
        ASSERT_EQ(ret, IBMSG_OK);
        if (!IBMSG_HAVE_CORE_COUNTERS) {
            GTEST_SKIP() << "built with IBMSG_CORE_COUNTERS=OFF: the core counts nothing";
        }
        for (ibmsg_ep_t *ep : {&a, &b, &c, &d}) {
            ASSERT_EQ(ibmsg_ep_create(ctx, ep), IBMSG_OK);
        }
        ASSERT_EQ(connect_pair(a, b), IBMSG_OK);
        ASSERT_EQ(connect_pair(c, d), IBMSG_OK);
        ibmsg_context_attr_t attr;
        ASSERT_EQ(ibmsg_context_query(ctx, &attr), IBMSG_OK);
        limit = attr.eager_limit;
        int provided;
        ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_OK);
        ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_OK);
    }
    void TearDown() override
    {
        if (s != IBMSG_T_PVAR_SESSION_NULL) {
            EXPECT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_OK);
            EXPECT_EQ(ibmsg_t_finalize(), IBMSG_OK);
        }
        if (ctx != IBMSG_CONTEXT_NULL) {
            EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
        }
    }

    // A started (levels: running) handle of name (class cls) bound to *obj (nullptr: the sum).
    ibmsg_t_pvar_handle_t start(const std::string &name, int cls, void *obj = nullptr)
    {
        ibmsg_t_pvar_handle_t h = core_test::pvar_handle(s, name.c_str(), cls, obj);
        int ret = ibmsg_t_pvar_start(s, h);
        // Levels are continuous: always running, never started.
        EXPECT_EQ(ret, cls == LEVEL ? IBMSG_T_ERR_PVAR_NO_STARTSTOP : IBMSG_OK) << name;
        return h;
    }
    unsigned long long read(ibmsg_t_pvar_handle_t h)
    {
        unsigned long long v = ~0ull;
        EXPECT_EQ(ibmsg_t_pvar_read(s, h, &v), IBMSG_OK);
        return v;
    }
    long long level(ibmsg_t_pvar_handle_t h)
    {
        long long v = -12345;
        EXPECT_EQ(ibmsg_t_pvar_read(s, h, &v), IBMSG_OK);
        return v;
    }

    // Send every size from -> to, each received with its exact tag; returns the bytes.
    uint64_t traffic(ibmsg_ep_t from, ibmsg_ep_t to, const std::vector<size_t> &sizes)
    {
        uint64_t bytes = 0, tag = 100;
        std::vector<uint8_t> out(limit, 0x5a), in(limit);
        for (size_t len : sizes) {
            ibmsg_request_t r;
            ibmsg_tag_status_t st{};
            EXPECT_EQ(ibmsg_tag_irecv(ctx, to, in.data(), len, tag, IBMSG_TAG_MASK_EXACT, &r),
                      IBMSG_OK);
            EXPECT_EQ(ibmsg_tag_send(from, out.data(), len, tag), IBMSG_OK);
            EXPECT_EQ(ibmsg_request_wait(&r, &st), IBMSG_OK);
            EXPECT_EQ(st.length, len);
            bytes += len;
            tag++;
        }
        return bytes;
    }
    uint64_t inline_count(ibmsg_ep_t ep, const std::vector<size_t> &sizes) const
    {
        uint64_t n = 0;
        for (size_t len : sizes) {
            n += (int64_t)len <= ep->inline_max;
        }
        return n;
    }
};

} // namespace

TEST_F(CoreCounters, ExactPerEndpointPerContextAndSummed)
{
    auto sent_a = start("core_eager_msgs_sent_ep", COUNTER, &a);
    auto sent_b = start("core_eager_msgs_sent_ep", COUNTER, &b);
    auto sent_c = start("core_eager_msgs_sent_ep", COUNTER, &c);
    auto recvd_b = start("core_eager_msgs_recvd_ep", COUNTER, &b);
    auto recvd_d = start("core_eager_msgs_recvd_ep", COUNTER, &d);
    auto bytes_a = start("core_eager_bytes_sent_ep", COUNTER, &a);
    auto bytes_d = start("core_eager_bytes_recvd_ep", COUNTER, &d);
    auto inline_a = start("core_inline_msgs_sent_ep", COUNTER, &a);
    auto inline_c = start("core_inline_msgs_sent_ep", COUNTER, &c);
    auto sent_ctx = start("core_eager_msgs_sent_ctx", COUNTER, &ctx);
    auto recvd_ctx = start("core_eager_msgs_recvd_ctx", COUNTER, &ctx);
    auto bytes_ctx = start("core_eager_bytes_recvd_ctx", COUNTER, &ctx);
    auto sent_all = start("core_eager_msgs_sent", COUNTER);
    auto polls = start("verbs_cq_polls_ctx", COUNTER, &ctx);
    auto empty = start("verbs_cq_polls_empty_ctx", COUNTER, &ctx);
    auto comps = start("verbs_completions_ctx", COUNTER, &ctx);
    auto rejected = start("core_wire_rejected_ctx", COUNTER, &ctx);
    auto rnr = start("verbs_rnr_events", COUNTER);

    const std::vector<size_t> s1 = {0, 1, 8, 100, 1000, 4096, limit};
    const std::vector<size_t> s2 = {0, 0, 7, 64, limit - 1, 3, 2, 1, 0};
    uint64_t b1 = traffic(a, b, s1);
    uint64_t b2 = traffic(c, d, s2);
    const uint64_t n1 = s1.size(), n2 = s2.size();

    EXPECT_EQ(read(sent_a), n1);
    EXPECT_EQ(read(sent_b), 0u) << "b only received";
    EXPECT_EQ(read(sent_c), n2);
    EXPECT_EQ(read(recvd_b), n1);
    EXPECT_EQ(read(recvd_d), n2);
    EXPECT_EQ(read(bytes_a), b1);
    EXPECT_EQ(read(bytes_d), b2);
    EXPECT_EQ(read(inline_a), inline_count(a, s1));
    EXPECT_EQ(read(inline_c), inline_count(c, s2));
    EXPECT_EQ(read(sent_ctx), n1 + n2);
    EXPECT_EQ(read(recvd_ctx), n1 + n2);
    EXPECT_EQ(read(bytes_ctx), b1 + b2);
    EXPECT_EQ(read(sent_all), n1 + n2) << "no other context runs in this process";
    EXPECT_GT(read(comps), 0u);
    EXPECT_GE(read(polls), read(empty));
    EXPECT_EQ(read(rejected), 0u);
    EXPECT_EQ(read(rnr), 0u);

    // A stopped handle does not move while traffic runs; the running ones go on.
    ASSERT_EQ(ibmsg_t_pvar_stop(s, sent_ctx), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_pvar_stop(s, sent_a), IBMSG_OK);
    traffic(a, b, s1);
    traffic(c, d, s2);
    EXPECT_EQ(read(sent_ctx), n1 + n2);
    EXPECT_EQ(read(sent_a), n1);
    EXPECT_EQ(read(sent_c), 2 * n2);
    EXPECT_EQ(read(recvd_ctx), 2 * (n1 + n2));
    EXPECT_EQ(read(sent_all), 2 * (n1 + n2));

    // Destroying an endpoint pair: its counts stay in the context's and in the sum.
    ASSERT_EQ(ibmsg_ep_destroy(c), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_destroy(d), IBMSG_OK);
    c = d = IBMSG_EP_NULL;
    EXPECT_EQ(read(recvd_ctx), 2 * (n1 + n2));
    EXPECT_EQ(read(sent_all), 2 * (n1 + n2));
    EXPECT_EQ(read(recvd_d), 2 * n2) << "a handle keeps a destroyed endpoint's final count";
}

// core_progress_time counts the calls made while one of its handles runs, and only those: the
// caller tests the timer and takes the timed call or the plain one; both poll and count alike.
TEST_F(CoreCounters, ProgressTimeCountsTheCallsMadeWhileItRuns)
{
    const int TIMER = IBMSG_T_PVAR_CLASS_TIMER;
    const int calls = 200;
    auto polls = start("verbs_cq_polls_ctx", COUNTER, &ctx);
    auto empty = start("verbs_cq_polls_empty_ctx", COUNTER, &ctx);
    // Quiet first: the connections' credit returns and anything else in flight are taken.
    for (int idle = 0; idle < 20;) {
        int events = -1;
        ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
        idle = events == 0 ? idle + 1 : 0;
    }
    auto timer = start("core_progress_time_ctx", TIMER, &ctx);
    unsigned long long p0 = read(polls), e0 = read(empty);

    uint64_t t0 = cnt_tick_monotonic_ns();
    for (int i = 0; i < calls; i++) {
        int events = -1;
        ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
        ASSERT_EQ(events, 0);
    }
    uint64_t t1 = cnt_tick_monotonic_ns();
    unsigned long long timed = read(timer);
    // Each call found nothing in either queue: two polls, both empty, timed or not.
    EXPECT_EQ(read(polls) - p0, 2u * calls);
    EXPECT_EQ(read(empty) - e0, 2u * calls);
    EXPECT_GT(timed, 0u) << "the calls made while the handle ran were not timed";
    EXPECT_LE(timed, (t1 - t0) * 1005 / 1000) << "more time than the calls took";

    ASSERT_EQ(ibmsg_t_pvar_stop(s, timer), IBMSG_OK);
    for (int i = 0; i < calls; i++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    EXPECT_EQ(read(timer), timed) << "a stopped handle's timer moved";
    EXPECT_EQ(read(polls) - p0, 4u * calls) << "the untimed calls poll as the timed ones";
    EXPECT_EQ(read(empty) - e0, 4u * calls);
}

// The timer's state reaches each context through its counter block: a context created while a
// handle of core_progress_time runs is timed from its first call, with no start of its own
// (the gate was already open: its handle below only counts one more start), and one created
// after the last stop is not.
TEST_F(CoreCounters, ProgressTimeReachesAContextCreatedWhileItRuns)
{
    const int TIMER = IBMSG_T_PVAR_CLASS_TIMER;
    auto timer = start("core_progress_time_ctx", TIMER, &ctx);
    ibmsg_context_t late = IBMSG_CONTEXT_NULL;
    ASSERT_EQ(open_context(&late), IBMSG_OK);
    auto late_timer = start("core_progress_time_ctx", TIMER, &late);
    ASSERT_EQ(ibmsg_t_pvar_stop(s, timer), IBMSG_OK);
    for (int i = 0; i < 100; i++) {
        ASSERT_EQ(ibmsg_context_progress(late, nullptr), IBMSG_OK);
    }
    EXPECT_GT(read(late_timer), 0u) << "the calls of a context created while the timer ran";
    ASSERT_EQ(ibmsg_t_pvar_stop(s, late_timer), IBMSG_OK);
    unsigned long long timed = read(late_timer);
    ASSERT_EQ(ibmsg_t_pvar_handle_free(s, &late_timer), IBMSG_OK);
    ASSERT_EQ(ibmsg_context_destroy(late), IBMSG_OK);

    EXPECT_GT(timed, 0u);

    // Created after the last stop, and one started and stopped since: its calls add no time
    // (read from its block: a stopped handle would not show it).
    ASSERT_EQ(open_context(&late), IBMSG_OK);
    late_timer = start("core_progress_time_ctx", TIMER, &late);
    ASSERT_EQ(ibmsg_t_pvar_stop(s, late_timer), IBMSG_OK);
    uint64_t before = cnt_read(late->cnt, CNT_CORE_PROGRESS_TIME, CNT_READ_VALUE);
    for (int i = 0; i < 100; i++) {
        ASSERT_EQ(ibmsg_context_progress(late, nullptr), IBMSG_OK);
    }
    EXPECT_EQ(cnt_read(late->cnt, CNT_CORE_PROGRESS_TIME, CNT_READ_VALUE), before)
        << "a context timed with no handle running";
    ASSERT_EQ(ibmsg_t_pvar_handle_free(s, &late_timer), IBMSG_OK);
    ASSERT_EQ(ibmsg_context_destroy(late), IBMSG_OK);
}

TEST_F(CoreCounters, QueueLevelsAndWatermarksPerContext)
{
    auto unexp = start("core_unexpected_recvq_length_ctx", LEVEL, &ctx);
    auto unexp_hwm = start("core_unexpected_recvq_length_hwm_ctx", HWM, &ctx);
    auto posted = start("core_posted_recvq_length_ctx", LEVEL, &ctx);
    auto posted_hwm = start("core_posted_recvq_length_hwm_ctx", HWM, &ctx);
    auto unexp_msgs = start("core_unexpected_msgs_ctx", COUNTER, &ctx);
    auto pool = start("verbs_buf_pool_in_use_ctx", LEVEL, &ctx);
    const long long pool0 = level(pool);
    EXPECT_GT(pool0, 0) << "every endpoint's receive buffers are posted";

    const int n = 3;
    uint64_t v = 0;
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_tag_send(a, &v, sizeof(v), 50 + i), IBMSG_OK);
    }
    for (int spin = 0; spin < 1000000 && level(unexp) < n; spin++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    EXPECT_EQ(level(unexp), n);
    EXPECT_EQ(level(unexp_hwm), n);
    EXPECT_EQ(read(unexp_msgs), uint64_t(n));
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_tag_recv(ctx, b, &v, sizeof(v), 50 + i, IBMSG_TAG_MASK_EXACT, nullptr),
                  IBMSG_OK);
    }
    EXPECT_EQ(level(unexp), 0);
    EXPECT_EQ(level(unexp_hwm), n);

    std::vector<ibmsg_request_t> reqs(4);
    std::vector<uint64_t> in(4);
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ(ibmsg_tag_irecv(ctx, d, &in[i], 8, 70 + i, IBMSG_TAG_MASK_EXACT, &reqs[i]),
                  IBMSG_OK);
    }
    EXPECT_EQ(level(posted), 4);
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ(ibmsg_tag_send(c, &v, sizeof(v), 70 + i), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&reqs[i], nullptr), IBMSG_OK);
    }
    EXPECT_EQ(level(posted), 0);
    EXPECT_EQ(level(posted_hwm), 4);
    EXPECT_EQ(read(unexp_msgs), uint64_t(n)) << "the posted ones were expected";
}
