// Vector operations on a real device (Soft-RoCE in the guest): tagged sends and receives of
// 1..IBMSG_IOV_MAX entries of odd sizes, eager and rendezvous, both directions, with and without
// a shared receive queue; contiguous into vector and back; truncation; probe then receive;
// putv / getv split beyond a forced gather limit; issue order; refusals; exact counters.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"
#include "core_fixture.h"
#include "ibmsg/ibmsg.h"
#include "ibmsg/rma.h"

namespace
{

using core_test::pattern;
using core_test::payload;

constexpr uint8_t kGap = 0xee; // bytes between and after entries: never written
constexpr size_t kGapLen = 13;

// count entries of odd sizes totalling total bytes, laid out in one backing buffer with a gap
// of kGapLen after each; every third entry (from the second on) is empty when count > 2.
struct Vec {
    std::vector<uint8_t> back;
    std::vector<ibmsg_iov_t> iov;
    std::vector<size_t> at; // offset of each entry in back

    Vec(size_t total, size_t count, ibmsg_mem_t mem = IBMSG_MEM_NULL, uint8_t *base = nullptr)
    {
        std::vector<size_t> len(count, 0);
        size_t nonempty = 0;
        for (size_t i = 0; i < count; i++) {
            nonempty += !(count > 2 && i % 3 == 1);
        }
        size_t left = total;
        for (size_t i = 0, k = 0; i < count; i++) {
            if (count > 2 && i % 3 == 1) {
                continue;
            }
            k++;
            // Odd shares: the last nonempty entry takes the rest.
            size_t share = k == nonempty ? left : std::min(left, (total / nonempty) | 1);
            len[i] = share;
            left -= share;
        }
        size_t size = 0;
        for (size_t i = 0; i < count; i++) {
            at.push_back(size);
            size += len[i] + kGapLen;
        }
        back.assign(size + 1, kGap);
        uint8_t *p = base != nullptr ? base : back.data();
        if (base != nullptr) {
            std::memset(base, kGap, size + 1);
        }
        for (size_t i = 0; i < count; i++) {
            iov.push_back(ibmsg_iov_t{p + at[i], len[i], mem});
        }
    }
    uint8_t *data()
    {
        return iov.empty() ? back.data() : static_cast<uint8_t *>(iov[0].buf);
    }
    // Fill the entries with the concatenation of seed's pattern.
    void fill(uint64_t seed)
    {
        size_t off = 0;
        for (auto &e : iov) {
            for (size_t j = 0; j < e.len; j++) {
                static_cast<uint8_t *>(e.buf)[j] = pattern(seed, off + j);
            }
            off += e.len;
        }
    }
    // The first n bytes of the concatenation are seed's pattern, the rest of the entries and
    // every gap untouched (kGap). Returns the first wrong concatenation offset, or SIZE_MAX.
    size_t check(uint64_t seed, size_t n) const
    {
        size_t off = 0;
        for (size_t i = 0; i < iov.size(); i++) {
            const uint8_t *p = static_cast<const uint8_t *>(iov[i].buf);
            for (size_t j = 0; j < iov[i].len; j++, off++) {
                uint8_t want = off < n ? pattern(seed, off) : kGap;
                if (p[j] != want) {
                    return off;
                }
            }
            for (size_t j = 0; j < kGapLen; j++) {
                if (p[iov[i].len + j] != kGap) {
                    return off + 1000000000; // a gap written
                }
            }
        }
        return SIZE_MAX;
    }
};

struct IovTest : core_test::PairTest {
    const char *srq_hint = nullptr; // core_srq; nullptr: the environment's
    const char *sge_hint = nullptr; // core_iov_sge_max; nullptr: the default (device's)

