// Tagged messaging on a real device (Soft-RoCE in the guest): two endpoints of one context
// connected to each other, several endpoints, and two processes through the TCP helper.
#include <gtest/gtest.h>

#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
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
using core_test::open_context;

using core_test::payload;

struct MsgTest : core_test::PairTest {
    const char *srq_hint = nullptr; // core_srq for this context; nullptr: the environment's
    void SetUp() override
    {
        const char *m = srq_hint;
        if (m == nullptr) {
            open_pair();
        } else {
            open_pair([m](ibmsg_info_t info) { ibmsg_info_set_string(info, "core_srq", m); });
        }
    }
    void TearDown() override
    {
        if (ctx != IBMSG_CONTEXT_NULL) {
            EXPECT_EQ(cnt(CNT_CORE_WIRE_REJECTED), 0u);
            EXPECT_EQ(cnt(CNT_VERBS_RNR_EVENTS), 0u);
            EXPECT_EQ(cnt(CNT_VERBS_WC_ERRORS), 0u);
            EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
        }
    }
    // The context's view: its own block plus its endpoints' (counters/shards/shard.h).
    uint64_t cnt(cnt_id_t id, cnt_read_what_t what = CNT_READ_VALUE) const
    {
        return cnt_read(ctx->cnt, id, what);
    }

    // Send from -> to and receive it there with an exact tag; check every byte.
    void transfer(ibmsg_ep_t from, ibmsg_ep_t to, size_t len, uint64_t tag)
    {
        auto out = payload(tag, len);
        std::vector<uint8_t> in(len + 16, 0xee);
        ibmsg_tag_status_t st{};
        ibmsg_request_t rreq;
        ASSERT_EQ(ibmsg_tag_irecv(ctx, to, in.data(), len, tag, IBMSG_TAG_MASK_EXACT, &rreq),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_send(from, out.data(), len, tag), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rreq, &st), IBMSG_OK);
        EXPECT_EQ(rreq, IBMSG_REQUEST_NULL);
        EXPECT_EQ(st.source, to);
        EXPECT_EQ(st.tag, tag);
        EXPECT_EQ(st.length, len);
        EXPECT_EQ(st.error, IBMSG_OK);
        // memcmp takes no null pointer, even for 0 bytes (UBSan): an empty payload has none.
        EXPECT_TRUE(len == 0 || std::memcmp(in.data(), out.data(), len) == 0) << len << " bytes";
        for (size_t i = len; i < in.size(); i++) {
            ASSERT_EQ(in[i], 0xee) << "written past the message at " << i;
        }
    }
};

// The same pair with the receive queues fixed, whatever the run's IBMSG_CORE_SRQ says.
struct MsgTestPerEndpointRq : MsgTest {
    MsgTestPerEndpointRq()
    {
        srq_hint = "0";
    }
};
struct MsgTestSrq : MsgTest {
    MsgTestSrq()
    {
        srq_hint = "1";
    }
};

} // namespace

TEST_F(MsgTest, PingPongEverySizeCountsExactly)
{
    std::vector<size_t> sizes = {0,   1,   7,    8,    63,   64,   100,  175,       176,  177,
                                 200, 201, 1000, 1024, 4095, 4096, 4097, limit - 1, limit};
    uint64_t bytes = 0, tag = 1;
    for (size_t s : sizes) {
        transfer(a, b, s, tag++);
        transfer(b, a, s, tag++);
        bytes += 2 * s;
    }
    const uint64_t n = 2 * sizes.size();
    EXPECT_EQ(cnt(CNT_CORE_EAGER_MSGS_SENT), n);
    EXPECT_EQ(cnt(CNT_CORE_EAGER_MSGS_RECVD), n);
    EXPECT_EQ(cnt(CNT_CORE_EAGER_BYTES_SENT), bytes);
    EXPECT_EQ(cnt(CNT_CORE_EAGER_BYTES_RECVD), bytes);
    uint64_t inlined = 0;
    for (size_t s : sizes) {
        inlined += ((int64_t)s <= a->inline_max) + ((int64_t)s <= b->inline_max);
    }
    ASSERT_GT(inlined, 0u);
    ASSERT_LT(inlined, n) << "the large ones go through bounce buffers";
    EXPECT_EQ(cnt(CNT_CORE_INLINE_MSGS_SENT), inlined);
    // Every tag fits the immediate: compact, but for the two empty messages.
    EXPECT_EQ(cnt(CNT_CORE_COMPACT_MSGS_SENT), n - 2);
    EXPECT_EQ(cnt(CNT_CORE_HEADER_MSGS_SENT), 2u);
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_MSGS), 0u);
    EXPECT_EQ(cnt(CNT_CORE_POSTED_RECVQ), 0u);
    EXPECT_GE(cnt(CNT_CORE_POSTED_RECVQ, CNT_READ_HIGH), 1u);
    EXPECT_EQ(cnt(CNT_VERBS_SEND_WRS_POSTED), n + cnt(CNT_CORE_CREDIT_MSGS_SENT));
    EXPECT_GT(cnt(CNT_VERBS_CQ_POLLS), cnt(CNT_VERBS_CQ_POLLS_EMPTY));
}

// A progress call that finds arrivals polls the send CQ only when a completion can be there (a
// signalled send outstanding, or an error seen): the arrival returns without that poll. 40
// messages a -> b, one signal per core_signal_interval sends: every call checked, both kinds seen.
// A context reserves its first 256 requests when it is created: the first operations allocate
// nothing; the 257th outstanding request grows the pool by a chunk.
TEST_F(MsgTest, FirstRequestsAreReservedAtCreation)
{
    const core_req_chunk_t *first = ctx->req_chunks;
    size_t reserved = 0;

    ASSERT_NE(first, nullptr);
    for (const ibmsg_request_s *r = ctx->req_free; r != nullptr; r = r->free_next) {
        reserved++;
    }
    EXPECT_EQ(reserved, 256u);
    std::vector<ibmsg_request_t> reqs(reserved + 1, IBMSG_REQUEST_NULL);
    for (size_t i = 0; i < reserved; i++) {
        ASSERT_EQ(ibmsg_tag_irecv(ctx, b, nullptr, 0, 1000 + i, IBMSG_TAG_MASK_EXACT, &reqs[i]),
                  IBMSG_OK);
    }
    EXPECT_EQ(ctx->req_chunks, first) << "the reserved requests served them all";
    EXPECT_EQ(ctx->req_free, nullptr);
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, nullptr, 0, 999, IBMSG_TAG_MASK_EXACT, &reqs[reserved]),
              IBMSG_OK);
    EXPECT_NE(ctx->req_chunks, first) << "one more grew the pool";
    for (auto &r : reqs) {
        ASSERT_EQ(ibmsg_request_cancel(r), IBMSG_OK);
        EXPECT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_ERR_CANCELED);
    }
}

TEST_F(MsgTest, ACallWithArrivalsPollsTheSendCqOnlyWhenACompletionIsDue)
{
    ASSERT_GT(a->signal_interval, 1u);
    const int n = 40;
    std::vector<ibmsg_request_t> rreq(n);
    std::vector<std::vector<uint8_t>> in(n, std::vector<uint8_t>(8, 0xee));
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(
            ibmsg_tag_irecv(ctx, b, in[i].data(), 8, uint64_t(i), IBMSG_TAG_MASK_EXACT, &rreq[i]),
            IBMSG_OK);
        ibmsg_request_t sreq;
        ASSERT_EQ(ibmsg_tag_isend(a, payload(uint64_t(i), 8).data(), 8, uint64_t(i), &sreq),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK) << "inline: complete at once";
    }
    int skipped = 0, due_calls = 0, delivered = 0;
    for (int calls = 0; delivered < n && calls < 100000; calls++) {
        const bool due = ctx->signals_outstanding != 0 || ctx->scq_due;
        const uint64_t polls = cnt(CNT_VERBS_CQ_POLLS);
        int events = 0;
        ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
        const uint64_t dp = cnt(CNT_VERBS_CQ_POLLS) - polls;
        EXPECT_EQ(dp, !due && events > 0 ? 1u : 2u) << "call " << calls << ", due " << due;
        skipped += !due && events > 0;
        due_calls += due;
        // Only complete ones are tested: a test of an incomplete one would progress.
        while (delivered < n && rreq[delivered]->state == CORE_REQ_COMPLETE) {
            int done = 0;
            ASSERT_EQ(ibmsg_request_test(&rreq[delivered], &done, nullptr), IBMSG_OK);
            ASSERT_EQ(done, 1);
            ASSERT_EQ(in[delivered], payload(uint64_t(delivered), 8)) << "message " << delivered;
            delivered++;
        }
    }
    EXPECT_EQ(delivered, n);
    EXPECT_GT(skipped, 0) << "no call with arrivals skipped the send CQ";
    EXPECT_GT(due_calls, 0) << "the signalled sends were never seen outstanding";
}

