// The job layer's events on a device (Soft-RoCE in the guest), between two processes: each is a
// context with the on-demand connection manager (world/wireup.c), the two managers' UD
// addresses swapped over a socket pair instead of PMIx. One side asks (one request sent, one
// taken, no race); both ask at once (forced: both requests are out before either process makes
// progress): exactly one race event per side, the lower rank winning on both, and one request
// each way, their nonces matching across the processes.
#include <gtest/gtest.h>

#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <vector>

#include "core/core.h"
#include "event_record.h"
#include "guest.h"
#include "world_device.h"
#include "ibmsg/ibmsg.h"
#include "ibmsg/tool.h"
#include "world/wireup.h"
#include "world/world_counters.h"
#include "world/world_events.h"

namespace
{

using world_test::have_device;
using world_test::kSkip;

enum Type { SENT, RECVD, RACE, NTYPES };
const char *const type_names[NTYPES] = {"world_connect_req_sent", "world_connect_req_recvd",
                                        "world_connect_race"};

using Seen = EventRecord<Type>;

std::vector<Seen> seen;
Type ctx_of[NTYPES] = {SENT, RECVD, RACE};

void on_event(ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t,
              ibmsg_t_cb_safety_t level, void *ud)
{
    Seen s{};
    s.type = *static_cast<Type *>(ud);
    EXPECT_EQ(level, IBMSG_T_CB_REQUIRE_MPI_RESTRICTED);
    EXPECT_EQ(ibmsg_t_event_get_timestamp(inst, &s.ts), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_event_copy(inst, s.data), IBMSG_T_SUCCESS);
    seen.push_back(s);
}

std::vector<Seen> of(Type t)
{
    std::vector<Seen> out;
    for (const Seen &s : seen) {
        if (s.type == t) {
            out.push_back(s);
        }
    }
    return out;
}

// The peer's UD address, as PMIx_Get would give it.
unsigned char peer_addr[64];
size_t peer_addr_len;

int lookup(uint32_t, void *buf, size_t *len)
{
    if (*len < peer_addr_len) {
        return IBMSG_ERR_INVALID;
    }
    memcpy(buf, peer_addr, peer_addr_len);
    *len = peer_addr_len;
    return IBMSG_OK;
}

bool xfer(int fd, void *out, void *in, size_t len)
{
    return write(fd, out, len) == ssize_t(len) && recv(fd, in, len, MSG_WAITALL) == ssize_t(len);
}

// Progress ctx until req completes (10 s at most).
bool complete(ibmsg_context_t ctx, ibmsg_request_t *req)
{
    auto t0 = std::chrono::steady_clock::now();
    int done = 0;
    while (std::chrono::steady_clock::now() - t0 < std::chrono::seconds(10)) {
        if (ibmsg_request_test(req, &done, nullptr) != IBMSG_OK) {
            return false;
        }
        if (done) {
            return true;
        }
        ibmsg_context_progress(ctx, nullptr);
    }
    return false;
}

// One process's side: rank 0 always asks; rank 1 asks too when race. Rank 0 sends a message
// first, rank 1 answers on the endpoint it has then: both handshakes' ends have run.
void side(uint32_t rank, int fd, bool race)
{
    const uint32_t peer = 1 - rank;
    ibmsg_context_t ctx;
    ibmsg_ep_t eps[2] = {nullptr, nullptr};
    world_wireup_t *wu = nullptr;
    ibmsg_t_event_registration_t regs[NTYPES];
    int provided;

    seen.clear();
    ASSERT_EQ(ibmsg_context_create(IBMSG_INFO_NULL, &ctx), IBMSG_OK);
    ASSERT_EQ(world_wireup_create(ctx, rank, 2, eps, 1, lookup, &wu), IBMSG_OK);
    unsigned char mine[64];
    size_t len = sizeof(mine);
    ASSERT_EQ(world_wireup_address(wu, mine, &len), IBMSG_OK);
    peer_addr_len = len;
    ASSERT_TRUE(xfer(fd, mine, peer_addr, len));
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
    for (int t = 0; t < NTYPES; t++) {
        int index = -1;
        ASSERT_EQ(ibmsg_t_event_get_index(type_names[t], &index), IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_event_handle_alloc(index, nullptr, IBMSG_INFO_NULL, &regs[t]),
                  IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_event_register_callback(regs[t], IBMSG_T_CB_REQUIRE_MPI_RESTRICTED,
                                                  IBMSG_INFO_NULL, &ctx_of[t], on_event),
                  IBMSG_T_SUCCESS);
    }
    world_counters_t before = world_cnt;
    ibmsg_ep_t ep = nullptr;
    if (rank == 0 || race) {
        ASSERT_EQ(world_wireup_ep(wu, peer, &ep), IBMSG_OK); // the request goes now
    }
    char go = 'g', other = 0;
    ASSERT_TRUE(xfer(fd, &go, &other, 1)); // both requests are out before any progress
    uint64_t out = 0x5a5a0000u + rank, in = 0;
    ibmsg_request_t sreq, rreq;
    if (rank == 0) {
        ASSERT_EQ(ibmsg_tag_isend(ep, &out, sizeof(out), 1, &sreq), IBMSG_OK);
        ASSERT_TRUE(complete(ctx, &sreq));
        ASSERT_EQ(ibmsg_tag_irecv(ctx, ep, &in, sizeof(in), 2, IBMSG_TAG_MASK_EXACT, &rreq),
                  IBMSG_OK);
        ASSERT_TRUE(complete(ctx, &rreq));
    } else {
        ASSERT_EQ(
            ibmsg_tag_irecv(ctx, IBMSG_EP_NULL, &in, sizeof(in), 1, IBMSG_TAG_MASK_EXACT, &rreq),
            IBMSG_OK);
        ASSERT_TRUE(complete(ctx, &rreq));
        ASSERT_NE(eps[peer], nullptr);
        ASSERT_EQ(ibmsg_tag_isend(eps[peer], &out, sizeof(out), 2, &sreq), IBMSG_OK);
        ASSERT_TRUE(complete(ctx, &sreq));
    }
    EXPECT_EQ(in, 0x5a5a0000u + peer);
    ASSERT_NE(eps[peer], nullptr);
    uint32_t qpn = eps[peer]->qpn;

    // Exactly the events of the connections made: one endpoint, one request each way it went.
    EXPECT_EQ(world_cnt.eps_on_demand - before.eps_on_demand, 1u);
    std::vector<Seen> sent = of(SENT), recvd = of(RECVD), races = of(RACE);
    bool asked = rank == 0 || race, asked_by_peer = rank == 1 || race;
    ASSERT_EQ(sent.size(), asked ? 1u : 0u);
    ASSERT_EQ(recvd.size(), asked_by_peer ? 1u : 0u);
    ASSERT_EQ(races.size(), race ? 1u : 0u);
    EXPECT_EQ(world_cnt.connect_reqs_sent - before.connect_reqs_sent, sent.size());
    EXPECT_EQ(world_cnt.connect_races - before.connect_races, races.size());
    uint32_t nonces[2] = {0, 0}, peer_nonces[2] = {0, 0}; // [0] sent, [1] taken
    if (asked) {
        const auto &e = sent[0].as<world_ev_req_elems_t>();
        EXPECT_EQ(e.peer, peer);
        EXPECT_EQ(e.qpn, qpn);
        nonces[0] = e.nonce;
    }
    if (asked_by_peer) {
        const auto &e = recvd[0].as<world_ev_req_elems_t>();
        EXPECT_EQ(e.peer, peer);
        EXPECT_EQ(e.qpn, qpn);
        nonces[1] = e.nonce;
    }
    if (race) {
        const auto &e = races[0].as<world_ev_race_elems_t>();
        EXPECT_EQ(e.peer, peer);
        EXPECT_EQ(e.winner, 0u) << "the lower rank's request wins";
        EXPECT_EQ(e.qpn, qpn);
        EXPECT_EQ(e.outcome, rank == 0 ? WORLD_RACE_WON : WORLD_RACE_LOST);
        // In order: our request, the crossing, the peer's request taken.
        ASSERT_EQ(seen.size(), 3u);
        EXPECT_EQ(seen[0].type, SENT);
        EXPECT_EQ(seen[1].type, RACE);
        EXPECT_EQ(seen[2].type, RECVD);
    }
    for (size_t i = 1; i < seen.size(); i++) {
        EXPECT_LE(seen[i - 1].ts, seen[i].ts);
    }
    // The request this side took is the one the other side sent, and the other way round.
    ASSERT_TRUE(xfer(fd, nonces, peer_nonces, sizeof(nonces)));
    EXPECT_EQ(nonces[1], peer_nonces[0]);
    EXPECT_EQ(nonces[0], peer_nonces[1]);
    if (asked) {
        EXPECT_NE(nonces[0], 0u);
    }
    for (auto &r : regs) {
        EXPECT_EQ(ibmsg_t_event_handle_free(r, nullptr, nullptr), IBMSG_T_SUCCESS);
    }
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    ASSERT_TRUE(xfer(fd, &go, &other, 1)); // both done before either says goodbye
    world_wireup_destroy(wu);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// Rank 1 in a child process, rank 0 here; the child's failures print there and fail its exit.
void two_processes(bool race)
{
    if (!have_device()) {
        IBMSG_TEST_MISSING(kSkip);
    }
    int sv[2];
    ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
    fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        close(sv[0]);
        side(1, sv[1], race);
        _exit(::testing::Test::HasFailure() ? 1 : 0);
    }
    close(sv[1]);
    side(0, sv[0], race);
    close(sv[0]); // a child waiting on the socket ends
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "rank 1 (the child) failed";
}

} // namespace

TEST(WorldEvents, OneSideAsksOneRequestEachEndNoRace)
{
#if !IBMSG_HAVE_CORE_EVENTS
    GTEST_SKIP() << "built with -DIBMSG_CORE_EVENTS=OFF: no event is raised";
#endif
    two_processes(false);
}

TEST(WorldEvents, BothAskAtOnceOneRaceEventPerSideLowerRankWins)
{
#if !IBMSG_HAVE_CORE_EVENTS
    GTEST_SKIP() << "built with -DIBMSG_CORE_EVENTS=OFF: no event is raised";
#endif
    two_processes(true);
}
