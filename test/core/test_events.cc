// The messaging core's events on a real device (Soft-RoCE in the guest): an endpoint connected,
// a rendezvous started and completed on both sides (also truncated), a send stall begun and
// ended, an endpoint failed because its peer was killed (retry exceeded), went silent (keepalive)
// or its queue pair was reported fatal (the device's event fed in); each raised exactly once, when
// it happens, with its elements. The types' unit checks (no device) are in test_events_types.cc.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "core/core.h"
#include "core_fixture.h"
#include "peer.h"
#include "event_record.h"
#include "verbs/verbs_priv.h"
#include "counters/shards/shard.h"
#include "ibmsg/ibmsg.h"
#include "ibmsg/tool.h"

namespace
{

using core_test::kSkip;

enum Type { CONNECTED, FAILED, RNDV_STARTED, RNDV_COMPLETED, STALL_BEGUN, STALL_ENDED, NTYPES };
const char *const type_names[NTYPES] = {"core_ep_connected",     "core_ep_failed",
                                        "core_rndv_started",     "core_rndv_completed",
                                        "core_send_stall_begun", "core_send_stall_ended"};

using Seen = EventRecord<Type>;

// Registers for every type of the core, on obj (nullptr: every endpoint), and records instances.
struct Recorder {
    std::vector<Seen> seen;
    ibmsg_t_event_registration_t regs[NTYPES];
    struct Ctx {
        Recorder *r;
        Type t;
    } ctxs[NTYPES];

    static void on_event(ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t,
                         ibmsg_t_cb_safety_t level, void *ud)
    {
        Ctx *c = static_cast<Ctx *>(ud);
        Seen s{};
        s.type = c->t;
        EXPECT_EQ(level, IBMSG_T_CB_REQUIRE_THREAD_SAFE); // raised at MPI_RESTRICTED
        EXPECT_EQ(ibmsg_t_event_get_timestamp(inst, &s.ts), IBMSG_T_SUCCESS);
        int source = -1;
        EXPECT_EQ(ibmsg_t_event_get_source(inst, &source), IBMSG_T_SUCCESS);
        EXPECT_EQ(source, 0);
        EXPECT_EQ(ibmsg_t_event_copy(inst, s.data), IBMSG_T_SUCCESS);
        c->r->seen.push_back(s);
    }