// Destroying an endpoint whose sends are still in its send queue (its peer is gone, so they
// wait for retries): every flushed one completes, signalled or not, and the drain marker posted
// behind them is the last; after the destroy no completion in the send CQ names the endpoint,
// which is freed (not kept as a zombie), and its bounce buffers are back.
TEST_F(MsgTest, DestroyTakesEveryFlushedCompletionOfItsSendQueue)
{
    ASSERT_EQ(ibmsg_ep_destroy(b), IBMSG_OK);
    b = IBMSG_EP_NULL;
    const int n = 40; // above the inline limit: bounce buffers, a signal per interval only
    for (int i = 0; i < n; i++) {
        ibmsg_request_t sreq;
        ASSERT_EQ(ibmsg_tag_isend(a, payload(uint64_t(i), 300).data(), 300, uint64_t(i), &sreq),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK);
    }
    ASSERT_EQ(a->sq_head - a->sq_tail, uint64_t(n)) << "all in the send queue";
    const uint64_t wrs = cnt(CNT_VERBS_SEND_WRS_POSTED), comps = cnt(CNT_VERBS_COMPLETIONS);
    const uint64_t receives = a->rq_posted;
    ASSERT_EQ(ibmsg_ep_destroy(a), IBMSG_OK);
    a = IBMSG_EP_NULL;
    EXPECT_EQ(cnt(CNT_VERBS_COMPLETIONS), comps + receives + n + 1)
        << "each posted receive and queued send flushed, then the drain marker";
    EXPECT_EQ(cnt(CNT_VERBS_SEND_WRS_POSTED), wrs) << "markers are not messages";
    EXPECT_EQ(ctx->zombies, nullptr);
    EXPECT_EQ(ctx->signals_outstanding, 0u);
    EXPECT_EQ(cnt(CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted))
        << "no endpoint left: every buffer back (the shared receive queue's stay posted)";
    verbs_wc_t wcs[VERBS_CQ_POLL_MAX];
    EXPECT_EQ(verbs_cq_poll(ctx->scq, VERBS_CQ_POLL_MAX, wcs), 0) << "a completion outlived a";
}

TEST_F(MsgTest, SendArgumentErrors)
{
    std::vector<uint8_t> buf(limit + 1);
    ibmsg_request_t req = IBMSG_REQUEST_NULL;
    EXPECT_EQ(ibmsg_tag_isend(a, nullptr, 1, 1, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(req, IBMSG_REQUEST_NULL);
    EXPECT_EQ(ibmsg_tag_isend(a, buf.data(), 1, 1, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt(CNT_CORE_EAGER_MSGS_SENT), 0u);
}

TEST_F(MsgTest, StreamingBeyondCreditsNeverRnr)
{
    const int n = 2000;
    const size_t len = 300; // above the inline limit: bounce buffers
    std::vector<std::vector<uint8_t>> in(n, std::vector<uint8_t>(len));
    std::vector<std::vector<uint8_t>> out(n);
    std::vector<ibmsg_request_t> rreq(n), sreq(n);
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in[i].data(), len, 42, IBMSG_TAG_MASK_EXACT, &rreq[i]),
                  IBMSG_OK);
    }
    EXPECT_EQ(cnt(CNT_CORE_POSTED_RECVQ), uint64_t(n));
    for (int i = 0; i < n; i++) {
        out[i] = payload(i, len);
        ASSERT_EQ(ibmsg_tag_isend(a, out[i].data(), len, 42, &sreq[i]), IBMSG_OK);
    }
    EXPECT_GT(cnt(CNT_CORE_CREDIT_STALLS), 0u) << "more sends than credits must queue";
    for (int i = 0; i < n; i++) {
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_request_wait(&sreq[i], nullptr), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rreq[i], &st), IBMSG_OK);
        ASSERT_EQ(st.length, len);
        ASSERT_EQ(in[i], out[i]) << "message " << i << " out of order or corrupt";
    }
    EXPECT_EQ(cnt(CNT_CORE_EAGER_MSGS_RECVD), uint64_t(n));
    EXPECT_EQ(cnt(CNT_CORE_POSTED_RECVQ), 0u);
    EXPECT_EQ(cnt(CNT_CORE_POSTED_RECVQ, CNT_READ_HIGH), uint64_t(n));
    EXPECT_GT(cnt(CNT_CORE_CREDIT_MSGS_SENT), 0u) << "b only receives: explicit returns";
    EXPECT_EQ(cnt(CNT_CORE_CREDIT_MSGS_SENT), cnt(CNT_CORE_CREDIT_MSGS_RECVD));
}

TEST_F(MsgTestPerEndpointRq, RepostsWaitForAnIdleCallOrAFullBatch)
{
    ASSERT_EQ(ctx->srq, nullptr) << "core_srq=0 asks for per-endpoint receive queues";
    // 64 credits (the default): reposts go in batches of 16 while messages arrive.
    ASSERT_EQ(b->rq_depth, 64u);
    ASSERT_EQ(b->repost_batch, 16u);
    const uint64_t posted0 = cnt_read(b->cnt, CNT_VERBS_RECV_WRS_POSTED, CNT_READ_VALUE);
    // The call that delivers a message leaves its buffer for later: the receive returns first.
    transfer(a, b, 8, 7);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(b->rq_posted, 63u);
    EXPECT_EQ(b->nrepost, 1u);
    EXPECT_TRUE(b->dirty) << "kept for the next progress call";
    // A call in which nothing arrives posts it.
    int events = -1;
    ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
    EXPECT_EQ(b->nrepost, 0u);
    EXPECT_EQ(b->rq_posted, 64u);
    EXPECT_EQ(cnt_read(b->cnt, CNT_VERBS_RECV_WRS_POSTED, CNT_READ_VALUE), posted0 + 1);
    // A stream: never more than a batch less one waits, whatever arrives in one call, and b,
    // only receiving, returns its credits (500 messages need 8 rounds of 64).
    const int n = 500;
    std::vector<std::vector<uint8_t>> in(n, std::vector<uint8_t>(8)), out(n);
    std::vector<ibmsg_request_t> rreq(n), sreq(n);
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in[i].data(), 8, 9, IBMSG_TAG_MASK_EXACT, &rreq[i]),
                  IBMSG_OK);
    }
    for (int i = 0; i < n; i++) {
        out[i] = payload(i, 8); // sends beyond the credits queue with the caller's buffer
        ASSERT_EQ(ibmsg_tag_isend(a, out[i].data(), 8, 9, &sreq[i]), IBMSG_OK);
    }
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_request_wait(&sreq[i], nullptr), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rreq[i], nullptr), IBMSG_OK);
        ASSERT_EQ(in[i], out[i]) << "message " << i;
        ASSERT_LT(b->nrepost, b->repost_batch);
    }
    ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
    while (events != 0) { // whatever was still arriving (credit returns to a)
        ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
    }
    EXPECT_EQ(b->rq_posted, 64u);
    EXPECT_EQ(b->nrepost, 0u);
    EXPECT_EQ(cnt_read(b->cnt, CNT_VERBS_RECV_WRS_POSTED, CNT_READ_VALUE), posted0 + 1 + n);
    EXPECT_GT(cnt(CNT_CORE_CREDIT_MSGS_SENT), 0u);
}

