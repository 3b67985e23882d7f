// Contexts of one process share their device (verbs/hca.c): contexts opened by threads at once
// use one ibv_context and one protection domain, opened once; closing them in any order keeps the
// others working and the last one closes the device; a port event read by one context's thread
// reaches every sharing context exactly once (a sleeping one is woken for it), a queue pair's
// event only the context that owns the queue pair; verbs_share_device 0 gives each context its
// own device and events, and a forked child opens its own. Label tsan too: the opening, the routing
// and the wakeups cross threads.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/core.h"
#include "core_fixture.h"
#include "counters/shards/shard.h"
#include "ibmsg/ibmsg.h"
#include "verbs/mr.h"
#include "verbs/notify.h"
#include "verbs/verbs_priv.h"

namespace
{

uint64_t count(ibmsg_context_t ctx, cnt_id_t counter)
{
    return cnt_read(ctx->cnt, counter, CNT_READ_VALUE);
}

// A context on the test device; the test skipped without one (failed in the guest).
#define OPEN_OR_SKIP(ctx, set)                                    \
    do {                                                          \
        int ret_ = core_test::open_context(&(ctx), nullptr, set); \
        if (ret_ == IBMSG_ERR_NO_DEVICE) {                        \
            IBMSG_TEST_MISSING(core_test::kSkip);                 \
        }                                                         \
        ASSERT_EQ(ret_, IBMSG_OK);                                \
    } while (0)

// One message of len bytes from out (endpoint x) into in (endpoint y) of ctx, checked byte by
// byte: "" or what went wrong (callable from any thread).
std::string transfer(ibmsg_context_t ctx, ibmsg_ep_t x, ibmsg_ep_t y, const uint8_t *out,
                     uint8_t *in, size_t len)
{
    ibmsg_request_t rr;
    std::memset(in, 0, len);
    if (ibmsg_tag_irecv(ctx, y, in, len, 7, IBMSG_TAG_MASK_EXACT, &rr) != IBMSG_OK ||
        ibmsg_tag_send(x, out, len, 7) != IBMSG_OK ||
        ibmsg_request_wait(&rr, nullptr) != IBMSG_OK) {
        return "transfer of " + std::to_string(len) + " bytes";
    }
    return std::memcmp(in, out, len) == 0 ? "" : "bytes of " + std::to_string(len);
}

// Two connected endpoints of ctx, or nullptrs.
std::pair<ibmsg_ep_t, ibmsg_ep_t> ep_pair(ibmsg_context_t ctx)
{
    ibmsg_ep_t a, b;
    if (ibmsg_ep_create(ctx, &a) != IBMSG_OK || ibmsg_ep_create(ctx, &b) != IBMSG_OK ||
        core_test::connect_pair(a, b) != IBMSG_OK) {
        return {nullptr, nullptr};
    }
    return {a, b};
}

// An eager message and a rendezvous one between two new endpoints of ctx, checked byte by byte.
// Returns "" or what went wrong (callable from any thread).
std::string exchange(ibmsg_context_t ctx, uint64_t seed)
{
    auto [a, b] = ep_pair(ctx);
    if (a == nullptr) {
        return "endpoints";
    }
    std::string error;
    for (size_t len : {size_t(64), size_t(256) << 10}) {
        std::vector<uint8_t> out = core_test::payload(seed, len), in(len, 0);
        std::string e = transfer(ctx, a, b, out.data(), in.data(), len);
        error = e.empty() ? error : e;
    }
    ibmsg_ep_destroy(a);
    ibmsg_ep_destroy(b);
    return error;
}

// The registration cache counters of ctxs, summed.
uint64_t reg_count(std::initializer_list<ibmsg_context_t> ctxs, cnt_id_t counter)
{
    uint64_t n = 0;
    for (auto c : ctxs) {
        n += cnt_read(c->cnt, counter, CNT_READ_VALUE);
    }
    return n;
}

ibv_async_event port_event(ibmsg_context_t ctx, ibv_event_type type)
{
    ibv_async_event ev;
    std::memset(&ev, 0, sizeof(ev));
    ev.event_type = type;
    ev.element.port_num = verbs_dev_info(ctx->dev)->port;
    return ev;
}

} // namespace

