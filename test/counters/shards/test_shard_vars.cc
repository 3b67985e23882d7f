// The counter shards as performance variables: registration from the table, session arithmetic
// over raw shard totals (start, stop, reset, readreset), bindings to threads and blocks,
// watermark and timer handles.
#include "counters/shards/shard.h"

#include <ibmsg/tool.h>

#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <string>
#include <thread>
#include <vector>

namespace
{

class ShardVars : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        int provided;
        ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_MULTIPLE, &provided), IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_pvar_session_create(&s_), IBMSG_T_SUCCESS);
    }
    void TearDown() override
    {
        EXPECT_EQ(ibmsg_t_pvar_session_free(&s_), IBMSG_T_SUCCESS);
        EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    }

    static int index_of(const std::string &name, int var_class)
    {
        int index = -1;
        EXPECT_EQ(ibmsg_t_pvar_get_index(name.c_str(), var_class, &index), IBMSG_T_SUCCESS) << name;
        return index;
    }

    ibmsg_t_pvar_handle_t alloc(ibmsg_t_pvar_session_t s, const std::string &name, int var_class,
                                void *obj_handle = nullptr)
    {
        ibmsg_t_pvar_handle_t h = IBMSG_T_PVAR_HANDLE_NULL;
        int count = 0;
        EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, index_of(name, var_class), obj_handle, &h, &count),
                  IBMSG_T_SUCCESS)
            << name;
        EXPECT_EQ(count, 1);
        return h;
    }

    static unsigned long long read(ibmsg_t_pvar_session_t s, ibmsg_t_pvar_handle_t h)
    {
        unsigned long long v = ~0ull;
        EXPECT_EQ(ibmsg_t_pvar_read(s, h, &v), IBMSG_T_SUCCESS);
        return v;
    }

    static long long read_level(ibmsg_t_pvar_session_t s, ibmsg_t_pvar_handle_t h)
    {
        long long v = -12345;
        EXPECT_EQ(ibmsg_t_pvar_read(s, h, &v), IBMSG_T_SUCCESS);
        return v;
    }

    ibmsg_t_pvar_session_t s_ = IBMSG_T_PVAR_SESSION_NULL;
};

const int COUNTER = IBMSG_T_PVAR_CLASS_COUNTER;
const int LEVEL = IBMSG_T_PVAR_CLASS_LEVEL;
const int HWM = IBMSG_T_PVAR_CLASS_HIGHWATERMARK;
const int LWM = IBMSG_T_PVAR_CLASS_LOWWATERMARK;
const int TIMER = IBMSG_T_PVAR_CLASS_TIMER;

} // namespace

