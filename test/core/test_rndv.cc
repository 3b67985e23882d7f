// The rendezvous protocol and the registration cache on a real device (Soft-RoCE in the guest):
// every size from 0 B to 8 MiB both ways across the eager limit, truncation, unexpected
// rendezvous, buffers reused and freed and reallocated between sends, exact counters, and
// malformed RTS / FIN messages; then two processes (two devices with --two-hosts).
#include <gtest/gtest.h>

#include <malloc.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"
#include "core_fixture.h"
#include "ibmsg/ibmsg.h"
#include "ibmsg/rma.h"
#include "rndv_fixture.h"
#include "verbs/fault.h"

using rndv_test::fill;
using rndv_test::first_bad;
using rndv_test::Hints;
using rndv_test::kMiB;
using rndv_test::open_context;
using rndv_test::pattern;
using rndv_test::RndvTest;

namespace
{

std::vector<size_t> all_sizes(size_t limit)
{
    std::vector<size_t> s = {0};
    for (size_t p = 1; p <= 8 * kMiB; p *= 2) {
        s.push_back(p);
    }
    for (size_t odd : {size_t(8191), size_t(8193), size_t(65537), size_t(1048577), limit - 1, limit,
                       limit + 1, size_t(3 * kMiB + 5), 8 * kMiB - 1}) {
        s.push_back(odd);
    }
    return s;
}

} // namespace

TEST_F(RndvTest, EverySizeBothWaysCountsExactly)
{
    open();
    const auto sizes = all_sizes(limit);
    std::vector<uint8_t> out(8 * kMiB), in(8 * kMiB + 64);
    uint64_t tag = 1, eager = 0, eager_bytes = 0, rndv = 0, rndv_bytes = 0, nreads = 0;
    for (size_t s : sizes) {
        for (int dir = 0; dir < 2; dir++) {
            std::memset(in.data(), 0xee, in.size());
            transfer(dir == 0 ? a : b, dir == 0 ? b : a, out.data(), s, in.data(), s, tag++);
            for (size_t i = s; i < s + 64; i++) {
                ASSERT_EQ(in[i], 0xee) << "written past " << s << " bytes at " << i;
            }
            if (s > limit) {
                rndv++;
                rndv_bytes += s;
                nreads += reads(s);
            } else {
                eager++;
                eager_bytes += s;
            }
        }
    }
    EXPECT_GT(rndv, 20u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_SENT), rndv);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_RECVD), rndv);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_BYTES_SENT), rndv_bytes);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_BYTES_RECVD), rndv_bytes);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_READS_POSTED), nreads);
    EXPECT_EQ(cnt(CNT_CORE_EAGER_MSGS_SENT), eager);
    EXPECT_EQ(cnt(CNT_CORE_EAGER_BYTES_RECVD), eager_bytes);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REJECTED), 0u);
    EXPECT_EQ(cnt(CNT_CORE_TRUNCATED_MSGS), 0u);
    // One send buffer and one receive buffer, each registered once per distinct page range.
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_HITS) + cnt(CNT_VERBS_REG_CACHE_MISSES), 2 * rndv);
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_INVALIDATIONS), 0u);
    EXPECT_GE(cnt(CNT_VERBS_REG_BYTES, CNT_READ_HIGH), 2 * 8 * kMiB);
}

TEST_F(RndvTest, ReadsSplitByChunk)
{
    open({{"core_rndv_chunk", "65536"}});
    ASSERT_EQ(a->rndv.chunk, 65536u);
    EXPECT_GE(a->rndv.reads_max, 1u);
    std::vector<uint8_t> out(kMiB + 1), in(kMiB + 1);
    transfer(a, b, out.data(), kMiB + 1, in.data(), in.size(), 7);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_READS_POSTED), 17u) << "16 full chunks and one byte";
    transfer(b, a, out.data(), kMiB, in.data(), in.size(), 8);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_READS_POSTED), 33u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_BYTES_RECVD), 2 * kMiB + 1);
}