    void SetUp() override
    {
        const char *m = srq_hint, *g = sge_hint;
        open_pair([m, g](ibmsg_info_t info) {
            if (m != nullptr) {
                ibmsg_info_set_string(info, "core_srq", m);
            }
            if (g != nullptr) {
                ibmsg_info_set_string(info, "core_iov_sge_max", g);
            }
        });
    }
    void TearDown() override
    {
        if (ctx != IBMSG_CONTEXT_NULL) {
            EXPECT_EQ(cnt(CNT_CORE_WIRE_REJECTED), 0u);
            EXPECT_EQ(cnt(CNT_VERBS_WC_ERRORS), 0u);
            EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
        }
    }
    uint64_t cnt(cnt_id_t id) const
    {
        return cnt_read(ctx->cnt, id, CNT_READ_VALUE);
    }

    // A vector of ns entries from -> a vector of nr entries at to, total bytes; every byte
    // and gap checked; the counters move by exactly the two operations.
    void vec_transfer(ibmsg_ep_t from, ibmsg_ep_t to, size_t total, size_t ns, size_t nr,
                      uint64_t tag)
    {
        Vec out(total, ns), in(total, nr);
        out.fill(tag);
        const uint64_t ops = cnt(CNT_CORE_IOV_OPS), entries = cnt(CNT_CORE_IOV_ENTRIES);
        ibmsg_request_t rreq, sreq;
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_tag_irecvv(ctx, to, in.iov.data(), nr, tag, IBMSG_TAG_MASK_EXACT, &rreq),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_isendv(from, out.iov.data(), ns, tag, &sreq), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rreq, &st), IBMSG_OK);
        EXPECT_EQ(st.source, to);
        EXPECT_EQ(st.tag, tag);
        EXPECT_EQ(st.length, total);
        EXPECT_EQ(st.error, IBMSG_OK);
        EXPECT_EQ(in.check(tag, total), SIZE_MAX)
            << total << " bytes, " << ns << " -> " << nr << " entries";
        EXPECT_EQ(cnt(CNT_CORE_IOV_OPS), ops + 2);
        EXPECT_EQ(cnt(CNT_CORE_IOV_ENTRIES), entries + ns + nr);
    }

    void every_count_both_ways()
    {
        const size_t totals[] = {1, 77, 1001, limit - 1, limit, limit + 1, 3 * limit + 77};
        uint64_t tag = 1;
        for (size_t total : totals) {
            for (size_t n = 1; n <= IBMSG_IOV_MAX; n++) {
                // Send and receive split differently; each direction.
                vec_transfer(a, b, total, n, IBMSG_IOV_MAX + 1 - n, tag++);
                ASSERT_FALSE(HasFatalFailure());
                vec_transfer(b, a, total, IBMSG_IOV_MAX + 1 - n, n, tag++);
                ASSERT_FALSE(HasFatalFailure());
            }
        }
    }
};

struct IovTestPerEndpointRq : IovTest {
    IovTestPerEndpointRq()
    {
        srq_hint = "0";
    }
};
struct IovTestSrq : IovTest {
    IovTestSrq()
    {
        srq_hint = "1";
    }
};
// The gather limit forced to 2 elements per work request: vectors need several.
struct IovTestSge2 : IovTest {
    IovTestSge2()
    {
        sge_hint = "2";
    }
};

} // namespace

TEST_F(IovTestPerEndpointRq, EveryCountEagerAndRendezvousBothWays)
{
    ASSERT_EQ(ctx->srq, nullptr);
    every_count_both_ways();
}

TEST_F(IovTestSrq, EveryCountEagerAndRendezvousBothWays)
{
    if (ctx->srq == nullptr) {
        IBMSG_TEST_MISSING("the device has no shared receive queue");
    }
    every_count_both_ways();
}

// A rendezvous vector send goes as one packed copy with a key registered for that transfer
// only; the vector receive reads into its entries with one READ per gather limit's worth.
TEST_F(IovTestSge2, RendezvousReadsScatterUpToTheLimit)
{
    EXPECT_EQ(a->rma.sge_rd, 2u);
    EXPECT_EQ(a->rma.sge_wr, 2u);
    const size_t total = 2 * limit + 333;
    const uint64_t reads = cnt(CNT_CORE_RNDV_READS_POSTED);
    const uint64_t registered = cnt(CNT_CORE_RNDV_REGISTERED_SENDS);
    // 16 entries, 5 of them empty: 11 to read into, 2 per READ = 6 READs.
    vec_transfer(a, b, total, 3, IBMSG_IOV_MAX, 42);
    ASSERT_FALSE(HasFatalFailure());
    EXPECT_EQ(cnt(CNT_CORE_RNDV_READS_POSTED), reads + 6);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REGISTERED_SENDS), registered + 1);
}

