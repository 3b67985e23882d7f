// The shared receive queue's credit budget (core/srq.c) without a device: a context and
// endpoints made by hand, whose credits are consumed and returned through the core's own calls.
// Returns wait in order once the budget is full, tickets go to the waiters first (at most their
// fair share), and a stall forgives exactly the credits of the peers not heard from.
#include <gtest/gtest.h>

#include <cstdlib>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"

namespace
{

struct Budget : ::testing::Test {
    ibmsg_context_t ctx = nullptr;
    std::vector<ibmsg_ep_t> eps;

    // n endpoints whose peers got windows of 4 (3 data credits each), an SRQ of 32 posted
    // (budget 32 - 2 x 4 = 24) that ran low.
    void make(int n)
    {
        ctx = static_cast<ibmsg_context_t>(calloc(1, sizeof(*ctx)));
        ASSERT_NE(ctx, nullptr);
        ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, ctx, &ctx->cnt), IBMSG_OK);
        ctx->cfg.credits = 4;
        ctx->srq = reinterpret_cast<verbs_srq_t *>(&ctx->srq); // never dereferenced here
        ctx->srq_target = ctx->srq_posted = 32;
        ctx->srq_batch = 4;
        ctx->srq_stall_after_ns = 20000000u;
        for (int i = 0; i < n; i++) {
            ibmsg_ep_t ep = static_cast<ibmsg_ep_t>(calloc(1, sizeof(*ep)));
            ASSERT_NE(ep, nullptr);
            ep->ctx = ctx;
            // A child block: the context's reading sums the endpoints'.
            ASSERT_EQ(cnt_block_create_child(IBMSG_T_BIND_ENDPOINT, ep, ctx->cnt, &ep->cnt),
                      IBMSG_OK);
            ep->state = CORE_EP_CONNECTED;
            ep->next = ctx->eps;
            ctx->eps = ep;
            core_credit_init(&ep->cr, 4, 4);
            core_srq_ep_connected(ep);
            eps.push_back(ep);
        }
        ctx->srq_pressure = 1;
    }
    void TearDown() override
    {
        for (ibmsg_ep_t ep : eps) {
            cnt_block_destroy(ep->cnt);
            free(ep);
        }
        if (ctx != nullptr) {
            cnt_block_destroy(ctx->cnt);
            free(ctx);
        }
    }
    // k messages of ep's peer arrived and were consumed.
    void consume(ibmsg_ep_t ep, int k)
    {
        for (int i = 0; i < k; i++) {
            ep->rx_seq++;
            core_srq_consumed(ep);
        }
    }
    // What ep's next message carries back, as core_ep_post_hdr takes it.
    uint32_t piggyback(ibmsg_ep_t ep)
    {
        uint16_t g = core_credit_consume(&ep->cr, core_ep_return_max(ep, CORE_CREDIT_MAX_GRANT));
        if (g != 0) {
            core_srq_returned(ep, g);
        }
        return g;
    }
    uint64_t count(cnt_id_t id)
    {
        return cnt_read(ctx->cnt, id, CNT_READ_VALUE);
    }
    uint64_t count(ibmsg_ep_t ep, cnt_id_t id)
    {
        return cnt_read(ep->cnt, id, CNT_READ_VALUE);
    }
};

TEST_F(Budget, ReturnsWaitInOrderAndTicketsGoToTheWaitersFirst)
{
    make(10);
    EXPECT_EQ(core_srq_budget(ctx), 24u);
    EXPECT_EQ(ctx->srq_lent, 30u) << "the first windows count: 10 x 3 data credits";

    consume(eps[0], 3); // lent 27: no room
    EXPECT_EQ(core_ep_return_max(eps[0], 100), 0u);
    core_srq_wait(eps[0]);
    consume(eps[1], 3); // lent 24: still none
    core_srq_wait(eps[1]);
    consume(eps[2], 3); // lent 21: room 3, but two wait before it
    EXPECT_EQ(ctx->srq_lent, 21u);
    EXPECT_EQ(core_ep_return_max(eps[2], 100), 0u) << "the waiters go first";
    core_srq_wait(eps[2]);
    core_srq_wait(eps[2]); // once
    EXPECT_EQ(ctx->srq_nwait, 3u);
    EXPECT_EQ(count(CNT_CORE_SRQ_CREDITS_WITHHELD), 3u);
    EXPECT_EQ(count(eps[0], CNT_CORE_SRQ_CREDITS_WITHHELD), 1u) << "each endpoint's own";
    EXPECT_EQ(count(eps[2], CNT_CORE_SRQ_CREDITS_WITHHELD), 1u) << "one wait, however often asked";
    EXPECT_EQ(count(eps[3], CNT_CORE_SRQ_CREDITS_WITHHELD), 0u);

    core_srq_serve(ctx, 0); // arrivals in this call: tickets from the room, no stall
    EXPECT_EQ(eps[0]->srq_ticket, 3u) << "the head, min(room 3, share 24/3, owed 3)";
    EXPECT_EQ(eps[1]->srq_ticket, 0u);
    EXPECT_EQ(ctx->srq_lent, 24u) << "tickets count";
    EXPECT_EQ(ctx->srq_wait_head, eps[1]);
    EXPECT_EQ(ctx->srq_nwait, 2u);
    EXPECT_EQ(ctx->srq_stall_ns, 0u);
    EXPECT_EQ(piggyback(eps[0]), 3u);
    EXPECT_EQ(eps[0]->srq_ticket, 0u);
    EXPECT_EQ(eps[0]->srq_lent, 3u);
    EXPECT_EQ(ctx->srq_lent, 24u) << "the ticket became credits lent";
    EXPECT_EQ(piggyback(eps[3]), 0u) << "nothing owed";

    consume(eps[3], 3); // lent 21 again: room 3 for the next waiter
    core_srq_serve(ctx, 0);
    EXPECT_EQ(eps[1]->srq_ticket, 3u) << "min(room 3, share 24/2, owed 3)";
    EXPECT_EQ(ctx->srq_wait_head, eps[2]);

    // A waiter that fails leaves the queue and the budget.
    core_srq_ep_release(eps[2]);
    EXPECT_EQ(ctx->srq_wait_head, nullptr);
    EXPECT_EQ(ctx->srq_wait_tail, nullptr);
    EXPECT_EQ(ctx->srq_nwait, 0u);
    uint32_t lent = 0;
    for (ibmsg_ep_t ep : eps) {
        lent += ep->srq_lent + ep->srq_ticket;
    }
    EXPECT_EQ(ctx->srq_lent, lent) << "the sum is the endpoints'";
}