// Three threads open a context each at once: one device opened, one ibv_context and PD among
// them, each context counted; each carries messages on its own thread at the same time.
TEST(SharedDevice, ThreadsShareOneContextAndPd)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    constexpr int kThreads = 3;
    uint64_t opens0 = verbs_dev_opens();
    ibmsg_context_t ctx[kThreads] = {};
    int ret[kThreads];
    std::string error[kThreads];
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; i++) {
        threads.emplace_back([&, i] { ret[i] = core_test::open_context(&ctx[i]); });
    }
    for (auto &t : threads) {
        t.join();
    }
    for (int i = 0; i < kThreads; i++) {
        ASSERT_EQ(ret[i], IBMSG_OK) << i;
    }
    EXPECT_EQ(verbs_dev_opens(), opens0 + 1);
    for (int i = 0; i < kThreads; i++) {
        EXPECT_EQ(verbs_dev_sharers(ctx[i]->dev), unsigned(kThreads)) << i;
        EXPECT_EQ(verbs_dev_shares_with(ctx[i]->dev, ctx[0]->dev), 1) << i;
    }
    EXPECT_NE(ctx[0]->dev, ctx[1]->dev) << "each context has its own handle";
    EXPECT_NE(verbs_dev_comp_fd(ctx[0]->dev), verbs_dev_comp_fd(ctx[1]->dev))
        << "and its own completion channel";
    EXPECT_EQ(verbs_dev_async_fd(ctx[0]->dev), verbs_dev_async_fd(ctx[1]->dev));
    threads.clear();
    for (int i = 0; i < kThreads; i++) {
        threads.emplace_back([&, i] { error[i] = exchange(ctx[i], uint64_t(i) + 1); });
    }
    for (auto &t : threads) {
        t.join();
    }
    for (int i = 0; i < kThreads; i++) {
        EXPECT_EQ(error[i], "") << i;
        EXPECT_EQ(ibmsg_context_destroy(ctx[i]), IBMSG_OK);
    }
}

// Closed in the middle, then first: the others keep working; the last one closes the device, and
// the next context opens it again.
TEST(SharedDevice, ClosingInAnyOrderKeepsOthersWorking)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    uint64_t opens0 = verbs_dev_opens();
    ibmsg_context_t a, b, c;
    OPEN_OR_SKIP(a, nullptr);
    OPEN_OR_SKIP(b, nullptr);
    OPEN_OR_SKIP(c, nullptr);
    ASSERT_EQ(verbs_dev_sharers(a->dev), 3u);
    EXPECT_EQ(exchange(b, 1), "");
    ASSERT_EQ(ibmsg_context_destroy(b), IBMSG_OK);
    EXPECT_EQ(verbs_dev_sharers(a->dev), 2u);
    EXPECT_EQ(exchange(a, 2), "");
    EXPECT_EQ(exchange(c, 3), "");
    ASSERT_EQ(ibmsg_context_destroy(a), IBMSG_OK);
    EXPECT_EQ(verbs_dev_sharers(c->dev), 1u);
    EXPECT_EQ(exchange(c, 4), "");
    EXPECT_EQ(verbs_dev_opens(), opens0 + 1);
    ASSERT_EQ(ibmsg_context_destroy(c), IBMSG_OK);
    OPEN_OR_SKIP(a, nullptr);
    EXPECT_EQ(verbs_dev_opens(), opens0 + 2) << "the last close closed it";
    EXPECT_EQ(verbs_dev_sharers(a->dev), 1u);
    EXPECT_EQ(exchange(a, 5), "");
    EXPECT_EQ(ibmsg_context_destroy(a), IBMSG_OK);
}