TEST_F(IovTest, DefaultGatherLimitsAreTheDevicesCappedAt16)
{
    ibmsg_context_attr_t attr;
    ASSERT_EQ(ibmsg_context_query(ctx, &attr), IBMSG_OK);
    ibv_device_attr da{};
    int n = 0;
    ibv_device **list = ibv_get_device_list(&n);
    bool found = false;
    for (int i = 0; list != nullptr && i < n && !found; i++) {
        if (strcmp(ibv_get_device_name(list[i]), attr.device) == 0) {
            ibv_context *dev = ibv_open_device(list[i]);
            ASSERT_NE(dev, nullptr);
            found = ibv_query_device(dev, &da) == 0;
            ibv_close_device(dev);
        }
    }
    ibv_free_device_list(list);
    ASSERT_TRUE(found);
    const uint32_t wr = std::min<uint32_t>(std::max(da.max_sge, 2), 16);
    EXPECT_EQ(a->rma.sge_wr, wr);
    EXPECT_EQ(a->rma.sge_rd, std::min<uint32_t>(wr, uint32_t(da.max_sge_rd)));
}

TEST_F(IovTest, ContiguousIntoVectorAndBack)
{
    for (size_t total : {size_t(5), limit, 2 * limit + 1}) {
        const uint64_t tag = 100 + total;
        auto out = payload(tag, total);
        // Contiguous send into a vector receive.
        Vec in(total, 7);
        ibmsg_request_t rreq;
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_tag_irecvv(ctx, b, in.iov.data(), 7, tag, IBMSG_TAG_MASK_EXACT, &rreq),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_send(a, out.data(), total, tag), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rreq, &st), IBMSG_OK);
        EXPECT_EQ(st.length, total);
        EXPECT_EQ(in.check(tag, total), SIZE_MAX) << total;
        // A vector send (blocking form) into a contiguous receive.
        Vec vout(total, 5);
        vout.fill(tag + 1);
        std::vector<uint8_t> cin(total + 16, kGap);
        ASSERT_EQ(ibmsg_tag_irecv(ctx, a, cin.data(), total, tag + 1, IBMSG_TAG_MASK_EXACT, &rreq),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_sendv(b, vout.iov.data(), 5, tag + 1), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rreq, &st), IBMSG_OK);
        EXPECT_EQ(st.length, total);
        auto want = payload(tag + 1, total);
        EXPECT_EQ(std::memcmp(cin.data(), want.data(), total), 0) << total;
        for (size_t i = total; i < cin.size(); i++) {
            ASSERT_EQ(cin[i], kGap) << "written past the message at " << i;
        }
    }
}

