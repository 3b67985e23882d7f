// Sleeping instead of spinning (core/wait.c, core/async.c): the context's fd in an epoll loop
// with a timer, the arm/BUSY race, timeouts, every blocking call in each core_wait_mode, the CPU a
// sleeping receiver uses, and the device's port taken down (once, or reported twice) and up.
#include <gtest/gtest.h>

#include <dirent.h>
#include <poll.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/timerfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"
#include "core_fixture.h"
#include "peer.h"
#include "ibmsg/ibmsg.h"
#include "ibmsg/tool.h"
#include "verbs/addr.h"
#include "verbs/fault.h"

namespace
{

uint64_t cnt(const cnt_shard_t *block, cnt_id_t id)
{
    return cnt_read(block, id, CNT_READ_VALUE);
}

using core_test::since_ms;

core_test::InfoFn mode(const char *m)
{
    return [m](ibmsg_info_t info) { ibmsg_info_set_string(info, "core_wait_mode", m); };
}

// No keepalive probes: their completions would make an idle context's fd readable.
void quiet(ibmsg_info_t info)
{
    ibmsg_info_set_int(info, "core_keepalive_ms", 0);
}

// Progress until a call handles nothing and an arm succeeds (the context is idle and armed).
void arm_idle(ibmsg_context_t ctx)
{
    int ret;
    while ((ret = ibmsg_context_arm(ctx)) == IBMSG_ERR_BUSY) {
    }
    ASSERT_EQ(ret, IBMSG_OK);
}

bool readable(int fd, int timeout_ms)
{
    struct pollfd p = {fd, POLLIN, 0};
    return poll(&p, 1, timeout_ms) == 1 && (p.revents & POLLIN);
}

// The fd, a timer and two messages in one epoll loop, as an event-driven server has it: the
// timer fires alone while the context is idle; then a peer (a thread with a context of its own,
// as another process would be) sends 30 ms later, while the loop sleeps, and it is the context's
// fd that wakes the loop for that message.
TEST(Wait, FdInEpollLoopWithTimer)
{
    ibmsg_context_t ctx, peer_ctx;
    ibmsg_ep_t a, b;
    int ret = core_test::open_context(&ctx, nullptr, quiet);
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(core_test::kSkip);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    ASSERT_EQ(core_test::open_context(&peer_ctx, nullptr, quiet), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(peer_ctx, &a), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &b), IBMSG_OK);
    ASSERT_EQ(core_test::connect_pair(a, b), IBMSG_OK);

    int fd = -1, fd2 = -1;
    ASSERT_EQ(ibmsg_context_get_fd(ctx, &fd), IBMSG_OK);
    ASSERT_EQ(ibmsg_context_get_fd(ctx, &fd2), IBMSG_OK);
    EXPECT_EQ(fd, fd2) << "one fd for the context's life";
    int tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK);
    ASSERT_GE(tfd, 0);
    int ep = epoll_create1(0);
    struct epoll_event e = {};
    e.events = EPOLLIN;
    e.data.u32 = 1;
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, fd, &e), 0);
    e.data.u32 = 2;
    ASSERT_EQ(epoll_ctl(ep, EPOLL_CTL_ADD, tfd, &e), 0);

    // The peer: after each go, 30 ms of sleep, then one blocking send on its own context (the
    // context is used by this thread only from here on).
    std::mutex mu;
    std::condition_variable cv;
    int go = 0, sent_ok = 0;
    const int kMsgs = 2;
    std::thread peer([&] {
        for (int i = 0; i < kMsgs; i++) {
            {
                std::unique_lock<std::mutex> lk(mu);
                cv.wait(lk, [&] { return go > i; });
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(30));
            uint64_t out = 1000 + uint64_t(i);
            if (ibmsg_tag_send(a, &out, sizeof(out), 7) == IBMSG_OK) {
                std::lock_guard<std::mutex> lk(mu);
                sent_ok++;
            }
        }
    });

    int timers = 0, got = 0, fd_wakeups = 0, by_fd = 0;
    bool woke_by_fd = false;
    uint64_t in = 0;
    ibmsg_request_t r = IBMSG_REQUEST_NULL;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, &in, sizeof(in), 7, IBMSG_TAG_MASK_EXACT, &r), IBMSG_OK);
    struct itimerspec its = {};
    its.it_value.tv_nsec = 50 * 1000 * 1000;
    ASSERT_EQ(timerfd_settime(tfd, 0, &its, nullptr), 0);
    auto t0 = std::chrono::steady_clock::now();
    while (got < kMsgs && since_ms(t0) < 10000) {
        int done = 0;
        ibmsg_tag_status_t st;
        ASSERT_EQ(ibmsg_request_test(&r, &done, &st), IBMSG_OK); // progresses
        if (done) {
            EXPECT_EQ(in, 1000 + uint64_t(got));
            EXPECT_EQ(st.length, sizeof(in));
            by_fd += woke_by_fd;
            woke_by_fd = false;
            if (++got == kMsgs) {
                break;
            }
            ASSERT_EQ(ibmsg_tag_irecv(ctx, b, &in, sizeof(in), 7, IBMSG_TAG_MASK_EXACT, &r),
                      IBMSG_OK);
            ASSERT_EQ(timerfd_settime(tfd, 0, &its, nullptr), 0);
        }
        if ((ret = ibmsg_context_arm(ctx)) == IBMSG_ERR_BUSY) {
            continue; // work came in between: look again
        }
        ASSERT_EQ(ret, IBMSG_OK);
        struct epoll_event evs[2];
        int n = epoll_wait(ep, evs, 2, 5000);
        ASSERT_GT(n, 0) << "neither the timer nor the message woke the loop";
        for (int i = 0; i < n; i++) {
            if (evs[i].data.u32 == 2) {
                uint64_t exp;
                ASSERT_EQ(read(tfd, &exp, sizeof(exp)), ssize_t(sizeof(exp)));
                timers++;
                EXPECT_EQ(n, 1) << "the idle context's fd is not readable with the timer";
                std::lock_guard<std::mutex> lk(mu);
                go++;
                cv.notify_one();
            } else {
                fd_wakeups++;
                woke_by_fd = true;
            }
        }
    }
    {
        std::lock_guard<std::mutex> lk(mu);
        go = kMsgs; // let the peer end whatever happened above
        cv.notify_one();
    }
    peer.join();
    EXPECT_EQ(sent_ok, kMsgs);
    EXPECT_EQ(got, kMsgs);
    EXPECT_EQ(timers, kMsgs);
    // Each message came while the loop slept in epoll_wait (30 ms after the timer) and the
    // context's fd, not a timeout or the timer, woke the loop for it.
    EXPECT_EQ(by_fd, kMsgs) << fd_wakeups << " wakeups by the fd";
    printf("%d timer expiries, %d wakeups by the ibmsg fd\n", timers, fd_wakeups);
    close(ep);
    close(tfd);
    EXPECT_EQ(ibmsg_context_destroy(peer_ctx), IBMSG_OK);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// A message that arrives between progress and arm is never slept through. Landed before the