// A port error and the port's return, each read by one context's thread (a, then b): every
// sharing context handles each once, the reader at once, the others at their next progress
// (and never again); c sleeps in ibmsg_context_wait meanwhile and is woken for the first.
TEST(SharedDevice, PortEventReachesEverySharingContextOnce)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    ibmsg_context_t ctx[3];
    for (auto &c : ctx) {
        OPEN_OR_SKIP(c, nullptr);
    }
    uint64_t async0[3], down0[3];
    for (int i = 0; i < 3; i++) {
        async0[i] = count(ctx[i], CNT_CORE_ASYNC_EVENTS);
        down0[i] = count(ctx[i], CNT_CORE_PORT_DOWN_EVENTS);
    }
    int wait_ret = -1;
    double waited_ms = 0;
    std::thread sleeper([&] {
        auto t0 = std::chrono::steady_clock::now();
        wait_ret = ibmsg_context_wait(ctx[2], 20000);
        waited_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count();
    });
    std::this_thread::sleep_for(std::chrono::milliseconds(200)); // c asleep by then
    ibv_async_event down = port_event(ctx[0], IBV_EVENT_PORT_ERR);
    core_async_inject_device(ctx[0], &down);
    sleeper.join();
    EXPECT_EQ(wait_ret, IBMSG_OK);
    EXPECT_LT(waited_ms, 10000.0) << "woken for the event, not by the timeout";
    EXPECT_EQ(count(ctx[0], CNT_CORE_PORT_DOWN_EVENTS), down0[0] + 1) << "the reader at once";
    EXPECT_EQ(count(ctx[1], CNT_CORE_PORT_DOWN_EVENTS), down0[1]) << "b before its progress";
    EXPECT_EQ(count(ctx[2], CNT_CORE_PORT_DOWN_EVENTS), down0[2] + 1) << "c, woken";
    for (int round = 0; round < 3; round++) {
        for (auto &c : ctx) {
            ASSERT_EQ(ibmsg_context_progress(c, nullptr), IBMSG_OK);
        }
    }
    for (int i = 0; i < 3; i++) {
        EXPECT_EQ(count(ctx[i], CNT_CORE_PORT_DOWN_EVENTS), down0[i] + 1) << i;
        EXPECT_EQ(count(ctx[i], CNT_CORE_ASYNC_EVENTS), async0[i] + 1) << i;
        EXPECT_EQ(ctx[i]->port_down, 1) << i;
    }
    ibv_async_event up = port_event(ctx[1], IBV_EVENT_PORT_ACTIVE);
    core_async_inject_device(ctx[1], &up);
    for (int round = 0; round < 3; round++) {
        for (auto &c : ctx) {
            ASSERT_EQ(ibmsg_context_progress(c, nullptr), IBMSG_OK);
        }
    }
    for (int i = 0; i < 3; i++) {
        EXPECT_EQ(count(ctx[i], CNT_CORE_ASYNC_EVENTS), async0[i] + 2) << i;
        EXPECT_EQ(ctx[i]->port_down, 0) << i;
        EXPECT_EQ(exchange(ctx[i], uint64_t(i) + 10), "") << i;
    }
    for (auto &c : ctx) {
        EXPECT_EQ(ibmsg_context_destroy(c), IBMSG_OK);
    }
}

