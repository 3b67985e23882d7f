// Many processes into one shared receive queue (core/srq.c): 8 sender processes, each with its
// own context, stream into one receiver whose SRQ holds 32 buffers; and a sender killed while
// the others stream into the shared pool fails only its endpoint, and the pool does not leak.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"
#include "core_fixture.h"
#include "ibmsg/ibmsg.h"

namespace
{

using core_test::kSkip;

constexpr uint64_t kTagBye = 1000;
constexpr size_t kSizes[] = {8, 300, 4096, 8000};
constexpr size_t kMaxLen = 8000;

uint64_t cnt(const cnt_shard_t *block, cnt_id_t id, cnt_read_what_t what = CNT_READ_VALUE)
{
    return cnt_read(block, id, what);
}

double since_s(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

size_t size_of(uint32_t s, uint32_t k)
{
    return kSizes[(s + k) % 4];
}

// Payload k of sender s: the first 8 bytes say (s, k), the rest derive from them.
std::vector<uint8_t> payload(uint32_t s, uint32_t k)
{
    std::vector<uint8_t> v(size_of(s, k));
    for (size_t i = 0; i < v.size(); i++) {
        v[i] = uint8_t(s * 131 + k * 17 + i * 7 + 1);
    }
    if (v.size() >= 8) {
        memcpy(v.data(), &s, 4);
        memcpy(v.data() + 4, &k, 4);
    }
    return v;
}

// What a sender reports through its pipe once its stream completed and the bye arrived.
struct Report {
    uint64_t sent, stalls, wc_errors, failures;
};

// A sender process: its own context, one endpoint to the parent; msgs messages (0: until
// killed, at most 16 outstanding), tag s. Writes 'r' once all are posted (finite streams), its
// Report after the parent's bye, and exits when the parent closes its end of `hold`. Exit
// codes name what went wrong.
[[noreturn]] void run_sender(uint16_t port, int wfd, int hold, uint32_t s, uint32_t msgs)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    if (core_test::open_context(&ctx) != IBMSG_OK ||
        core_test::join_parent(ctx, port, &ep, &conn) != IBMSG_OK) {
        _exit(10);
    }
    if (msgs == 0) { // the victim: streams until it is killed
        std::vector<std::vector<uint8_t>> out(16);
        std::vector<ibmsg_request_t> req(16, IBMSG_REQUEST_NULL);
        for (uint32_t k = 0;; k++) {
            uint32_t slot = k % 16;
            if (req[slot] != IBMSG_REQUEST_NULL && ibmsg_request_wait(&req[slot], nullptr) != 0) {
                _exit(11);
            }
            out[slot] = payload(s, k);
            if (ibmsg_tag_isend(ep, out[slot].data(), out[slot].size(), s, &req[slot]) !=
                IBMSG_OK) {
                _exit(12);
            }
        }
    }
    std::vector<std::vector<uint8_t>> out(msgs);
    std::vector<ibmsg_request_t> req(msgs);
    for (uint32_t k = 0; k < msgs; k++) {
        out[k] = payload(s, k);
        if (ibmsg_tag_isend(ep, out[k].data(), out[k].size(), s, &req[k]) != IBMSG_OK) {
            _exit(13);
        }
    }
    if (write(wfd, "r", 1) != 1) {
        _exit(14);
    }
    for (uint32_t k = 0; k < msgs; k++) {
        ibmsg_tag_status_t st{};
        if (ibmsg_request_wait(&req[k], &st) != IBMSG_OK || st.error != IBMSG_OK) {
            _exit(15);
        }
    }
    uint64_t bye = 0;
    if (ibmsg_tag_recv(ctx, ep, &bye, sizeof(bye), kTagBye, IBMSG_TAG_MASK_EXACT, nullptr) !=
            IBMSG_OK ||
        bye != s) {
        _exit(16);
    }
    Report r{cnt(ep->cnt, CNT_CORE_EAGER_MSGS_SENT), cnt(ep->cnt, CNT_CORE_CREDIT_STALLS),
             cnt(ctx->cnt, CNT_VERBS_WC_ERRORS), cnt(ctx->cnt, CNT_CORE_EP_FAILURES)};
    if (write(wfd, &r, sizeof(r)) != ssize_t(sizeof(r))) {
        _exit(17);
    }
    char c;
    while (read(hold, &c, 1) > 0) { // EOF: the parent destroyed its endpoints
    }
    _exit(0); // the parent's queue pairs are gone: nothing of ours to drain
}

struct Sender {
    pid_t pid = -1;
    int rfd = -1;  // its reports
    int hold = -1; // closed by the parent to let it exit
    ibmsg_oob_t conn = nullptr;
    ibmsg_ep_t ep = IBMSG_EP_NULL;
};

// Forks sender s, creates the parent's endpoint to it in ctx (prepare runs on it before the
// connection: receives bound to it) and connects the two.
void start_sender(ibmsg_context_t ctx, uint32_t s, uint32_t msgs, Sender *out,
                  const std::function<void(ibmsg_ep_t)> &prepare = nullptr)
{
    ibmsg_oob_t listener;
    uint16_t port = 0;
    int rep[2], hold[2];
    ASSERT_EQ(ibmsg_oob_listen("127.0.0.1", 0, &listener), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_port(listener, &port), IBMSG_OK);
    ASSERT_EQ(pipe(rep), 0);
    ASSERT_EQ(pipe(hold), 0);
    fflush(nullptr);
    out->pid = fork();
    ASSERT_GE(out->pid, 0);
    if (out->pid == 0) {
        // Only its own pipe ends: an earlier sender's `hold` write end kept open here would
        // keep that sender from seeing EOF (and the parent's context is not ours either).
        for (int fd = 3; fd < 4096; fd++) {
            if (fd != rep[1] && fd != hold[0]) {
                close(fd);
            }
        }
        run_sender(port, rep[1], hold[0], s, msgs);
    }
    close(rep[1]);
    close(hold[0]);
    out->rfd = rep[0];
    out->hold = hold[1];
    ASSERT_EQ(ibmsg_ep_create(ctx, &out->ep), IBMSG_OK);
    if (prepare) {
        prepare(out->ep);
    }
    ASSERT_EQ(ibmsg_oob_accept(listener, 20000, &out->conn), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_ep_connect(out->conn, out->ep, 20000), IBMSG_OK);
    ibmsg_oob_close(listener);
}

void send_bye(Sender *s, uint32_t index)
{
    uint64_t bye = index;
    ASSERT_EQ(ibmsg_tag_send(s->ep, &bye, sizeof(bye), kTagBye), IBMSG_OK) << "sender " << index;
}

Report read_report(Sender *s)
{
    Report r{};
    EXPECT_EQ(read(s->rfd, &r, sizeof(r)), ssize_t(sizeof(r)));
    return r;
}

// After the parent destroyed its endpoints: the sender exits 0.
void release(Sender *s, const char *who)
{
    close(s->hold);
    close(s->rfd);
    ibmsg_oob_close(s->conn);
    int status = 0;
    ASSERT_EQ(waitpid(s->pid, &status, 0), s->pid);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
        << who << ": status " << status << " (exit codes: run_sender)";
}

// Checks message j of a stream from sender si arrived whole: the next of that sender, byte-equal.
void verify(const std::vector<uint8_t> &in, const ibmsg_tag_status_t &st, uint32_t *next,
            uint32_t si)
{
    uint32_t s = UINT32_MAX, k = UINT32_MAX;
    ASSERT_EQ(st.error, IBMSG_OK);
    ASSERT_GE(st.length, 8u);
    memcpy(&s, in.data(), 4);
    memcpy(&k, in.data() + 4, 4);
    ASSERT_EQ(s, si);
    ASSERT_EQ(st.tag, uint64_t(si));
    ASSERT_EQ(k, *next) << "sender " << si << ": lost, duplicated or reordered";
    auto want = payload(si, k);
    ASSERT_EQ(st.length, want.size());
    ASSERT_EQ(memcmp(in.data(), want.data(), want.size()), 0)
        << "sender " << si << " message " << k;
    (*next)++;
}

} // namespace