    void start(void *obj = nullptr)
    {
        int provided;
        ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
        for (int t = 0; t < NTYPES; t++) {
            int index = -1;
            ASSERT_EQ(ibmsg_t_event_get_index(type_names[t], &index), IBMSG_T_SUCCESS)
                << type_names[t];
            ASSERT_EQ(ibmsg_t_event_handle_alloc(index, obj != nullptr ? &obj : nullptr,
                                                 IBMSG_INFO_NULL, &regs[t]),
                      IBMSG_T_SUCCESS);
            ctxs[t] = {this, Type(t)};
            ASSERT_EQ(ibmsg_t_event_register_callback(regs[t], IBMSG_T_CB_REQUIRE_THREAD_SAFE,
                                                      IBMSG_INFO_NULL, &ctxs[t], on_event),
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
    std::vector<Seen> of(Type t) const
    {
        std::vector<Seen> out;
        for (const Seen &s : seen) {
            if (s.type == t) {
                out.push_back(s);
            }
        }
        return out;
    }
};

// Source 0's clock, CLOCK_MONOTONIC in nanoseconds.
long long now_ns()
{
    long long ts = 0;
    EXPECT_EQ(ibmsg_t_source_get_timestamp(0, &ts), IBMSG_T_SUCCESS);
    return ts;
}

using core_test::since_ms;

} // namespace

TEST(CoreEvents, ConnectedOncePerEndpoint)
{
    ibmsg_context_t ctx;
    int ret = core_test::open_context(&ctx);
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(kSkip);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    ibmsg_ep_t a, b;
    ASSERT_EQ(ibmsg_ep_create(ctx, &a), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &b), IBMSG_OK);
    Recorder all, only_b;
    all.start();
    only_b.start(b);
    ASSERT_EQ(core_test::connect_pair(a, b), IBMSG_OK);
    auto c = all.of(CONNECTED);
    ASSERT_EQ(c.size(), 2u);
    ASSERT_EQ(all.seen.size(), 2u);
    const auto &ca = c[0].as<core_ev_ep_connected_elems_t>();
    const auto &cb = c[1].as<core_ev_ep_connected_elems_t>();
    EXPECT_EQ(ca.qpn, a->qpn);
    EXPECT_EQ(ca.peer_qpn, b->qpn);
    EXPECT_EQ(ca.credits, core_ep_window(b)) << "the peer's send window";
    EXPECT_EQ(cb.qpn, b->qpn);
    EXPECT_EQ(cb.peer_qpn, a->qpn);
    EXPECT_LT(c[0].ts, c[1].ts);
    ASSERT_EQ(only_b.seen.size(), 1u); // bound to b: b's alone
    EXPECT_EQ(only_b.seen[0].as<core_ev_ep_connected_elems_t>().qpn, b->qpn);
    // Destroying an endpoint is no failure.
    EXPECT_EQ(ibmsg_ep_destroy(a), IBMSG_OK);
    EXPECT_EQ(ibmsg_ep_destroy(b), IBMSG_OK);
    EXPECT_EQ(all.seen.size(), 2u);
    only_b.stop();
    all.stop();
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

struct CoreEventsPair : core_test::PairTest {
    Recorder rec;
    void SetUp() override
    {
        open_pair();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        rec.start();
    }
    void TearDown() override
    {
        if (ctx != IBMSG_CONTEXT_NULL) {
            rec.stop();
            ibmsg_ep_destroy(a);
            ibmsg_ep_destroy(b);
            ibmsg_context_destroy(ctx);
        }
    }
};

TEST_F(CoreEventsPair, RendezvousStartedAndCompletedOnBothSides)
{
    const size_t len = 4 * limit + 3;
    std::vector<uint8_t> out(len, 0x5a), in(len, 0);
    ibmsg_request_t rr, sr;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in.data(), len, 77, IBMSG_TAG_MASK_EXACT, &rr), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_isend(a, out.data(), len, 77, &sr), IBMSG_OK);
    auto started = rec.of(RNDV_STARTED);
    ASSERT_EQ(started.size(), 1u); // the sender's, at its RTS
    const auto &s0 = started[0].as<core_ev_rndv_elems_t>();
    EXPECT_EQ(s0.role, 0);
    EXPECT_EQ(s0.tag, 77u);
    EXPECT_EQ(s0.bytes, len);
    const uint32_t id = s0.id;
    ASSERT_EQ(ibmsg_request_wait(&rr, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&sr, nullptr), IBMSG_OK);
    EXPECT_EQ(in, out);
    started = rec.of(RNDV_STARTED);
    ASSERT_EQ(started.size(), 2u);
    const auto &s1 = started[1].as<core_ev_rndv_elems_t>();
    EXPECT_EQ(s1.role, 1);
    EXPECT_EQ(s1.tag, 77u);
    EXPECT_EQ(s1.bytes, len);
    EXPECT_EQ(s1.id, id);
    auto done = rec.of(RNDV_COMPLETED);
    ASSERT_EQ(done.size(), 2u); // the receiver's (data pulled), then the sender's (FIN)
    const auto &d0 = done[0].as<core_ev_rndv_elems_t>();
    const auto &d1 = done[1].as<core_ev_rndv_elems_t>();
    EXPECT_EQ(d0.role, 1);
    EXPECT_EQ(d0.bytes, len);
    EXPECT_EQ(d0.status, IBMSG_OK);
    EXPECT_EQ(d0.id, id);
    EXPECT_EQ(d1.role, 0);
    EXPECT_EQ(d1.bytes, len);
    EXPECT_EQ(d1.status, IBMSG_OK);
    EXPECT_EQ(d1.tag, 77u);
    EXPECT_EQ(d1.id, id);
    EXPECT_LT(started[1].ts, done[0].ts);
    EXPECT_LT(done[0].ts, done[1].ts);
    EXPECT_TRUE(rec.of(STALL_BEGUN).empty());