// A longer message into a vector: its first bytes in the entries, nothing past them, TRUNCATED
// with the full length, as for a contiguous buffer; eager (matched on arrival and unexpected)
// and rendezvous.
TEST_F(IovTest, TruncationIntoAVector)
{
    const uint64_t truncated = cnt(CNT_CORE_TRUNCATED_MSGS);
    int n = 0;
    for (size_t total : {size_t(300), limit, 3 * limit + 5}) {
        for (int unexpected = 0; unexpected < 2; unexpected++, n++) {
            const uint64_t tag = 7000 + n;
            const size_t room = total / 2 + 1;
            auto out = payload(tag, total);
            Vec in(room, 6);
            ibmsg_request_t rreq = IBMSG_REQUEST_NULL;
            ibmsg_tag_status_t st{};
            if (!unexpected) {
                ASSERT_EQ(
                    ibmsg_tag_irecvv(ctx, b, in.iov.data(), 6, tag, IBMSG_TAG_MASK_EXACT, &rreq),
                    IBMSG_OK);
            }
            ibmsg_request_t sreq;
            ASSERT_EQ(ibmsg_tag_isend(a, out.data(), total, tag, &sreq), IBMSG_OK);
            if (unexpected) {
                int found = 0;
                while (!found) {
                    ASSERT_EQ(ibmsg_tag_probe(ctx, b, tag, IBMSG_TAG_MASK_EXACT, &found, nullptr),
                              IBMSG_OK);
                }
                ASSERT_EQ(
                    ibmsg_tag_irecvv(ctx, b, in.iov.data(), 6, tag, IBMSG_TAG_MASK_EXACT, &rreq),
                    IBMSG_OK);
            }
            EXPECT_EQ(ibmsg_request_wait(&rreq, &st), IBMSG_ERR_TRUNCATED);
            EXPECT_EQ(st.error, IBMSG_ERR_TRUNCATED);
            EXPECT_EQ(st.length, total);
            EXPECT_EQ(in.check(tag, room), SIZE_MAX) << total << " unexpected " << unexpected;
            ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK);
        }
    }
    EXPECT_EQ(cnt(CNT_CORE_TRUNCATED_MSGS), truncated + uint64_t(n));
}

// Probe for the length, then receive exactly that into a vector (eager and rendezvous).
TEST_F(IovTest, ProbeThenIrecvv)
{
    for (size_t total : {size_t(1), limit - 3, 4 * limit + 9}) {
        const uint64_t tag = 900 + total;
        auto out = payload(tag, total);
        ibmsg_request_t sreq;
        ASSERT_EQ(ibmsg_tag_isend(a, out.data(), total, tag, &sreq), IBMSG_OK);
        int found = 0;
        ibmsg_tag_status_t st{};
        while (!found) {
            ASSERT_EQ(ibmsg_tag_probe(ctx, IBMSG_EP_NULL, tag, IBMSG_TAG_MASK_EXACT, &found, &st),
                      IBMSG_OK);
        }
        ASSERT_EQ(st.length, total);
        Vec in(st.length, IBMSG_IOV_MAX);
        ASSERT_EQ(
            ibmsg_tag_recvv(ctx, b, in.iov.data(), IBMSG_IOV_MAX, tag, IBMSG_TAG_MASK_EXACT, &st),
            IBMSG_OK);
        EXPECT_EQ(st.length, total);
        EXPECT_EQ(in.check(tag, total), SIZE_MAX) << total;
        ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK);
    }
}

TEST_F(IovTest, EmptyVectorsAreEmptyMessages)
{
    ibmsg_request_t rreq;
    ibmsg_tag_status_t st{};
    ibmsg_iov_t empty[2] = {{nullptr, 0, IBMSG_MEM_NULL}, {nullptr, 0, IBMSG_MEM_NULL}};
    ASSERT_EQ(ibmsg_tag_irecvv(ctx, b, nullptr, 0, 5, IBMSG_TAG_MASK_EXACT, &rreq), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_sendv(a, empty, 2, 5), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&rreq, &st), IBMSG_OK);
    EXPECT_EQ(st.length, 0u);
    EXPECT_EQ(st.tag, 5u);
}