TEST_F(ShardVars, EveryTableEntryIsRegistered)
{
    struct expect {
        std::string suffix;
        int var_class;
        ibmsg_t_datatype_t dt;
        int readonly, continuous, atomic;
    };
    int checked = 0;
    auto check = [&](const std::string &name, int bind, const std::string &category,
                     const std::vector<expect> &classes) {
        for (int b : {(int)IBMSG_T_BIND_NO_OBJECT, bind}) {
            const char *sfx = b == IBMSG_T_BIND_THREAD     ? "_thread"
                              : b == IBMSG_T_BIND_ENDPOINT ? "_ep"
                              : b == IBMSG_T_BIND_CONTEXT  ? "_ctx"
                                                           : "";
            for (const expect &e : classes) {
                std::string full = name + e.suffix + sfx;
                int index = index_of(full, e.var_class);
                int vclass, got_bind, ro, cont, at;
                ibmsg_t_datatype_t dt;
                ASSERT_EQ(ibmsg_t_pvar_get_info(index, nullptr, nullptr, nullptr, &vclass, &dt,
                                                nullptr, nullptr, nullptr, &got_bind, &ro, &cont,
                                                &at),
                          IBMSG_T_SUCCESS);
                EXPECT_EQ(vclass, e.var_class) << full;
                EXPECT_EQ(dt, e.dt) << full;
                EXPECT_EQ(got_bind, b) << full;
                EXPECT_EQ(ro, e.readonly) << full;
                EXPECT_EQ(cont, e.continuous) << full;
                EXPECT_EQ(at, e.atomic) << full;
                // In its category.
                int cat = -1, num = 0;
                ASSERT_EQ(ibmsg_t_category_get_index(category.c_str(), &cat), IBMSG_T_SUCCESS);
                ASSERT_EQ(ibmsg_t_category_get_info(cat, nullptr, nullptr, nullptr, nullptr,
                                                    nullptr, &num, nullptr),
                          IBMSG_T_SUCCESS);
                std::vector<int> members(num);
                ASSERT_EQ(ibmsg_t_category_get_pvars(cat, num, members.data()), IBMSG_T_SUCCESS);
                EXPECT_NE(std::find(members.begin(), members.end(), index), members.end()) << full;
                checked++;
            }
        }
    };
    const ibmsg_t_datatype_t ull = IBMSG_T_UNSIGNED_LONG_LONG, ll = IBMSG_T_COUNT;
#define CHECK_KIND_COUNTER            \
    {                                 \
        {                             \
            "", COUNTER, ull, 0, 0, 1 \
        }                             \
    }
#define CHECK_KIND_TIMER            \
    {                               \
        {                           \
            "", TIMER, ull, 0, 0, 1 \
        }                           \
    }
#define CHECK_KIND_LEVEL           \
    {                              \
        {                          \
            "", LEVEL, ll, 1, 1, 0 \
        }                          \
    }
#define CHECK_KIND_LEVEL_WM                                   \
    {                                                         \
        {"", LEVEL, ll, 1, 1, 0}, {"_hwm", HWM, ll, 1, 0, 0}, \
        {                                                     \
            "_lwm", LWM, ll, 1, 0, 0                          \
        }                                                     \
    }
#define CHECK_ENTRY(id, name, kind, owner, verbosity, category, desc) \
    check(name, IBMSG_T_BIND_##owner, category, CHECK_KIND_##kind);
    CNT_COUNTER_TABLE(CHECK_ENTRY)
#undef CHECK_ENTRY
    EXPECT_GT(checked, 2 * CNT_COUNTER_COUNT);

    // The category tree: ibmsg -> core -> eager, matching; ibmsg -> verbs.
    int core, eager, ibmsg, num = 0;
    ASSERT_EQ(ibmsg_t_category_get_index("core", &core), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_get_index("eager", &eager), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_get_index("ibmsg", &ibmsg), IBMSG_T_SUCCESS);
    int parents[4];
    ASSERT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_CATEGORY, eager, 1, 4, parents, &num),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(num, 2);
    EXPECT_EQ(parents[0], core);
    EXPECT_EQ(parents[1], ibmsg);
}

// N threads x M updates through a started handle; half the threads exit before the read.
TEST_F(ShardVars, CounterHandleExactAcrossThreads)
{
    ibmsg_t_pvar_handle_t h = alloc(s_, "core_match_attempts", COUNTER);
    EXPECT_EQ(read(s_, h), 0u); // not started yet: 0
    ASSERT_EQ(ibmsg_t_pvar_start(s_, h), IBMSG_T_SUCCESS);
    const int threads = 6;
    const unsigned long long m = 100000;
    std::atomic<int> done{0};
    std::atomic<bool> release{false};
    std::vector<std::thread> ths;
    for (int t = 0; t < threads; t++) {
        ths.emplace_back([&, t] {
            cnt_shard_t *shard = cnt_shard_get();
            for (unsigned long long i = 0; i < m; i++) {
                cnt_inc(shard, CNT_CORE_MATCH_ATTEMPTS);
            }
            done++;
            if (t % 2 == 0) {
                while (!release.load()) {
                    std::this_thread::yield();
                }
            }
        });
    }
    while (done.load() < threads) {
        std::this_thread::yield();
    }
    for (int t = 1; t < threads; t += 2) {
        ths[t].join();
    }
    EXPECT_EQ(read(s_, h), threads * m);
    release = true;
    for (int t = 0; t < threads; t += 2) {
        ths[t].join();
    }
    EXPECT_EQ(read(s_, h), threads * m);
}