// The SRQ twin: the defaults post 256 buffers, refilled in batches of 32 while messages arrive.
TEST_F(MsgTestSrq, SrqRefillsWaitForAnIdleCallOrAFullBatch)
{
    if (ctx->srq == nullptr) {
        IBMSG_TEST_MISSING("the device has no shared receive queue");
    }
    ASSERT_EQ(ctx->srq_target, 256u);
    ASSERT_EQ(ctx->srq_batch, 32u);
    ASSERT_EQ(b->rq_depth, 0u) << "nothing posted per endpoint";
    ASSERT_EQ(ctx->srq_posted, 256u);
    const uint64_t posted0 = cnt(CNT_VERBS_RECV_WRS_POSTED);
    const uint64_t refills0 = cnt(CNT_CORE_SRQ_REFILLS);
    // The call that delivers a message leaves the refill for later: the receive returns first.
    transfer(a, b, 8, 7);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(ctx->srq_posted, 255u);
    EXPECT_EQ(b->cr.to_return, 1u) << "the credit is owed at consumption";
    int events = -1;
    ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
    EXPECT_EQ(ctx->srq_posted, 256u) << "an idle call refills";
    EXPECT_EQ(cnt(CNT_VERBS_RECV_WRS_POSTED), posted0 + 1);
    EXPECT_EQ(cnt(CNT_CORE_SRQ_REFILLS), refills0 + 1);
    // A stream: never more than a batch less one missing after a progress call.
    const int n = 500;
    std::vector<std::vector<uint8_t>> in(n, std::vector<uint8_t>(8)), out(n);
    std::vector<ibmsg_request_t> rreq(n), sreq(n);
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in[i].data(), 8, 9, IBMSG_TAG_MASK_EXACT, &rreq[i]),
                  IBMSG_OK);
    }
    for (int i = 0; i < n; i++) {
        out[i] = payload(i, 8);
        ASSERT_EQ(ibmsg_tag_isend(a, out[i].data(), 8, 9, &sreq[i]), IBMSG_OK);
    }
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_request_wait(&sreq[i], nullptr), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rreq[i], nullptr), IBMSG_OK);
        ASSERT_EQ(in[i], out[i]) << "message " << i;
        ASSERT_GT(ctx->srq_posted, 256u - 32u);
    }
    do {
        ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
    } while (events != 0);
    EXPECT_EQ(ctx->srq_posted, 256u);
    EXPECT_EQ(cnt(CNT_CORE_SRQ_POSTED), 256u);
    EXPECT_EQ(cnt(CNT_VERBS_BUF_POOL_IN_USE), 256u) << "only the posted buffers are out";
    EXPECT_EQ(cnt(CNT_CORE_SRQ_EMPTY), 0u);
    EXPECT_EQ(cnt(CNT_CORE_SRQ_LIMIT_EVENTS), 0u);
    EXPECT_GT(cnt(CNT_CORE_CREDIT_MSGS_SENT), 0u) << "b only receives: explicit returns";
}

// With an SRQ, a buffer that an unexpected message keeps stays in verbs_buf_pool_in_use until a
// receive takes the message; every other buffer of a poll is back when the poll ends (the levels
// are derived from the buffers taken, core_srq_sync).
TEST_F(MsgTestSrq, BuffersOfUnexpectedMessagesStayInUseUntilReceived)
{
    if (ctx->srq == nullptr) {
        IBMSG_TEST_MISSING("the device has no shared receive queue");
    }
    const int kept = 3, matched = 4;
    std::vector<std::vector<uint8_t>> in(matched, std::vector<uint8_t>(32));
    std::vector<ibmsg_request_t> rreq(matched);
    for (int i = 0; i < matched; i++) {
        ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in[i].data(), 32, 50 + i, IBMSG_TAG_MASK_EXACT, &rreq[i]),
                  IBMSG_OK);
    }
    // In arrival order: tags 10..12 find no receive (kept), 50..53 do. Small enough to go inline:
    // no send buffer is in use when the sends are done.
    const uint64_t tags[kept + matched] = {10, 50, 11, 51, 12, 52, 53};
    const size_t lens[kept + matched] = {8, 24, 8, 24, 8, 24, 8};
    for (int i = 0; i < kept + matched; i++) {
        auto out = payload(tags[i], lens[i]);
        ASSERT_EQ(ibmsg_tag_send(a, out.data(), lens[i], tags[i]), IBMSG_OK);
    }
    for (int i = 0; i < matched; i++) {
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_request_wait(&rreq[i], &st), IBMSG_OK);
        in[i].resize(st.length);
        EXPECT_EQ(in[i], payload(uint64_t(50 + i), i < 3 ? 24 : 8)) << "matched message " << i;
    }
    for (int spin = 0; spin < 1000000 && cnt(CNT_CORE_UNEXPECTED_RECVQ) < uint64_t(kept); spin++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    int events = -1;
    do {
        ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
    } while (events != 0);
    ASSERT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ), uint64_t(kept));
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_MSGS), uint64_t(kept));
    EXPECT_EQ(cnt(CNT_CORE_SRQ_POSTED), uint64_t(ctx->srq_posted));
    EXPECT_EQ(cnt(CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted) + kept)
        << "the posted buffers and those the unexpected messages keep";
    for (int k = 0; k < kept; k++) {
        std::vector<uint8_t> got(16, 0xee);
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_tag_recv(ctx, b, got.data(), got.size(), uint64_t(10 + k),
                                 IBMSG_TAG_MASK_EXACT, &st),
                  IBMSG_OK);
        ASSERT_EQ(st.length, 8u);
        got.resize(8);
        EXPECT_EQ(got, payload(uint64_t(10 + k), 8)) << "kept message " << k;
        EXPECT_EQ(cnt(CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted) + kept - k - 1);
    }
    do {
        ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
    } while (events != 0);
    EXPECT_EQ(cnt(CNT_CORE_SRQ_POSTED), uint64_t(ctx->srq_posted));
    EXPECT_EQ(cnt(CNT_VERBS_BUF_POOL_IN_USE), uint64_t(ctx->srq_posted)) << "every buffer back";
}

// The SRQ's levels fall at the end of a poll without a low mark (core_srq_sync): a read takes the
// min with the level, and the next rise marks first (a send buffer taken, the refill). Every
// level the SRQ held after a call is its low mark's candidate; the lowest must be the mark.
TEST_F(MsgTestSrq, LowMarksOfTheSrqAndThePoolKeepTheFallsOfEveryPoll)
{
    if (ctx->srq == nullptr) {
        IBMSG_TEST_MISSING("the device has no shared receive queue");
    }
    int events = -1;
    do { // settled: the SRQ full, nothing in flight
        ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
    } while (events != 0);
    ASSERT_EQ(ctx->srq_posted, 256u);
    ASSERT_GT(ctx->srq_batch, 3u) << "a poll taking a few buffers refills nothing";
    const uint64_t P = CNT_CORE_SRQ_POSTED, U = CNT_VERBS_BUF_POOL_IN_USE;
    cnt_wm_start(cnt_id_t(P));
    cnt_wm_start(cnt_id_t(U));
    const uint64_t pool0 = cnt(cnt_id_t(U)); // the SRQ's 256 and the send buffers none uses
    uint32_t low = ctx->srq_posted;
    // One call, observed: the levels follow srq_posted when it returns.
    auto step = [&] {
        ASSERT_EQ(ibmsg_context_progress(ctx, &events), IBMSG_OK);
        EXPECT_EQ(cnt(cnt_id_t(P)), uint64_t(ctx->srq_posted));
        low = std::min(low, ctx->srq_posted);
    };
    auto until_done = [&](ibmsg_request_t &r) {
        for (int spin = 0; spin < 1000000 && r->state != CORE_REQ_COMPLETE; spin++) {
            step();
            ASSERT_FALSE(HasFatalFailure());
        }
        ASSERT_EQ(r->state, CORE_REQ_COMPLETE);
        ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK); // complete: no call of progress
    };
    // An 8 B message: the call that delivers it takes one buffer and refills nothing.
    std::vector<uint8_t> in(4096, 0xee);
    ibmsg_request_t rreq, sreq;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in.data(), 8, 70, IBMSG_TAG_MASK_EXACT, &rreq), IBMSG_OK);
    auto small = payload(70, 8);
    ASSERT_EQ(ibmsg_tag_send(a, small.data(), 8, 70), IBMSG_OK);
    until_done(rreq);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_TRUE(std::equal(small.begin(), small.end(), in.begin()));
    ASSERT_EQ(ctx->srq_posted, 255u);
    EXPECT_EQ(cnt(cnt_id_t(P), CNT_READ_LOW), 255u) << "read between the fall and a rise";
    EXPECT_EQ(cnt(cnt_id_t(U), CNT_READ_LOW), pool0 - 1);
    // A send through a bounce buffer: the pool rises, after keeping the fall's low mark.
    auto big = payload(71, 4096);
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in.data(), in.size(), 71, IBMSG_TAG_MASK_EXACT, &rreq),
              IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_isend(a, big.data(), big.size(), 71, &sreq), IBMSG_OK);
    EXPECT_EQ(cnt(cnt_id_t(U)), pool0) << "the send buffer in use";
    EXPECT_EQ(cnt(cnt_id_t(U), CNT_READ_LOW), pool0 - 1) << "the mark before the send's rise";
    until_done(rreq);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(in, big);
    until_done(sreq);
    ASSERT_FALSE(HasFatalFailure());
    do { // an idle call refills: the rise keeps the lowest level first
        step();
        ASSERT_FALSE(HasFatalFailure());
    } while (events != 0);
    ASSERT_EQ(ctx->srq_posted, 256u);
    ASSERT_LE(low, 255u);
    EXPECT_EQ(cnt(cnt_id_t(P), CNT_READ_LOW), uint64_t(low)) << "the refill's mark";
    EXPECT_EQ(cnt(cnt_id_t(P), CNT_READ_HIGH), 256u);
    // The pool's lowest: while the SRQ was lowest, less the send buffer if it was back by then.
    EXPECT_GE(cnt(cnt_id_t(U), CNT_READ_LOW), pool0 - (256u - low));
    EXPECT_LE(cnt(cnt_id_t(U), CNT_READ_LOW), pool0 + 1 - (256u - low));
    EXPECT_EQ(cnt(cnt_id_t(U)), ctx->rpool->in_use + ctx->spool->in_use)
        << "the SRQ's buffers and the send buffer until a signalled completion frees it";
    cnt_wm_stop(cnt_id_t(U));
    cnt_wm_stop(cnt_id_t(P));
}