    // Truncated: the receiver reads what fits and says so.
    rec.seen.clear();
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in.data(), len - 1000, 78, IBMSG_TAG_MASK_EXACT, &rr),
              IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_isend(a, out.data(), len, 78, &sr), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&rr, nullptr), IBMSG_ERR_TRUNCATED);
    ASSERT_EQ(ibmsg_request_wait(&sr, nullptr), IBMSG_OK);
    done = rec.of(RNDV_COMPLETED);
    ASSERT_EQ(done.size(), 2u);
    EXPECT_EQ(done[0].as<core_ev_rndv_elems_t>().bytes, len - 1000);
    EXPECT_EQ(done[0].as<core_ev_rndv_elems_t>().status, IBMSG_ERR_TRUNCATED);
    EXPECT_EQ(done[0].as<core_ev_rndv_elems_t>().id, id + 1);
    EXPECT_EQ(done[1].as<core_ev_rndv_elems_t>().status, IBMSG_OK);
    // Eager messages raise nothing.
    rec.seen.clear();
    uint64_t v = 1;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, &v, sizeof(v), 79, IBMSG_TAG_MASK_EXACT, &rr), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(a, &v, sizeof(v), 79), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&rr, nullptr), IBMSG_OK);
    EXPECT_TRUE(rec.seen.empty());
}

TEST_F(CoreEventsPair, SendStallBegunOnceAndEndedOnce)
{
    // More sends than credits, none progressed: the first that cannot go begins the stall.
    const int n = int(a->cr.avail) + 20;
    std::vector<uint64_t> vals(n), got(n);
    std::vector<ibmsg_request_t> sends(n), recvs(n);
    for (int i = 0; i < n; i++) {
        vals[i] = uint64_t(i);
        ASSERT_EQ(ibmsg_tag_irecv(ctx, b, &got[i], 8, 100 + i, IBMSG_TAG_MASK_EXACT, &recvs[i]),
                  IBMSG_OK);
    }
    const long long t0 = now_ns();
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_tag_isend(a, &vals[i], 8, 100 + i, &sends[i]), IBMSG_OK);
    }
    const long long t1 = now_ns();
    auto begun = rec.of(STALL_BEGUN);
    ASSERT_EQ(begun.size(), 1u);
    EXPECT_EQ(begun[0].as<core_ev_stall_begun_elems_t>().qpn, a->qpn);
    EXPECT_EQ(begun[0].as<core_ev_stall_begun_elems_t>().reason, IBMSG_T_STALL_CREDITS);
    EXPECT_TRUE(rec.of(STALL_ENDED).empty());
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_request_wait(&sends[i], nullptr), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&recvs[i], nullptr), IBMSG_OK);
        EXPECT_EQ(got[i], uint64_t(i));
    }
    auto ended = rec.of(STALL_ENDED);
    ASSERT_EQ(ended.size(), 1u);
    EXPECT_EQ(ended[0].as<core_ev_stall_ended_elems_t>().qpn, a->qpn);
    // The core's own reading of the clock (source 0's): from when it saw the stall (after t0,
    // before the begun event was stamped) to when it saw the end (after t1, before the ended
    // event was stamped).
    const long long duration = (long long)ended[0].as<core_ev_stall_ended_elems_t>().duration_ns;
    EXPECT_GE(begun[0].ts, t0);
    EXPECT_LE(begun[0].ts, t1);
    EXPECT_LE(duration, ended[0].ts - t0);
    EXPECT_GE(duration, t1 - begun[0].ts);
    EXPECT_EQ(rec.of(STALL_BEGUN).size(), 1u);
}