TEST_F(RndvTest, ReadsInFlightStayWithinTheQpLimit)
{
    open({{"core_rndv_chunk", "4096"}});
    // 4 MiB in 4 KiB READs: far more than the QP may have outstanding.
    std::vector<uint8_t> out(4 * kMiB), in(4 * kMiB);
    transfer(a, b, out.data(), out.size(), in.data(), in.size(), 9);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_READS_POSTED), 1024u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_READS_OUTSTANDING), 0u);
    const uint64_t high = cnt(CNT_CORE_RNDV_READS_OUTSTANDING, CNT_READ_HIGH);
    // The limit from the device itself, capped at 16 (rma.h): both ends are this device.
    ibmsg_context_attr_t attr;
    ASSERT_EQ(ibmsg_context_query(ctx, &attr), IBMSG_OK);
    const core_test::DevCaps caps = core_test::device_caps(attr.device);
    ASSERT_TRUE(caps.found) << attr.device;
    const uint32_t want = std::min({16u, caps.init_rd_atom, caps.rd_atom});
    EXPECT_EQ(b->rndv.reads_max, want);
    // 1024 READs fill the pipe: the first service posts up to the limit at once.
    EXPECT_EQ(high, uint64_t(std::min(want, b->sq_depth))) << "READs are pipelined to the limit";
    printf("READs in flight at most %llu (QP max_rd_atomic %u, send queue %u)\n",
           (unsigned long long)high, b->rndv.reads_max, b->sq_depth);
}

// Waits for two requests of two contexts, progressing both (each test progresses its own).
static void wait_both(ibmsg_request_t *r1, ibmsg_request_t *r2)
{
    int d1 = 0, d2 = 0;
    while (!d1 || !d2) {
        if (!d1) {
            ASSERT_EQ(ibmsg_request_test(r1, &d1, nullptr), IBMSG_OK);
        }
        if (!d2) {
            ASSERT_EQ(ibmsg_request_test(r2, &d2, nullptr), IBMSG_OK);
        }
    }
}