// arm: arm says BUSY and its progress has received it. Sent after an arm that said OK: the fd
// becomes readable (and stays so until an arm reads its events). 100 rounds of each.
TEST(Wait, ArmNeverSleepsThroughAMessage)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t a, b;
    core_test::open_pair(&ctx, &a, &b, quiet);
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    int fd = -1;
    ASSERT_EQ(ibmsg_context_get_fd(ctx, &fd), IBMSG_OK);
    const int kRounds = 100;
    uint64_t busy0 = cnt(ctx->cnt, CNT_CORE_WAIT_ARM_BUSY);
    for (int i = 0; i < kRounds; i++) {
        uint64_t in = 0, out = uint64_t(i);
        ibmsg_request_t r;
        int done = 0;
        // Landed before the arm (no progress in between): BUSY, and received.
        ASSERT_EQ(ibmsg_tag_irecv(ctx, b, &in, sizeof(in), 1, IBMSG_TAG_MASK_EXACT, &r), IBMSG_OK);
        arm_idle(ctx);
        if (HasFatalFailure()) {
            return;
        }
        ASSERT_EQ(ibmsg_tag_send(a, &out, sizeof(out), 1), IBMSG_OK);
        usleep(50000);
        ASSERT_EQ(ibmsg_context_arm(ctx), IBMSG_ERR_BUSY) << "round " << i;
        ASSERT_EQ(ibmsg_request_test(&r, &done, nullptr), IBMSG_OK);
        ASSERT_EQ(done, 1) << "round " << i << ": the BUSY arm's progress received it";
        ASSERT_EQ(in, out);
        // Sent after an arm said OK: the fd wakes the sleeper, every time, until it is received.
        out += 1000;
        ASSERT_EQ(ibmsg_tag_irecv(ctx, b, &in, sizeof(in), 2, IBMSG_TAG_MASK_EXACT, &r), IBMSG_OK);
        arm_idle(ctx);
        if (HasFatalFailure()) {
            return;
        }
        ASSERT_EQ(ibmsg_tag_send(a, &out, sizeof(out), 2), IBMSG_OK);
        done = 0;
        while (!done) {
            ASSERT_TRUE(readable(fd, 5000)) << "round " << i << ": armed, yet slept through";
            int ret = ibmsg_context_arm(ctx);
            ASSERT_TRUE(ret == IBMSG_OK || ret == IBMSG_ERR_BUSY) << ret;
            ASSERT_EQ(ibmsg_request_test(&r, &done, nullptr), IBMSG_OK);
        }
        ASSERT_EQ(in, out);
    }
    EXPECT_GE(cnt(ctx->cnt, CNT_CORE_WAIT_ARM_BUSY) - busy0, uint64_t(2 * kRounds));
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// Timeouts: exactly IBMSG_ERR_TIMEOUT after about the time asked, none for 0, and the errors of
// bad arguments.
TEST(Wait, Timeouts)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t a, b;
    core_test::open_pair(&ctx, &a, &b, quiet);
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    int fd;
    EXPECT_EQ(ibmsg_context_get_fd(nullptr, &fd), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_context_get_fd(ctx, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_context_arm(nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_context_wait(nullptr, 0), IBMSG_ERR_INVALID);
    while (ibmsg_context_wait(ctx, 0) == IBMSG_OK) {
    } // idle now
    uint64_t sleeps0 = cnt(ctx->cnt, CNT_CORE_WAIT_SLEEPS);
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(ibmsg_context_wait(ctx, 0), IBMSG_ERR_TIMEOUT);
    EXPECT_LT(since_ms(t0), 50.0);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_WAIT_SLEEPS), sleeps0) << "0: no sleep";
    for (int ms : {20, 300}) {
        t0 = std::chrono::steady_clock::now();
        EXPECT_EQ(ibmsg_context_wait(ctx, ms), IBMSG_ERR_TIMEOUT);
        double took = since_ms(t0);
        printf("ibmsg_context_wait(%d ms): IBMSG_ERR_TIMEOUT after %.1f ms\n", ms, took);
        EXPECT_GE(took, ms - 5.0) << "the coarse clock is at most a few ms early";
        EXPECT_LT(took, ms + 500.0);
    }
    EXPECT_GE(cnt(ctx->cnt, CNT_CORE_WAIT_SLEEPS), sleeps0 + 2);
    // A message within the timeout: IBMSG_OK, well before it.
    uint64_t out = 5, in = 0;
    ibmsg_request_t r;
    int done = 0;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, &in, sizeof(in), 1, IBMSG_TAG_MASK_EXACT, &r), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(a, &out, sizeof(out), 1), IBMSG_OK);
    t0 = std::chrono::steady_clock::now();
    while (!done && since_ms(t0) < 5000) {
        int ret = ibmsg_context_wait(ctx, 5000);
        ASSERT_EQ(ret, IBMSG_OK);
        ASSERT_EQ(ibmsg_request_test(&r, &done, nullptr), IBMSG_OK);
    }
    EXPECT_EQ(done, 1);
    EXPECT_EQ(in, out);
    EXPECT_LT(since_ms(t0), 2000.0);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// The unit tests' helper for two processes: the child (peer) waits delay_ms, then runs fn.