// IBV_EVENT_QP_FATAL on b's queue pair, read by a's thread: b's endpoint fails at b's next
// progress, b counts the event once, a does not count it.
TEST(SharedDevice, QueuePairEventReachesItsOwnerOnly)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    ibmsg_context_t a, b;
    ibmsg_ep_t x, y;
    OPEN_OR_SKIP(a, nullptr);
    core_test::open_pair(&b, &x, &y);
    ASSERT_FALSE(HasFatalFailure());
    uint64_t async_a = count(a, CNT_CORE_ASYNC_EVENTS), async_b = count(b, CNT_CORE_ASYNC_EVENTS);
    ibv_async_event ev;
    std::memset(&ev, 0, sizeof(ev));
    ev.event_type = IBV_EVENT_QP_FATAL;
    ev.element.qp = x->qp->qp;
    core_async_inject_device(a, &ev);
    EXPECT_EQ(count(a, CNT_CORE_ASYNC_EVENTS), async_a);
    EXPECT_EQ(ibmsg_ep_status(x), IBMSG_OK) << "not before b's progress";
    ASSERT_EQ(ibmsg_context_progress(b, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_context_progress(a, nullptr), IBMSG_OK);
    EXPECT_EQ(ibmsg_ep_status(x), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(ibmsg_ep_status(y), IBMSG_OK);
    EXPECT_EQ(count(b, CNT_CORE_ASYNC_EVENTS), async_b + 1);
    EXPECT_EQ(count(a, CNT_CORE_ASYNC_EVENTS), async_a);
    EXPECT_EQ(ibmsg_context_destroy(b), IBMSG_OK);
    EXPECT_EQ(exchange(a, 1), "");
    EXPECT_EQ(ibmsg_context_destroy(a), IBMSG_OK);
}

// verbs_share_device 0: each context opens its own device, and a port event of one is not the
// other's.
TEST(SharedDevice, OptOutOpensOneDevicePerContext)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    auto own = [](ibmsg_info_t info) { ibmsg_info_set_int(info, "verbs_share_device", 0); };
    uint64_t opens0 = verbs_dev_opens();
    ibmsg_context_t a, b, shared;
    OPEN_OR_SKIP(a, own);
    OPEN_OR_SKIP(b, own);
    OPEN_OR_SKIP(shared, nullptr);
    EXPECT_EQ(verbs_dev_opens(), opens0 + 3) << "a, b, and the first shared one";
    EXPECT_EQ(verbs_dev_shares_with(a->dev, b->dev), 0);
    EXPECT_EQ(verbs_dev_shares_with(a->dev, shared->dev), 0);
    EXPECT_EQ(verbs_dev_sharers(a->dev), 1u);
    EXPECT_EQ(verbs_dev_sharers(b->dev), 1u);
    EXPECT_EQ(verbs_dev_sharers(shared->dev), 1u);
    EXPECT_NE(verbs_dev_async_fd(a->dev), verbs_dev_async_fd(b->dev));
    uint64_t down_b = count(b, CNT_CORE_PORT_DOWN_EVENTS);
    ibv_async_event down = port_event(a, IBV_EVENT_PORT_ERR);
    core_async_inject_device(a, &down);
    ASSERT_EQ(ibmsg_context_progress(b, nullptr), IBMSG_OK);
    EXPECT_EQ(a->port_down, 1);
    EXPECT_EQ(b->port_down, 0);
    EXPECT_EQ(count(b, CNT_CORE_PORT_DOWN_EVENTS), down_b);
    EXPECT_EQ(exchange(b, 1), "");
    EXPECT_EQ(exchange(shared, 2), "");
    // Each its own registration cache: a buffer both send from is registered by each.
    EXPECT_NE(verbs_mr_cache_rcache(a->rcache), verbs_mr_cache_rcache(b->rcache));
    std::vector<uint8_t> out = core_test::payload(4, size_t(1) << 20), in(out.size());
    const uint64_t miss0 = reg_count({a, b}, CNT_VERBS_REG_CACHE_MISSES);
    for (auto c : {a, b}) {
        auto [x, y] = ep_pair(c);
        ASSERT_NE(x, nullptr);
        EXPECT_EQ(transfer(c, x, y, out.data(), in.data(), out.size()), "");
        ibmsg_ep_destroy(x);
        ibmsg_ep_destroy(y);
    }
    EXPECT_EQ(reg_count({a, b}, CNT_VERBS_REG_CACHE_MISSES) - miss0, 4u)
        << "the source and the destination, by each context";
    for (auto c : {a, b, shared}) {
        EXPECT_EQ(ibmsg_context_destroy(c), IBMSG_OK);
    }
}

// A child forked after its parent opened a context cannot use the parent's ibv_context (the
// kernel refuses its commands with EACCES): its own context opens the device again, shares it
// with nothing of the parent's, and carries messages; the parent's keeps working.
TEST(SharedDevice, ForkedChildOpensItsOwnDevice)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    ibmsg_context_t parent;
    OPEN_OR_SKIP(parent, nullptr);
    uint64_t opens0 = verbs_dev_opens();
    fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        ibmsg_context_t child;
        int code = 0;
        if (core_test::open_context(&child) != IBMSG_OK) {
            _exit(2);
        }
        if (verbs_dev_opens() != opens0 + 1) {
            code = 3;
        } else if (verbs_dev_shares_with(child->dev, parent->dev) != 0) {
            code = 4;
        } else if (!exchange(child, 7).empty()) {
            code = 5;
        }
        ibmsg_context_destroy(child);
        _exit(code);
    }
    ASSERT_GT(pid, 0);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "2: no context, 3: the device not opened once more, "
                                         "4: the parent's shared, 5: messages failed";
    EXPECT_EQ(verbs_dev_sharers(parent->dev), 1u);
    EXPECT_EQ(exchange(parent, 8), "");
    EXPECT_EQ(ibmsg_context_destroy(parent), IBMSG_OK);
}