// A peer whose device serves fewer READs at once (verbs_max_rd_atomic 1 on one side stands for
// a device with max_qp_rd_atom 1): the depths travel in the address blobs, both queue pairs use
// the smaller one in each direction (ibv_query_qp), and rendezvous both ways and gets work with
// never more than one READ in flight. Without the exchange the other side would post 16 and the
// responder would answer with an invalid-request error.
TEST(RndvReadDepth, NegotiatedWithThePeer)
{
    ibmsg_context_t big = IBMSG_CONTEXT_NULL, small = IBMSG_CONTEXT_NULL;
    int ret = open_context(&big, {{"core_rndv_chunk", "4096"}});
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(core_test::kSkip);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    EXPECT_EQ(open_context(&small, {{"verbs_max_rd_atomic", "0"}}), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(open_context(&small, {{"verbs_max_rd_atomic", "17"}}), IBMSG_ERR_OUT_OF_RANGE);
    ASSERT_EQ(open_context(&small, {{"core_rndv_chunk", "4096"}, {"verbs_max_rd_atomic", "1"}}),
              IBMSG_OK);
    const verbs_dev_info_t *info = verbs_dev_info(big->dev);
    ibmsg_ep_t a, b, c, d;
    ASSERT_EQ(ibmsg_ep_create(big, &a), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(small, &b), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(big, &c), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(big, &d), IBMSG_OK);
    ASSERT_EQ(core_test::connect_pair(a, b), IBMSG_OK);
    ASSERT_EQ(core_test::connect_pair(c, d), IBMSG_OK);

    verbs_qp_attr_t qa, qb, qc;
    ASSERT_EQ(verbs_qp_query(a->qp, &qa), IBMSG_OK);
    ASSERT_EQ(verbs_qp_query(b->qp, &qb), IBMSG_OK);
    ASSERT_EQ(verbs_qp_query(c->qp, &qc), IBMSG_OK);
    EXPECT_EQ(qa.max_rd_atomic, 1u);
    EXPECT_EQ(qa.max_dest_rd_atomic, 1u);
    EXPECT_EQ(qb.max_rd_atomic, 1u);
    EXPECT_EQ(qb.max_dest_rd_atomic, 1u);
    // Two uncapped ends: the device's limits, at most 16.
    EXPECT_EQ(qc.max_rd_atomic, std::min(16u, info->max_init_rd_atom));
    EXPECT_EQ(qc.max_dest_rd_atomic, std::min(16u, info->max_rd_atom));
    EXPECT_EQ(a->rndv.reads_max, 1u);
    EXPECT_EQ(b->rndv.reads_max, 1u);
    ibmsg_rma_attr_t ra;
    ASSERT_EQ(ibmsg_rma_query(a, &ra), IBMSG_OK);
    EXPECT_EQ(ra.max_rd_atomic, 1u);

    // 1 MiB each way in 4 KiB READs.
    std::vector<uint8_t> out(kMiB), in(kMiB);
    for (int dir = 0; dir < 2; dir++) {
        ibmsg_ep_t from = dir == 0 ? a : b, to = dir == 0 ? b : a;
        fill(out.data(), kMiB, 40 + dir);
        std::fill(in.begin(), in.end(), 0);
        ibmsg_request_t rreq, sreq;
        ASSERT_EQ(ibmsg_tag_irecv(to->ctx, to, in.data(), kMiB, 4, IBMSG_TAG_MASK_EXACT, &rreq),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_isend(from, out.data(), kMiB, 4, &sreq), IBMSG_OK);
        wait_both(&rreq, &sreq);
        ASSERT_EQ(first_bad(in.data(), kMiB, 40 + dir), kMiB) << "direction " << dir;
    }
    for (ibmsg_context_t x : {big, small}) {
        EXPECT_EQ(cnt_read(x->cnt, CNT_CORE_RNDV_READS_POSTED, CNT_READ_VALUE), 256u);
        EXPECT_EQ(cnt_read(x->cnt, CNT_CORE_RNDV_READS_OUTSTANDING, CNT_READ_HIGH), 1u);
        EXPECT_EQ(cnt_read(x->cnt, CNT_VERBS_WC_ERRORS, CNT_READ_VALUE), 0u);
    }

    // Gets by the uncapped side from the capped one: 64 in flight, the device queues them.
    ibmsg_mem_t rmem, lmem;
    ASSERT_EQ(ibmsg_mem_map(small, out.data(), kMiB, IBMSG_MEM_REMOTE_READ, &rmem), IBMSG_OK);
    ASSERT_EQ(ibmsg_mem_map(big, in.data(), kMiB, 0, &lmem), IBMSG_OK);
    uint8_t blob[IBMSG_RKEY_BLOB_SIZE];
    size_t blen = sizeof(blob);
    ibmsg_rkey_t rkey;
    ASSERT_EQ(ibmsg_mem_rkey_pack(rmem, blob, &blen), IBMSG_OK);
    ASSERT_EQ(ibmsg_rkey_unpack(a, blob, blen, &rkey), IBMSG_OK);
    fill(out.data(), kMiB, 42);
    std::vector<ibmsg_request_t> gets(64);
    const size_t g = kMiB / gets.size();
    for (size_t i = 0; i < gets.size(); i++) {
        ASSERT_EQ(
            ibmsg_get(a, in.data() + i * g, g, lmem, uintptr_t(out.data()) + i * g, rkey, &gets[i]),
            IBMSG_OK);
    }
    for (auto &r : gets) {
        ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
    }
    EXPECT_EQ(first_bad(in.data(), kMiB, 42), kMiB);
    EXPECT_EQ(ibmsg_ep_status(a), IBMSG_OK);
    EXPECT_EQ(ibmsg_rkey_destroy(rkey), IBMSG_OK);
    EXPECT_EQ(ibmsg_mem_unmap(rmem), IBMSG_OK);
    EXPECT_EQ(ibmsg_mem_unmap(lmem), IBMSG_OK);
    EXPECT_EQ(ibmsg_context_destroy(small), IBMSG_OK);
    EXPECT_EQ(ibmsg_context_destroy(big), IBMSG_OK);
}

// A message above core_rndv_window_max (what one bind covers: mlx5 refuses a window above
// 2 GiB at its post, and the connection went with it) goes with a registration of exactly its
// bytes; one up to it with a window; the bytes arrive either way. And a bind the device refuses
// at its post is that message's affair alone: it too goes with a registration.
TEST_F(RndvTest, MessagesAboveTheWindowMaxOrWithARefusedBindRegister)
{
    open({{"core_rndv_window_max", "65536"}});
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    if (!a->rndv.windows) {
        GTEST_SKIP() << "the device has no type 2B memory windows";
    }
    std::vector<uint8_t> out(kMiB), in(kMiB);
    transfer(a, b, out.data(), kMiB, in.data(), kMiB, 1);
    transfer(a, b, out.data(), 65536, in.data(), kMiB, 2);
    transfer(a, b, out.data(), 65537, in.data(), kMiB, 3);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_WINDOWS_BOUND), 1u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REGISTERED_SENDS), 2u);

    verbs_faults.post_kinds = VERBS_FAULT_BIND;
    verbs_faults.post_errno = EOPNOTSUPP;
    verbs_faults.post_count = 1;
    transfer(a, b, out.data(), 32768, in.data(), kMiB, 4); // refused bind: registered
    transfer(a, b, out.data(), 32768, in.data(), kMiB, 5); // a window again
    const uint32_t refused = verbs_faults.post_refused;
    verbs_faults = verbs_faults_t{};
    EXPECT_EQ(refused, 1u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_WINDOWS_BOUND), 2u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REGISTERED_SENDS), 3u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_SENT), 5u);
    EXPECT_EQ(cnt(CNT_CORE_EP_FAILURES), 0u);
    EXPECT_EQ(ibmsg_ep_status(a), IBMSG_OK);
}