// IBV_EVENT_QP_FATAL on a's queue pair. Soft-RoCE never reports it (no path of the kernel's
// drivers/infiniband/sw/rxe raises IB_EVENT_QP_FATAL), so the test feeds the device's event, with
// a's real QP, through the dispatch the device's events take (core_async_inject). a fails at once
// with cause qp_fatal: its rendezvous send in flight and its bound receive complete with
// IBMSG_ERR_PEER_FAILED before any further progress; core_async_events counts the event;
// core_device_qp_fatal is raised once (a's qpn, IBV_EVENT_QP_FATAL, 1 endpoint failed). c <-> d
// of the same context keep working. The event repeated for a's QP, now failed: raised again (once
// per report), nothing more fails.
TEST_F(CoreEventsPair, QpFatalFailsItsEndpointAtOnce)
{
    ibmsg_ep_t c, d;
    ASSERT_EQ(ibmsg_ep_create(ctx, &c), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &d), IBMSG_OK);
    ASSERT_EQ(core_test::connect_pair(c, d), IBMSG_OK);
    std::vector<core_ev_device_elems_t> fatal;
    int index = -1;
    ibmsg_t_event_registration_t reg;
    ASSERT_EQ(ibmsg_t_event_get_index("core_device_qp_fatal", &index), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_event_handle_alloc(index, &ctx, IBMSG_INFO_NULL, &reg), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_event_register_callback(
                  reg, IBMSG_T_CB_REQUIRE_MPI_RESTRICTED, IBMSG_INFO_NULL, &fatal,
                  [](ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t,
                     ibmsg_t_cb_safety_t, void *ud) {
                      core_ev_device_elems_t e{};
                      EXPECT_EQ(ibmsg_t_event_copy(inst, &e), IBMSG_T_SUCCESS);
                      static_cast<std::vector<core_ev_device_elems_t> *>(ud)->push_back(e);
                  }),
              IBMSG_T_SUCCESS);
    // a's work in flight: a rendezvous send b has not received, a receive bound to a.
    std::vector<uint8_t> big(4 * limit + 3, 0x3c);
    uint64_t in = 0;
    ibmsg_request_t sr, rr;
    ASSERT_EQ(ibmsg_tag_isend(a, big.data(), big.size(), 1, &sr), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_irecv(ctx, a, &in, sizeof(in), 2, IBMSG_TAG_MASK_EXACT, &rr), IBMSG_OK);
    for (int i = 0; i < 20; i++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    rec.seen.clear();
    uint64_t async0 = cnt_read(ctx->cnt, CNT_CORE_ASYNC_EVENTS, CNT_READ_VALUE);

    struct ibv_async_event ev;
    std::memset(&ev, 0, sizeof(ev));
    ev.event_type = IBV_EVENT_QP_FATAL;
    ev.element.qp = a->qp->qp;
    ASSERT_EQ(ev.element.qp->qp_num, a->qpn);
    core_async_inject(ctx, &ev);

    EXPECT_EQ(ibmsg_ep_status(a), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_ASYNC_EVENTS, CNT_READ_VALUE), async0 + 1);
    ASSERT_EQ(fatal.size(), 1u);
    EXPECT_EQ(fatal[0].id, a->qpn);
    EXPECT_EQ(fatal[0].event_type, int(IBV_EVENT_QP_FATAL));
    EXPECT_EQ(fatal[0].affected, 1u);
    ASSERT_EQ(rec.seen.size(), 2u) << "a's failure, then its rendezvous ended by it";
    ASSERT_EQ(rec.seen[0].type, FAILED);
    EXPECT_EQ(rec.seen[0].as<core_ev_ep_failed_elems_t>().qpn, a->qpn);
    EXPECT_EQ(rec.seen[0].as<core_ev_ep_failed_elems_t>().cause, IBMSG_T_EP_FAIL_QP_FATAL);
    ASSERT_EQ(rec.seen[1].type, RNDV_COMPLETED);
    const auto &ended = rec.seen[1].as<core_ev_rndv_elems_t>();
    EXPECT_EQ(ended.tag, 1u);
    EXPECT_EQ(ended.bytes, 0u);
    EXPECT_EQ(ended.role, 0);
    EXPECT_EQ(ended.status, IBMSG_ERR_PEER_FAILED);
    int completed = 0;
    EXPECT_EQ(ibmsg_request_test(&sr, &completed, nullptr), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(completed, 1);
    completed = 0;
    EXPECT_EQ(ibmsg_request_test(&rr, &completed, nullptr), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(completed, 1);

    // The same context's other endpoints: untouched, and they still carry messages.
    EXPECT_EQ(ibmsg_ep_status(c), IBMSG_OK);
    EXPECT_EQ(ibmsg_ep_status(d), IBMSG_OK);
    uint64_t out = 0x0123456789abcdefull;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, d, &in, sizeof(in), 3, IBMSG_TAG_MASK_EXACT, &rr), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(c, &out, sizeof(out), 3), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&rr, nullptr), IBMSG_OK);
    EXPECT_EQ(in, out);

    // Reported again for a's QP, whose endpoint has failed: raised, no endpoint fails.
    core_async_inject(ctx, &ev);
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_ASYNC_EVENTS, CNT_READ_VALUE), async0 + 2);
    ASSERT_EQ(fatal.size(), 2u);
    EXPECT_EQ(fatal[1].id, a->qpn);
    EXPECT_EQ(fatal[1].affected, 0u);
    EXPECT_EQ(rec.of(FAILED).size(), 1u);
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_ep_destroy(c), IBMSG_OK);
    EXPECT_EQ(ibmsg_ep_destroy(d), IBMSG_OK);
}