// Contexts sharing a device share its registration cache (verbs/mr.h): a buffer two contexts
// send from (and receive into) by rendezvous is registered once for both, each context's
// counters count its own lookups, and closing the context that registered it keeps the entry
// working for the other. Contexts whose cache settings differ keep their own.
TEST(SharedDevice, ContextsShareOneRegistrationPerBuffer)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    constexpr size_t kLen = size_t(1) << 20;
    ibmsg_context_t a, b, own;
    OPEN_OR_SKIP(a, nullptr);
    OPEN_OR_SKIP(b, nullptr);
    OPEN_OR_SKIP(
        own, [](ibmsg_info_t info) { ibmsg_info_set_int(info, "verbs_reg_cache_max_entries", 7); });
    verbs_rcache_t *rc = verbs_mr_cache_rcache(a->rcache);
    ASSERT_TRUE(verbs_rcache_enabled(rc));
    EXPECT_EQ(verbs_mr_cache_rcache(b->rcache), rc);
    EXPECT_EQ(verbs_mr_cache_users(a->rcache), 2u);
    EXPECT_NE(verbs_mr_cache_rcache(own->rcache), rc) << "settings of its own";
    EXPECT_EQ(verbs_mr_cache_users(own->rcache), 1u);
    std::vector<uint8_t> out = core_test::payload(3, kLen), in(kLen);
    auto [a1, a2] = ep_pair(a);
    auto [b1, b2] = ep_pair(b);
    ASSERT_NE(a1, nullptr);
    ASSERT_NE(b1, nullptr);
    const uint64_t miss0 = reg_count({a, b}, CNT_VERBS_REG_CACHE_MISSES);
    const uint64_t hit0 = reg_count({a, b}, CNT_VERBS_REG_CACHE_HITS);
    EXPECT_EQ(transfer(a, a1, a2, out.data(), in.data(), kLen), "");
    EXPECT_EQ(transfer(b, b1, b2, out.data(), in.data(), kLen), "");
    // The source and the destination: one registration each, for both contexts.
    EXPECT_EQ(reg_count({a}, CNT_VERBS_REG_CACHE_MISSES), 2u);
    EXPECT_EQ(reg_count({b}, CNT_VERBS_REG_CACHE_MISSES), 0u);
    EXPECT_EQ(reg_count({b}, CNT_VERBS_REG_CACHE_HITS), 2u);
    EXPECT_EQ(reg_count({a, b}, CNT_VERBS_REG_CACHE_MISSES) - miss0, 2u);
    EXPECT_EQ(reg_count({a, b}, CNT_VERBS_REG_CACHE_HITS) - hit0, 2u);
    uint32_t entries = 0;
    uint64_t bytes = 0;
    verbs_rcache_usage(rc, &entries, &bytes);
    EXPECT_EQ(entries, 2u);
    EXPECT_EQ(reg_count({a, b}, CNT_VERBS_REG_BYTES), bytes) << "the level is counted once";
    EXPECT_GE(bytes, 2 * kLen);
    EXPECT_LE(bytes, 2 * kLen + 4 * 4096);
    ibmsg_ep_destroy(a1);
    ibmsg_ep_destroy(a2);
    EXPECT_EQ(ibmsg_context_destroy(a), IBMSG_OK);
    EXPECT_EQ(verbs_mr_cache_users(b->rcache), 1u);
    EXPECT_EQ(verbs_mr_cache_rcache(b->rcache), rc) << "the cache outlives the context";
    EXPECT_EQ(transfer(b, b1, b2, out.data(), in.data(), kLen), "");
    EXPECT_EQ(reg_count({b}, CNT_VERBS_REG_CACHE_MISSES), 0u) << "a's entries still serve b";
    EXPECT_EQ(reg_count({b}, CNT_VERBS_REG_CACHE_HITS), 4u);
    ibmsg_ep_destroy(b1);
    ibmsg_ep_destroy(b2);
    EXPECT_EQ(ibmsg_context_destroy(b), IBMSG_OK);
    EXPECT_EQ(ibmsg_context_destroy(own), IBMSG_OK);
}