template <typename Fn> pid_t fork_peer(uint16_t port, const char *m, Fn fn)
{
    fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        ibmsg_context_t ctx;
        ibmsg_ep_t ep;
        ibmsg_oob_t conn;
        bool ok = core_test::open_context(&ctx, nullptr, mode(m)) == IBMSG_OK &&
                  core_test::join_parent(ctx, port, &ep, &conn) == IBMSG_OK && fn(ctx, ep);
        _exit(ok ? 0 : 1);
    }
    return pid;
}

void expect_peer_ok(pid_t pid)
{
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "the peer failed";
}

// The parent's end of a two-process test: a context in mode m, an endpoint connected to the
// forked peer.
struct Parent {
    ibmsg_context_t ctx = nullptr;
    ibmsg_ep_t ep = nullptr;
    ibmsg_oob_t listener = nullptr, conn = nullptr;
    uint16_t port = 0;
};

int parent_open(Parent *p, const char *m)
{
    int ret = core_test::open_context(&p->ctx, nullptr, mode(m));
    if (ret != IBMSG_OK) {
        return ret;
    }
    if (ibmsg_oob_listen("127.0.0.1", 0, &p->listener) != IBMSG_OK ||
        ibmsg_oob_port(p->listener, &p->port) != IBMSG_OK) {
        return IBMSG_ERR_IO;
    }
    return IBMSG_OK;
}

int parent_connect(Parent *p)
{
    int ret = ibmsg_ep_create(p->ctx, &p->ep);
    if (ret == IBMSG_OK) {
        ret = ibmsg_oob_accept(p->listener, 20000, &p->conn);
    }
    if (ret == IBMSG_OK) {
        ret = ibmsg_oob_ep_connect(p->conn, p->ep, 20000);
    }
    return ret;
}

void parent_close(Parent *p)
{
    if (p->conn != nullptr) {
        ibmsg_oob_close(p->conn);
    }
    if (p->listener != nullptr) {
        ibmsg_oob_close(p->listener);
    }
    if (p->ctx != nullptr) {
        EXPECT_EQ(ibmsg_context_destroy(p->ctx), IBMSG_OK);
    }
}

std::vector<uint8_t> pattern(size_t len, uint8_t seed)
{
    std::vector<uint8_t> v(len);
    for (size_t i = 0; i < len; i++) {
        v[i] = uint8_t(seed + i * 7);
    }
    return v;
}

class WaitModes : public ::testing::TestWithParam<const char *>
{
};