TEST_F(RndvTest, TruncationReadsOnlyWhatFits)
{
    open();
    const size_t len = 100000, small = 50000;
    std::vector<uint8_t> out(len), in(small + 64, 0xee);
    // A posted receive smaller than the message (a rendezvous one).
    transfer(a, b, out.data(), len, in.data(), small, 3, IBMSG_ERR_TRUNCATED);
    for (size_t i = small; i < in.size(); i++) {
        ASSERT_EQ(in[i], 0xee) << i;
    }
    EXPECT_EQ(cnt(CNT_CORE_RNDV_BYTES_RECVD), small);
    // Larger than the eager limit to an eager-sized buffer, unexpected, and to no buffer at all.
    ibmsg_request_t s1, s2;
    fill(out.data(), len, 4);
    ASSERT_EQ(ibmsg_tag_isend(a, out.data(), len, 4, &s1), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_isend(a, out.data(), len, 5, &s2), IBMSG_OK);
    ibmsg_tag_status_t st{};
    ASSERT_EQ(ibmsg_tag_recv(ctx, b, in.data(), 100, 4, IBMSG_TAG_MASK_EXACT, &st),
              IBMSG_ERR_TRUNCATED);
    EXPECT_EQ(st.length, len);
    EXPECT_EQ(first_bad(in.data(), 100, 4), 100u);
    EXPECT_EQ(in[100], pattern(3, 100)) << "nothing past the 100 bytes";
    ASSERT_EQ(ibmsg_tag_recv(ctx, b, nullptr, 0, 5, IBMSG_TAG_MASK_EXACT, &st),
              IBMSG_ERR_TRUNCATED);
    EXPECT_EQ(st.length, len);
    EXPECT_EQ(ibmsg_request_wait(&s1, nullptr), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&s2, nullptr), IBMSG_OK) << "a 0-byte pull still FINs";
    EXPECT_EQ(cnt(CNT_CORE_TRUNCATED_MSGS), 3u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_BYTES_RECVD), small + 100);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_RECVD), 3u);
    // An eager message into a rendezvous-sized buffer.
    std::vector<uint8_t> big(len);
    transfer(b, a, out.data(), 1000, big.data(), big.size(), 6);
}

TEST_F(RndvTest, UnexpectedRendezvousMatchesInOrder)
{
    open();
    // Interleaved eager and rendezvous messages of one tag, all sent before any receive.
    const std::vector<size_t> sizes = {200000, 10, 65537, limit, limit + 1, 1 << 20, 0};
    std::vector<std::vector<uint8_t>> out(sizes.size());
    std::vector<ibmsg_request_t> sreq(sizes.size());
    for (size_t i = 0; i < sizes.size(); i++) {
        out[i].resize(sizes[i]);
        fill(out[i].data(), sizes[i], 100 + i);
        ASSERT_EQ(ibmsg_tag_isend(a, out[i].data(), sizes[i], 9, &sreq[i]), IBMSG_OK);
    }
    for (int spin = 0; spin < 1000000 && cnt(CNT_CORE_UNEXPECTED_RECVQ) < sizes.size(); spin++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    ASSERT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ), sizes.size());
    int done = 1;
    ASSERT_EQ(ibmsg_request_test(&sreq[0], &done, nullptr), IBMSG_OK);
    EXPECT_EQ(done, 0) << "a rendezvous send completes only when the data has been read";
    EXPECT_EQ(ibmsg_request_cancel(sreq[0]), IBMSG_OK) << "in flight: not cancelled";
    std::vector<uint8_t> in(2 << 20);
    for (size_t i = 0; i < sizes.size(); i++) {
        ibmsg_tag_status_t st{};
        ASSERT_EQ(
            ibmsg_tag_recv(ctx, IBMSG_EP_NULL, in.data(), in.size(), 0, IBMSG_TAG_MASK_ANY, &st),
            IBMSG_OK);
        ASSERT_EQ(st.length, sizes[i]) << "message " << i << " out of order";
        EXPECT_EQ(first_bad(in.data(), sizes[i], 100 + i), sizes[i]) << "message " << i;
    }
    for (auto &r : sreq) {
        EXPECT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
    }
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_RECVD), 4u);
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_MSGS), sizes.size());
}