// A stopped handle does not move while writers run; started again it goes on from there.
TEST_F(ShardVars, StoppedHandleDoesNotMove)
{
    ibmsg_t_pvar_handle_t h = alloc(s_, "verbs_cq_polls", COUNTER);
    ASSERT_EQ(ibmsg_t_pvar_start(s_, h), IBMSG_T_SUCCESS);
    cnt_shard_t *me = cnt_shard_get();
    cnt_add(me, CNT_VERBS_CQ_POLLS, 10);
    ASSERT_EQ(ibmsg_t_pvar_stop(s_, h), IBMSG_T_SUCCESS);
    std::atomic<bool> stop{false};
    std::thread writer([&] {
        cnt_shard_t *shard = cnt_shard_get();
        while (!stop.load()) {
            cnt_inc(shard, CNT_VERBS_CQ_POLLS);
        }
    });
    for (int i = 0; i < 1000; i++) {
        ASSERT_EQ(read(s_, h), 10u);
    }
    stop = true;
    writer.join();
    EXPECT_EQ(read(s_, h), 10u);
    ASSERT_EQ(ibmsg_t_pvar_start(s_, h), IBMSG_T_SUCCESS);
    cnt_add(me, CNT_VERBS_CQ_POLLS, 5);
    EXPECT_EQ(read(s_, h), 15u);
}

// reset and readreset act on one handle only: not on the shards (the writers' counts), not on a
// handle of another session, while writers keep writing.
TEST_F(ShardVars, ResetAndReadresetDisturbNeitherWritersNorOtherSessions)
{
    const cnt_id_t id = CNT_CORE_EAGER_MSGS_RECVD;
    ibmsg_t_pvar_session_t s2;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s2), IBMSG_T_SUCCESS);
    ibmsg_t_pvar_handle_t h1 = alloc(s_, "core_eager_msgs_recvd", COUNTER);
    ibmsg_t_pvar_handle_t h2 = alloc(s2, "core_eager_msgs_recvd", COUNTER);
    uint64_t raw0 = cnt_read(nullptr, id, CNT_READ_VALUE);
    ASSERT_EQ(ibmsg_t_pvar_start(s_, h1), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_start(s2, h2), IBMSG_T_SUCCESS);

    // Exact, step by step.
    cnt_shard_t *me = cnt_shard_get();
    cnt_add(me, id, 100);
    ASSERT_EQ(ibmsg_t_pvar_reset(s_, h1), IBMSG_T_SUCCESS);
    EXPECT_EQ(read(s_, h1), 0u);
    cnt_add(me, id, 50);
    EXPECT_EQ(read(s_, h1), 50u);
    EXPECT_EQ(read(s2, h2), 150u);
    unsigned long long v = 0;
    ASSERT_EQ(ibmsg_t_pvar_readreset(s_, h1, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, 50u);
    EXPECT_EQ(read(s_, h1), 0u);
    cnt_add(me, id, 25);
    EXPECT_EQ(read(s_, h1), 25u);
    EXPECT_EQ(read(s2, h2), 175u);
    EXPECT_EQ(cnt_read(nullptr, id, CNT_READ_VALUE), raw0 + 175); // shards untouched

    // With writers running: every readreset's values plus the last read add up to h2's total.
    const int writers = 2;
    const uint64_t per = 200000;
    std::vector<std::thread> ths;
    for (int t = 0; t < writers; t++) {
        ths.emplace_back([&] {
            cnt_shard_t *shard = cnt_shard_get();
            for (uint64_t i = 0; i < per; i++) {
                cnt_inc(shard, id);
            }
        });
    }
    unsigned long long drained = 0;
    for (int i = 0; i < 200; i++) {
        ASSERT_EQ(ibmsg_t_pvar_readreset(s_, h1, &v), IBMSG_T_SUCCESS);
        drained += v;
    }
    for (auto &th : ths) {
        th.join();
    }
    ASSERT_EQ(ibmsg_t_pvar_readreset(s_, h1, &v), IBMSG_T_SUCCESS);
    drained += v;
    EXPECT_EQ(drained, 25 + writers * per); // nothing lost, nothing counted twice
    EXPECT_EQ(read(s2, h2), 175 + writers * per);
    EXPECT_EQ(cnt_read(nullptr, id, CNT_READ_VALUE), raw0 + 175 + writers * per);
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s2), IBMSG_T_SUCCESS);
}