// Every blocking call in each mode, the peer late by 200 ms each time: ibmsg_tag_recv (eager
// and rendezvous), ibmsg_tag_send (rendezvous: waits for the peer's receive), ibmsg_request_wait.
// Sleep and adaptive modes sleep (core_wait_sleeps grows), spin never does.
TEST_P(WaitModes, EveryBlockingCall)
{
    const char *m = GetParam();
    Parent p;
    int ret = parent_open(&p, m);
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(core_test::kSkip);
        return;
    }
    ASSERT_EQ(ret, IBMSG_OK);
    const size_t kBig = 256 * 1024;
    pid_t pid = fork_peer(p.port, m, [&](ibmsg_context_t, ibmsg_ep_t ep) {
        auto small = pattern(8, 1), big = pattern(kBig, 2);
        std::vector<uint8_t> in(kBig);
        usleep(200000);
        if (ibmsg_tag_send(ep, small.data(), small.size(), 1) != IBMSG_OK) {
            return false;
        }
        usleep(200000);
        if (ibmsg_tag_send(ep, big.data(), big.size(), 2) != IBMSG_OK) {
            return false;
        }
        usleep(200000); // the parent's blocking rendezvous send waits for this receive
        if (ibmsg_tag_recv(ep->ctx, ep, in.data(), in.size(), 3, IBMSG_TAG_MASK_EXACT, nullptr) !=
                IBMSG_OK ||
            in != pattern(kBig, 3)) {
            return false;
        }
        usleep(200000);
        return ibmsg_tag_send(ep, small.data(), small.size(), 4) == IBMSG_OK &&
               ibmsg_tag_recv(ep->ctx, ep, in.data(), 8, 5, IBMSG_TAG_MASK_EXACT, nullptr) ==
                   IBMSG_OK;
    });
    ASSERT_EQ(parent_connect(&p), IBMSG_OK);
    uint64_t sleeps0 = cnt(p.ctx->cnt, CNT_CORE_WAIT_SLEEPS);
    std::vector<uint8_t> in(kBig);
    ibmsg_tag_status_t st;
    ASSERT_EQ(ibmsg_tag_recv(p.ctx, p.ep, in.data(), 8, 1, IBMSG_TAG_MASK_EXACT, &st), IBMSG_OK);
    EXPECT_EQ(st.length, 8u);
    EXPECT_EQ(std::vector<uint8_t>(in.begin(), in.begin() + 8), pattern(8, 1));
    ASSERT_EQ(ibmsg_tag_recv(p.ctx, p.ep, in.data(), kBig, 2, IBMSG_TAG_MASK_EXACT, &st), IBMSG_OK);
    EXPECT_EQ(st.length, kBig);
    EXPECT_EQ(in, pattern(kBig, 2));
    auto big = pattern(kBig, 3);
    ASSERT_EQ(ibmsg_tag_send(p.ep, big.data(), big.size(), 3), IBMSG_OK);
    ibmsg_request_t r;
    ASSERT_EQ(ibmsg_tag_irecv(p.ctx, p.ep, in.data(), 8, 4, IBMSG_TAG_MASK_EXACT, &r), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r, &st), IBMSG_OK);
    EXPECT_EQ(st.length, 8u);
    ASSERT_EQ(ibmsg_tag_send(p.ep, in.data(), 8, 5), IBMSG_OK);
    uint64_t sleeps = cnt(p.ctx->cnt, CNT_CORE_WAIT_SLEEPS) - sleeps0;
    printf("core_wait_mode %s: %llu sleeps, %llu wakeups, %llu busy arms\n", m,
           (unsigned long long)sleeps, (unsigned long long)cnt(p.ctx->cnt, CNT_CORE_WAIT_WAKEUPS),
           (unsigned long long)cnt(p.ctx->cnt, CNT_CORE_WAIT_ARM_BUSY));
    if (strcmp(m, "spin") == 0) {
        EXPECT_EQ(sleeps, 0u);
        EXPECT_EQ(cnt(p.ctx->cnt, CNT_CORE_WAIT_ARM_BUSY), 0u);
    } else {
        EXPECT_GE(sleeps, 3u) << "each 200 ms wait sleeps";
        EXPECT_GE(cnt(p.ctx->cnt, CNT_CORE_WAIT_WAKEUPS), 3u);
    }
    expect_peer_ok(pid);
    parent_close(&p);
}

INSTANTIATE_TEST_SUITE_P(Modes, WaitModes, ::testing::Values("spin", "sleep", "adaptive"),
                         [](const ::testing::TestParamInfo<const char *> &i) {
                             return std::string(i.param);
                         });