TEST_F(RndvTest, ManyInFlightBeyondTheIdWindow)
{
    open();
    // More rendezvous sends than CORE_RNDV_MAX at once: the rest wait for ids, in order.
    const int n = CORE_RNDV_MAX + 44;
    const size_t len = limit + 1000;
    std::vector<uint8_t> out(len * n);
    std::vector<ibmsg_request_t> sreq(n);
    for (int i = 0; i < n; i++) {
        fill(&out[i * len], len, i);
        ASSERT_EQ(ibmsg_tag_isend(a, &out[i * len], len, 11, &sreq[i]), IBMSG_OK);
    }
    std::vector<uint8_t> in(len);
    for (int i = 0; i < n; i++) {
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_tag_recv(ctx, b, in.data(), len, 11, IBMSG_TAG_MASK_EXACT, &st), IBMSG_OK);
        ASSERT_EQ(first_bad(in.data(), len, i), len) << "message " << i;
    }
    for (auto &r : sreq) {
        EXPECT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
    }
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_SENT), uint64_t(n));
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REJECTED), 0u);
}

TEST_F(RndvTest, CacheHitsOnReuseExactly)
{
    open();
    const int n = 10;
    std::vector<uint8_t> out(kMiB), in(kMiB);
    for (int i = 0; i < n; i++) {
        transfer(a, b, out.data(), kMiB, in.data(), kMiB, 20 + i);
    }
    // A source and a destination: one miss each, then hits; the bytes stay registered.
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_MISSES), 2u);
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_HITS), 2u * (n - 1));
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_EVICTIONS), 0u);
    uint32_t entries = 0;
    uint64_t bytes = 0;
    verbs_rcache_usage(verbs_mr_cache_rcache(ctx->rcache), &entries, &bytes);
    EXPECT_EQ(entries, 2u);
    EXPECT_EQ(cnt(CNT_VERBS_REG_BYTES), bytes);
    EXPECT_GE(bytes, 2 * kMiB);
    EXPECT_LE(bytes, 2 * kMiB + 4 * 4096) << "whole pages of the buffers, no more";
}

TEST_F(RndvTest, CacheDisabledRegistersPerTransfer)
{
    open({{"verbs_reg_cache", "0"}});
    const int n = 5;
    std::vector<uint8_t> out(kMiB), in(kMiB);
    for (int i = 0; i < n; i++) {
        transfer(a, b, out.data(), kMiB, in.data(), kMiB, 20 + i);
    }
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_MISSES), 2u * n);
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_HITS), 0u);
    EXPECT_EQ(cnt(CNT_VERBS_REG_BYTES), 0u) << "released after every transfer";
    EXPECT_GE(cnt(CNT_VERBS_REG_BYTES, CNT_READ_HIGH), 2 * kMiB);
}

TEST_F(RndvTest, CacheEvictsToItsLimit)
{
    open({{"verbs_reg_cache_max_entries", "3"}});
    std::vector<uint8_t> out(4 * kMiB), in(kMiB);
    for (int i = 0; i < 4; i++) { // 4 sources + 1 destination through 3 entries
        transfer(a, b, &out[i * kMiB], kMiB, in.data(), kMiB, 40 + i);
    }
    uint32_t entries = 0;
    verbs_rcache_usage(verbs_mr_cache_rcache(ctx->rcache), &entries, nullptr);
    EXPECT_EQ(entries, 3u);
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_MISSES), 5u);
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_HITS), 3u);
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_EVICTIONS), 2u);
}