// A variable bound to a thread reads that thread's shard only, also after the thread exits.
TEST_F(ShardVars, BoundToAThread)
{
    const cnt_id_t id = CNT_TOOL_HANDLE_ALLOCS;
    ibmsg_t_thread_t other = nullptr;
    std::atomic<int> phase{0};
    std::thread th([&] {
        ASSERT_EQ(ibmsg_t_thread_self(&other), IBMSG_OK);
        phase = 1;
        while (phase.load() != 2) {
            std::this_thread::yield();
        }
        cnt_add(cnt_shard_get(), id, 7);
    });
    while (phase.load() != 1) {
        std::this_thread::yield();
    }
    ibmsg_t_pvar_handle_t h = alloc(s_, "tool_handle_allocs_thread", COUNTER, &other);
    ibmsg_t_pvar_handle_t all = alloc(s_, "tool_handle_allocs", COUNTER);
    ASSERT_EQ(ibmsg_t_pvar_start(s_, h), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_start(s_, all), IBMSG_T_SUCCESS);
    cnt_add(cnt_shard_get(), id, 1000); // this thread: not in h
    phase = 2;
    th.join(); // exits with the handle bound
    EXPECT_EQ(read(s_, h), 7u);
    EXPECT_EQ(read(s_, all), 1007u);

    // The level of one thread, and garbage objects.
    ibmsg_t_thread_t self;
    ASSERT_EQ(ibmsg_t_thread_self(&self), IBMSG_OK);
    ibmsg_t_pvar_handle_t lvl = alloc(s_, "tool_handles_alive_thread", LEVEL, &self);
    long long mine = read_level(s_, lvl);
    ibmsg_t_pvar_handle_t extra = alloc(s_, "core_match_attempts", COUNTER);
    EXPECT_EQ(read_level(s_, lvl), mine + 1); // this thread allocated one more handle
    ASSERT_EQ(ibmsg_t_pvar_handle_free(s_, &extra), IBMSG_T_SUCCESS);
    EXPECT_EQ(read_level(s_, lvl), mine);

    int junk = 0, count = 0;
    void *bogus = &junk;
    ibmsg_t_pvar_handle_t bad;
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s_, index_of("tool_handle_allocs_thread", COUNTER), &bogus,
                                        &bad, &count),
              IBMSG_T_ERR_INVALID_HANDLE);
}

// A variable bound to an object reads the object's block; destroying the object keeps its
// counts in the sums.
TEST_F(ShardVars, BoundToABlock)
{
    struct fake_endpoint {
        int x;
    } ep_obj{}, other_obj{};
    void *ep = &ep_obj, *other = &other_obj;
    cnt_shard_t *block = nullptr;
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_ENDPOINT, ep, &block), IBMSG_OK);
    int count = 0;
    ibmsg_t_pvar_handle_t bad;
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s_, index_of("core_eager_bytes_sent_ep", COUNTER), &other,
                                        &bad, &count),
              IBMSG_T_ERR_INVALID_HANDLE);
    // The context view does not serve endpoint blocks.
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s_, index_of("core_posted_recvq_length_ctx", LEVEL), &ep,
                                        &bad, &count),
              IBMSG_T_ERR_INVALID_HANDLE);

    ibmsg_t_pvar_handle_t h = alloc(s_, "core_eager_bytes_sent_ep", COUNTER, &ep);
    ibmsg_t_pvar_handle_t all = alloc(s_, "core_eager_bytes_sent", COUNTER);
    ASSERT_EQ(ibmsg_t_pvar_start(s_, h), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_start(s_, all), IBMSG_T_SUCCESS);
    cnt_add(block, CNT_CORE_EAGER_BYTES_SENT, 65536);
    cnt_add(cnt_shard_get(), CNT_CORE_EAGER_BYTES_SENT, 3); // not the endpoint's
    EXPECT_EQ(read(s_, h), 65536u);
    EXPECT_EQ(read(s_, all), 65539u);
    cnt_block_destroy(block);
    EXPECT_EQ(read(s_, h), 65536u);   // kept while bound
    EXPECT_EQ(read(s_, all), 65539u); // retired, not lost
    ASSERT_EQ(ibmsg_t_pvar_handle_free(s_, &h), IBMSG_T_SUCCESS);
    EXPECT_EQ(cnt_shard_lookup(IBMSG_T_BIND_ENDPOINT, ep, 0), nullptr); // recycled now
}