TEST_F(MsgTest, BuffersOfAPageMultipleLimitStartOnPages)
{
    // A message of a page then touches one page of its buffer (core_wire_buf_size).
    ASSERT_EQ(limit, 8192u);
    EXPECT_EQ(ctx->buf_size, 8192u);
    for (verbs_pool_t *pool : {ctx->rpool, ctx->spool}) {
        std::vector<verbs_buf_t *> got;
        for (int i = 0; i < 300; i++) { // past the first chunk: grown chunks too
            verbs_buf_t *bf = verbs_pool_get(pool);
            ASSERT_NE(bf, nullptr);
            EXPECT_EQ(reinterpret_cast<uintptr_t>(bf->data) % 4096, 0u) << "buffer " << i;
            EXPECT_EQ(bf->size, 8192u);
            got.push_back(bf);
        }
        for (verbs_buf_t *bf : got) {
            verbs_pool_put(pool, bf);
        }
    }
}

TEST_F(MsgTest, TheHeaderTakesItsBytesOfTheEagerLimit)
{
    // A tag beyond the compact range puts the header in the receive buffer: such a message
    // goes eagerly up to the limit less the header, a compact one up to the limit.
    const uint64_t full = IBMSG_TAG_COMPACT_MAX + 1ull, compact = IBMSG_TAG_COMPACT_MAX;
    const size_t hdr = sizeof(core_wire_hdr_t);
    struct Case {
        size_t len;
        uint64_t tag;
        bool eager, compact;
    };
    const Case cases[] = {
        {limit - hdr, full, true, false},   {limit - hdr + 1, full, false, false},
        {limit, full, false, false},        {limit, compact, true, true},
        {limit + 1, compact, false, false}, {0, full, true, false},
    };
    for (const Case &c : cases) {
        const uint64_t eager0 = cnt(CNT_CORE_EAGER_MSGS_SENT), rndv0 = cnt(CNT_CORE_RNDV_MSGS_SENT),
                       compact0 = cnt(CNT_CORE_COMPACT_MSGS_SENT),
                       header0 = cnt(CNT_CORE_HEADER_MSGS_SENT),
                       inline0 = cnt(CNT_CORE_INLINE_MSGS_SENT);
        transfer(a, b, c.len, c.tag);
        ASSERT_FALSE(HasFatalFailure());
        EXPECT_EQ(cnt(CNT_CORE_EAGER_MSGS_SENT) - eager0, c.eager ? 1u : 0u) << c.len;
        EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_SENT) - rndv0, c.eager ? 0u : 1u) << c.len;
        EXPECT_EQ(cnt(CNT_CORE_COMPACT_MSGS_SENT) - compact0, c.compact ? 1u : 0u) << c.len;
        EXPECT_EQ(cnt(CNT_CORE_HEADER_MSGS_SENT) - header0, c.eager && !c.compact ? 1u : 0u)
            << c.len;
        EXPECT_EQ(cnt(CNT_CORE_INLINE_MSGS_SENT) - inline0,
                  c.eager && (int64_t)c.len <= a->inline_max ? 1u : 0u)
            << c.len;
    }
    // The same from the queue: sends started beyond the credits take the same decision.
    const int n = 80;
    std::vector<std::vector<uint8_t>> out(n), in(n, std::vector<uint8_t>(limit));
    std::vector<ibmsg_request_t> sreq(n), rreq(n);
    const uint64_t eager0 = cnt(CNT_CORE_EAGER_MSGS_SENT), rndv0 = cnt(CNT_CORE_RNDV_MSGS_SENT);
    for (int i = 0; i < n; i++) {
        const size_t len = limit - hdr + (i % 2);
        out[i] = payload(i, len);
        ASSERT_EQ(
            ibmsg_tag_irecv(ctx, b, in[i].data(), limit, full, IBMSG_TAG_MASK_EXACT, &rreq[i]),
            IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_isend(a, out[i].data(), len, full, &sreq[i]), IBMSG_OK);
    }
    for (int i = 0; i < n; i++) {
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_request_wait(&sreq[i], nullptr), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rreq[i], &st), IBMSG_OK);
        ASSERT_EQ(st.length, out[i].size()) << "message " << i;
        ASSERT_EQ(std::memcmp(in[i].data(), out[i].data(), st.length), 0) << "message " << i;
    }
    EXPECT_EQ(cnt(CNT_CORE_EAGER_MSGS_SENT) - eager0, uint64_t(n / 2));
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_SENT) - rndv0, uint64_t(n / 2));
}

TEST_F(MsgTest, UnexpectedThenWildcardInArrivalOrder)
{
    const int n = 10;
    for (int i = 0; i < n; i++) {
        auto out = payload(i, 16 * i);
        ASSERT_EQ(ibmsg_tag_send(a, out.data(), out.size(), 100 + i), IBMSG_OK);
    }
    for (int spin = 0; spin < 1000000 && cnt(CNT_CORE_UNEXPECTED_RECVQ) < uint64_t(n); spin++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    ASSERT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ), uint64_t(n));
    for (int i = 0; i < n; i++) {
        std::vector<uint8_t> in(160);
        ibmsg_tag_status_t st{};
        ASSERT_EQ(
            ibmsg_tag_recv(ctx, IBMSG_EP_NULL, in.data(), in.size(), 0, IBMSG_TAG_MASK_ANY, &st),
            IBMSG_OK);
        EXPECT_EQ(st.tag, uint64_t(100 + i));
        EXPECT_EQ(st.source, b);
        ASSERT_EQ(st.length, size_t(16 * i));
        in.resize(st.length);
        EXPECT_EQ(in, payload(i, 16 * i));
    }
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_MSGS), uint64_t(n));
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ), 0u);
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ, CNT_READ_HIGH), uint64_t(n));
}

TEST_F(MsgTest, OutOfOrderTagsAndMasks)
{
    // Posted receives for tags 3, then "0x1?" then anything; arrivals 1, 0x12, 3, 0x1f.
    uint64_t r[4] = {};
    ibmsg_request_t q[4];
    ibmsg_tag_status_t st{};
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, &r[0], 8, 3, IBMSG_TAG_MASK_EXACT, &q[0]), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, &r[1], 8, 0x10, ~0xfULL, &q[1]), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_irecv(ctx, IBMSG_EP_NULL, &r[2], 8, 0, IBMSG_TAG_MASK_ANY, &q[2]),
              IBMSG_OK);
    const uint64_t tags[3] = {1, 0x12, 3};
    for (uint64_t t : tags) {
        ASSERT_EQ(ibmsg_tag_send(a, &t, 8, t), IBMSG_OK);
    }
    ASSERT_EQ(ibmsg_request_wait(&q[0], &st), IBMSG_OK);
    EXPECT_EQ(st.tag, 3u);
    EXPECT_EQ(r[0], 3u);
    ASSERT_EQ(ibmsg_request_wait(&q[1], &st), IBMSG_OK);
    EXPECT_EQ(st.tag, 0x12u);
    ASSERT_EQ(ibmsg_request_wait(&q[2], &st), IBMSG_OK);
    EXPECT_EQ(st.tag, 1u) << "the wildcard took the first arrival it matched";
    // Same tag twice: non-overtaking.
    const uint64_t v1 = 111, v2 = 222;
    ASSERT_EQ(ibmsg_tag_send(a, &v1, 8, 9), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(a, &v2, 8, 9), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_recv(ctx, b, &r[3], 8, 9, IBMSG_TAG_MASK_EXACT, &st), IBMSG_OK);
    EXPECT_EQ(r[3], v1);
    ASSERT_EQ(ibmsg_tag_recv(ctx, b, &r[3], 8, 9, IBMSG_TAG_MASK_EXACT, &st), IBMSG_OK);
    EXPECT_EQ(r[3], v2);
}