// Two threads send the same buffer by rendezvous at once, each from its context, into buffers
// of their own: the source is registered once, each destination once; everything else hits.
TEST(SharedDevice, ThreadsRegisterASharedBufferOnce)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    constexpr size_t kLen = size_t(512) << 10;
    constexpr int kThreads = 2, kRounds = 8;
    ibmsg_context_t ctx[kThreads];
    for (auto &c : ctx) {
        OPEN_OR_SKIP(c, nullptr);
    }
    ASSERT_EQ(verbs_mr_cache_rcache(ctx[0]->rcache), verbs_mr_cache_rcache(ctx[1]->rcache));
    std::vector<uint8_t> out = core_test::payload(5, kLen);
    std::string error[kThreads];
    std::vector<std::thread> threads;
    for (int i = 0; i < kThreads; i++) {
        threads.emplace_back([&, i] {
            std::vector<uint8_t> in(kLen);
            auto [x, y] = ep_pair(ctx[i]);
            if (x == nullptr) {
                error[i] = "endpoints";
                return;
            }
            for (int r = 0; r < kRounds && error[i].empty(); r++) {
                error[i] = transfer(ctx[i], x, y, out.data(), in.data(), kLen);
            }
            ibmsg_ep_destroy(x);
            ibmsg_ep_destroy(y);
        });
    }
    for (auto &t : threads) {
        t.join();
    }
    EXPECT_EQ(error[0], "");
    EXPECT_EQ(error[1], "");
    EXPECT_EQ(reg_count({ctx[0], ctx[1]}, CNT_VERBS_REG_CACHE_MISSES), 3u)
        << "the source once, each destination once";
    EXPECT_EQ(reg_count({ctx[0], ctx[1]}, CNT_VERBS_REG_CACHE_HITS),
              uint64_t(2 * kThreads * kRounds - 3));
    for (auto c : ctx) {
        EXPECT_EQ(ibmsg_context_destroy(c), IBMSG_OK);
    }
}

// The shared cache's share of RLIMIT_MEMLOCK is the process's: the limit less what every
// context sharing it pins itself (core_context_pinned), at least an eighth of the limit,
// recomputed as contexts join and leave. As root (no limit) it keeps its own maximum, 1 GiB;
// core_unprivileged runs this as nobody with ulimit -l 65536, where two contexts leave less than
// one (each pins about 16.5 MiB with the defaults).
TEST(SharedDevice, CacheCapIsTheLimitLessWhatEverySharingContextPins)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    constexpr uint64_t kMax = uint64_t(1) << 30; // verbs_reg_cache_max_bytes
    ibmsg_context_t a, b;
    OPEN_OR_SKIP(a, nullptr);
    OPEN_OR_SKIP(b, nullptr);
    verbs_rcache_t *rc = verbs_mr_cache_rcache(a->rcache);
    ASSERT_EQ(verbs_mr_cache_rcache(b->rcache), rc);
    ASSERT_EQ(verbs_mr_cache_users(a->rcache), 2u);
    const uint64_t limit = verbs_memlock_limit();
    const uint64_t need_a = core_context_pinned(a, a->srq != nullptr);
    const uint64_t need_b = core_context_pinned(b, b->srq != nullptr);
    if (limit == UINT64_MAX) {
        EXPECT_EQ(verbs_rcache_max_bytes(rc), kMax);
    } else {
        ASSERT_LT(need_a + need_b, limit - limit / VERBS_RCACHE_MEMLOCK_FLOOR)
            << "a limit that leaves the two contexts more than the floor";
        EXPECT_EQ(verbs_rcache_max_bytes(rc), limit - need_a - need_b) << "both contexts' needs";
    }
    EXPECT_EQ(ibmsg_context_destroy(b), IBMSG_OK);
    EXPECT_EQ(verbs_mr_cache_users(a->rcache), 1u);
    EXPECT_EQ(verbs_rcache_max_bytes(rc),
              limit == UINT64_MAX ? kMax : verbs_rcache_memlock_cap(limit, need_a, kMax))
        << "b's share back to the cache when it left";
    if (limit != UINT64_MAX) {
        EXPECT_EQ(verbs_rcache_max_bytes(rc), limit - need_a);
    }
    EXPECT_EQ(ibmsg_context_destroy(a), IBMSG_OK);
}