// The cache must never send stale data: buffers freed and allocated again (often at the same
// address, with other pages behind it) between sends, with new contents each time.
TEST_F(RndvTest, FreedAndReallocatedBuffersNeverSendStaleData)
{
    open();
    // A fixed mmap threshold: a 2 MiB block is mapped by malloc() and unmapped by free() (glibc
    // would otherwise raise the threshold after the first free and reuse heap pages). When
    // earlier tests of this process left that much free heap, malloc() takes it from there
    // whatever the threshold (glibc marks mapped blocks in the size word before them: bit 1),
    // and such a block keeps its pages. Another allocator (AddressSanitizer's quarantines freed
    // blocks) refuses the threshold: the malloc part then only checks the data, the mmap part
    // below still proves the invalidation.
    const bool glibc = mallopt(M_MMAP_THRESHOLD, 128 * 1024) == 1;
    const size_t len = 2 * kMiB;
    std::vector<uint8_t> in(len);
    void *prev = nullptr;
    bool prev_mapped = false;
    unsigned remapped = 0; // blocks at the address of the one before, which was unmapped
    unsigned unmapped = 0; // blocks unmapped by free() before the next transfer
    for (int i = 0; i < 8; i++) {
        auto *out = static_cast<uint8_t *>(malloc(len));
        ASSERT_NE(out, nullptr);
        size_t size_word = 0;
        if (glibc) { // glibc's chunk header; another allocator's (ASan's redzone) is not ours to
                     // read
            std::memcpy(&size_word, reinterpret_cast<const void *>(uintptr_t(out) - sizeof(size_t)),
                        sizeof(size_word));
        }
        const bool mapped = (size_word & 2) != 0;
        remapped += out == prev && prev_mapped;
        prev = out;
        prev_mapped = mapped;
        transfer(a, b, out, len, in.data(), len, 60 + i);
        transfer(b, a, in.data(), len, out, len, 70 + i); // and as a destination
        free(out);
        unmapped += mapped && i < 7;
    }
    // Exact when every block was mapped (a process of its own, as ctest runs it); heap blocks
    // may be trimmed and grown back in between, which adds invalidations.
    const bool all_mapped = glibc && unmapped == 7;
    const uint64_t inval = cnt(CNT_VERBS_REG_CACHE_INVALIDATIONS);
    ASSERT_TRUE(verbs_rcache_enabled(verbs_mr_cache_rcache(ctx->rcache)));
    if (verbs_rcache_check(verbs_mr_cache_rcache(ctx->rcache)) == VERBS_RCACHE_CHECK_FRAMES) {
        // Each reuse of unmapped pages: the source and the destination registration of the old
        // pages are dropped.
        EXPECT_TRUE(all_mapped ? inval == 2u * remapped : inval >= 2u * remapped) << inval;
    } else if (glibc) {
        // Each free() that unmaps: both registrations dropped at the next get, reused or not
        // (the last free is seen by the next transfer's get).
        EXPECT_TRUE(all_mapped ? inval == 2u * 7 : inval >= 2u * unmapped) << inval;
    }

    // Deterministic: unmap and map again at the same address.
    void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    transfer(a, b, static_cast<uint8_t *>(p), len, in.data(), len, 80);
    const uint64_t before = cnt(CNT_VERBS_REG_CACHE_INVALIDATIONS);
    ASSERT_EQ(munmap(p, len), 0);
    void *q = mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    ASSERT_EQ(q, p);
    transfer(a, b, static_cast<uint8_t *>(q), len, in.data(), len, 81);
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_INVALIDATIONS), before + 1);
    ASSERT_EQ(munmap(q, len), 0);

    // Small heap blocks reused without unmapping keep their pages: hits, and still right.
    const uint64_t hits = cnt(CNT_VERBS_REG_CACHE_HITS);
    std::vector<uint8_t> keep(len); // the destination stays
    for (int i = 0; i < 4; i++) {
        auto *out = static_cast<uint8_t *>(malloc(64 * 1024));
        transfer(a, b, out, 64 * 1024, keep.data(), 64 * 1024, 90 + i);
        free(out);
    }
    EXPECT_GE(cnt(CNT_VERBS_REG_CACHE_HITS), hits + 3) << "the destination at least";
}

