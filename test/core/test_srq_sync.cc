// How the SRQ's levels follow a poll (core/core.h) without a device: a context made by hand whose
// buffers are taken as srq_taken() takes them. A poll that nothing synced falls by its arrivals
// (core_srq_sync_polled); a sync during a poll (a send buffer taken) catches up at once, keeps the
// low mark before the rise, and sends the call to the full sync (ctx->scq_due): the short one
// would take the arrivals synced already off again. A buffer an unexpected message keeps syncs
// the same way, leaving itself in use.
#include <gtest/gtest.h>

#include <cstdlib>

#include "core/core.h"
#include "counters/shards/shard.h"

namespace
{

struct SrqSync : ::testing::Test {
    ibmsg_context_t ctx = nullptr;
    static constexpr uint32_t posted = 32; // the SRQ's buffers; the pool has none else in use

    void SetUp() override
    {
        if (!IBMSG_HAVE_CORE_COUNTERS) {
            GTEST_SKIP() << "the core's counters are compiled out (IBMSG_CORE_COUNTERS=OFF)";
        }
        ctx = static_cast<ibmsg_context_t>(calloc(1, sizeof(*ctx)));
        ASSERT_NE(ctx, nullptr);
        ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, ctx, &ctx->cnt), IBMSG_OK);
        ctx->srq = reinterpret_cast<verbs_srq_t *>(&ctx->srq); // never dereferenced here
        ctx->srq_posted = posted;
        core_level_add(ctx->cnt, CNT_CORE_SRQ_POSTED, posted); // as the first refill counts it
        core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, posted);
        cnt_wm_start(CNT_CORE_SRQ_POSTED);
        cnt_wm_start(CNT_VERBS_BUF_POOL_IN_USE);
    }
    void TearDown() override
    {
        if (ctx != nullptr) {
            cnt_wm_stop(CNT_VERBS_BUF_POOL_IN_USE);
            cnt_wm_stop(CNT_CORE_SRQ_POSTED);
            cnt_block_destroy(ctx->cnt);
            free(ctx);
        }
    }
    uint64_t level(cnt_id_t id, cnt_read_what_t what = CNT_READ_VALUE)
    {
        return cnt_read(ctx->cnt, id, what);
    }
    void take(uint32_t k) // k arrivals of a poll, each its buffer (srq_taken)
    {
        ctx->srq_posted -= k;
    }
};

TEST_F(SrqSync, APollThatNothingSyncedFallsByItsArrivals)
{
    take(3);
    EXPECT_EQ(level(CNT_CORE_SRQ_POSTED), uint64_t(posted)) << "the levels follow at the end";
    core_srq_sync_polled(3, ctx->cnt);
    EXPECT_EQ(level(CNT_CORE_SRQ_POSTED), uint64_t(posted - 3));
    EXPECT_EQ(level(CNT_VERBS_BUF_POOL_IN_USE), uint64_t(posted - 3));
    EXPECT_EQ(level(CNT_CORE_SRQ_POSTED, CNT_READ_LOW), uint64_t(posted - 3)) << "a read's min";
    // Between calls the levels are synced: a send buffer taken now moves nothing else.
    core_srq_sync_rise(ctx);
    core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, 1);
    EXPECT_EQ(ctx->scq_due, 0) << "nothing was left to sync";
    EXPECT_EQ(level(CNT_CORE_SRQ_POSTED), uint64_t(posted - 3));
    EXPECT_EQ(level(CNT_VERBS_BUF_POOL_IN_USE), uint64_t(posted - 2));
    EXPECT_EQ(level(CNT_VERBS_BUF_POOL_IN_USE, CNT_READ_LOW), uint64_t(posted - 3))
        << "the fall's low mark kept before the rise";
    EXPECT_EQ(level(CNT_VERBS_BUF_POOL_IN_USE, CNT_READ_HIGH), uint64_t(posted));
}

TEST_F(SrqSync, ASyncDuringAPollSendsTheCallToTheFullSync)
{
    take(2);                 // two arrivals handled, their buffers back in the pool
    core_srq_sync_rise(ctx); // the third takes a send buffer
    core_level_add(ctx->cnt, CNT_VERBS_BUF_POOL_IN_USE, 1);
    EXPECT_EQ(ctx->scq_due, 1) << "the call must end in the full sync";
    EXPECT_EQ(level(CNT_CORE_SRQ_POSTED), uint64_t(posted - 2)) << "caught up before the rise";
    EXPECT_EQ(level(CNT_VERBS_BUF_POOL_IN_USE), uint64_t(posted - 1));
    EXPECT_EQ(level(CNT_VERBS_BUF_POOL_IN_USE, CNT_READ_LOW), uint64_t(posted - 2))
        << "the low mark the two falls reached, kept before the rise";
    take(2); // the third and a fourth arrival
    core_srq_sync_shard(ctx, ctx->cnt);
    EXPECT_EQ(level(CNT_CORE_SRQ_POSTED), uint64_t(posted - 4));
    EXPECT_EQ(level(CNT_VERBS_BUF_POOL_IN_USE), uint64_t(posted - 3)) << "the send buffer in use";
}

// Of three arrivals the second is unexpected and keeps its buffer: the first went back to the
// pool, so the pool's level falls by one at once and never shows more than it had; the call then
// ends in the full sync, which takes the third.
TEST_F(SrqSync, AKeptBufferSyncsAtOnceAndSendsTheCallToTheFullSync)
{
    take(2); // the first handled, the second arriving
    core_srq_kept(ctx);
    EXPECT_EQ(ctx->scq_due, 1) << "the call must end in the full sync";
    EXPECT_EQ(level(CNT_CORE_SRQ_POSTED), uint64_t(posted - 2));
    EXPECT_EQ(level(CNT_VERBS_BUF_POOL_IN_USE), uint64_t(posted - 1)) << "the kept one in use";
    EXPECT_EQ(level(CNT_VERBS_BUF_POOL_IN_USE, CNT_READ_HIGH), uint64_t(posted))
        << "never above what the pool had";
    take(1); // the third, back in the pool
    core_srq_sync_shard(ctx, ctx->cnt);
    EXPECT_EQ(level(CNT_CORE_SRQ_POSTED), uint64_t(posted - 3));
    EXPECT_EQ(level(CNT_VERBS_BUF_POOL_IN_USE), uint64_t(posted - 2));
    EXPECT_EQ(level(CNT_VERBS_BUF_POOL_IN_USE, CNT_READ_LOW), uint64_t(posted - 2));
}

} // namespace