TEST_F(MsgTest, TruncationWritesNothingPastTheBuffer)
{
    auto out = payload(5, 1000);
    std::vector<uint8_t> in(600, 0xee);
    ibmsg_tag_status_t st{};
    // Posted receive path.
    ibmsg_request_t req;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in.data(), 500, 5, IBMSG_TAG_MASK_EXACT, &req), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(a, out.data(), out.size(), 5), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&req, &st), IBMSG_ERR_TRUNCATED);
    EXPECT_EQ(st.error, IBMSG_ERR_TRUNCATED);
    EXPECT_EQ(st.length, 1000u);
    EXPECT_EQ(std::memcmp(in.data(), out.data(), 500), 0);
    for (size_t i = 500; i < in.size(); i++) {
        ASSERT_EQ(in[i], 0xee) << i;
    }
    // Unexpected path, zero-byte buffer.
    ASSERT_EQ(ibmsg_tag_send(a, out.data(), 10, 6), IBMSG_OK);
    EXPECT_EQ(ibmsg_tag_recv(ctx, b, nullptr, 0, 6, IBMSG_TAG_MASK_EXACT, &st),
              IBMSG_ERR_TRUNCATED);
    EXPECT_EQ(st.length, 10u);
    EXPECT_EQ(cnt(CNT_CORE_TRUNCATED_MSGS), 2u);
}

TEST_F(MsgTest, CancelAReceive)
{
    uint64_t v = 0, w = 77;
    ibmsg_request_t req;
    ibmsg_tag_status_t st{};
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, &v, 8, 1, IBMSG_TAG_MASK_EXACT, &req), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_cancel(req), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&req, &st), IBMSG_ERR_CANCELED);
    EXPECT_EQ(cnt(CNT_CORE_POSTED_RECVQ), 0u);
    ASSERT_EQ(ibmsg_tag_send(a, &w, 8, 1), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_recv(ctx, b, &v, 8, 1, IBMSG_TAG_MASK_EXACT, &st), IBMSG_OK);
    EXPECT_EQ(v, 77u);
}

// A send not yet handed to the device (queued behind exhausted credits: nothing progresses
// to return them) is cancelled: it completes with IBMSG_ERR_CANCELED and its full length,
// never arrives, and the sends around it arrive in order.
TEST_F(MsgTest, CancelASendNotYetHandedToTheDevice)
{
    const uint64_t stalls = cnt(CNT_CORE_CREDIT_STALLS);
    std::vector<uint64_t> vals(10000);
    std::vector<ibmsg_request_t> reqs;
    size_t first_pending = 0;
    for (uint64_t i = 0; i < vals.size(); i++) {
        vals[i] = 1000 + i;
        ibmsg_request_t r;
        ASSERT_EQ(ibmsg_tag_isend(a, &vals[i], 8, i, &r), IBMSG_OK);
        reqs.push_back(r);
        if (r->state == CORE_REQ_POSTED) { // eager sends complete when posted or held
            first_pending = i;
            break;
        }
    }
    ASSERT_EQ(reqs.back()->state, CORE_REQ_POSTED) << "credits never ran out";
    EXPECT_GT(cnt(CNT_CORE_CREDIT_STALLS), stalls);
    const uint64_t cancelled = first_pending, after = first_pending + 1;
    ibmsg_request_t r;
    ASSERT_EQ(ibmsg_tag_isend(a, &vals[after], 8, after, &r), IBMSG_OK);
    reqs.push_back(r);
    ASSERT_EQ(ibmsg_request_cancel(reqs[cancelled]), IBMSG_OK);
    ibmsg_tag_status_t st{};
    EXPECT_EQ(ibmsg_request_wait(&reqs[cancelled], &st), IBMSG_ERR_CANCELED);
    EXPECT_EQ(st.error, IBMSG_ERR_CANCELED);
    EXPECT_EQ(st.length, 8u);
    for (uint64_t i = 0; i <= after; i++) {
        if (i == cancelled) {
            continue;
        }
        uint64_t v = 0;
        ASSERT_EQ(ibmsg_tag_recv(ctx, b, &v, 8, i, IBMSG_TAG_MASK_EXACT, &st), IBMSG_OK) << i;
        EXPECT_EQ(v, vals[i]);
        ASSERT_EQ(ibmsg_request_wait(&reqs[i], nullptr), IBMSG_OK) << i;
    }
    uint64_t v = 0;
    ibmsg_request_t rr;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, &v, 8, cancelled, IBMSG_TAG_MASK_EXACT, &rr), IBMSG_OK);
    int done = 0;
    for (int i = 0; i < 10000 && !done; i++) {
        ASSERT_EQ(ibmsg_request_test(&rr, &done, nullptr), IBMSG_OK);
    }
    EXPECT_EQ(done, 0) << "the cancelled send arrived";
    ASSERT_EQ(ibmsg_request_cancel(rr), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&rr, nullptr), IBMSG_ERR_CANCELED);
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ), 0u);
}

// MPI order when a wildcard and an exact receive both match: the one posted first takes the
// first message, the other the second; for compact tags, header tags and rendezvous.
TEST_F(MsgTest, WildcardAndExactReceivesMatchInPostingOrder)
{
    for (uint64_t tag : {uint64_t(5), IBMSG_TAG_COMPACT_MAX + 5}) {
        for (size_t len : {size_t(64), limit + 1000}) {
            for (bool wildcard_first : {true, false}) {
                auto m1 = payload(tag + 1, len), m2 = payload(tag + 2, len);
                std::vector<uint8_t> wild(len), exact(len);
                ibmsg_request_t rw, re;
                auto post_wild = [&] {
                    ASSERT_EQ(ibmsg_tag_irecv(ctx, IBMSG_EP_NULL, wild.data(), len, 0,
                                              IBMSG_TAG_MASK_ANY, &rw),
                              IBMSG_OK);
                };
                auto post_exact = [&] {
                    ASSERT_EQ(
                        ibmsg_tag_irecv(ctx, b, exact.data(), len, tag, IBMSG_TAG_MASK_EXACT, &re),
                        IBMSG_OK);
                };
                if (wildcard_first) {
                    post_wild();
                    post_exact();
                } else {
                    post_exact();
                    post_wild();
                }
                ASSERT_EQ(ibmsg_tag_send(a, m1.data(), len, tag), IBMSG_OK);
                ASSERT_EQ(ibmsg_tag_send(a, m2.data(), len, tag), IBMSG_OK);
                ibmsg_tag_status_t sw{}, se{};
                ASSERT_EQ(ibmsg_request_wait(&rw, &sw), IBMSG_OK);
                ASSERT_EQ(ibmsg_request_wait(&re, &se), IBMSG_OK);
                const std::string what = "tag " + std::to_string(tag) + " len " +
                                         std::to_string(len) +
                                         (wildcard_first ? " wildcard first" : " exact first");
                EXPECT_EQ(sw.tag, tag) << what;
                EXPECT_EQ(sw.source, b) << what;
                EXPECT_EQ(wild, wildcard_first ? m1 : m2) << what;
                EXPECT_EQ(exact, wildcard_first ? m2 : m1) << what;
            }
        }
    }
}

TEST_F(MsgTest, SeveralEndpointsAnySource)
{
    ibmsg_ep_t c, d;
    ASSERT_EQ(ibmsg_ep_create(ctx, &c), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &d), IBMSG_OK);
    ASSERT_EQ(connect_pair(c, d), IBMSG_OK);
    ibmsg_ep_t senders[3] = {a, c, a};
    ibmsg_ep_t receivers[3] = {b, d, b};
    for (int i = 0; i < 3; i++) {
        uint64_t v = i;
        ASSERT_EQ(ibmsg_tag_send(senders[i], &v, 8, 50), IBMSG_OK);
    }
    for (int i = 0; i < 3; i++) {
        uint64_t v = 99;
        ibmsg_tag_status_t st{};
        ibmsg_ep_t from = i == 0 ? d : IBMSG_EP_NULL; // d's message first, by endpoint
        ASSERT_EQ(ibmsg_tag_recv(ctx, from, &v, 8, 50, IBMSG_TAG_MASK_EXACT, &st), IBMSG_OK);
        if (i == 0) {
            EXPECT_EQ(v, 1u);
            EXPECT_EQ(st.source, d);
        } else {
            EXPECT_EQ(v, i == 1 ? 0u : 2u) << "b's messages in order";
            EXPECT_EQ(st.source, receivers[0]);
        }
    }
    EXPECT_EQ(ibmsg_ep_destroy(c), IBMSG_OK);
    EXPECT_EQ(ibmsg_ep_destroy(d), IBMSG_OK);
    transfer(a, b, 64, 3); // the others are unaffected
}