double cpu_s()
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return double(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           double(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

// A receiver blocked 2 s in ibmsg_tag_recv: its CPU in sleep mode (getrusage; the issue asks for
// 2 % at most, asserted here with room for the loaded guest: under 20 %) against spin.
double blocked_recv_cpu(const char *m)
{
    Parent p;
    int ret = parent_open(&p, m);
    if (ret == IBMSG_ERR_NO_DEVICE) {
        return -1;
    }
    EXPECT_EQ(ret, IBMSG_OK);
    pid_t pid = fork_peer(p.port, "spin", [](ibmsg_context_t, ibmsg_ep_t ep) {
        uint64_t v = 42;
        usleep(2000000);
        return ibmsg_tag_send(ep, &v, sizeof(v), 9) == IBMSG_OK;
    });
    EXPECT_EQ(parent_connect(&p), IBMSG_OK);
    uint64_t v = 0;
    double c0 = cpu_s();
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(ibmsg_tag_recv(p.ctx, p.ep, &v, sizeof(v), 9, IBMSG_TAG_MASK_EXACT, nullptr),
              IBMSG_OK);
    double wall = since_ms(t0) / 1000.0, cpu = cpu_s() - c0;
    EXPECT_EQ(v, 42u);
    EXPECT_GE(wall, 1.5);
    printf("core_wait_mode %s: blocked %.3f s in ibmsg_tag_recv, %.3f s CPU: %.1f %%\n", m, wall,
           cpu, 100.0 * cpu / wall);
    expect_peer_ok(pid);
    parent_close(&p);
    return 100.0 * cpu / wall;
}

TEST(WaitCpu, SleepingReceiverUsesAlmostNoCpu)
{
    double sleep_pct = blocked_recv_cpu("sleep");
    if (sleep_pct < 0) {
        IBMSG_TEST_MISSING(core_test::kSkip);
        return;
    }
    double spin_pct = blocked_recv_cpu("spin");
    EXPECT_LT(sleep_pct, 20.0);
    EXPECT_GT(spin_pct, sleep_pct);
}

std::string read_line(const std::string &path)
{
    std::ifstream f(path);
    std::string s;
    std::getline(f, s);
    return s;
}

// Brings the port's netdev back up whatever the test does.
struct LinkUp {
    std::string dev;
    ~LinkUp()
    {
        if (!dev.empty()) {
            std::string cmd = "ip link set dev " + dev + " up";
            (void)system(cmd.c_str());
        }
    }
};

// The context's device events (core_device_port_down, _port_active), recorded in order.
struct DeviceEvents {
    struct Seen {
        int type; // 0: port down, 1: port active
        long long ts;
        core_ev_device_elems_t e;
    };
    std::vector<Seen> seen;
    ibmsg_t_event_registration_t regs[2];
    struct Ud {
        DeviceEvents *self;
        int type;
    } uds[2] = {{this, 0}, {this, 1}};

    static void on_event(ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t,
                         ibmsg_t_cb_safety_t, void *ud)
    {
        Ud *u = static_cast<Ud *>(ud);
        Seen s{};
        s.type = u->type;
        EXPECT_EQ(ibmsg_t_event_get_timestamp(inst, &s.ts), IBMSG_T_SUCCESS);
        EXPECT_EQ(ibmsg_t_event_copy(inst, &s.e), IBMSG_T_SUCCESS);
        u->self->seen.push_back(s);
    }
    void start(ibmsg_context_t ctx)
    {
        const char *names[2] = {"core_device_port_down", "core_device_port_active"};
        int provided;
        ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
        for (int t = 0; t < 2; t++) {
            int index = -1;
            ASSERT_EQ(ibmsg_t_event_get_index(names[t], &index), IBMSG_T_SUCCESS) << names[t];
            ASSERT_EQ(ibmsg_t_event_handle_alloc(index, &ctx, IBMSG_INFO_NULL, &regs[t]),
                      IBMSG_T_SUCCESS);
            ASSERT_EQ(ibmsg_t_event_register_callback(regs[t], IBMSG_T_CB_REQUIRE_MPI_RESTRICTED,
                                                      IBMSG_INFO_NULL, &uds[t], on_event),
                      IBMSG_T_SUCCESS);
        }
    }
    void stop()
    {
        for (auto &r : regs) {
            EXPECT_EQ(ibmsg_t_event_handle_free(r, nullptr, nullptr), IBMSG_T_SUCCESS);
        }
        EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    }
};

// A context in sleep mode with a <-> b and c <-> d, on the port whose netdev a test takes down
// (only in the guest), and the context's device events recorded.
struct WaitDevice : ::testing::Test {
    ibmsg_context_t ctx = IBMSG_CONTEXT_NULL;
    ibmsg_ep_t a, b, c, d;
    ibmsg_context_attr_t attr;
    std::string sys;  // the port's folder in sysfs
    std::string ndev; // its netdev
    DeviceEvents events;

    void SetUp() override
    {
        if (getenv("IBMSG_VM") == nullptr) {
            GTEST_SKIP() << "takes the device's network interface down: only in the test guest";
        }
        core_test::open_pair(&ctx, &a, &b, [](ibmsg_info_t info) {
            quiet(info);
            ibmsg_info_set_string(info, "core_wait_mode", "sleep");
        });
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        ASSERT_EQ(ibmsg_ep_create(ctx, &c), IBMSG_OK);
        ASSERT_EQ(ibmsg_ep_create(ctx, &d), IBMSG_OK);
        ASSERT_EQ(core_test::connect_pair(c, d), IBMSG_OK);
        ASSERT_EQ(ibmsg_context_query(ctx, &attr), IBMSG_OK);
        sys = std::string("/sys/class/infiniband/") + attr.device + "/ports/" +
              std::to_string(attr.port);
        ndev = read_line(sys + "/gid_attrs/ndevs/" + std::to_string(attr.gid_index));
        ASSERT_FALSE(ndev.empty()) << "no netdev for " << attr.device;
        events.start(ctx);
    }
    // Waits (10 s at most) for the port to be ACTIVE again.
    void wait_active()
    {
        auto t0 = std::chrono::steady_clock::now();
        while (read_line(sys + "/state").find("ACTIVE") == std::string::npos &&
               since_ms(t0) < 10000) {
            usleep(10000);
        }
        ASSERT_NE(read_line(sys + "/state").find("ACTIVE"), std::string::npos);
    }
    // The endpoints failed with the port's cause.
    uint32_t failed_by_port() const
    {
        uint32_t n = 0;
        for (ibmsg_ep_t e : {a, b, c, d}) {
            n += ibmsg_ep_status(e) == IBMSG_ERR_PEER_FAILED &&
                 e->ev.fail_cause == IBMSG_T_EP_FAIL_PORT_DOWN;
        }
        return n;
    }
};

// The port taken down under traffic (ip link set <its netdev> down), in sleep mode: the
// endpoint with a rendezvous in flight fails at once with the device's cause (port_down), its
// request completes with IBMSG_ERR_PEER_FAILED, an idle endpoint is left alone; after the port
// is up again a new context's endpoints exchange messages. The context's device events: exactly
// one core_device_port_down (the port, IBV_EVENT_PORT_ERR, the endpoints it failed), then exactly
// one core_device_port_active (the port, IBV_EVENT_PORT_ACTIVE; Soft-RoCE reports the return
// twice, the context raises it once), timestamps ascending.
TEST_F(WaitDevice, PortDownFailsBusyEndpointsAndUpWorksAgain)
{
    long long t_down = 0;
    LinkUp guard;
    // A rendezvous send on a that b has not received: a transfer in flight.
    auto big = pattern(1 << 20, 9);
    ibmsg_request_t r;
    ASSERT_EQ(ibmsg_tag_isend(a, big.data(), big.size(), 1, &r), IBMSG_OK);
    for (int i = 0; i < 100; i++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    uint64_t async0 = cnt(ctx->cnt, CNT_CORE_ASYNC_EVENTS);
    guard.dev = ndev;
    ASSERT_EQ(ibmsg_t_source_get_timestamp(0, &t_down), IBMSG_T_SUCCESS);
    ASSERT_EQ(system(("ip link set dev " + ndev + " down").c_str()), 0);
    auto t0 = std::chrono::steady_clock::now();
    while (ibmsg_ep_status(a) == IBMSG_OK && since_ms(t0) < 5000) {
        int ret = ibmsg_context_wait(ctx, 1000);
        ASSERT_TRUE(ret == IBMSG_OK || ret == IBMSG_ERR_TIMEOUT) << ret;
    }
    double took = since_ms(t0);
    printf("port down: endpoint failed after %.1f ms (woken by the async event)\n", took);
    EXPECT_EQ(ibmsg_ep_status(a), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(a->ev.fail_cause, IBMSG_T_EP_FAIL_PORT_DOWN);
    EXPECT_LT(took, 1000.0) << "at once, not after the transport's retries";
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_PORT_DOWN_EVENTS), 1u);
    EXPECT_GE(cnt(ctx->cnt, CNT_CORE_ASYNC_EVENTS), async0 + 1);
    EXPECT_EQ(ibmsg_ep_status(c), IBMSG_OK) << "idle: left alone";
    EXPECT_EQ(ibmsg_ep_status(d), IBMSG_OK) << "idle: left alone";
    EXPECT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_ERR_PEER_FAILED);

    ASSERT_EQ(system(("ip link set dev " + ndev + " up").c_str()), 0);
    guard.dev.clear();
    wait_active();
    if (HasFatalFailure()) {
        return;
    }
    t0 = std::chrono::steady_clock::now();
    uint64_t async1 = cnt(ctx->cnt, CNT_CORE_ASYNC_EVENTS);
    while ((cnt(ctx->cnt, CNT_CORE_ASYNC_EVENTS) == async1 || events.seen.size() < 2) &&
           since_ms(t0) < 5000) {
        ibmsg_context_wait(ctx, 500);
    }
    EXPECT_GT(cnt(ctx->cnt, CNT_CORE_ASYNC_EVENTS), async1) << "the port's return is read too";
    for (int i = 0; i < 3; i++) {
        ibmsg_context_wait(ctx, 100); // a duplicate would show here
    }
    ASSERT_EQ(events.seen.size(), 2u) << "one port down, then one port active";
    EXPECT_EQ(events.seen[0].type, 0);
    EXPECT_EQ(events.seen[0].e.id, uint32_t(attr.port));
    EXPECT_EQ(events.seen[0].e.event_type, 10); // IBV_EVENT_PORT_ERR
    uint32_t port_failed = failed_by_port();
    EXPECT_GE(port_failed, 1u);
    EXPECT_EQ(events.seen[0].e.affected, port_failed) << "the endpoints it failed, a among them";
    EXPECT_EQ(events.seen[1].type, 1);
    EXPECT_EQ(events.seen[1].e.id, uint32_t(attr.port));
    EXPECT_EQ(events.seen[1].e.event_type, 9); // IBV_EVENT_PORT_ACTIVE
    EXPECT_GT(events.seen[0].ts, t_down);
    EXPECT_GT(events.seen[1].ts, events.seen[0].ts);
    printf("device events: port %u down at +%.1f ms, active at +%.1f ms\n", events.seen[0].e.id,
           double(events.seen[0].ts - t_down) / 1e6, double(events.seen[1].ts - t_down) / 1e6);
    events.stop();
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);

    // A new context after the port is up (its GID may take a moment to return).
    ibmsg_context_t ctx2 = nullptr;
    ibmsg_ep_t e, f;
    t0 = std::chrono::steady_clock::now();
    int ret;
    while ((ret = core_test::open_context(&ctx2)) != IBMSG_OK && since_ms(t0) < 10000) {
        usleep(100000);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx2, &e), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx2, &f), IBMSG_OK);
    ASSERT_EQ(core_test::connect_pair(e, f), IBMSG_OK);
    std::vector<uint8_t> in(big.size());
    ASSERT_EQ(ibmsg_tag_irecv(ctx2, f, in.data(), in.size(), 1, IBMSG_TAG_MASK_EXACT, &r),
              IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(e, big.data(), big.size(), 1), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
    EXPECT_EQ(in, big);
    EXPECT_EQ(ibmsg_context_destroy(ctx2), IBMSG_OK);
}