TEST_F(Budget, WithoutPressureReturnsGoAtOnceButStillCount)
{
    make(10);
    ctx->srq_pressure = 0;
    consume(eps[0], 3);
    EXPECT_EQ(core_ep_return_max(eps[0], 100), 100u);
    EXPECT_EQ(piggyback(eps[0]), 3u);
    EXPECT_EQ(ctx->srq_lent, 30u);
    EXPECT_EQ(ctx->srq_nwait, 0u);
}

TEST_F(Budget, AStallForgivesThePeersNotHeardFrom)
{
    make(10);
    consume(eps[0], 3);
    consume(eps[1], 3);
    core_srq_wait(eps[0]);
    core_srq_wait(eps[1]);
    EXPECT_EQ(ctx->srq_lent, 24u);
    core_srq_serve(ctx, 1); // idle: the stall starts
    EXPECT_NE(ctx->srq_stall_ns, 0u);
    EXPECT_EQ(ctx->srq_nwait, 2u);
    core_srq_serve(ctx, 1); // too soon
    EXPECT_EQ(count(CNT_CORE_SRQ_CREDITS_FORGIVEN), 0u);

    // Peers 2..4 were heard from since the last stall (none yet: rx_seq 0 was seen), so the
    // first stall forgives 5..9 only after one more message each of 2..4.
    for (int i = 2; i <= 4; i++) {
        eps[i]->rx_seq++; // a credit return: no data credit used
    }
    ctx->srq_stall_ns = 1; // long ago
    core_srq_serve(ctx, 1);
    EXPECT_EQ(count(CNT_CORE_SRQ_CREDITS_FORGIVEN), 15u) << "5 silent peers x 3";
    for (int i = 0; i < 10; i++) {
        EXPECT_EQ(count(eps[i], CNT_CORE_SRQ_CREDITS_FORGIVEN), i >= 5 ? 3u : 0u) << "peer " << i;
    }
    EXPECT_EQ(eps[2]->srq_lent, 3u) << "heard from: keeps its credits";
    EXPECT_EQ(eps[5]->srq_lent, 0u);
    EXPECT_EQ(eps[0]->srq_ticket, 3u) << "the room went to the waiters, in order";
    EXPECT_EQ(eps[1]->srq_ticket, 3u);
    EXPECT_EQ(ctx->srq_lent, 9u + 6u);
    EXPECT_EQ(ctx->srq_nwait, 0u);
    EXPECT_EQ(ctx->srq_stall_ns, 0u);

    // The tickets go out; three more peers send and get their credits back, filling the budget
    // again, and a fourth waits.
    EXPECT_EQ(piggyback(eps[0]), 3u);
    EXPECT_EQ(piggyback(eps[1]), 3u);
    for (int i = 5; i <= 7; i++) {
        consume(eps[i], 3); // forgiven credits: nothing leaves the sum
        EXPECT_EQ(piggyback(eps[i]), 3u);
    }
    EXPECT_EQ(ctx->srq_lent, 24u);
    consume(eps[8], 3);
    EXPECT_EQ(core_ep_return_max(eps[8], 100), 0u);
    core_srq_wait(eps[8]);

    // The next stall forgives those silent since the first (0..4), not 5..7.
    ctx->srq_stall_ns = 1;
    core_srq_serve(ctx, 1);
    EXPECT_EQ(count(CNT_CORE_SRQ_CREDITS_FORGIVEN), 15u + 15u);
    EXPECT_EQ(eps[2]->srq_lent, 0u);
    EXPECT_EQ(eps[0]->srq_lent, 0u);
    EXPECT_EQ(eps[5]->srq_lent, 3u);
    EXPECT_EQ(eps[8]->srq_ticket, 3u);
    EXPECT_EQ(ctx->srq_lent, 9u + 3u);
}

} // namespace