TEST_F(IovTest, BadArgumentsRefusedWithTheirErrors)
{
    std::vector<uint8_t> buf(64);
    std::vector<ibmsg_iov_t> v(IBMSG_IOV_MAX + 1, ibmsg_iov_t{buf.data(), 1, IBMSG_MEM_NULL});
    ibmsg_request_t req = IBMSG_REQUEST_NULL;
    const uint64_t ops = cnt(CNT_CORE_IOV_OPS), entries = cnt(CNT_CORE_IOV_ENTRIES);
    // Bad vectors, each refused by all four non-blocking calls and the blocking ones.
    ibmsg_iov_t null_buf[2] = {{buf.data(), 3, IBMSG_MEM_NULL}, {nullptr, 1, IBMSG_MEM_NULL}};
    ibmsg_iov_t wraps_sum[2] = {{buf.data(), SIZE_MAX / 2 + 1, IBMSG_MEM_NULL},
                                {buf.data(), SIZE_MAX / 2 + 1, IBMSG_MEM_NULL}};
    ibmsg_iov_t wraps_end[1] = {{reinterpret_cast<void *>(UINTPTR_MAX - 3), 8, IBMSG_MEM_NULL}};
    struct Bad {
        const ibmsg_iov_t *iov;
        size_t count;
    } bad[] = {
        {nullptr, 1}, {v.data(), IBMSG_IOV_MAX + 1}, {null_buf, 2}, {wraps_sum, 2}, {wraps_end, 1}};
    for (const Bad &x : bad) {
        EXPECT_EQ(ibmsg_tag_isendv(a, x.iov, x.count, 1, &req), IBMSG_ERR_INVALID) << x.count;
        EXPECT_EQ(ibmsg_tag_irecvv(ctx, b, x.iov, x.count, 1, 0, &req), IBMSG_ERR_INVALID);
        EXPECT_EQ(ibmsg_tag_sendv(a, x.iov, x.count, 1), IBMSG_ERR_INVALID);
        EXPECT_EQ(ibmsg_tag_recvv(ctx, b, x.iov, x.count, 1, 0, nullptr), IBMSG_ERR_INVALID);
        EXPECT_EQ(req, IBMSG_REQUEST_NULL);
    }
    // NULL handles.
    EXPECT_EQ(ibmsg_tag_isendv(nullptr, v.data(), 1, 1, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_isendv(a, v.data(), 1, 1, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_irecvv(nullptr, b, v.data(), 1, 1, 0, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt(CNT_CORE_IOV_OPS), ops) << "refusals are not operations";
    EXPECT_EQ(cnt(CNT_CORE_IOV_ENTRIES), entries);
    // IBMSG_IOV_MAX entries is allowed.
    ibmsg_request_t rreq, sreq;
    std::vector<uint8_t> in(IBMSG_IOV_MAX);
    std::vector<ibmsg_iov_t> vin(IBMSG_IOV_MAX);
    for (size_t i = 0; i < IBMSG_IOV_MAX; i++) {
        buf[i] = uint8_t(i + 1);
        v[i].buf = &buf[i];
        vin[i] = ibmsg_iov_t{&in[IBMSG_IOV_MAX - 1 - i], 1, IBMSG_MEM_NULL};
    }
    ASSERT_EQ(ibmsg_tag_irecvv(ctx, b, vin.data(), IBMSG_IOV_MAX, 3, IBMSG_TAG_MASK_EXACT, &rreq),
              IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_isendv(a, v.data(), IBMSG_IOV_MAX, 3, &sreq), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&rreq, nullptr), IBMSG_OK);
    for (size_t i = 0; i < IBMSG_IOV_MAX; i++) {
        EXPECT_EQ(in[i], uint8_t(IBMSG_IOV_MAX - i)) << "reversed by the receive's entries";
    }
    EXPECT_EQ(cnt(CNT_CORE_IOV_OPS), ops + 2);
    EXPECT_EQ(cnt(CNT_CORE_IOV_ENTRIES), entries + 2 * IBMSG_IOV_MAX);
}

namespace
{

constexpr size_t kRegion = 1u << 20;

// IovTestSge2 with a remote region (a's key to memory served by b's side) and a local one.
struct IovRmaTest : IovTestSge2, core_test::RmaRegions {
    void SetUp() override
    {
        IovTestSge2::SetUp();
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        map_regions(ctx, a, kRegion);
    }
    void TearDown() override
    {
        if (ctx != IBMSG_CONTEXT_NULL) {
            unmap_regions();
        }
        IovTestSge2::TearDown();
    }
    uint64_t wrs() const
    {
        return cnt_read(a->cnt, CNT_VERBS_SEND_WRS_POSTED, CNT_READ_VALUE);
    }
};

} // namespace

// putv and getv of 1..16 entries of odd sizes at odd remote offsets: the remote bytes are the
// concatenation; with 2 elements per work request, a vector of k nonempty entries takes
// ceil(k / 2) work requests.
TEST_F(IovRmaTest, PutvGetvOddSizesSplitBeyondTheGatherLimit)
{
    size_t roff = 3;
    for (size_t n = 1; n <= IBMSG_IOV_MAX; n++) {
        for (size_t total : {size_t(n * 37 + 1), size_t(65537)}) {
            const uint64_t seed = n * 1000 + total;
            Vec out(total, n, lmem, local.data());
            out.fill(seed);
            size_t nonempty = 0;
            for (auto &e : out.iov) {
                nonempty += e.len > 0;
            }
            const uint64_t w0 = wrs(), ops = cnt(CNT_CORE_IOV_OPS);
            const uint64_t ents = cnt(CNT_CORE_IOV_ENTRIES);
            ibmsg_request_t req;
            ASSERT_EQ(ibmsg_putv(a, out.iov.data(), n, rbase + roff, rkey, &req), IBMSG_OK);
            ibmsg_tag_status_t st{};
            ASSERT_EQ(ibmsg_request_wait(&req, &st), IBMSG_OK);
            EXPECT_EQ(st.length, total);
            if (total > a->rma.inline_max) {
                EXPECT_EQ(wrs() - w0, (nonempty + 1) / 2) << n << " entries, " << total;
            }
            for (size_t i = 0; i < total; i++) {
                ASSERT_EQ(remote[roff + i], pattern(seed, i)) << n << " entries, byte " << i;
            }
            // Back into another vector (of a different split) with getv.
            Vec in(total, IBMSG_IOV_MAX + 1 - n, lmem, local.data() + kRegion / 2);
            size_t in_nonempty = 0;
            for (auto &e : in.iov) {
                in_nonempty += e.len > 0;
            }
            const uint64_t w1 = wrs();
            ASSERT_EQ(ibmsg_getv(a, in.iov.data(), in.iov.size(), rbase + roff, rkey, &req),
                      IBMSG_OK);
            ASSERT_EQ(ibmsg_request_wait(&req, &st), IBMSG_OK);
            EXPECT_EQ(wrs() - w1, (in_nonempty + 1) / 2);
            EXPECT_EQ(in.check(seed, total), SIZE_MAX) << n << " entries, " << total;
            EXPECT_EQ(cnt(CNT_CORE_IOV_OPS), ops + 2);
            EXPECT_EQ(cnt(CNT_CORE_IOV_ENTRIES), ents + n + in.iov.size());
            roff += 4099;
        }
    }
}

// A getv then a putv of the same remote bytes, issued back to back: the get returns the bytes
// from before the put (the put is fenced behind the get's READs), the target ends with the put's.
TEST_F(IovRmaTest, GetvThenPutvToTheSameBytesKeepIssueOrder)
{
    const size_t total = 40000;
    for (size_t i = 0; i < total; i++) {
        remote[i] = pattern(1, i);
    }
    Vec in(total, 9, lmem, local.data());
    Vec out(total, 4, lmem, local.data() + kRegion / 2);
    out.fill(2);
    const uint64_t fenced = cnt(CNT_CORE_RMA_FENCED_WRS);
    ibmsg_request_t g, p;
    ASSERT_EQ(ibmsg_getv(a, in.iov.data(), 9, rbase, rkey, &g), IBMSG_OK);
    ASSERT_EQ(ibmsg_putv(a, out.iov.data(), 4, rbase, rkey, &p), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&g, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&p, nullptr), IBMSG_OK);
    EXPECT_EQ(in.check(1, total), SIZE_MAX) << "the get saw the put";
    for (size_t i = 0; i < total; i++) {
        ASSERT_EQ(remote[i], pattern(2, i)) << i;
    }
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), fenced + 1);
}