TEST_F(MsgTest, MalformedBlobsAreErrors)
{
    ibmsg_ep_t c, d;
    ASSERT_EQ(ibmsg_ep_create(ctx, &c), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &d), IBMSG_OK);
    uint8_t good[IBMSG_EP_ADDRESS_MAX];
    size_t len = sizeof(good), small = 4;
    EXPECT_EQ(ibmsg_ep_address(d, good, &small), IBMSG_ERR_INVALID);
    ASSERT_EQ(ibmsg_ep_address(d, good, &len), IBMSG_OK);
    for (size_t l = 0; l < len; l++) {
        EXPECT_EQ(ibmsg_ep_connect(c, good, l), IBMSG_ERR_PROTOCOL) << "truncated to " << l;
    }
    EXPECT_EQ(ibmsg_ep_connect(c, good, len + 1), IBMSG_ERR_PROTOCOL);
    // Version, flags, size, credits, eager limit, READ depths 0 and 17, a reserved byte; in the
    // verbs address: version, flags, QPN, MTU, link layer.
    const size_t offsets[] = {0, 1, 3, 4, 8, 12, 13, 14, 16, 17, 20, 30, 31};
    const uint8_t values[] = {9, 1, 0, 0xff, 0xff, 0, 17, 1, 9, 1, 0xff, 0, 9};
    for (size_t i = 0; i < sizeof(offsets) / sizeof(offsets[0]); i++) {
        uint8_t bad[IBMSG_EP_ADDRESS_MAX];
        std::memcpy(bad, good, len);
        bad[offsets[i]] = values[i];
        EXPECT_EQ(ibmsg_ep_connect(c, bad, len), IBMSG_ERR_PROTOCOL) << "byte " << offsets[i];
    }
    EXPECT_EQ(ibmsg_ep_connect(c, nullptr, len), IBMSG_ERR_INVALID);
    ibmsg_request_t req;
    EXPECT_EQ(ibmsg_tag_isend(c, good, 1, 1, &req), IBMSG_ERR_INVALID) << "not connected";
    ASSERT_EQ(connect_pair(c, d), IBMSG_OK) << "still connectable after bad blobs";
    EXPECT_EQ(ibmsg_ep_connect(c, good, len), IBMSG_ERR_BUSY);
    transfer(c, d, 10, 1);
}

// fork() safety is settled when the first context opens a device, and said in the log and in
// the read-only control variable verbs_fork_protection: from Linux 5.13 (the guest runs 6.1) the
// kernel copies pinned pages for a child, so ibv_fork_init is not needed; before, it is called.
TEST_F(MsgTest, ForkProtectionIsReported)
{
    struct utsname u;
    int major = 0, minor = 0, provided = 0, index = -1, count = 0;
    ASSERT_EQ(uname(&u), 0);
    ASSERT_EQ(sscanf(u.release, "%d.%d", &major, &minor), 2) << u.release;
    const int expect =
        major > 5 || (major == 5 && minor >= 13) ? VERBS_FORK_UNNEEDED : VERBS_FORK_INIT;
    EXPECT_EQ(verbs_fork_mode(), expect) << "kernel " << u.release;
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_cvar_get_index("verbs_fork_protection", &index), IBMSG_OK);
    ibmsg_t_datatype_t type;
    ibmsg_t_enum_t e = IBMSG_T_ENUM_NULL;
    int scope = 0, verbosity = 0, bind = 0;
    ASSERT_EQ(ibmsg_t_cvar_get_info(index, nullptr, nullptr, &verbosity, &type, &e, nullptr,
                                    nullptr, &bind, &scope),
              IBMSG_OK);
    EXPECT_EQ(type, IBMSG_T_INT);
    EXPECT_EQ(scope, IBMSG_T_SCOPE_READONLY);
    ibmsg_t_cvar_handle_t h;
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(index, nullptr, &h, &count), IBMSG_OK);
    int v = -1;
    ASSERT_EQ(ibmsg_t_cvar_read(h, &v), IBMSG_OK);
    EXPECT_EQ(v, expect);
    char name[32];
    int len = sizeof(name), value = -1;
    ASSERT_EQ(ibmsg_t_enum_get_item(e, v, &value, name, &len), IBMSG_OK);
    EXPECT_EQ(value, v);
    EXPECT_STREQ(name, expect == VERBS_FORK_UNNEEDED ? "unneeded" : "ibv_fork_init");
    EXPECT_EQ(ibmsg_t_cvar_write(h, &v), IBMSG_T_ERR_CVAR_SET_NEVER);
    ibmsg_t_cvar_handle_free(&h);
    ibmsg_t_finalize();
}

// The fabric settings reach both queue pairs of a connection (ibv_query_qp reads them back):
// service level, P_Key index, traffic class, flow label, hop limit, a path-MTU cap, the ACK
// timeout and the retry counts. verbs_retry_cnt -1 (the default) is 7, or 6 on Soft-RoCE.
TEST(Fabric, SettingsReachTheQueuePairs)
{
    ibmsg_context_t ctx = IBMSG_CONTEXT_NULL;
    ibmsg_ep_t a, b;
    core_test::open_pair(&ctx, &a, &b, [](ibmsg_info_t info) {
        ibmsg_info_set_int(info, "verbs_sl", 3);
        ibmsg_info_set_int(info, "verbs_pkey_index", 0);
        ibmsg_info_set_int(info, "verbs_traffic_class", 104); // DSCP 26
        ibmsg_info_set_int(info, "verbs_flow_label", 0x12345);
        ibmsg_info_set_int(info, "verbs_hop_limit", 9);
        ibmsg_info_set_int(info, "verbs_mtu", 1500); // rounds down to 1024
        ibmsg_info_set_int(info, "verbs_timeout", 16);
        ibmsg_info_set_int(info, "verbs_rnr_retry", 5);
        ibmsg_info_set_int(info, "verbs_min_rnr_timer", 14);
    });
    if (::testing::Test::IsSkipped() || ::testing::Test::HasFatalFailure()) {
        return;
    }
    const bool rxe = verbs_dev_info(ctx->dev)->vendor_id == 0xffffffu;
    const uint8_t port_mtu = verbs_dev_info(ctx->dev)->active_mtu;
    const bool roce = verbs_dev_info(ctx->dev)->link_layer == VERBS_LINK_ETHERNET;
    for (ibmsg_ep_t ep : {a, b}) {
        verbs_qp_attr_t q;
        ASSERT_EQ(verbs_qp_query(ep->qp, &q), IBMSG_OK);
        EXPECT_EQ(q.state, 3u) << "RTS";
        // rxe keeps only the GRH and the port of an address (rxe_av_from_attr): no SL to read
        // back, and none to use on RoCE v2 either.
        EXPECT_EQ(q.sl, rxe ? 0u : 3u);
        EXPECT_EQ(q.pkey_index, 0u);
        EXPECT_EQ(q.traffic_class, 104u);
        EXPECT_EQ(q.flow_label, 0x12345u);
        // On RoCE the kernel sets the hop limit from the IP route (ib_resolve_eth_dmac): the
        // TTL, 64 by default.
        EXPECT_EQ(q.hop_limit, roce ? 64u : 9u);
        EXPECT_EQ(q.path_mtu, 3u) << "1024 bytes";
        EXPECT_EQ(q.timeout, 16u);
        EXPECT_EQ(q.retry_cnt, rxe ? 6u : 7u);
        EXPECT_EQ(q.rnr_retry, 5u);
        EXPECT_EQ(q.min_rnr_timer, 14u);
    }
    char out[8] = "fabric", in[8] = {};
    ibmsg_request_t r;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in, sizeof(in), 1, IBMSG_TAG_MASK_EXACT, &r), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(a, out, sizeof(out), 1), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
    EXPECT_STREQ(in, out);
    ASSERT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);

    // Defaults, and an explicit retry count, which is taken as it is even on Soft-RoCE.
    core_test::open_pair(&ctx, &a, &b,
                         [](ibmsg_info_t info) { ibmsg_info_set_int(info, "verbs_retry_cnt", 5); });
    ASSERT_FALSE(::testing::Test::HasFatalFailure());
    verbs_qp_attr_t q;
    ASSERT_EQ(verbs_qp_query(a->qp, &q), IBMSG_OK);
    EXPECT_EQ(q.retry_cnt, 5u);
    EXPECT_EQ(q.sl, 0u);
    EXPECT_EQ(q.traffic_class, 0u);
    EXPECT_EQ(q.flow_label, 0u);
    EXPECT_EQ(q.hop_limit, 64u);
    EXPECT_EQ(q.path_mtu, port_mtu);
    EXPECT_EQ(q.timeout, 14u);
    ASSERT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

