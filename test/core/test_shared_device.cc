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
#include <vector>

#include "core/core.h"
#include "core_fixture.h"
#include "counters/shards/shard.h"
#include "ibmsg/ibmsg.h"
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

// An eager message and a rendezvous one between two new endpoints of ctx, checked byte by byte.
// Returns "" or what went wrong (callable from any thread).
std::string exchange(ibmsg_context_t ctx, uint64_t seed)
{
    ibmsg_ep_t a, b;
    if (ibmsg_ep_create(ctx, &a) != IBMSG_OK || ibmsg_ep_create(ctx, &b) != IBMSG_OK ||
        core_test::connect_pair(a, b) != IBMSG_OK) {
        return "endpoints";
    }
    std::string error;
    for (size_t len : {size_t(64), size_t(256) << 10}) {
        std::vector<uint8_t> out = core_test::payload(seed, len), in(len, 0);
        ibmsg_request_t rr;
        if (ibmsg_tag_irecv(ctx, b, in.data(), len, 7, IBMSG_TAG_MASK_EXACT, &rr) != IBMSG_OK ||
            ibmsg_tag_send(a, out.data(), len, 7) != IBMSG_OK ||
            ibmsg_request_wait(&rr, nullptr) != IBMSG_OK) {
            error = "transfer of " + std::to_string(len) + " bytes";
        } else if (in != out) {
            error = "bytes of " + std::to_string(len);
        }
    }
    ibmsg_ep_destroy(a);
    ibmsg_ep_destroy(b);
    return error;
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