// The other end of a veth netdev (its iflink names the peer's ifindex), or "" when it has none.
std::string veth_peer(const std::string &ndev)
{
    std::string iflink = read_line("/sys/class/net/" + ndev + "/iflink");
    if (iflink.empty() || iflink == read_line("/sys/class/net/" + ndev + "/ifindex")) {
        return "";
    }
    DIR *dir = opendir("/sys/class/net");
    std::string peer;
    for (struct dirent *d; dir != nullptr && (d = readdir(dir)) != nullptr;) {
        std::string name = d->d_name;
        if (name != "." && name != ".." && name != ndev &&
            read_line("/sys/class/net/" + name + "/ifindex") == iflink) {
            peer = name;
        }
    }
    if (dir != nullptr) {
        closedir(dir);
    }
    return peer;
}

// The port reported down twice without a return between: Soft-RoCE reports a port error when its
// netdev loses its carrier (the veth's other end taken down) and again when the netdev itself
// goes down. One change of state: one core_device_port_down (IBV_EVENT_PORT_ERR, the endpoint with
// a rendezvous in flight failed by the first report), core_port_down_events 1, the second report
// read and counted in core_async_events but failing nothing; after both ends are up again, one
// core_device_port_active however often the device reports the return.
TEST_F(WaitDevice, PortDownReportedTwiceIsOneChange)
{
    std::string peer = veth_peer(ndev);
    ASSERT_FALSE(peer.empty()) << ndev << " is no veth: the guest puts Soft-RoCE on one";
    auto big = pattern(1 << 20, 5);
    ibmsg_request_t r;
    ASSERT_EQ(ibmsg_tag_isend(a, big.data(), big.size(), 1, &r), IBMSG_OK);
    for (int i = 0; i < 100; i++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    // Reads the device's events until the counter passes seen (or 5 s), then a little longer.
    auto read_until = [&](uint64_t seen) {
        auto t0 = std::chrono::steady_clock::now();
        while (cnt(ctx->cnt, CNT_CORE_ASYNC_EVENTS) <= seen && since_ms(t0) < 5000) {
            ibmsg_context_wait(ctx, 200);
        }
        for (int i = 0; i < 3; i++) {
            ibmsg_context_wait(ctx, 100);
        }
        return cnt(ctx->cnt, CNT_CORE_ASYNC_EVENTS);
    };
    LinkUp peer_up, ndev_up;
    uint64_t async0 = cnt(ctx->cnt, CNT_CORE_ASYNC_EVENTS);
    peer_up.dev = peer;
    ASSERT_EQ(system(("ip link set dev " + peer + " down").c_str()), 0);
    uint64_t async1 = read_until(async0);
    ASSERT_GT(async1, async0) << "the carrier's loss reported as a port error";
    ASSERT_EQ(events.seen.size(), 1u);
    EXPECT_EQ(ibmsg_ep_status(a), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(a->ev.fail_cause, IBMSG_T_EP_FAIL_PORT_DOWN);
    EXPECT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_ERR_PEER_FAILED);

    ndev_up.dev = ndev;
    ASSERT_EQ(system(("ip link set dev " + ndev + " down").c_str()), 0);
    uint64_t async2 = read_until(async1);
    EXPECT_GT(async2, async1) << "the second port error is read";
    EXPECT_EQ(events.seen.size(), 1u) << "and raises nothing";
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_PORT_DOWN_EVENTS), 1u);
    EXPECT_EQ(ibmsg_ep_status(c), IBMSG_OK) << "idle: left alone";
    EXPECT_EQ(ibmsg_ep_status(d), IBMSG_OK) << "idle: left alone";

    ASSERT_EQ(system(("ip link set dev " + peer + " up").c_str()), 0);
    ASSERT_EQ(system(("ip link set dev " + ndev + " up").c_str()), 0);
    peer_up.dev.clear();
    ndev_up.dev.clear();
    wait_active();
    if (HasFatalFailure()) {
        return;
    }
    read_until(async2);
    ASSERT_EQ(events.seen.size(), 2u) << "one port down, then one port active";
    EXPECT_EQ(events.seen[0].type, 0);
    EXPECT_EQ(events.seen[0].e.id, uint32_t(attr.port));
    EXPECT_EQ(events.seen[0].e.event_type, 10); // IBV_EVENT_PORT_ERR
    uint32_t port_failed = failed_by_port();
    EXPECT_EQ(events.seen[0].e.affected, port_failed) << "the endpoints the first report failed";
    EXPECT_EQ(events.seen[1].type, 1);
    EXPECT_EQ(events.seen[1].e.event_type, 9); // IBV_EVENT_PORT_ACTIVE
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_PORT_DOWN_EVENTS), 1u);
    printf("port reports: %llu read (two port errors, the returns), one down and one up raised\n",
           (unsigned long long)(cnt(ctx->cnt, CNT_CORE_ASYNC_EVENTS) - async0));
    events.stop();
}