namespace
{

// Transport settings set low so a dead peer shows quickly (as in test_failure.cc).
core_test::InfoFn fast_failure(int keepalive_ms)
{
    return [=](ibmsg_info_t info) {
        ibmsg_info_set_int(info, "verbs_timeout", 10);
        ibmsg_info_set_int(info, "verbs_retry_cnt", 1);
        ibmsg_info_set_int(info, "core_keepalive_ms", keepalive_ms);
    };
}

// A peer process connected to ep of ctx that sends one message (tag 5) and then sleeps; killed
// by the caller. Returns its pid.
pid_t start_peer(ibmsg_context_t ctx, ibmsg_ep_t *ep, ibmsg_oob_t *conn, int keepalive_ms)
{
    ibmsg_oob_t listener;
    uint16_t port = 0;
    EXPECT_EQ(ibmsg_oob_listen("127.0.0.1", 0, &listener), IBMSG_OK);
    EXPECT_EQ(ibmsg_oob_port(listener, &port), IBMSG_OK);
    fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        ibmsg_oob_close(listener);
        ibmsg_context_t pctx;
        ibmsg_ep_t pep;
        ibmsg_oob_t pconn;
        uint64_t v = 42;
        if (core_test::open_context(&pctx, getenv("IBMSG_VM_DEV_B"), fast_failure(keepalive_ms)) !=
                IBMSG_OK ||
            core_test::join_parent(pctx, port, &pep, &pconn) != IBMSG_OK ||
            ibmsg_tag_send(pep, &v, sizeof(v), 5) != IBMSG_OK) {
            _exit(10);
        }
        for (;;) {
            pause();
        }
    }
    EXPECT_EQ(ibmsg_ep_create(ctx, ep), IBMSG_OK);
    EXPECT_EQ(ibmsg_oob_accept(listener, 20000, conn), IBMSG_OK);
    EXPECT_EQ(ibmsg_oob_ep_connect(*conn, *ep, 20000), IBMSG_OK);
    ibmsg_oob_close(listener);
    uint64_t v = 0;
    EXPECT_EQ(ibmsg_tag_recv(ctx, *ep, &v, 8, 5, IBMSG_TAG_MASK_EXACT, nullptr), IBMSG_OK);
    return pid;
}

void kill_peer(pid_t pid)
{
    int status = 0;
    ASSERT_EQ(kill(pid, SIGKILL), 0);
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
}

} // namespace