// Incast from 8 processes: each has its own context and streams 100 messages of 8 B to 8000 B
// into one receiver whose SRQ holds 32 buffers (depth and maximum) and whose window is 8
// credits. The receiver makes no progress until every sender has posted its stream, so the first
// wave (7 data credits x 8 = 56 messages) meets 32 buffers: the queue empties and its limit event
// fires, the rest wait in RNR retries (verbs_rnr_retry 7: forever). From then on returns keep
// within the budget. Every message arrives exactly once, in order per sender, byte-equal; every
// sender's window stalled and every sender finishes.
TEST(IncastProcesses, EightProcessesIntoASmallSrq)
{
    auto small = [](ibmsg_info_t info) {
        ibmsg_info_set_int(info, "core_srq_depth", 32);
        ibmsg_info_set_int(info, "core_srq_max", 32);
        ibmsg_info_set_int(info, "core_credits", 8); // the senders' window (its address blob)
        // The first poll takes every completion of the first wave before the refill, so the
        // core sees the queue empty (with 16 it would refill half-way: low mark 16).
        ibmsg_info_set_int(info, "core_poll_batch", 64);
    };
    ibmsg_context_t ctx;
    int ret = core_test::open_context(&ctx, nullptr, small);
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(kSkip);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    ASSERT_NE(ctx->srq, nullptr) << "rxe has a shared receive queue";
    ASSERT_EQ(ctx->srq_target, 32u);
    const uint32_t S = 8, M = 100;
    std::vector<Sender> snd(S);
    for (uint32_t i = 0; i < S; i++) {
        ASSERT_NO_FATAL_FAILURE(start_sender(ctx, i, M, &snd[i]));
    }
    std::vector<std::vector<uint8_t>> in(size_t(S) * M, std::vector<uint8_t>(kMaxLen));
    std::vector<ibmsg_request_t> rreq(size_t(S) * M);
    for (size_t j = 0; j < rreq.size(); j++) {
        ASSERT_EQ(ibmsg_tag_irecv(ctx, IBMSG_EP_NULL, in[j].data(), kMaxLen, 0, IBMSG_TAG_MASK_ANY,
                                  &rreq[j]),
                  IBMSG_OK);
    }
    for (uint32_t i = 0; i < S; i++) { // every stream posted: its first window is on the wire
        char c = 0;
        ASSERT_EQ(read(snd[i].rfd, &c, 1), 1) << "sender " << i;
        ASSERT_EQ(c, 'r');
    }
    usleep(500000); // the first wave lands (and is refused) before the receiver progresses
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<uint32_t> next(S, 0);
    for (size_t j = 0; j < rreq.size(); j++) { // wildcards complete in posting order
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_request_wait(&rreq[j], &st), IBMSG_OK) << "receive " << j;
        uint32_t si = UINT32_MAX;
        for (uint32_t i = 0; i < S; i++) {
            si = st.source == snd[i].ep ? i : si;
        }
        ASSERT_LT(si, S) << "receive " << j << " from an unknown endpoint";
        ASSERT_NO_FATAL_FAILURE(verify(in[j], st, &next[si], si));
        ASSERT_LT(since_s(t0), 120.0) << "bounded";
    }
    const double secs = since_s(t0);
    for (uint32_t i = 0; i < S; i++) {
        ASSERT_NO_FATAL_FAILURE(send_bye(&snd[i], i));
    }
    uint64_t stalls = 0;
    for (uint32_t i = 0; i < S; i++) {
        Report r = read_report(&snd[i]);
        EXPECT_EQ(r.sent, M) << "sender " << i;
        EXPECT_GT(r.stalls, 0u) << "sender " << i << ": its window bound it";
        EXPECT_EQ(r.wc_errors, 0u) << "sender " << i;
        EXPECT_EQ(r.failures, 0u) << "sender " << i;
        stalls += r.stalls;
        EXPECT_EQ(next[i], M) << "sender " << i;
        EXPECT_EQ(cnt(snd[i].ep->cnt, CNT_CORE_EAGER_MSGS_RECVD), M) << "sender " << i;
    }
    fprintf(stderr,
            "incast of %u processes x %u in %.1f s: limit events %llu, srq empty %llu, refills "
            "%llu, returns withheld %llu, credits forgiven %llu, senders' window stalls %llu, "
            "posted low %llu high %llu\n",
            S, M, secs, (unsigned long long)cnt(ctx->cnt, CNT_CORE_SRQ_LIMIT_EVENTS),
            (unsigned long long)cnt(ctx->cnt, CNT_CORE_SRQ_EMPTY),
            (unsigned long long)cnt(ctx->cnt, CNT_CORE_SRQ_REFILLS),
            (unsigned long long)cnt(ctx->cnt, CNT_CORE_SRQ_CREDITS_WITHHELD),
            (unsigned long long)cnt(ctx->cnt, CNT_CORE_SRQ_CREDITS_FORGIVEN),
            (unsigned long long)stalls,
            (unsigned long long)cnt(ctx->cnt, CNT_CORE_SRQ_POSTED, CNT_READ_LOW),
            (unsigned long long)cnt(ctx->cnt, CNT_CORE_SRQ_POSTED, CNT_READ_HIGH));
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_EAGER_MSGS_RECVD), uint64_t(S) * M + 0);
    EXPECT_GE(cnt(ctx->cnt, CNT_CORE_SRQ_LIMIT_EVENTS), 1u) << "the first wave overran the SRQ";
    EXPECT_GE(cnt(ctx->cnt, CNT_CORE_SRQ_EMPTY), 1u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_SRQ_POSTED, CNT_READ_LOW), 0u) << "it ran empty";
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_SRQ_POSTED, CNT_READ_HIGH), 32u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_SRQ_TARGET, CNT_READ_HIGH), 32u) << "core_srq_max";
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_WC_ERRORS), 0u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_RNR_EVENTS), 0u) << "RNR retries never ran out";
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_WIRE_REJECTED), 0u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_EP_FAILURES), 0u);
    for (uint32_t i = 0; i < S; i++) {
        ASSERT_EQ(ibmsg_ep_destroy(snd[i].ep), IBMSG_OK);
    }
    for (uint32_t i = 0; i < S; i++) {
        release(&snd[i], "sender");
    }
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted));
    EXPECT_EQ(ctx->srq_lent, 0u);
    EXPECT_EQ(ctx->srq_nwait, 0u);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// Four senders stream into one receiver's shared pool (SRQ of 32 to 64 buffers, windows of 8);