// Watermark handles: exact on a block; start from the current level; the NO_OBJECT one is the
// documented upper bound.
TEST_F(ShardVars, WatermarkHandles)
{
    int own_a, own_b;
    void *a_obj = &own_a, *b_obj = &own_b;
    cnt_shard_t *a = nullptr, *b = nullptr;
    const cnt_id_t id = CNT_CORE_POSTED_RECVQ;
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, a_obj, &a), IBMSG_OK);
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, b_obj, &b), IBMSG_OK);
    cnt_level_add(a, id, 3); // before any handle: not part of the marks below

    ibmsg_t_pvar_handle_t ha = alloc(s_, "core_posted_recvq_length_hwm_ctx", HWM, &a_obj);
    ibmsg_t_pvar_handle_t la = alloc(s_, "core_posted_recvq_length_lwm_ctx", LWM, &a_obj);
    ibmsg_t_pvar_handle_t hall = alloc(s_, "core_posted_recvq_length_hwm", HWM);
    ibmsg_t_pvar_handle_t lvl = alloc(s_, "core_posted_recvq_length", LEVEL);
    long long base = read_level(s_, lvl);
    cnt_level_add(a, id, 5); // 8 before the start: forgotten
    cnt_level_add(a, id, -5);
    ASSERT_EQ(ibmsg_t_pvar_start(s_, IBMSG_T_PVAR_ALL_HANDLES), IBMSG_T_SUCCESS);
    EXPECT_EQ(read_level(s_, ha), 3);
    EXPECT_EQ(read_level(s_, la), 3);
    EXPECT_EQ(read_level(s_, hall), base);
    cnt_level_add(a, id, 4);  // a: 7
    cnt_level_add(a, id, -6); // a: 1
    cnt_level_add(b, id, 6);  // b: 6 while a is 1: true max of the sum is base - 3 + 7
    cnt_level_add(b, id, -6);
    EXPECT_EQ(read_level(s_, ha), 7);
    EXPECT_EQ(read_level(s_, la), 1);
    long long true_max = base + 4;
    long long got = read_level(s_, hall);
    EXPECT_GE(got, true_max);
    EXPECT_EQ(got, base + 4 + 6); // per-shard maxima summed: the documented bound
    EXPECT_EQ(read_level(s_, lvl), base - 2);

    // Stopped: frozen while the level moves.
    ASSERT_EQ(ibmsg_t_pvar_stop(s_, ha), IBMSG_T_SUCCESS);
    cnt_level_add(a, id, 20);
    EXPECT_EQ(read_level(s_, ha), 7);
    cnt_level_add(a, id, -20);
    // Read-only: a watermark cannot be reset (the shards' marks cannot be lowered from here).
    EXPECT_EQ(ibmsg_t_pvar_reset(s_, la), IBMSG_T_ERR_PVAR_NO_WRITE);

    ASSERT_EQ(ibmsg_t_pvar_stop(s_, IBMSG_T_PVAR_ALL_HANDLES), IBMSG_T_SUCCESS);
    cnt_level_add(a, id, -1);
    cnt_level_add(b, id, 0);
    cnt_block_destroy(a);
    cnt_block_destroy(b);
    ASSERT_EQ(ibmsg_t_pvar_handle_free(s_, &ha), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_free(s_, &la), IBMSG_T_SUCCESS);
}

