// Posted and unexpected queues: order, wildcards, endpoint filters, levels and watermarks.
#include <gtest/gtest.h>

#include <initializer_list>
#include <vector>

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include "core/match.h"
#include "counters/shards/shard.h"

namespace
{

struct MatchTest : ::testing::Test {
    cnt_shard_t *blk = nullptr; // the context's counter block
    int owner = 0;
    core_mq_t mq{};
    std::vector<core_mq_entry_t> entries = std::vector<core_mq_entry_t>(16);
    int a = 0, b = 0; // two endpoints, by address
    void SetUp() override
    {
        ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, &owner, &blk), IBMSG_OK);
        core_mq_init(&mq, blk);
    }
    void TearDown() override
    {
        cnt_block_destroy(blk);
    }
    int64_t cnt(cnt_id_t id, cnt_read_what_t what = CNT_READ_VALUE) const
    {
        return (int64_t)cnt_read(blk, id, what);
    }
    core_mq_entry_t *post(int i, const void *ep, uint64_t tag, uint64_t mask)
    {
        entries[i].ep = ep;
        entries[i].tag = tag;
        entries[i].mask = mask;
        core_mq_push_posted(&mq, &entries[i]);
        return &entries[i];
    }
    core_mq_entry_t *arrive(int i, const void *ep, uint64_t tag)
    {
        entries[i].ep = ep;
        entries[i].tag = tag;
        core_mq_arrivals_begin(mq.cnt); // one arrival per batch, as the progress engine brackets
        core_mq_push_unexpected(&mq, &entries[i]);
        core_mq_arrivals_end(mq.cnt);
        return &entries[i];
    }
    // A batch of arrivals from a with these tags, matched or queued as the engine does.
    void batch(std::initializer_list<uint64_t> tags, int first)
    {
        core_mq_arrivals_begin(mq.cnt);
        for (uint64_t t : tags) {
            if (core_mq_match_arrival(&mq, &a, t) == nullptr) {
                entries[first].ep = &a;
                entries[first].tag = t;
                core_mq_push_unexpected(&mq, &entries[first++]);
            }
        }
        core_mq_arrivals_end(mq.cnt);
    }
    int64_t high(cnt_id_t id) const
    {
        return cnt(id, CNT_READ_HIGH);
    }
    int64_t low(cnt_id_t id) const
    {
        return cnt(id, CNT_READ_LOW);
    }
};

} // namespace

TEST_F(MatchTest, PostedInPostingOrder)
{
    post(0, nullptr, 7, ~0ULL);
    post(1, nullptr, 7, ~0ULL);
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 7), &entries[0]);
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 7), &entries[1]);
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 7), nullptr);
}

TEST_F(MatchTest, WildcardsAndMasks)
{
    post(0, nullptr, 0x1200, 0xff00); // any low byte
    post(1, nullptr, 0, 0);           // anything
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 0x3300), &entries[1]) << "first that matches";
    post(2, nullptr, 0x1200, ~0ULL);
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 0x12ab), &entries[0]);
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 0x12ab), nullptr);
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 0x1200), &entries[2]);
}

TEST_F(MatchTest, EndpointFilter)
{
    post(0, &b, 1, ~0ULL);
    post(1, nullptr, 1, ~0ULL);
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 1), &entries[1]) << "b's receive skipped for a";
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 1), nullptr);
    EXPECT_EQ(core_mq_match_arrival(&mq, &b, 1), &entries[0]);
}

TEST_F(MatchTest, UnexpectedInArrivalOrder)
{
    arrive(0, &a, 5);
    arrive(1, &b, 5);
    arrive(2, &a, 6);
    arrive(3, &a, 5);
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ), 4);
    EXPECT_EQ(core_mq_match_posted(&mq, &a, 5, ~0ULL), &entries[0]);
    EXPECT_EQ(core_mq_match_posted(&mq, nullptr, 5, ~0ULL), &entries[1]);
    EXPECT_EQ(core_mq_match_posted(&mq, &a, 0, 0), &entries[2]);
    EXPECT_EQ(core_mq_match_posted(&mq, &b, 5, ~0ULL), nullptr);
    EXPECT_EQ(core_mq_match_posted(&mq, &a, 5, ~0ULL), &entries[3]);
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ), 0);
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ, CNT_READ_HIGH), 4);
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_MSGS), 4);
}

TEST_F(MatchTest, LevelsAttemptsAndCancel)
{
    post(0, nullptr, 1, ~0ULL);
    post(1, nullptr, 2, ~0ULL);
    post(2, nullptr, 3, ~0ULL);
    EXPECT_EQ(cnt(CNT_CORE_POSTED_RECVQ), 3);
    core_mq_remove_posted(&mq, &entries[1]);
    EXPECT_EQ(cnt(CNT_CORE_POSTED_RECVQ), 2);
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 3), &entries[2]);
    EXPECT_EQ(cnt(CNT_CORE_MATCH_ATTEMPTS), 2);
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 2), nullptr);
    EXPECT_EQ(cnt(CNT_CORE_MATCH_ATTEMPTS), 3);
    EXPECT_EQ(cnt(CNT_CORE_POSTED_RECVQ), 1);
    EXPECT_EQ(cnt(CNT_CORE_POSTED_RECVQ, CNT_READ_HIGH), 3);
}