TEST_F(RndvTest, MalformedRtsAndFinAreRejectedAndCounted)
{
    open();
    std::vector<uint8_t> out(limit + 5000), in(limit + 5000);
    fill(out.data(), out.size(), 1);
    // a's send waits for b's receive: id 0 is outstanding at a.
    ibmsg_request_t sreq;
    ASSERT_EQ(ibmsg_tag_isend(a, out.data(), out.size(), 1, &sreq), IBMSG_OK);
    for (int spin = 0; spin < 100000 && cnt(CNT_CORE_UNEXPECTED_RECVQ) == 0; spin++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    ASSERT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ), 1u);
    const uint32_t rkey = sreq->rndv.rkey;
    const uint64_t addr = uintptr_t(out.data());
    core_wire_rndv_t bad[] = {
        {addr, out.size(), rkey ^ 1, 0},         // another key
        {addr + 8, out.size(), rkey, 0},         // another address
        {addr, out.size() + 1, rkey, 0},         // more bytes than the message
        {addr, out.size(), rkey, 1},             // an id not outstanding
        {addr, out.size(), rkey, CORE_RNDV_MAX}, // same slot, another id
    };
    // Forge FINs from b (header-valid, so only the rendezvous check can refuse them).
    auto inject = [&](uint8_t type, uint64_t tag, const core_wire_rndv_t &body) {
        for (int spin = 0; spin < 100000 && !core_ep_can_send(b); spin++) {
            ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
        }
        ASSERT_EQ(core_ep_post_msg(b, type, tag, &body, sizeof(body)), IBMSG_OK);
    };
    for (auto &f : bad) {
        inject(CORE_WIRE_FIN, 0, f);
    }
    const uint64_t nbad = sizeof(bad) / sizeof(bad[0]);
    for (int spin = 0; spin < 100000 && cnt(CNT_CORE_RNDV_REJECTED) < nbad; spin++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REJECTED), nbad);
    int done = 1;
    ASSERT_EQ(ibmsg_request_test(&sreq, &done, nullptr), IBMSG_OK);
    EXPECT_EQ(done, 0) << "no forged FIN completed the send";

    // The real receive completes both sides; replaying its FIN is then refused.
    ibmsg_tag_status_t st{};
    ASSERT_EQ(ibmsg_tag_recv(ctx, b, in.data(), in.size(), 1, IBMSG_TAG_MASK_EXACT, &st), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK);
    EXPECT_EQ(first_bad(in.data(), in.size(), 1), in.size());
    inject(CORE_WIRE_FIN, 0, core_wire_rndv_t{addr, out.size(), rkey, 0});

    // Forged RTSs to a: an id out of order and an eager size.
    const uint32_t next = b->rndv.tx_next_id;
    inject(CORE_WIRE_RTS, 5, core_wire_rndv_t{addr, out.size(), rkey, next + 3});
    inject(CORE_WIRE_RTS, 5, core_wire_rndv_t{addr, limit, rkey, next});
    // ... and an eager size for a tag that carries the header (the limit less the header).
    const size_t hdr_max = limit - sizeof(core_wire_hdr_t);
    inject(CORE_WIRE_RTS, CORE_WIRE_IMM_TAG_MAX + 1ull,
           core_wire_rndv_t{addr, hdr_max, rkey, next});
    for (int spin = 0; spin < 100000 && cnt(CNT_CORE_RNDV_REJECTED) < nbad + 4; spin++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REJECTED), nbad + 4);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_RECVD), 1u) << "no forged RTS was accepted";
    EXPECT_EQ(cnt(CNT_CORE_UNEXPECTED_RECVQ), 0u);

    // Both directions still work, ids in step.
    transfer(a, b, out.data(), out.size(), in.data(), in.size(), 2);
    transfer(b, a, out.data(), out.size(), in.data(), in.size(), 3);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_RECVD), 3u);

    // A body no valid peer sends (address 0) is refused by the header check, like a corrupt
    // header: the stream from b is then broken by design, so this goes last.
    inject(CORE_WIRE_RTS, 5, core_wire_rndv_t{0, out.size(), rkey, b->rndv.tx_next_id});
    expect_wire_rejected = 1;
    for (int spin = 0; spin < 100000 && cnt(CNT_CORE_WIRE_REJECTED) < 1; spin++) {
        ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
    }
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_RECVD), 3u);
}

TEST_F(RndvTest, DestroyWithTransfersInFlight)
{
    open();
    std::vector<uint8_t> out(kMiB);
    ibmsg_request_t sreq;
    ASSERT_EQ(ibmsg_tag_isend(a, out.data(), out.size(), 1, &sreq), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_destroy(a), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_ERR_CANCELED);
    ASSERT_EQ(ibmsg_ep_destroy(b), IBMSG_OK); // its unexpected RTS goes with it
    a = b = IBMSG_EP_NULL;
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_MISSES), 1u);
    uint32_t entries = 0;
    verbs_rcache_usage(verbs_mr_cache_rcache(ctx->rcache), &entries, nullptr);
    EXPECT_EQ(entries, 1u) << "the registration is back in the cache, unused";
}