// A timer runs only while one of its handles is started; it measures what CLOCK_MONOTONIC does.
TEST_F(ShardVars, TimerHandle)
{
    const cnt_id_t id = CNT_CORE_PROGRESS_TIME;
    ibmsg_t_pvar_handle_t h = alloc(s_, "core_progress_time", TIMER);
    EXPECT_EQ(cnt_timer_start(id), 0u); // allocated, not started: off
    ASSERT_EQ(ibmsg_t_pvar_start(s_, h), IBMSG_T_SUCCESS);
    cnt_shard_t *me = cnt_shard_get();
    // Monotonic reads bracket each end of the region (inner <= timed <= outer), so a wait for
    // a CPU in between moves both; the 0.5% is the tick calibration's.
    uint64_t m0 = cnt_tick_monotonic_ns();
    cnt_tick_t t0 = cnt_timer_start(id);
    uint64_t m1 = cnt_tick_monotonic_ns();
    ASSERT_NE(t0, 0u);
    usleep(10000);
    uint64_t m2 = cnt_tick_monotonic_ns();
    cnt_timer_stop(me, id, t0);
    uint64_t m3 = cnt_tick_monotonic_ns();
    unsigned long long ns = read(s_, h);
    EXPECT_GE(ns, (m2 - m1) * 995 / 1000);
    EXPECT_LE(ns, (m3 - m0) * 1005 / 1000);
    ASSERT_EQ(ibmsg_t_pvar_stop(s_, h), IBMSG_T_SUCCESS);
    EXPECT_EQ(cnt_timer_start(id), 0u); // off again
    EXPECT_EQ(read(s_, h), ns);
}

// The registry's own counters run on shards: sessions and handles alive, handle allocations.
TEST_F(ShardVars, ToolCountersAreShards)
{
    uint64_t sessions = cnt_read(nullptr, CNT_TOOL_SESSIONS_ALIVE, CNT_READ_VALUE);
    uint64_t allocs = cnt_read(nullptr, CNT_TOOL_HANDLE_ALLOCS, CNT_READ_VALUE);
    ibmsg_t_pvar_session_t s2;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s2), IBMSG_T_SUCCESS);
    EXPECT_EQ(cnt_read(nullptr, CNT_TOOL_SESSIONS_ALIVE, CNT_READ_VALUE), sessions + 1);
    ibmsg_t_pvar_handle_t h = alloc(s2, "tool_sessions_alive", LEVEL);
    EXPECT_EQ(read_level(s2, h), (long long)sessions + 1);
    EXPECT_EQ(cnt_read(nullptr, CNT_TOOL_HANDLE_ALLOCS, CNT_READ_VALUE), allocs + 1);
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s2), IBMSG_T_SUCCESS);
    EXPECT_EQ(cnt_read(nullptr, CNT_TOOL_SESSIONS_ALIVE, CNT_READ_VALUE), sessions);
}