// A search counts the entries it compared: none in an empty queue, every entry when none matches.
TEST_F(MatchTest, AttemptsCountTheEntriesCompared)
{
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 1), nullptr);
    EXPECT_EQ(core_mq_peek_posted(&mq, nullptr, 0, 0), nullptr);
    EXPECT_EQ(core_mq_match_posted(&mq, &a, 1, ~0ULL), nullptr);
    EXPECT_EQ(cnt(CNT_CORE_MATCH_ATTEMPTS), 0);
    post(0, nullptr, 1, ~0ULL);
    post(1, nullptr, 2, ~0ULL);
    post(2, nullptr, 3, ~0ULL);
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 9), nullptr);
    EXPECT_EQ(cnt(CNT_CORE_MATCH_ATTEMPTS), 3);
    EXPECT_EQ(core_mq_match_arrival(&mq, &a, 1), &entries[0]);
    EXPECT_EQ(cnt(CNT_CORE_MATCH_ATTEMPTS), 4);
    arrive(3, &b, 7);
    arrive(4, &b, 8);
    EXPECT_EQ(core_mq_match_posted(&mq, &b, 9, ~0ULL), nullptr);
    EXPECT_EQ(cnt(CNT_CORE_MATCH_ATTEMPTS), 6);
    EXPECT_EQ(core_mq_match_posted(&mq, &b, 8, ~0ULL), &entries[4]);
    EXPECT_EQ(cnt(CNT_CORE_MATCH_ATTEMPTS), 8);
}

// A probe's peek finds what a receive would take, in arrival order, and leaves it queued.
TEST_F(MatchTest, PeekLeavesTheMessage)
{
    arrive(0, &a, 5);
    arrive(1, &b, 6);
    const int64_t attempts = cnt(CNT_CORE_MATCH_ATTEMPTS);
    EXPECT_EQ(core_mq_peek_posted(&mq, nullptr, 0, 0), &entries[0]);
    EXPECT_EQ(core_mq_peek_posted(&mq, &b, 0, 0), &entries[1]);
    EXPECT_EQ(core_mq_peek_posted(&mq, nullptr, 6, ~0ULL), &entries[1]);
    EXPECT_EQ(core_mq_peek_posted(&mq, &a, 6, ~0ULL), nullptr);
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ), 2);
    EXPECT_EQ(cnt(CNT_CORE_MATCH_ATTEMPTS) - attempts, 1 + 2 + 2 + 2);
    EXPECT_EQ(core_mq_match_posted(&mq, nullptr, 0, 0), &entries[0]);
    EXPECT_EQ(core_mq_peek_posted(&mq, nullptr, 0, 0), &entries[1]);
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ), 1);
}

// The queue lengths move in runs (a bare add per step) and are marked where runs turn: at each
// batch of arrivals and at a cancel. Their watermarks are exact all the same, in the middle of a
// run too, and after a restart from the level of that moment.
TEST_F(MatchTest, QueueLengthMarksAreExactAcrossRuns)
{
    const cnt_id_t P = CNT_CORE_POSTED_RECVQ, U = CNT_CORE_UNEXPECTED_RECVQ;
    cnt_wm_start(P);
    cnt_wm_start(U);
    for (int i = 0; i < 3; i++) {
        post(i, nullptr, 1, ~0ULL);
    }
    EXPECT_EQ(high(P), 3) << "read in the middle of a rising run";
    batch({1, 1}, 10); // posted 3 -> 1
    EXPECT_EQ(cnt(P), 1);
    EXPECT_EQ(low(P), 0) << "the start's level";
    for (int i = 3; i < 7; i++) {
        post(i, nullptr, 2, ~0ULL); // 1 -> 5
    }
    core_mq_remove_posted(&mq, &entries[6]); // cancel: 5 -> 4, marks the peak first
    EXPECT_EQ(high(P), 5);
    batch({1, 2, 2, 2, 9, 9, 9}, 10); // posted 4 -> 0 (1 2 2 2), unexpected 0 -> 3 (9 9 9)
    EXPECT_EQ(cnt(P), 0);
    EXPECT_EQ(cnt(U), 3);
    EXPECT_EQ(high(U), 3);
    EXPECT_EQ(core_mq_match_posted(&mq, &a, 9, ~0ULL), &entries[10]); // unexpected 3 -> 2
    EXPECT_EQ(core_mq_match_posted(&mq, &a, 9, ~0ULL), &entries[11]); // 2 -> 1
    batch({9}, 13);                                                   // 1 -> 2
    EXPECT_EQ(low(U), 0);
    EXPECT_EQ(high(U), 3);
    EXPECT_EQ(high(P), 5);
    EXPECT_EQ(low(P), 0);

    // A restart at unexpected length 2: the marks count from 2, a fall in the next run included.
    cnt_wm_stop(U);
    cnt_wm_start(U);
    EXPECT_EQ(high(U), 2);
    EXPECT_EQ(low(U), 2);
    EXPECT_EQ(core_mq_match_posted(&mq, &a, 9, ~0ULL), &entries[12]); // 2 -> 1
    EXPECT_EQ(low(U), 1) << "read in the middle of a falling run";
    batch({9, 9}, 14); // 1 -> 3
    EXPECT_EQ(high(U), 3);
    EXPECT_EQ(low(U), 1);
    core_mq_remove_unexpected(&mq, &entries[13]); // 3 -> 2
    core_mq_remove_unexpected(&mq, &entries[14]); // 2 -> 1
    core_mq_remove_unexpected(&mq, &entries[15]); // 1 -> 0
    EXPECT_EQ(low(U), 0);
    EXPECT_EQ(high(U), 3);
    cnt_wm_stop(U);
    cnt_wm_stop(P);
}