TEST_F(IovRmaTest, InlinePutvNeedsNoMappings)
{
    ibmsg_rma_attr_t attr;
    ASSERT_EQ(ibmsg_rma_query(a, &attr), IBMSG_OK);
    if (attr.inline_limit < 3) {
        GTEST_SKIP() << "no inline puts here";
    }
    uint8_t x[2] = {0x11, 0x22}, y = 0x33;
    ibmsg_iov_t v[2] = {{x, 2, IBMSG_MEM_NULL}, {&y, 1, IBMSG_MEM_NULL}};
    ASSERT_EQ(ibmsg_putv(a, v, 2, rbase + 10, rkey, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_flush_wait(a), IBMSG_OK);
    EXPECT_EQ(remote[10], 0x11);
    EXPECT_EQ(remote[11], 0x22);
    EXPECT_EQ(remote[12], 0x33);
}

TEST_F(IovRmaTest, BadArgumentsRefusedWithTheirErrors)
{
    ibmsg_rma_attr_t attr;
    ASSERT_EQ(ibmsg_rma_query(a, &attr), IBMSG_OK);
    const size_t big = attr.inline_limit + 1;
    std::vector<uint8_t> unmapped(big);
    ibmsg_iov_t ok[2] = {{local.data(), big, lmem}, {local.data() + big, 5, lmem}};
    ibmsg_request_t req = IBMSG_REQUEST_NULL;
    const uint64_t oob = cnt(CNT_CORE_RMA_REFUSED_OOB), ops = cnt(CNT_CORE_IOV_OPS);
    // Remote range of the total length out of the key's range, by one byte.
    EXPECT_EQ(ibmsg_putv(a, ok, 2, rbase + kRegion - big - 4, rkey, &req), IBMSG_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(ibmsg_getv(a, ok, 2, rbase + kRegion - big - 4, rkey, &req), IBMSG_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(cnt(CNT_CORE_RMA_REFUSED_OOB), oob + 2);
    // An entry not inside its mapping, or without one above the inline limit.
    ibmsg_iov_t outside[2] = {ok[0], {unmapped.data(), big, lmem}};
    ibmsg_iov_t unmapped_entry[2] = {ok[0], {local.data(), big, IBMSG_MEM_NULL}};
    ibmsg_iov_t straddles[1] = {{local.data() + kRegion - 2, 4, lmem}};
    for (const ibmsg_iov_t *v : {outside, unmapped_entry}) {
        EXPECT_EQ(ibmsg_putv(a, v, 2, rbase, rkey, &req), IBMSG_ERR_INVALID);
        EXPECT_EQ(ibmsg_getv(a, v, 2, rbase, rkey, &req), IBMSG_ERR_INVALID);
    }
    EXPECT_EQ(ibmsg_getv(a, straddles, 1, rbase, rkey, &req), IBMSG_ERR_INVALID);
    // Vectors themselves: NULL with entries, too many, wrapping.
    std::vector<ibmsg_iov_t> many(IBMSG_IOV_MAX + 1, ibmsg_iov_t{local.data(), 1, lmem});
    ibmsg_iov_t wraps[2] = {{local.data(), SIZE_MAX / 2 + 1, lmem},
                            {local.data(), SIZE_MAX / 2 + 1, lmem}};
    EXPECT_EQ(ibmsg_putv(a, nullptr, 1, rbase, rkey, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_getv(a, nullptr, 1, rbase, rkey, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_putv(a, many.data(), IBMSG_IOV_MAX + 1, rbase, rkey, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_getv(a, many.data(), IBMSG_IOV_MAX + 1, rbase, rkey, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_putv(a, wraps, 2, rbase, rkey, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_putv(nullptr, ok, 2, rbase, rkey, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_putv(a, ok, 2, rbase, IBMSG_RKEY_NULL, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(req, IBMSG_REQUEST_NULL);
    EXPECT_EQ(cnt(CNT_CORE_IOV_OPS), ops) << "refusals are not operations";
    // The mappings hold nothing in flight: both unmap at teardown.
    EXPECT_EQ(lmem->inflight, 0u);
    // IBMSG_IOV_MAX entries are fine; the empty vector completes at once.
    ASSERT_EQ(ibmsg_putv(a, many.data(), IBMSG_IOV_MAX, rbase, rkey, &req), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&req, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_getv(a, nullptr, 0, rbase + kRegion, rkey, &req), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&req, nullptr), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_IOV_OPS), ops + 2);
}