// A sender whose peer was killed: the send's retries run out.
TEST(CoreEventsFailure, PeerKilledRetryExceeded)
{
    ibmsg_context_t ctx;
    int ret = core_test::open_context(&ctx, getenv("IBMSG_VM_DEV_A"), fast_failure(0));
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(kSkip);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    Recorder rec;
    rec.start();
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    pid_t pid = start_peer(ctx, &ep, &conn, 0);
    ASSERT_EQ(rec.of(CONNECTED).size(), 1u);
    kill_peer(pid);
    uint64_t v = 7;
    auto t0 = std::chrono::steady_clock::now();
    while (ibmsg_ep_status(ep) == IBMSG_OK && since_ms(t0) < 20000) {
        ibmsg_request_t r;
        if (ibmsg_tag_isend(ep, &v, 8, 9, &r) == IBMSG_OK) {
            ibmsg_request_wait(&r, nullptr);
        }
    }
    ASSERT_EQ(ibmsg_ep_status(ep), IBMSG_ERR_PEER_FAILED);
    for (int i = 0; i < 100; i++) { // the flushes that follow raise nothing more
        ibmsg_context_progress(ctx, nullptr);
    }
    auto failed = rec.of(FAILED);
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].as<core_ev_ep_failed_elems_t>().qpn, ep->qpn);
    EXPECT_EQ(failed[0].as<core_ev_ep_failed_elems_t>().cause, IBMSG_T_EP_FAIL_RETRY_EXCEEDED);
    EXPECT_EQ(ibmsg_ep_destroy(ep), IBMSG_OK);
    EXPECT_EQ(rec.of(FAILED).size(), 1u);
    ibmsg_oob_close(conn);
    rec.stop();
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// A receive-only survivor: its keepalive probe meets the dead peer.
TEST(CoreEventsFailure, SilentPeerKeepalive)
{
    const int keepalive_ms = 300;
    ibmsg_context_t ctx;
    int ret = core_test::open_context(&ctx, getenv("IBMSG_VM_DEV_A"), fast_failure(keepalive_ms));
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(kSkip);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    Recorder rec;
    rec.start();
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    pid_t pid = start_peer(ctx, &ep, &conn, 0);
    // A probe of the live peer may be under way: let it finish, so the next meets the dead one.
    auto t0 = std::chrono::steady_clock::now();
    while (ep->ka.probing && since_ms(t0) < 2000) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    kill_peer(pid);
    ibmsg_request_t r;
    uint64_t v = 0;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, ep, &v, 8, 6, IBMSG_TAG_MASK_EXACT, &r), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_ERR_PEER_FAILED);
    auto failed = rec.of(FAILED);
    ASSERT_EQ(failed.size(), 1u);
    EXPECT_EQ(failed[0].as<core_ev_ep_failed_elems_t>().qpn, ep->qpn);
    EXPECT_EQ(failed[0].as<core_ev_ep_failed_elems_t>().cause, IBMSG_T_EP_FAIL_KEEPALIVE);
    EXPECT_EQ(ibmsg_ep_destroy(ep), IBMSG_OK);
    ibmsg_oob_close(conn);
    rec.stop();
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// The shared receive queue's events, bound to the context: core_srq_refilled once per refill
// (the initial fill included) with what it posted, core_srq_low once per limit event with the
// grown target. 48 messages land in a queue of 32 while nobody polls: it runs dry (the rest wait
// in RNR retries, forever by default), the limit event fires and is read (at once or at the
// keepalive tick), the queue grows to 64.
TEST(CoreEventsSrq, LowAndRefilledFollowTheQueue)
{
    struct Srq {
        std::vector<core_ev_srq_elems_t> low, refilled;
    } rec;
    auto on = [](ibmsg_t_event_instance_t inst, std::vector<core_ev_srq_elems_t> *v) {
        core_ev_srq_elems_t e{};
        EXPECT_EQ(ibmsg_t_event_copy(inst, &e), IBMSG_T_SUCCESS);
        v->push_back(e);
    };
    static decltype(on) *on_p = &on;
    int provided;
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
    const char *names[2] = {"core_srq_low", "core_srq_refilled"};
    std::vector<core_ev_srq_elems_t> *lists[2] = {&rec.low, &rec.refilled};
    ibmsg_t_event_registration_t regs[2];
    for (int t = 0; t < 2; t++) {
        int index = -1;
        ASSERT_EQ(ibmsg_t_event_get_index(names[t], &index), IBMSG_T_SUCCESS) << names[t];
        // Every context (obj NULL): the context's own fill comes before its handle exists.
        ASSERT_EQ(ibmsg_t_event_handle_alloc(index, nullptr, IBMSG_INFO_NULL, &regs[t]),
                  IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_event_register_callback(
                      regs[t], IBMSG_T_CB_REQUIRE_THREAD_SAFE, IBMSG_INFO_NULL, lists[t],
                      [](ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t,
                         ibmsg_t_cb_safety_t, void *ud) {
                          (*on_p)(inst, static_cast<std::vector<core_ev_srq_elems_t> *>(ud));
                      }),
                  IBMSG_T_SUCCESS);
    }
    ibmsg_context_t ctx = IBMSG_CONTEXT_NULL;
    ibmsg_ep_t a, b;
    core_test::open_pair(&ctx, &a, &b, [](ibmsg_info_t info) {
        ibmsg_info_set_string(info, "core_srq", "1");
        ibmsg_info_set_int(info, "core_srq_depth", 32);
        ibmsg_info_set_int(info, "core_srq_max", 64);
        ibmsg_info_set_int(info, "core_send_batch", 1);
        ibmsg_info_set_int(info, "core_keepalive_ms", 100); // its tick reads the async events
    });
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    if (ctx->srq == nullptr) {
        IBMSG_TEST_MISSING("the device has no shared receive queue");
    }
    ASSERT_EQ(rec.refilled.size(), 1u) << "the initial fill";
    EXPECT_EQ(rec.refilled[0].posted, 32u);
    EXPECT_EQ(rec.refilled[0].target, 32u);
    EXPECT_EQ(rec.refilled[0].count, 32u);
    EXPECT_TRUE(rec.low.empty());

    const int n = 48;
    std::vector<uint64_t> out(n), in(n, ~0ull);
    std::vector<ibmsg_request_t> sreq(n);
    for (int i = 0; i < n; i++) {
        out[i] = 0x5151000000000000ull + uint64_t(i);
        ASSERT_EQ(ibmsg_tag_isend(a, &out[i], sizeof(out[i]), 9, &sreq[i]), IBMSG_OK);
    }
    usleep(300 * 1000); // nobody polls: the queue runs dry and its limit event fires
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_tag_recv(ctx, b, &in[i], sizeof(in[i]), 9, IBMSG_TAG_MASK_EXACT, nullptr),
                  IBMSG_OK);
        ASSERT_EQ(in[i], out[i]) << "message " << i;
    }
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_request_wait(&sreq[i], nullptr), IBMSG_OK);
    }
    // Progress polled the arrivals in batches and refilled behind them, so it may never have
    // seen the queue below its limit itself: the device's event waits for the keepalive tick.
    auto t0 = std::chrono::steady_clock::now();
    while (rec.low.empty() && since_ms(t0) < 3000) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    auto cnt = [&](cnt_id_t id) { return cnt_read(ctx->cnt, id, CNT_READ_VALUE); };
    ASSERT_GE(rec.low.size(), 1u) << "the limit event was never read";
    EXPECT_EQ(rec.low.size(), cnt(CNT_CORE_SRQ_LIMIT_EVENTS));
    EXPECT_EQ(rec.low[0].count, 8u) << "a quarter of the first target";
    EXPECT_EQ(rec.low[0].target, 64u) << "doubled up to core_srq_max";
    EXPECT_LE(rec.low[0].posted, 32u);
    EXPECT_EQ(rec.refilled.size(), cnt(CNT_CORE_SRQ_REFILLS));
    uint64_t added = 0;
    for (const auto &r : rec.refilled) {
        EXPECT_LE(r.posted, r.target);
        EXPECT_GE(r.count, 1u);
        added += r.count;
    }
    EXPECT_EQ(added, cnt(CNT_VERBS_RECV_WRS_POSTED)) << "every posted buffer in one event";
    // A keepalive may have taken a buffer after the last refill (fewer than a batch are left
    // missing while messages arrive); a progress call that polls nothing fills the queue up.
    t0 = std::chrono::steady_clock::now();
    while (ctx->srq_posted != ctx->srq_target && since_ms(t0) < 3000) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    ASSERT_EQ(ctx->srq_posted, ctx->srq_target);
    EXPECT_EQ(rec.refilled.back().posted, ctx->srq_target);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
    for (auto &r : regs) {
        EXPECT_EQ(ibmsg_t_event_handle_free(r, nullptr, nullptr), IBMSG_T_SUCCESS);
    }
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
}