TEST_F(MsgTest, ControlVariablesAreFixedWhileAContextLives)
{
    int provided = 0, index = -1, count = 0;
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_cvar_get_index("core_credits", &index), IBMSG_OK);
    ibmsg_t_cvar_handle_t h;
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(index, nullptr, &h, &count), IBMSG_OK);
    long long v = 0;
    ASSERT_EQ(ibmsg_t_cvar_read(h, &v), IBMSG_OK);
    EXPECT_EQ(v, 64);
    long long nv = 32;
    EXPECT_EQ(ibmsg_t_cvar_write(h, &nv), IBMSG_T_ERR_CVAR_SET_NOT_NOW);
    // The context's counters as performance variables bound to it (its endpoints summed).
    int pi = -1;
    ASSERT_EQ(ibmsg_t_pvar_get_index("core_eager_msgs_sent_ctx", IBMSG_T_PVAR_CLASS_COUNTER, &pi),
              IBMSG_OK);
    ibmsg_t_pvar_session_t s;
    ibmsg_t_pvar_handle_t ph;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, pi, &ctx, &ph, &count), IBMSG_OK);
    EXPECT_EQ(count, 1);
    ASSERT_EQ(ibmsg_t_pvar_start(s, ph), IBMSG_OK); // a counter counts from its start
    transfer(a, b, 8, 1);
    transfer(b, a, 8, 2);
    unsigned long long sent = 0;
    ASSERT_EQ(ibmsg_t_pvar_read(s, ph, &sent), IBMSG_OK);
    EXPECT_EQ(sent, 2u);
    ibmsg_t_pvar_handle_free(s, &ph);
    ibmsg_t_pvar_session_free(&s);
    ibmsg_t_cvar_handle_free(&h);
    ibmsg_t_finalize();
}

// A pair whose messages are held for posts of `batch` (core_send_batch).
struct SendBatchTest : MsgTest {
    void SetUp() override
    {
    }
    void open(int batch)
    {
        core_test::open_pair(&ctx, &a, &b, [batch](ibmsg_info_t info) {
            ibmsg_info_set_string(info, "core_send_batch", std::to_string(batch).c_str());
        });
    }
    uint64_t ep_cnt(ibmsg_ep_t ep, cnt_id_t id) const
    {
        return cnt_read(ep->cnt, id, CNT_READ_VALUE);
    }
    // n messages of len bytes a -> b, tags 1..n, every one received with its exact bytes in
    // order; sreq keeps the send requests (complete, not yet tested).
    void start(int n, size_t len, std::vector<ibmsg_request_t> *sreq,
               std::vector<ibmsg_request_t> *rreq, std::vector<std::vector<uint8_t>> *in)
    {
        sreq->assign(n, IBMSG_REQUEST_NULL);
        rreq->assign(n, IBMSG_REQUEST_NULL);
        in->assign(n, std::vector<uint8_t>(len, 0xee));
        for (int i = 0; i < n; i++) {
            ASSERT_EQ(ibmsg_tag_irecv(ctx, b, (*in)[i].data(), len, uint64_t(i + 1),
                                      IBMSG_TAG_MASK_EXACT, &(*rreq)[i]),
                      IBMSG_OK);
        }
        for (int i = 0; i < n; i++) {
            auto out = payload(uint64_t(i + 1), len);
            ASSERT_EQ(ibmsg_tag_isend(a, out.data(), len, uint64_t(i + 1), &(*sreq)[i]), IBMSG_OK);
        }
    }
    void finish(int n, size_t len, std::vector<ibmsg_request_t> *sreq,
                std::vector<ibmsg_request_t> *rreq, std::vector<std::vector<uint8_t>> *in)
    {
        for (int i = 0; i < n; i++) {
            ibmsg_tag_status_t st{};
            if ((*sreq)[i] != IBMSG_REQUEST_NULL) { // not already tested
                ASSERT_EQ(ibmsg_request_wait(&(*sreq)[i], nullptr), IBMSG_OK);
            }
            ASSERT_EQ(ibmsg_request_wait(&(*rreq)[i], &st), IBMSG_OK);
            ASSERT_EQ(st.length, len);
            ASSERT_EQ((*in)[i], payload(uint64_t(i + 1), len)) << "message " << i;
        }
    }
    // A blocking rendezvous send of one message above the limit a -> b: the window's bind and
    // the RTS leave in doorbells_with_window posts (plus any local invalidation); the send
    // returns complete, the receiver has every byte.
    void blocking_rendezvous(uint64_t doorbells_with_window)
    {
        const size_t len = size_t(a->peer_limit) + 1;
        std::vector<uint8_t> in(len, 0xee);
        ibmsg_request_t rreq;
        ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in.data(), len, 7, IBMSG_TAG_MASK_EXACT, &rreq),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_send(a, payload(7, len).data(), len, 7), IBMSG_OK);
        const uint64_t windows = ep_cnt(a, CNT_CORE_RNDV_WINDOWS_BOUND);
        const uint64_t local_invs = ep_cnt(a, CNT_CORE_RNDV_LOCAL_INVALIDATIONS);
        EXPECT_EQ(windows, a->rndv.windows ? 1u : 0u);
        EXPECT_EQ(ep_cnt(a, CNT_CORE_RNDV_MSGS_SENT), 1u);
        EXPECT_EQ(ep_cnt(a, CNT_VERBS_SEND_WRS_POSTED), windows + 1 + local_invs);
        EXPECT_EQ(ep_cnt(a, CNT_VERBS_SEND_DOORBELLS),
                  (windows ? doorbells_with_window : 1) + local_invs);
        EXPECT_EQ(verbs_qp_held(a->qp), 0u);
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_request_wait(&rreq, &st), IBMSG_OK);
        EXPECT_EQ(st.length, len);
        EXPECT_EQ(in, payload(7, len));
    }
};

TEST_F(SendBatchTest, HeldMessagesLeaveInOnePostAtTheNextProgressCall)
{
    open(16);
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    std::vector<ibmsg_request_t> sreq, rreq;
    std::vector<std::vector<uint8_t>> in;
    // 8 bytes go inline: the data is copied while held, so the caller's buffer (a temporary
    // here) may change at once.
    start(40, 8, &sreq, &rreq, &in);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(ep_cnt(a, CNT_VERBS_SEND_WRS_POSTED), 40u);
    EXPECT_EQ(ep_cnt(a, CNT_VERBS_SEND_DOORBELLS), 2u) << "two full batches of 16 went";
    EXPECT_EQ(verbs_qp_held(a->qp), 8u);
    int done = 0;
    ASSERT_EQ(ibmsg_request_test(&sreq[0], &done, nullptr), IBMSG_OK);
    EXPECT_EQ(done, 1);
    EXPECT_EQ(verbs_qp_held(a->qp), 0u) << "a completion reported means the device has it";
    EXPECT_EQ(ep_cnt(a, CNT_VERBS_SEND_DOORBELLS), 3u);
    finish(40, 8, &sreq, &rreq, &in);
}

TEST_F(SendBatchTest, BatchOnePostsEveryMessageAtOnce)
{
    open(1);
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    std::vector<ibmsg_request_t> sreq, rreq;
    std::vector<std::vector<uint8_t>> in;
    start(40, 300, &sreq, &rreq, &in); // above the inline limit: bounce buffers
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(ep_cnt(a, CNT_VERBS_SEND_DOORBELLS), 40u);
    EXPECT_EQ(verbs_qp_held(a->qp), 0u);
    finish(40, 300, &sreq, &rreq, &in);
}

TEST_F(SendBatchTest, BlockingSendLeavesAtOnceBehindTheHeldOnes)
{
    open(16);
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    std::vector<ibmsg_request_t> sreq, rreq;
    std::vector<std::vector<uint8_t>> in;
    start(3, 8, &sreq, &rreq, &in); // tags 1..3, held
    ASSERT_FALSE(HasFatalFailure());
    ASSERT_EQ(verbs_qp_held(a->qp), 3u);
    std::vector<uint8_t> last_in(300, 0xee);
    ibmsg_request_t last_req;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, last_in.data(), 300, 4, IBMSG_TAG_MASK_EXACT, &last_req),
              IBMSG_OK);
    // A bounce-buffer send: one post with the three held before it, none held after.
    ASSERT_EQ(ibmsg_tag_send(a, payload(4, 300).data(), 300, 4), IBMSG_OK);
    EXPECT_EQ(verbs_qp_held(a->qp), 0u);
    EXPECT_EQ(ep_cnt(a, CNT_VERBS_SEND_DOORBELLS), 1u);
    EXPECT_EQ(ep_cnt(a, CNT_VERBS_SEND_WRS_POSTED), 4u);
    EXPECT_EQ(a->send_batch, 16u) << "the setting is back for the next isend";
    ibmsg_tag_status_t st{};
    ASSERT_EQ(ibmsg_request_wait(&last_req, &st), IBMSG_OK);
    EXPECT_EQ(st.length, 300u);
    EXPECT_EQ(last_in, payload(4, 300));
    finish(3, 8, &sreq, &rreq, &in);
    // Errors as for isend, nothing posted.
    EXPECT_EQ(ibmsg_tag_send(nullptr, last_in.data(), 1, 1), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_send(a, nullptr, 1, 1), IBMSG_ERR_INVALID);
    EXPECT_EQ(ep_cnt(a, CNT_VERBS_SEND_WRS_POSTED), 4u);
}