// The context's core_device_address_changed events, in order.
struct AddressEvents {
    std::vector<core_ev_device_elems_t> seen;
    ibmsg_t_event_registration_t reg = nullptr;

    static void on_event(ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t,
                         ibmsg_t_cb_safety_t, void *ud)
    {
        core_ev_device_elems_t e{};
        EXPECT_EQ(ibmsg_t_event_copy(inst, &e), IBMSG_T_SUCCESS);
        static_cast<AddressEvents *>(ud)->seen.push_back(e);
    }
    void start(ibmsg_context_t ctx)
    {
        int provided, index = -1;
        ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_event_get_index("core_device_address_changed", &index), IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_event_handle_alloc(index, &ctx, IBMSG_INFO_NULL, &reg), IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_event_register_callback(reg, IBMSG_T_CB_REQUIRE_MPI_RESTRICTED,
                                                  IBMSG_INFO_NULL, this, on_event),
                  IBMSG_T_SUCCESS);
    }
    ~AddressEvents()
    {
        if (reg != nullptr) {
            EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_SUCCESS);
            EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
        }
    }
};

// Removes a test's address from an interface whatever the test does.
struct AddressGone {
    std::string cmd;
    ~AddressGone()
    {
        if (!cmd.empty()) {
            (void)system(cmd.c_str());
        }
    }
};

void expect_message(ibmsg_context_t ctx, ibmsg_ep_t from, ibmsg_ep_t to, uint64_t tag)
{
    uint64_t v = tag * 1000 + 7, got = 0;
    ASSERT_EQ(ibmsg_tag_send(from, &v, sizeof(v), tag), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_recv(ctx, to, &got, sizeof(got), tag, IBMSG_TAG_MASK_EXACT, nullptr),
              IBMSG_OK);
    EXPECT_EQ(got, v);
}