// Endpoint blocks as children of a context block: the endpoint view, the context view (its
// endpoints summed, destroyed ones included) and the sum, all exact; nothing doubles or vanishes.
TEST_F(ShardVars, EndpointBlocksSumIntoTheirContext)
{
    struct fake_object {
        int x;
    } ctx_obj{}, ep1_obj{}, ep2_obj{};
    void *ctx = &ctx_obj, *ep1 = &ep1_obj, *ep2 = &ep2_obj;
    cnt_shard_t *cblk = nullptr, *b1 = nullptr, *b2 = nullptr, *orphan = nullptr;
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, ctx, &cblk), IBMSG_OK);
    ASSERT_EQ(cnt_block_create_child(IBMSG_T_BIND_ENDPOINT, ep1, cblk, &b1), IBMSG_OK);
    ASSERT_EQ(cnt_block_create_child(IBMSG_T_BIND_ENDPOINT, ep2, cblk, &b2), IBMSG_OK);
    cnt_shard_t *bad = nullptr;
    EXPECT_EQ(cnt_block_create_child(IBMSG_T_BIND_ENDPOINT, ep1, cnt_shard_get(), &bad),
              IBMSG_ERR_INVALID)
        << "a thread shard is no parent";

    ibmsg_t_pvar_handle_t h1 = alloc(s_, "core_eager_msgs_sent_ep", COUNTER, &ep1);
    ibmsg_t_pvar_handle_t h2 = alloc(s_, "core_eager_msgs_sent_ep", COUNTER, &ep2);
    ibmsg_t_pvar_handle_t hc = alloc(s_, "core_eager_msgs_sent_ctx", COUNTER, &ctx);
    ibmsg_t_pvar_handle_t all = alloc(s_, "core_eager_msgs_sent", COUNTER);
    for (auto h : {h1, h2, hc, all}) {
        ASSERT_EQ(ibmsg_t_pvar_start(s_, h), IBMSG_T_SUCCESS);
    }
    cnt_add(b1, CNT_CORE_EAGER_MSGS_SENT, 7);
    cnt_add(b2, CNT_CORE_EAGER_MSGS_SENT, 11);
    cnt_add(cblk, CNT_CORE_EAGER_MSGS_SENT, 100); // the context's own slot counts too
    EXPECT_EQ(read(s_, h1), 7u);
    EXPECT_EQ(read(s_, h2), 11u);
    EXPECT_EQ(read(s_, hc), 118u);
    EXPECT_EQ(read(s_, all), 118u);
    EXPECT_EQ(cnt_read(cblk, CNT_CORE_EAGER_MSGS_SENT, CNT_READ_VALUE), 118u);

    // Destroying an endpoint folds it into the context: no view goes back.
    cnt_block_destroy(b1);
    EXPECT_EQ(read(s_, h1), 7u) << "kept while bound";
    EXPECT_EQ(read(s_, hc), 118u);
    EXPECT_EQ(read(s_, all), 118u);
    cnt_add(b2, CNT_CORE_EAGER_MSGS_SENT, 1);
    EXPECT_EQ(read(s_, hc), 119u);

    // A stopped context handle does not move while its endpoint counts.
    ASSERT_EQ(ibmsg_t_pvar_stop(s_, hc), IBMSG_T_SUCCESS);
    cnt_add(b2, CNT_CORE_EAGER_MSGS_SENT, 5);
    EXPECT_EQ(read(s_, hc), 119u);
    EXPECT_EQ(read(s_, h2), 17u);

    // A context destroyed before its endpoint orphans it: the endpoint retires into the sum.
    ASSERT_EQ(cnt_block_create_child(IBMSG_T_BIND_ENDPOINT, ep1, cblk, &orphan), IBMSG_OK);
    cnt_add(orphan, CNT_CORE_EAGER_MSGS_SENT, 1000);
    cnt_block_destroy(cblk);
    EXPECT_EQ(read(s_, all), 1124u);
    cnt_block_destroy(orphan);
    cnt_block_destroy(b2);
    EXPECT_EQ(read(s_, all), 1124u);
    for (auto h : {h1, h2, hc, all}) {
        ASSERT_EQ(ibmsg_t_pvar_handle_free(s_, &h), IBMSG_T_SUCCESS);
    }
}

// A level counted in endpoint blocks folds with its level into the context on destruction.
TEST_F(ShardVars, ChildLevelFoldsIntoItsParent)
{
    int ctx_obj = 0, ep_obj = 0;
    cnt_shard_t *cblk = nullptr, *eblk = nullptr;
    const cnt_id_t id = CNT_VERBS_BUF_POOL_IN_USE;
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, &ctx_obj, &cblk), IBMSG_OK);
    ASSERT_EQ(cnt_block_create_child(IBMSG_T_BIND_ENDPOINT, &ep_obj, cblk, &eblk), IBMSG_OK);
    cnt_level_add(cblk, id, 2);
    cnt_level_add(eblk, id, 3);
    EXPECT_EQ((int64_t)cnt_read(cblk, id, CNT_READ_VALUE), 5);
    cnt_block_destroy(eblk);
    EXPECT_EQ((int64_t)cnt_read(cblk, id, CNT_READ_VALUE), 5);
    EXPECT_GE((int64_t)cnt_read(cblk, id, CNT_READ_HIGH), 5);
    cnt_level_add(cblk, id, -5);
    EXPECT_EQ((int64_t)cnt_read(cblk, id, CNT_READ_VALUE), 0);
    cnt_block_destroy(cblk);
}