TEST_F(SendBatchTest, BlockingRendezvousSendBindsAndAnnouncesInOnePost)
{
    open(16);
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    blocking_rendezvous(1); // batch 16: the QP holds the bind for the RTS
    EXPECT_EQ(a->send_batch, 16u) << "the setting is back for the next isend";
}

TEST_F(SendBatchTest, BlockingRendezvousSendOnAQpHoldingNothingPostsTheBindAtOnce)
{
    open(1);
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    blocking_rendezvous(2); // batch 1: the QP holds nothing
}

TEST_F(SendBatchTest, HeldMessagesOfAFailedEndpointGiveTheirResourcesBack)
{
    open(16);
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    const uint64_t head = a->sq_head, pool = cnt(CNT_VERBS_BUF_POOL_IN_USE);
    const uint32_t signals = a->signals_outstanding;
    std::vector<ibmsg_request_t> sreq, rreq;
    std::vector<std::vector<uint8_t>> in;
    start(5, 1000, &sreq, &rreq, &in); // 1000 bytes: five bounce buffers held
    ASSERT_FALSE(HasFatalFailure());
    ASSERT_EQ(verbs_qp_held(a->qp), 5u);
    EXPECT_EQ(cnt(CNT_VERBS_BUF_POOL_IN_USE), pool + 5);
    core_ep_fail(a, IBMSG_ERR_PEER_FAILED); // what a failed post or a dead peer does
    EXPECT_EQ(verbs_qp_held(a->qp), 0u);
    EXPECT_EQ(a->sq_head, head) << "the slots of messages never posted are free again";
    EXPECT_EQ(a->signals_outstanding, signals) << "no completion will come for them";
    EXPECT_EQ(cnt(CNT_VERBS_BUF_POOL_IN_USE), pool) << "their bounce buffers came back";
    EXPECT_EQ(ep_cnt(a, CNT_VERBS_SEND_DOORBELLS), 0u);
    for (auto &r : sreq) {
        EXPECT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK) << "completed when held, as before";
    }
    EXPECT_EQ(ibmsg_ep_destroy(a), IBMSG_OK);
    a = IBMSG_EP_NULL;
    EXPECT_EQ(ctx->zombies, nullptr) << "a drained at once: nothing left to flush";
    for (auto &r : rreq) {
        int done = 1;
        EXPECT_EQ(ibmsg_request_test(&r, &done, nullptr), IBMSG_OK);
        EXPECT_EQ(done, 0) << "nothing reached b";
        EXPECT_EQ(ibmsg_request_cancel(r), IBMSG_OK);
        EXPECT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_ERR_CANCELED);
    }
    // b saw no error: its queue pair's peer is gone, but b sent nothing.
}

// Two processes: the child echoes, the parent checks data and measures. Both use the TCP
// helper on 127.0.0.1; in the two-hosts guest each side uses its own rxe device.
TEST(MsgTwoProcesses, PingPongAndStreaming)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    const char *dev_a = getenv("IBMSG_VM_DEV_A"), *dev_b = getenv("IBMSG_VM_DEV_B");
    const int iters = 500, stream = 2000;
    const size_t sizes[] = {0, 8, 1024, 8192};
    ibmsg_oob_t listener;
    uint16_t port = 0;
    ASSERT_EQ(ibmsg_oob_listen("127.0.0.1", 0, &listener), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_port(listener, &port), IBMSG_OK);
    fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // Child: echo every message back with the same tag; then count the stream.
        ibmsg_oob_close(listener);
        ibmsg_context_t ctx;
        ibmsg_ep_t ep;
        ibmsg_oob_t conn;
        if (open_context(&ctx, dev_b) != IBMSG_OK ||
            core_test::join_parent(ctx, port, &ep, &conn) != IBMSG_OK) {
            _exit(10);
        }
        std::vector<uint8_t> buf(8192);
        for (size_t s : sizes) {
            for (int i = 0; i < iters; i++) {
                ibmsg_tag_status_t st;
                if (ibmsg_tag_recv(ctx, ep, buf.data(), buf.size(), 0, IBMSG_TAG_MASK_ANY, &st) !=
                        IBMSG_OK ||
                    st.length != s || ibmsg_tag_send(ep, buf.data(), s, st.tag) != IBMSG_OK) {
                    _exit(11);
                }
            }
        }
        for (int i = 0; i < stream; i++) {
            uint64_t v = 0;
            ibmsg_tag_status_t st;
            if (ibmsg_tag_recv(ctx, ep, &v, 8, 7, IBMSG_TAG_MASK_EXACT, &st) != IBMSG_OK ||
                v != uint64_t(i)) {
                _exit(12);
            }
        }
        uint64_t done = stream;
        if (ibmsg_tag_send(ep, &done, 8, 8) != IBMSG_OK) {
            _exit(13);
        }
        // Wait for the parent's goodbye so our last send is not torn down in flight.
        if (ibmsg_tag_recv(ctx, ep, nullptr, 0, 9, IBMSG_TAG_MASK_EXACT, nullptr) != IBMSG_OK) {
            _exit(14);
        }
        int ok = cnt_read(ctx->cnt, CNT_VERBS_RNR_EVENTS, CNT_READ_VALUE) == 0 &&
                 cnt_read(ctx->cnt, CNT_CORE_WIRE_REJECTED, CNT_READ_VALUE) == 0 &&
                 cnt_read(ctx->cnt, CNT_CORE_EAGER_MSGS_RECVD, CNT_READ_VALUE) ==
                     uint64_t(4 * iters + stream + 1);
        ibmsg_oob_close(conn);
        ibmsg_context_destroy(ctx);
        _exit(ok ? 0 : 15);
    }
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    ASSERT_EQ(open_context(&ctx, dev_a), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &ep), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_accept(listener, 20000, &conn), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_ep_connect(conn, ep, 20000), IBMSG_OK);
    std::vector<uint8_t> in(8192);
    for (size_t s : sizes) {
        std::vector<double> us;
        for (int i = 0; i < iters; i++) {
            auto out = payload(i, s);
            ibmsg_tag_status_t st{};
            auto t0 = std::chrono::steady_clock::now();
            ASSERT_EQ(ibmsg_tag_send(ep, out.data(), s, 1000 + i), IBMSG_OK);
            ASSERT_EQ(
                ibmsg_tag_recv(ctx, ep, in.data(), in.size(), 1000 + i, IBMSG_TAG_MASK_EXACT, &st),
                IBMSG_OK);
            auto t1 = std::chrono::steady_clock::now();
            us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() / 2);
            ASSERT_EQ(st.length, s);
            ASSERT_EQ(std::memcmp(in.data(), out.data(), s), 0) << "iteration " << i;
        }
        std::sort(us.begin(), us.end());
        double avg = 0;
        for (double u : us) {
            avg += u / us.size();
        }
        printf("ping-pong %5zu B: half round trip median %.1f us, average %.1f us\n", s,
               us[us.size() / 2], avg);
    }
    std::vector<ibmsg_request_t> reqs(stream);
    std::vector<uint64_t> vals(stream);
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < stream; i++) {
        vals[i] = i;
        ASSERT_EQ(ibmsg_tag_isend(ep, &vals[i], 8, 7, &reqs[i]), IBMSG_OK);
    }
    for (int i = 0; i < stream; i++) {
        ASSERT_EQ(ibmsg_request_wait(&reqs[i], nullptr), IBMSG_OK);
    }
    uint64_t done = 0;
    ASSERT_EQ(ibmsg_tag_recv(ctx, ep, &done, 8, 8, IBMSG_TAG_MASK_EXACT, nullptr), IBMSG_OK);
    auto secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(done, uint64_t(stream));
    printf("streaming 8 B: %d messages in %.3f s: %.0f messages/s\n", stream, secs, stream / secs);
    ASSERT_EQ(ibmsg_tag_send(ep, nullptr, 0, 9), IBMSG_OK);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child failed (see its exit code in the test)";
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_EAGER_MSGS_SENT, CNT_READ_VALUE),
              uint64_t(4 * iters + stream + 1));
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_VERBS_RNR_EVENTS, CNT_READ_VALUE), 0u);
    ibmsg_oob_close(conn);
    ibmsg_oob_close(listener);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}
