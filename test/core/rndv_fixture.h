// The rendezvous tests' fixture (test_rndv.cc, test_rndv_fragments.cc): byte patterns, hints,
// and a connected pair with exact counters and the bytes of each transfer checked.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"
#include "core_fixture.h"
#include "ibmsg/ibmsg.h"

namespace rndv_test
{

constexpr size_t kMiB = 1 << 20;

inline uint8_t pattern(uint64_t seed, size_t i)
{
    return uint8_t(seed * 131 + i * 7 + (i >> 12) + 1);
}

inline void fill(void *p, size_t len, uint64_t seed)
{
    auto *b = static_cast<uint8_t *>(p);
    for (size_t i = 0; i < len; i++) {
        b[i] = pattern(seed, i);
    }
}

// The first byte that differs from the pattern, or len.
inline size_t first_bad(const void *p, size_t len, uint64_t seed)
{
    const auto *b = static_cast<const uint8_t *>(p);
    for (size_t i = 0; i < len; i++) {
        if (b[i] != pattern(seed, i)) {
            return i;
        }
    }
    return len;
}

using Hints = std::vector<std::pair<const char *, const char *>>;

inline core_test::InfoFn set_hints(const Hints &hints)
{
    return [hints](ibmsg_info_t info) {
        for (auto &h : hints) {
            ibmsg_info_set_string(info, h.first, h.second);
        }
    };
}

inline int open_context(ibmsg_context_t *ctx, const Hints &hints = {}, const char *device = nullptr)
{
    return core_test::open_context(ctx, device, set_hints(hints));
}

struct RndvTest : core_test::PairTest {
    uint64_t expect_wire_rejected = 0;

    void open(const Hints &hints = {})
    {
        open_pair(set_hints(hints));
    }
    void SetUp() override
    {
#if !IBMSG_HAVE_CORE_COUNTERS
        GTEST_SKIP() << "counters compiled out (IBMSG_CORE_COUNTERS=OFF)";
#endif
    }
    void TearDown() override
    {
        if (ctx != IBMSG_CONTEXT_NULL) {
            EXPECT_EQ(cnt(CNT_CORE_WIRE_REJECTED), expect_wire_rejected);
            EXPECT_EQ(cnt(CNT_VERBS_RNR_EVENTS), 0u);
            EXPECT_EQ(cnt(CNT_VERBS_WC_ERRORS), 0u);
            EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
        }
    }
    uint64_t cnt(cnt_id_t id, cnt_read_what_t what = CNT_READ_VALUE) const
    {
        return cnt_read(ctx->cnt, id, what);
    }
    // READs one message of len bytes takes.
    uint64_t reads(size_t len) const
    {
        return (len + a->rndv.chunk - 1) / a->rndv.chunk;
    }

    // Send len bytes of pattern seed from `out` (filled here) over from -> to into `in`
    // (inlen bytes, guard bytes after it checked); the receive is posted first.
    void transfer(ibmsg_ep_t from, ibmsg_ep_t to, uint8_t *out, size_t len, uint8_t *in,
                  size_t inlen, uint64_t tag, int expect = IBMSG_OK)
    {
        fill(out, len, tag);
        ibmsg_tag_status_t st{};
        ibmsg_request_t rreq, sreq;
        ASSERT_EQ(ibmsg_tag_irecv(ctx, to, in, inlen, tag, IBMSG_TAG_MASK_EXACT, &rreq), IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_isend(from, out, len, tag, &sreq), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rreq, &st), expect) << len << " bytes";
        ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK) << len << " bytes";
        EXPECT_EQ(st.source, to);
        EXPECT_EQ(st.tag, tag);
        EXPECT_EQ(st.length, len);
        size_t n = std::min(len, inlen);
        ASSERT_EQ(first_bad(in, n, tag), n) << len << " bytes into " << inlen;
    }
};

} // namespace rndv_test