// Two processes (two devices with --two-hosts): the child echoes every message; the parent
// sends every size, then from buffers it frees and allocates again.
TEST(RndvTwoProcesses, EchoEverySizeAndReallocatedBuffers)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    const char *dev_a = getenv("IBMSG_VM_DEV_A"), *dev_b = getenv("IBMSG_VM_DEV_B");
    const auto sizes = all_sizes(8192);
    const int realloc_rounds = 6;
    const size_t realloc_len = 3 * kMiB;
    ibmsg_oob_t listener;
    uint16_t port = 0;
    ASSERT_EQ(ibmsg_oob_listen("127.0.0.1", 0, &listener), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_port(listener, &port), IBMSG_OK);
    fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        ibmsg_oob_close(listener);
        ibmsg_context_t ctx;
        ibmsg_ep_t ep;
        ibmsg_oob_t conn;
        if (open_context(&ctx, {}, dev_b) != IBMSG_OK ||
            core_test::join_parent(ctx, port, &ep, &conn) != IBMSG_OK) {
            _exit(10);
        }
        std::vector<uint8_t> buf(8 * kMiB);
        for (size_t i = 0; i < sizes.size() + realloc_rounds; i++) {
            ibmsg_tag_status_t st;
            if (ibmsg_tag_recv(ctx, ep, buf.data(), buf.size(), 0, IBMSG_TAG_MASK_ANY, &st) !=
                    IBMSG_OK ||
                ibmsg_tag_send(ep, buf.data(), st.length, st.tag) != IBMSG_OK) {
                _exit(11);
            }
        }
        if (ibmsg_tag_recv(ctx, ep, nullptr, 0, 9, IBMSG_TAG_MASK_EXACT, nullptr) != IBMSG_OK) {
            _exit(14);
        }
        int ok = cnt_read(ctx->cnt, CNT_CORE_RNDV_REJECTED, CNT_READ_VALUE) == 0 &&
                 cnt_read(ctx->cnt, CNT_CORE_WIRE_REJECTED, CNT_READ_VALUE) == 0 &&
                 cnt_read(ctx->cnt, CNT_CORE_RNDV_LOCAL_INVALIDATIONS, CNT_READ_VALUE) == 0;
        ibmsg_oob_close(conn);
        ibmsg_context_destroy(ctx);
        _exit(ok ? 0 : 15);
    }
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    ASSERT_EQ(open_context(&ctx, {}, dev_a), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &ep), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_accept(listener, 20000, &conn), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_ep_connect(conn, ep, 20000), IBMSG_OK);
    std::vector<uint8_t> out(8 * kMiB), in(8 * kMiB);
    uint64_t tag = 1000, rndv = 0;
    for (size_t s : sizes) {
        fill(out.data(), s, tag);
        ibmsg_tag_status_t st{};
        ibmsg_request_t rreq;
        ASSERT_EQ(ibmsg_tag_irecv(ctx, ep, in.data(), in.size(), tag, IBMSG_TAG_MASK_EXACT, &rreq),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_send(ep, out.data(), s, tag), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rreq, &st), IBMSG_OK);
        ASSERT_EQ(st.length, s);
        ASSERT_EQ(first_bad(in.data(), s, tag), s) << s << " bytes";
        rndv += s > 8192;
        tag++;
    }
    for (int i = 0; i < realloc_rounds; i++) {
        auto *p = static_cast<uint8_t *>(malloc(realloc_len));
        ASSERT_NE(p, nullptr);
        fill(p, realloc_len, tag);
        ASSERT_EQ(ibmsg_tag_send(ep, p, realloc_len, tag), IBMSG_OK);
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_tag_recv(ctx, ep, p, realloc_len, tag, IBMSG_TAG_MASK_EXACT, &st),
                  IBMSG_OK);
        ASSERT_EQ(first_bad(p, realloc_len, tag), realloc_len) << "round " << i;
        free(p);
        rndv++;
        tag++;
    }
    ASSERT_EQ(ibmsg_tag_send(ep, nullptr, 0, 9), IBMSG_OK);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "child failed (see its exit code in the test)";
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_RNDV_MSGS_SENT, CNT_READ_VALUE), rndv);
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_RNDV_MSGS_RECVD, CNT_READ_VALUE), rndv);
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_RNDV_REJECTED, CNT_READ_VALUE), 0u);
    if (ep->rndv.windows) { // a window per send, each killed by the peer's FIN
        EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_RNDV_WINDOWS_BOUND, CNT_READ_VALUE), rndv);
        EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_RNDV_LOCAL_INVALIDATIONS, CNT_READ_VALUE), 0u);
    }
    ibmsg_oob_close(conn);
    ibmsg_oob_close(listener);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}