// An IPv4 address added to and removed from the port's interface changes the RoCE GID table:
// the device reports IBV_EVENT_GID_CHANGE (18), and the context queries the GID of new queue
// pairs again. Its GID is spoiled first, so that only that query restores it: the first event
// says changed 1, and the GID is the table's again; later ones (the removal) change nothing.
// Each event is counted once and raised once; connected and new endpoints exchange messages.
TEST(WaitAddress, AnAddressAddedOrRemovedQueriesTheGidAgain)
{
    if (getenv("IBMSG_VM") == nullptr) {
        GTEST_SKIP() << "changes the addresses of the device's network interface: only in the "
                        "test guest";
    }
    ibmsg_context_t ctx;
    ibmsg_ep_t a, b, c, d;
    core_test::open_pair(&ctx, &a, &b, [](ibmsg_info_t info) {
        quiet(info);
        ibmsg_info_set_string(info, "core_wait_mode", "sleep");
    });
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    ibmsg_context_attr_t attr;
    ASSERT_EQ(ibmsg_context_query(ctx, &attr), IBMSG_OK);
    auto *info = const_cast<verbs_dev_info_t *>(verbs_dev_info(ctx->dev));
    if (info->link_layer != VERBS_LINK_ETHERNET) {
        GTEST_SKIP() << "an IB port's GIDs do not follow IP addresses";
    }
    std::string sys =
        std::string("/sys/class/infiniband/") + attr.device + "/ports/" + std::to_string(attr.port);
    std::string ndev = read_line(sys + "/gid_attrs/ndevs/" + std::to_string(attr.gid_index));
    ASSERT_FALSE(ndev.empty()) << "no netdev for " << attr.device;
    AddressEvents events;
    events.start(ctx);
    uint8_t real[16];
    memcpy(real, info->gid, sizeof(real));
    const int real_index = info->gid_index;
    info->gid[15] ^= 0xff;

    AddressGone gone;
    const std::string addr = "10.99.7.1/24 dev " + ndev;
    ASSERT_EQ(system(("ip addr add " + addr).c_str()), 0);
    gone.cmd = "ip addr del " + addr;
    auto t0 = std::chrono::steady_clock::now();
    while (events.seen.empty() && since_ms(t0) < 5000) {
        ibmsg_context_wait(ctx, 500);
    }
    ASSERT_GE(events.seen.size(), 1u) << "no GID change reported for an address added";
    printf("address added: %zu event(s), the first after %.1f ms\n", events.seen.size(),
           since_ms(t0));
    EXPECT_EQ(events.seen[0].id, uint32_t(attr.port));
    EXPECT_EQ(events.seen[0].event_type, 18); // IBV_EVENT_GID_CHANGE
    EXPECT_EQ(events.seen[0].affected, 1u) << "the spoiled GID was queried again";
    EXPECT_EQ(memcmp(info->gid, real, sizeof(real)), 0);
    EXPECT_EQ(info->gid_index, real_index) << "the first IPv4 GID stays the first";

    const size_t added = events.seen.size();
    ASSERT_EQ(system(gone.cmd.c_str()), 0);
    gone.cmd.clear();
    t0 = std::chrono::steady_clock::now();
    while (events.seen.size() == added && since_ms(t0) < 5000) {
        ibmsg_context_wait(ctx, 500);
    }
    for (int i = 0; i < 3; i++) {
        ibmsg_context_wait(ctx, 100); // a late one would show here
    }
    ASSERT_GT(events.seen.size(), added) << "no GID change reported for an address removed";
    printf("address removed: %zu event(s)\n", events.seen.size() - added);
    for (size_t i = 1; i < events.seen.size(); i++) {
        EXPECT_EQ(events.seen[i].event_type, 18) << i;
        EXPECT_EQ(events.seen[i].affected, 0u) << i << ": the context's GID is not touched";
    }
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_ADDRESS_EVENTS), events.seen.size());
    EXPECT_EQ(memcmp(info->gid, real, sizeof(real)), 0);
    expect_message(ctx, a, b, 1);
    ASSERT_EQ(ibmsg_ep_create(ctx, &c), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &d), IBMSG_OK);
    ASSERT_EQ(core_test::connect_pair(c, d), IBMSG_OK);
    expect_message(ctx, c, d, 2);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// A LID change (a subnet manager's; rxe has no LIDs, so the event is injected): the LID is
// queried again, here restoring a spoiled one (changed 1), then one that is right (changed 0).
TEST(WaitAddress, ALidChangeQueriesTheLidAgain)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t a, b;
    core_test::open_pair(&ctx, &a, &b, quiet);
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    auto *info = const_cast<verbs_dev_info_t *>(verbs_dev_info(ctx->dev));
    const uint16_t lid = info->lid;
    AddressEvents events;
    events.start(ctx);
    info->lid = uint16_t(lid + 77);
    struct ibv_async_event lid_change {
    };
    lid_change.event_type = IBV_EVENT_LID_CHANGE;
    lid_change.element.port_num = info->port;
    core_async_inject(ctx, &lid_change);
    core_async_inject(ctx, &lid_change);
    ASSERT_EQ(events.seen.size(), 2u);
    for (int i = 0; i < 2; i++) {
        EXPECT_EQ(events.seen[i].id, uint32_t(info->port));
        EXPECT_EQ(events.seen[i].event_type, 11);
    }
    EXPECT_EQ(events.seen[0].affected, 1u);
    EXPECT_EQ(events.seen[1].affected, 0u);
    EXPECT_EQ(info->lid, lid);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_ADDRESS_EVENTS), 2u);
    expect_message(ctx, a, b, 3);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

} // namespace