// the victim, which streams without end, is killed (SIGKILL) after 20 of its messages were
// received, more of its messages unexpected (they hold pool buffers) and the three others
// mid-stream. Only the victim's endpoint fails (found by the keepalive or a credit return to
// it), its receives complete with IBMSG_ERR_PEER_FAILED, the others' 300 messages each arrive
// byte-verified and in order, and the pool does not leak: buffers in use are the posted ones plus
// the victim's unexpected messages until its endpoint is destroyed, then the posted ones alone.
TEST(IncastProcesses, PeerKilledWhileOthersStreamIntoTheSharedPool)
{
    auto settings = [](ibmsg_info_t info) {
        ibmsg_info_set_int(info, "core_srq_depth", 32);
        ibmsg_info_set_int(info, "core_srq_max", 64);
        ibmsg_info_set_int(info, "core_credits", 8);
        ibmsg_info_set_int(info, "core_keepalive_ms", 300);
        ibmsg_info_set_int(info, "verbs_timeout", 12); // ACK timeout 16.8 ms
        ibmsg_info_set_int(info, "verbs_retry_cnt", 2);
    };
    ibmsg_context_t ctx;
    int ret = core_test::open_context(&ctx, nullptr, settings);
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(kSkip);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    ASSERT_NE(ctx->srq, nullptr) << "rxe has a shared receive queue";
    const uint32_t S = 4, V = 3, M = 300, VR = 20; // V: the victim; VR: its posted receives
    std::vector<Sender> snd(S);
    std::vector<std::vector<uint8_t>> in(size_t(S) * M, std::vector<uint8_t>(kMaxLen));
    std::vector<ibmsg_request_t> rreq(size_t(S) * M, IBMSG_REQUEST_NULL);
    for (uint32_t i = 0; i < S; i++) {
        const uint32_t n = i == V ? VR : M;
        auto post = [&](ibmsg_ep_t ep) { // bound to the endpoint, before it connects
            for (uint32_t k = 0; k < n; k++) {
                size_t j = size_t(i) * M + k;
                ASSERT_EQ(ibmsg_tag_irecv(ctx, ep, in[j].data(), kMaxLen, i, IBMSG_TAG_MASK_EXACT,
                                          &rreq[j]),
                          IBMSG_OK);
            }
        };
        ASSERT_NO_FATAL_FAILURE(start_sender(ctx, i, i == V ? 0 : M, &snd[i], post));
    }
    // Until the victim's receives are done, then until the others' are.
    std::vector<uint32_t> next(S, 0), done(S, 0);
    const auto t0 = std::chrono::steady_clock::now();
    auto poll = [&](uint32_t i) {
        const uint32_t n = i == V ? VR : M;
        for (; done[i] < n; done[i]++) {
            size_t j = size_t(i) * M + done[i];
            int flag = 0;
            ibmsg_tag_status_t st{};
            ASSERT_EQ(ibmsg_request_test(&rreq[j], &flag, &st), IBMSG_OK) << "sender " << i;
            if (!flag) {
                return;
            }
            ASSERT_EQ(st.source, snd[i].ep);
            ASSERT_NO_FATAL_FAILURE(verify(in[j], st, &next[i], i));
        }
    };
    while (done[V] < VR) {
        for (uint32_t i = 0; i < S; i++) {
            ASSERT_NO_FATAL_FAILURE(poll(i));
        }
        ASSERT_LT(since_s(t0), 60.0) << "the victim's first messages";
    }
    // Let more of the victim's stream come in unexpected, then kill it.
    while (cnt(snd[V].ep->cnt, CNT_CORE_EAGER_MSGS_RECVD) < VR + 8) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
        ASSERT_LT(since_s(t0), 60.0) << "the victim's unexpected messages";
    }
    const uint32_t others_done_at_kill = done[0] + done[1] + done[2];
    ASSERT_EQ(kill(snd[V].pid, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(snd[V].pid, &status, 0), snd[V].pid);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    snd[V].pid = -1;
    const auto t_kill = std::chrono::steady_clock::now();
    double detect_s = -1;
    while (done[0] + done[1] + done[2] < 3 * M || detect_s < 0) {
        for (uint32_t i = 0; i < S; i++) {
            if (i != V) {
                ASSERT_NO_FATAL_FAILURE(poll(i));
            }
        }
        ibmsg_context_progress(ctx, nullptr);
        if (detect_s < 0 && ibmsg_ep_status(snd[V].ep) != IBMSG_OK) {
            detect_s = since_s(t_kill);
        }
        ASSERT_LT(since_s(t_kill), 60.0) << "detected " << detect_s << " s; survivors' receives "
                                         << done[0] << "," << done[1] << "," << done[2];
    }
    const uint64_t victim_recvd = cnt(snd[V].ep->cnt, CNT_CORE_EAGER_MSGS_RECVD);
    fprintf(stderr,
            "victim killed with %u of the survivors' %u messages received, its endpoint failed "
            "%.3f s later; it had sent %llu received (%u matched, %llu unexpected); limit events "
            "%llu, srq empty %llu, credits forgiven %llu, posted %u of %u (low %llu)\n",
            others_done_at_kill, 3 * M, detect_s, (unsigned long long)victim_recvd, VR,
            (unsigned long long)(victim_recvd - VR),
            (unsigned long long)cnt(ctx->cnt, CNT_CORE_SRQ_LIMIT_EVENTS),
            (unsigned long long)cnt(ctx->cnt, CNT_CORE_SRQ_EMPTY),
            (unsigned long long)cnt(ctx->cnt, CNT_CORE_SRQ_CREDITS_FORGIVEN), ctx->srq_posted,
            ctx->srq_target, (unsigned long long)cnt(ctx->cnt, CNT_CORE_SRQ_POSTED, CNT_READ_LOW));
    EXPECT_LT(others_done_at_kill, 3 * M) << "the others were mid-stream at the kill";
    EXPECT_EQ(ibmsg_ep_status(snd[V].ep), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_EP_FAILURES), 1u) << "only the victim's endpoint failed";
    EXPECT_EQ(cnt(snd[V].ep->cnt, CNT_CORE_EP_FAILURES), 1u);
    for (uint32_t i = 0; i < S; i++) {
        if (i != V) {
            EXPECT_EQ(ibmsg_ep_status(snd[i].ep), IBMSG_OK) << "sender " << i;
            EXPECT_EQ(next[i], M) << "sender " << i;
            EXPECT_EQ(cnt(snd[i].ep->cnt, CNT_CORE_EAGER_MSGS_RECVD), M) << "sender " << i;
        }
    }
    // The pool: the SRQ's posted level agrees with the context, and every buffer out of the
    // pool is posted or holds one of the victim's unexpected messages.
    ASSERT_GT(victim_recvd, uint64_t(VR));
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_SRQ_POSTED), uint64_t(ctx->srq_posted));
    EXPECT_LE(ctx->srq_posted, ctx->srq_target);
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE),
              uint64_t(ctx->srq_posted) + (victim_recvd - VR))
        << "posted buffers and the victim's unexpected messages";
    for (uint32_t i = 0; i < S; i++) {
        if (i != V) {
            char c = 0;
            ASSERT_EQ(read(snd[i].rfd, &c, 1), 1) << "sender " << i; // its stream was posted
            ASSERT_EQ(c, 'r');
            ASSERT_NO_FATAL_FAILURE(send_bye(&snd[i], i));
            Report r = read_report(&snd[i]);
            EXPECT_EQ(r.sent, M);
            EXPECT_EQ(r.wc_errors, 0u) << "sender " << i;
            EXPECT_EQ(r.failures, 0u) << "sender " << i;
        }
    }
    ASSERT_EQ(ibmsg_ep_destroy(snd[V].ep), IBMSG_OK);
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted))
        << "the victim's unexpected messages went back to the pool";
    for (uint32_t i = 0; i < S; i++) {
        if (i != V) {
            ASSERT_EQ(ibmsg_ep_destroy(snd[i].ep), IBMSG_OK);
        }
    }
    for (uint32_t i = 0; i < S; i++) {
        if (i != V) {
            release(&snd[i], "survivor");
        } else {
            close(snd[i].hold);
            close(snd[i].rfd);
            ibmsg_oob_close(snd[i].conn);
        }
    }
    ibmsg_context_progress(ctx, nullptr); // an idle call refills to the target
    EXPECT_EQ(ctx->srq_posted, ctx->srq_target);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_SRQ_POSTED), uint64_t(ctx->srq_target));
    EXPECT_EQ(cnt(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted));
    EXPECT_EQ(ctx->srq_lent, 0u);
    EXPECT_EQ(ctx->srq_nwait, 0u);
    EXPECT_EQ(cnt(ctx->cnt, CNT_CORE_ENDPOINTS), 0u);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}
