// One-sided operations on a real device (Soft-RoCE in the guest): put and get with byte checks
// over many sizes and offsets, flush, queueing past the send queue, refusals (bounds, access,
// handles, blobs) with exact counters, and two processes (puts seen by the target after a flush
// and a tagged handshake).
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"
#include "core_fixture.h"
#include "ibmsg/ibmsg.h"
#include "ibmsg/rma.h"
#include "verbs/fault.h"

namespace
{

using core_test::open_context;

constexpr size_t kRegion = (8u << 20) + 4096; // 8 MiB and room for offsets

using core_test::pattern;

void fill(uint8_t *p, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i++) {
        p[i] = pattern(seed, i);
    }
}

// Index of the first byte of p that differs from the pattern, or len.
size_t first_bad(const uint8_t *p, size_t len, uint64_t seed)
{
    for (size_t i = 0; i < len; i++) {
        if (p[i] != pattern(seed, i)) {
            return i;
        }
    }
    return len;
}

// One context, endpoints a <-> b; a "remote" region (reached through a's key, served by b's
// side) and a local one (a's buffers), both mapped.
struct RmaTest : ::testing::Test, core_test::RmaRegions {
    ibmsg_context_t ctx = IBMSG_CONTEXT_NULL;
    ibmsg_ep_t a = IBMSG_EP_NULL, b = IBMSG_EP_NULL;
    ibmsg_rma_attr_t attr{};

    void SetUp() override
    {
        core_test::open_pair(&ctx, &a, &b);
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        map_regions(ctx, a, kRegion);
        if (HasFatalFailure()) {
            return;
        }
        ASSERT_EQ(ibmsg_rma_query(a, &attr), IBMSG_OK);
    }
    void TearDown() override
    {
        if (ctx == IBMSG_CONTEXT_NULL) {
            return;
        }
        EXPECT_EQ(cnt(CNT_VERBS_WC_ERRORS), 0u);
        unmap_regions();
        EXPECT_EQ(cnt(CNT_CORE_RMA_MAPPED_BYTES), 0u);
        EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
    }
    ibmsg_rkey_t unpack_key(ibmsg_mem_t m)
    {
        return core_test::unpack_key(m, a);
    }
    uint64_t cnt(cnt_id_t id) const
    {
        return cnt_read(ctx->cnt, id, CNT_READ_VALUE);
    }
};

} // namespace

// Every size class: inline, one fragment, odd sizes, up to 8 MiB; into varying remote offsets.
TEST_F(RmaTest, PutGetManySizesAndOffsets)
{
    const size_t sizes[] = {1,        2,
                            3,        7,
                            8,        63,
                            64,       100,
                            199,      200,
                            201,      511,
                            512,      513,
                            1000,     4095,
                            4096,     4097,
                            12345,    65535,
                            65536,    65537,
                            1u << 20, (1u << 20) + 13,
                            3u << 20, (8u << 20) - 1,
                            8u << 20};
    uint64_t put_bytes = 0, get_bytes = 0, n = 0, inl = 0;
    for (size_t s : sizes) {
        const size_t off = (n * 4099) % (kRegion - s + 1);
        const uint64_t seed = 100 + n;
        fill(local.data(), s, seed);
        std::memset(remote.data(), 0, remote.size());
        ibmsg_request_t req;
        ibmsg_tag_status_t st{};
        // Inline puts need no local mapping; the others name it.
        ibmsg_mem_t lm = s <= attr.inline_limit ? IBMSG_MEM_NULL : lmem;
        inl += s <= attr.inline_limit;
        ASSERT_EQ(ibmsg_put(a, local.data(), s, lm, rbase + off, rkey, &req), IBMSG_OK) << s;
        ASSERT_EQ(ibmsg_request_wait(&req, &st), IBMSG_OK) << s;
        EXPECT_EQ(req, IBMSG_REQUEST_NULL);
        EXPECT_EQ(st.length, s);
        EXPECT_EQ(st.source, a);
        ASSERT_EQ(first_bad(remote.data() + off, s, seed), s) << "put of " << s << " at " << off;
        // Nothing around the target range was touched.
        EXPECT_TRUE(off == 0 || remote[off - 1] == 0) << s;
        EXPECT_TRUE(off + s == kRegion || remote[off + s] == 0) << s;
        // Get it back into a cleared local buffer, at another local offset.
        std::memset(local.data(), 0, local.size());
        const size_t loff = kRegion - s;
        ASSERT_EQ(ibmsg_get(a, local.data() + loff, s, lmem, rbase + off, rkey, &req), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&req, &st), IBMSG_OK) << s;
        EXPECT_EQ(st.length, s);
        ASSERT_EQ(first_bad(local.data() + loff, s, seed), s) << "get of " << s;
        EXPECT_TRUE(loff == 0 || local[loff - 1] == 0);
        put_bytes += s;
        get_bytes += s;
        n++;
    }
    EXPECT_EQ(cnt(CNT_CORE_RMA_PUT_OPS), n);
    EXPECT_EQ(cnt(CNT_CORE_RMA_PUT_BYTES), put_bytes);
    EXPECT_EQ(cnt(CNT_CORE_RMA_GET_OPS), n);
    EXPECT_EQ(cnt(CNT_CORE_RMA_GET_BYTES), get_bytes);
    EXPECT_EQ(cnt(CNT_CORE_RMA_INLINE_PUTS), inl);
    EXPECT_GT(inl, 0u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_REFUSED_OOB), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_MAPPED_BYTES), 2 * kRegion);
}

// 0 bytes: valid anywhere in [base, base + length], nothing posted, complete at once, counted.
TEST_F(RmaTest, ZeroLength)
{
    const uint64_t posted = cnt(CNT_VERBS_SEND_WRS_POSTED);
    ibmsg_request_t req = IBMSG_REQUEST_NULL;
    int done = 0;
    ASSERT_EQ(ibmsg_put(a, nullptr, 0, IBMSG_MEM_NULL, rbase + kRegion, rkey, &req), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_test(&req, &done, nullptr), IBMSG_OK);
    EXPECT_EQ(done, 1);
    ASSERT_EQ(ibmsg_get(a, nullptr, 0, IBMSG_MEM_NULL, rbase, rkey, &req), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&req, nullptr), IBMSG_OK);
    EXPECT_EQ(ibmsg_put(a, nullptr, 0, IBMSG_MEM_NULL, rbase + kRegion + 1, rkey, &req),
              IBMSG_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(cnt(CNT_VERBS_SEND_WRS_POSTED), posted);
    EXPECT_EQ(cnt(CNT_CORE_RMA_PUT_OPS), 1u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_GET_OPS), 1u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_PUT_BYTES), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_REFUSED_OOB), 1u);
    // A flush with nothing outstanding completes at once, posting nothing.
    ASSERT_EQ(ibmsg_ep_flush_wait(a), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_VERBS_SEND_WRS_POSTED), posted);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FLUSHES), 1u);
}

// Implicit puts (no request) of many sizes, far more than the send queue holds, then one
// flush: every byte is in place afterwards, and the flush posted exactly one marker.
TEST_F(RmaTest, ImplicitPutsCompleteAtFlush)
{
    const int n = 600; // > 4x the default send queue (128)
    const size_t chunk = 4096 + 3;
    ASSERT_LE(n * chunk, kRegion);
    fill(local.data(), n * chunk, 7);
    const uint64_t posted = cnt(CNT_VERBS_SEND_WRS_POSTED);
    for (int i = 0; i < n; i++) {
        const size_t s = (i % 5 == 0) ? 16 : chunk; // some inline, some not
        ASSERT_EQ(ibmsg_put(a, local.data() + i * chunk, s, lmem, rbase + i * chunk, rkey, nullptr),
                  IBMSG_OK)
            << i;
    }
    EXPECT_GT(a->rma.outstanding, 0u);
    ASSERT_EQ(ibmsg_ep_flush_wait(a), IBMSG_OK);
    EXPECT_EQ(a->rma.outstanding, 0u);
    EXPECT_TRUE(core_mq_list_empty(&a->rma.pending));
    for (int i = 0; i < n; i++) {
        const size_t s = (i % 5 == 0) ? 16 : chunk;
        for (size_t k = 0; k < s; k++) {
            ASSERT_EQ(remote[i * chunk + k], pattern(7, i * chunk + k)) << i << " " << k;
        }
    }
    EXPECT_EQ(cnt(CNT_VERBS_SEND_WRS_POSTED), posted + n + 1);
    EXPECT_EQ(cnt(CNT_CORE_RMA_PUT_OPS), uint64_t(n));
    EXPECT_EQ(cnt(CNT_CORE_RMA_FLUSHES), 1u);
}

// Many gets with requests in flight at once (more than max_rd_atomic and the send queue).
TEST_F(RmaTest, ManyGetsInFlight)
{
    const int n = 300;
    const size_t s = 8192 + 1;
    fill(remote.data(), n * s, 9);
    std::vector<ibmsg_request_t> reqs(n);
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_get(a, local.data() + i * s, s, lmem, rbase + i * s, rkey, &reqs[i]),
                  IBMSG_OK);
    }
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_request_wait(&reqs[i], nullptr), IBMSG_OK) << i;
    }
    EXPECT_EQ(first_bad(local.data(), n * s, 9), n * s);
    EXPECT_EQ(cnt(CNT_CORE_RMA_GET_OPS), uint64_t(n));
    EXPECT_EQ(cnt(CNT_CORE_RMA_GET_BYTES), uint64_t(n) * s);
    // The device's own limit (libibverbs), capped at 16 (rma.h).
    ibmsg_context_attr_t cattr;
    ASSERT_EQ(ibmsg_context_query(ctx, &cattr), IBMSG_OK);
    const core_test::DevCaps caps = core_test::device_caps(cattr.device);
    ASSERT_TRUE(caps.found) << cattr.device;
    EXPECT_EQ(attr.max_rd_atomic, std::min({16u, caps.init_rd_atom, caps.rd_atom}));
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 0u); // nothing was posted behind the READs
}

// A get then a put to the same bytes: the get returns the old bytes, because the put's WRITE
// is fenced behind the get's READ (IB lets a WRITE pass an earlier READ). Exactly the first
// WRITE or SEND behind READs in flight carries the fence; those after it queue behind it, and
// nothing is fenced once the READs are known complete.
TEST_F(RmaTest, GetThenPutOrSendIsFenced)
{
    const size_t s = 1u << 20;
    uint8_t *got = local.data(), *fresh = local.data() + s;
    fill(remote.data(), s, 21);
    fill(fresh, s, 22);
    ibmsg_request_t g, p, snd, rcv;
    char msg[16] = "after the put", in[16] = {};
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in, sizeof(in), 5, ~0ull, &rcv), IBMSG_OK);
    ASSERT_EQ(ibmsg_get(a, got, s, lmem, rbase, rkey, &g), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 0u);
    ASSERT_EQ(ibmsg_put(a, fresh, s, lmem, rbase, rkey, &p), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 1u);
    ASSERT_EQ(ibmsg_tag_isend(a, msg, sizeof(msg), 5, &snd), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 1u); // behind the fenced put
    ASSERT_EQ(ibmsg_request_wait(&g, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&p, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&snd, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&rcv, nullptr), IBMSG_OK);
    EXPECT_EQ(first_bad(got, s, 21), s) << "the get saw the later put";
    EXPECT_EQ(first_bad(remote.data(), s, 22), s);
    EXPECT_STREQ(in, msg);

    // The get is complete: a put now needs no fence.
    ASSERT_EQ(ibmsg_put(a, fresh, s, lmem, rbase, rkey, &p), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&p, nullptr), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 1u);

    // Implicit gets, then a message: the message is fenced (the peer may act on it).
    fill(remote.data(), s, 23);
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(ibmsg_get(a, got + i * 4096, 4096, lmem, rbase + i * 4096, rkey, nullptr),
                  IBMSG_OK);
    }
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in, sizeof(in), 6, ~0ull, &rcv), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_isend(a, msg, sizeof(msg), 6, &snd), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 2u);
    ASSERT_EQ(ibmsg_request_wait(&snd, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&rcv, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_flush_wait(a), IBMSG_OK);
    EXPECT_EQ(first_bad(got, 3 * 4096, 23), 3 * 4096u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 2u);
}

// One-sided operations of one endpoint execute in issue order (rma.h), on the same bytes: put
// then get returns the new bytes, put, put, get the second put's, get, put, get the old then the
// new, with a message between them, with and without requests. Soft-RoCE executes a QP's work
// requests one by one, so there the order alone cannot fail: the fence count is the proof that
// exactly each first WRITE or SEND behind READs in flight carried IBV_SEND_FENCE (a READ behind
// a WRITE needs none: IB orders it).
TEST_F(RmaTest, OperationsOnOneEndpointExecuteInIssueOrder)
{
    const size_t s = 256u << 10;
    uint8_t *src = local.data(), *got = local.data() + 8 * s, *got2 = local.data() + 9 * s;
    for (uint64_t seed = 41; seed <= 48; seed++) {
        fill(src + (seed - 41) * s, s, seed); // src of seed: src + (seed - 41) * s
    }
    auto from = [&](uint64_t seed) { return src + (seed - 41) * s; };
    auto wait = [](ibmsg_request_t &r) { ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK); };
    ibmsg_request_t p1, p2, g1, g2, snd, rcv;
    fill(remote.data(), s, 40);

    // put, then get: the new bytes; no fence (no READ was in flight).
    ASSERT_EQ(ibmsg_put(a, from(41), s, lmem, rbase, rkey, &p1), IBMSG_OK);
    ASSERT_EQ(ibmsg_get(a, got, s, lmem, rbase, rkey, &g1), IBMSG_OK);
    wait(p1);
    wait(g1);
    EXPECT_EQ(first_bad(got, s, 41), s) << "the get passed the put before it";
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 0u);

    // put, put, get: the second put's bytes.
    ASSERT_EQ(ibmsg_put(a, from(42), s, lmem, rbase, rkey, &p1), IBMSG_OK);
    ASSERT_EQ(ibmsg_put(a, from(43), s, lmem, rbase, rkey, &p2), IBMSG_OK);
    ASSERT_EQ(ibmsg_get(a, got, s, lmem, rbase, rkey, &g1), IBMSG_OK);
    wait(p1);
    wait(p2);
    wait(g1);
    EXPECT_EQ(first_bad(got, s, 43), s);
    EXPECT_EQ(first_bad(remote.data(), s, 43), s);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 0u);

    // get, put, get: the old bytes, then the new; the put is fenced.
    ASSERT_EQ(ibmsg_get(a, got, s, lmem, rbase, rkey, &g1), IBMSG_OK);
    ASSERT_EQ(ibmsg_put(a, from(44), s, lmem, rbase, rkey, &p1), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 1u);
    ASSERT_EQ(ibmsg_get(a, got2, s, lmem, rbase, rkey, &g2), IBMSG_OK);
    wait(g1);
    wait(p1);
    wait(g2);
    EXPECT_EQ(first_bad(got, s, 43), s) << "the get saw the put issued after it";
    EXPECT_EQ(first_bad(got2, s, 44), s) << "the get passed the put before it";
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 1u);

    // get, message, put, get: the message is the first behind the READ (fenced), the put queues
    // behind it (not fenced again); the gets see the old and the new bytes.
    char msg[16] = "between", in[16] = {};
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, in, sizeof(in), 7, ~0ull, &rcv), IBMSG_OK);
    ASSERT_EQ(ibmsg_get(a, got, s, lmem, rbase, rkey, &g1), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_isend(a, msg, sizeof(msg), 7, &snd), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 2u);
    ASSERT_EQ(ibmsg_put(a, from(45), s, lmem, rbase, rkey, &p1), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 2u);
    ASSERT_EQ(ibmsg_get(a, got2, s, lmem, rbase, rkey, &g2), IBMSG_OK);
    wait(g1);
    wait(snd);
    wait(rcv);
    wait(p1);
    wait(g2);
    EXPECT_EQ(first_bad(got, s, 44), s);
    EXPECT_EQ(first_bad(got2, s, 45), s);
    EXPECT_STREQ(in, msg);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 2u);

    // The same without requests, completed by one flush: put, get, get, put, put, get. The first
    // put behind the gets is fenced, the second queues behind it.
    ASSERT_EQ(ibmsg_put(a, from(46), s, lmem, rbase, rkey, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_get(a, got, s, lmem, rbase, rkey, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_get(a, got2, s, lmem, rbase, rkey, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_put(a, from(47), s, lmem, rbase, rkey, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_put(a, from(48), s, lmem, rbase, rkey, nullptr), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 3u);
    uint8_t *got3 = local.data() + 10 * s;
    ASSERT_EQ(ibmsg_get(a, got3, s, lmem, rbase, rkey, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_flush_wait(a), IBMSG_OK);
    EXPECT_EQ(first_bad(got, s, 46), s);
    EXPECT_EQ(first_bad(got2, s, 46), s);
    EXPECT_EQ(first_bad(got3, s, 48), s);
    EXPECT_EQ(first_bad(remote.data(), s, 48), s);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FENCED_WRS), 3u);
}

// A work request the device refuses at its post (EINVAL, EOPNOTSUPP: a length or an opcode it
// does not take) is that operation's local error: the request completes with it, nothing else
// is lost, the endpoint stays connected and the next operations succeed.
TEST_F(RmaTest, RefusedPostIsALocalError)
{
    const size_t s = 65536;
    fill(local.data(), s, 31);
    verbs_faults.post_kinds = VERBS_FAULT_WRITE;
    verbs_faults.post_errno = EINVAL;
    verbs_faults.post_count = 1;
    ibmsg_request_t p, g;
    ASSERT_EQ(ibmsg_put(a, local.data(), s, lmem, rbase, rkey, &p), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&p, nullptr), IBMSG_ERR_INVALID);
    verbs_faults.post_kinds = VERBS_FAULT_READ;
    verbs_faults.post_errno = EOPNOTSUPP;
    verbs_faults.post_count = 1;
    ASSERT_EQ(ibmsg_get(a, local.data() + s, s, lmem, rbase, rkey, &g), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&g, nullptr), IBMSG_ERR_NOT_SUPPORTED);
    const uint32_t refused = verbs_faults.post_refused;
    verbs_faults = verbs_faults_t{};
    EXPECT_EQ(refused, 2u);
    EXPECT_EQ(ibmsg_ep_status(a), IBMSG_OK);
    EXPECT_TRUE(std::all_of(remote.begin(), remote.begin() + s, [](uint8_t v) { return v == 0; }))
        << "the refused put wrote nothing";

    ASSERT_EQ(ibmsg_put(a, local.data(), s, lmem, rbase, rkey, &p), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&p, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_get(a, local.data() + s, s, lmem, rbase, rkey, &g), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&g, nullptr), IBMSG_OK);
    EXPECT_EQ(first_bad(remote.data(), s, 31), s);
    EXPECT_EQ(first_bad(local.data() + s, s, 31), s);
    EXPECT_EQ(cnt(CNT_CORE_EP_FAILURES), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_PUT_OPS), 2u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_GET_OPS), 2u);
}

// Outside the key's range: refused locally, exact error, nothing posted, no operation counted.
TEST_F(RmaTest, OutOfBoundsRefused)
{
    const uint64_t posted = cnt(CNT_VERBS_SEND_WRS_POSTED);
    struct Case {
        uint64_t addr;
        size_t len;
    } cases[] = {
        {rbase - 1, 1},              // before the base
        {rbase, kRegion + 1},        // one byte too long
        {rbase + kRegion - 7, 8},    // straddles the end
        {rbase + kRegion, 1},        // just past the end
        {rbase + 1, SIZE_MAX},       // addr + len wraps
        {UINT64_MAX - 3, 8},         // wraps the address space
        {0, 16},                     // address 0
        {rbase + kRegion + 4096, 0}, // empty, but past the end
    };
    ibmsg_request_t req = IBMSG_REQUEST_NULL;
    int k = 0;
    for (const auto &c : cases) {
        EXPECT_EQ(ibmsg_put(a, local.data(), c.len, lmem, c.addr, rkey, &req),
                  IBMSG_ERR_OUT_OF_BOUNDS)
            << k;
        EXPECT_EQ(ibmsg_get(a, local.data(), c.len, lmem, c.addr, rkey, &req),
                  IBMSG_ERR_OUT_OF_BOUNDS)
            << k;
        EXPECT_EQ(ibmsg_put(a, local.data(), c.len, lmem, c.addr, rkey, nullptr),
                  IBMSG_ERR_OUT_OF_BOUNDS)
            << k;
        k++;
    }
    EXPECT_EQ(req, IBMSG_REQUEST_NULL);
    EXPECT_EQ(cnt(CNT_CORE_RMA_REFUSED_OOB), uint64_t(3 * k));
    EXPECT_EQ(cnt(CNT_CORE_RMA_PUT_OPS), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_GET_OPS), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_PUT_BYTES), 0u);
    EXPECT_EQ(cnt(CNT_VERBS_SEND_WRS_POSTED), posted);
    EXPECT_EQ(a->rma.outstanding, 0u);
    // The endpoint still works.
    fill(local.data(), 100, 3);
    ASSERT_EQ(ibmsg_put(a, local.data(), 100, lmem, rbase + kRegion - 100, rkey, &req), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&req, nullptr), IBMSG_OK);
    EXPECT_EQ(first_bad(remote.data() + kRegion - 100, 100, 3), 100u);
}

// Access the key does not grant, local buffers outside their mapping, keys of other endpoints.
TEST_F(RmaTest, AccessAndLocalChecks)
{
    std::vector<uint8_t> ro(4096, 0x11);
    ibmsg_mem_t romem;
    ASSERT_EQ(ibmsg_mem_map(ctx, ro.data(), ro.size(), IBMSG_MEM_REMOTE_READ, &romem), IBMSG_OK);
    ibmsg_rkey_t rokey = unpack_key(romem);
    ibmsg_request_t req = IBMSG_REQUEST_NULL;
    const uint64_t robase = uint64_t(uintptr_t(ro.data()));
    EXPECT_EQ(ibmsg_put(a, local.data(), 8, IBMSG_MEM_NULL, robase, rokey, &req), IBMSG_ERR_ACCESS);
    ASSERT_EQ(ibmsg_get(a, local.data(), 4096, lmem, robase, rokey, &req), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&req, nullptr), IBMSG_OK);
    EXPECT_EQ(local[0], 0x11);
    EXPECT_EQ(local[4095], 0x11);
    // Local buffer: too big for inline and no mapping; outside its mapping; a get without one.
    const size_t big = attr.inline_limit + 1;
    EXPECT_EQ(ibmsg_put(a, local.data(), big, IBMSG_MEM_NULL, rbase, rkey, &req),
              IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_put(a, local.data() + kRegion - 10, big, lmem, rbase, rkey, &req),
              IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_get(a, local.data(), 8, IBMSG_MEM_NULL, rbase, rkey, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_get(a, ro.data(), 8, lmem, rbase, rkey, &req), IBMSG_ERR_INVALID);
    // A key unpacked for a is refused on b.
    EXPECT_EQ(ibmsg_put(b, local.data(), 8, IBMSG_MEM_NULL, rbase, rkey, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_put(nullptr, local.data(), 8, IBMSG_MEM_NULL, rbase, rkey, &req),
              IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_put(a, local.data(), 8, IBMSG_MEM_NULL, rbase, nullptr, &req),
              IBMSG_ERR_INVALID);
    EXPECT_EQ(req, IBMSG_REQUEST_NULL);
    EXPECT_EQ(cnt(CNT_CORE_RMA_PUT_OPS), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_GET_OPS), 1u);
    // Mapping arguments.
    ibmsg_mem_t m;
    EXPECT_EQ(ibmsg_mem_map(ctx, ro.data(), 0, 0, &m), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_mem_map(ctx, ro.data(), 16, 0x8, &m), IBMSG_ERR_INVALID); // 0x4: atomics
    EXPECT_EQ(ibmsg_mem_map(ctx, nullptr, 16, 0, &m), IBMSG_ERR_INVALID);
    uint8_t blob[IBMSG_RKEY_BLOB_SIZE];
    size_t len = sizeof(blob);
    EXPECT_EQ(ibmsg_mem_rkey_pack(lmem, blob, &len), IBMSG_ERR_INVALID); // no remote access
    len = sizeof(blob) - 1;
    EXPECT_EQ(ibmsg_mem_rkey_pack(rmem, blob, &len), IBMSG_ERR_INVALID); // too small
    EXPECT_EQ(ibmsg_rkey_destroy(rokey), IBMSG_OK);
    EXPECT_EQ(ibmsg_mem_unmap(romem), IBMSG_OK);
}

// Handles used after unmap / destroy are errors, not crashes; unmap waits for operations.
TEST_F(RmaTest, StaleHandles)
{
    std::vector<uint8_t> buf(65536, 0);
    ibmsg_mem_t m;
    ASSERT_EQ(ibmsg_mem_map(ctx, buf.data(), buf.size(), IBMSG_MEM_REMOTE_WRITE, &m), IBMSG_OK);
    ibmsg_rkey_t k = unpack_key(m);
    ibmsg_request_t req = IBMSG_REQUEST_NULL;
    // An operation whose local buffer lies in m keeps it mapped until it completes.
    ASSERT_EQ(ibmsg_put(a, buf.data(), buf.size(), m, rbase, rkey, nullptr), IBMSG_OK);
    EXPECT_EQ(ibmsg_mem_unmap(m), IBMSG_ERR_BUSY);
    ASSERT_EQ(ibmsg_ep_flush_wait(a), IBMSG_OK);
    ASSERT_EQ(ibmsg_mem_unmap(m), IBMSG_OK);
    EXPECT_EQ(ibmsg_mem_unmap(m), IBMSG_ERR_INVALID);
    uint8_t blob[IBMSG_RKEY_BLOB_SIZE];
    size_t len = sizeof(blob);
    EXPECT_EQ(ibmsg_mem_rkey_pack(m, blob, &len), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_put(a, buf.data(), 4096, m, rbase, rkey, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_get(a, buf.data(), 4096, m, rbase, rkey, &req), IBMSG_ERR_INVALID);
    ASSERT_EQ(ibmsg_rkey_destroy(k), IBMSG_OK);
    EXPECT_EQ(ibmsg_rkey_destroy(k), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_put(a, local.data(), 8, IBMSG_MEM_NULL, rbase, k, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(req, IBMSG_REQUEST_NULL);
    EXPECT_EQ(cnt(CNT_CORE_RMA_PUT_OPS), 1u);
    EXPECT_EQ(ibmsg_mem_unmap(nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_rkey_destroy(nullptr), IBMSG_ERR_INVALID);
}

// Malformed blobs from a peer are rejected with IBMSG_ERR_PROTOCOL and counted, exactly.
TEST_F(RmaTest, MalformedKeyBlobsRejected)
{
    uint8_t good[IBMSG_RKEY_BLOB_SIZE];
    size_t len = sizeof(good);
    ASSERT_EQ(ibmsg_mem_rkey_pack(rmem, good, &len), IBMSG_OK);
    std::vector<std::vector<uint8_t>> bad;
    auto with = [&](size_t at, uint8_t v) {
        std::vector<uint8_t> b(good, good + sizeof(good));
        b[at] = v;
        bad.push_back(b);
    };
    with(0, 0);                                                // version
    with(0, 9);                                                // version
    with(1, 0);                                                // no access
    with(1, 0x83);                                             // unknown access bits
    with(3, 0);                                                // size field
    bad.push_back(std::vector<uint8_t>(good, good + 23));      // truncated
    bad.push_back(std::vector<uint8_t>(good, good + 24));      // fine: control
    bad.back().push_back(0);                                   // ... padded: bad
    bad.push_back(std::vector<uint8_t>(IBMSG_RKEY_BLOB_SIZE)); // zeros
    {
        std::vector<uint8_t> b(good, good + sizeof(good));
        std::memset(b.data() + 16, 0, 8); // empty range
        bad.push_back(b);
    }
    {
        std::vector<uint8_t> b(good, good + sizeof(good));
        std::memset(b.data() + 16, 0xff, 8); // base + 2^64 - 1 wraps
        bad.push_back(b);
    }
    ibmsg_rkey_t k = IBMSG_RKEY_NULL;
    for (size_t i = 0; i < bad.size(); i++) {
        EXPECT_EQ(ibmsg_rkey_unpack(a, bad[i].data(), bad[i].size(), &k), IBMSG_ERR_PROTOCOL) << i;
        EXPECT_EQ(k, IBMSG_RKEY_NULL);
    }
    EXPECT_EQ(cnt(CNT_CORE_RMA_RKEYS_REJECTED), uint64_t(bad.size()));
    EXPECT_EQ(ibmsg_rkey_unpack(a, nullptr, 24, &k), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt(CNT_CORE_RMA_RKEYS_REJECTED), uint64_t(bad.size()));
    ASSERT_EQ(ibmsg_rkey_unpack(a, good, sizeof(good), &k), IBMSG_OK);
    EXPECT_EQ(ibmsg_rkey_destroy(k), IBMSG_OK);
}

// Destroying an endpoint with one-sided operations queued completes them with an error.
TEST_F(RmaTest, DestroyWithOperationsOutstanding)
{
    std::vector<ibmsg_request_t> reqs(300);
    for (size_t i = 0; i < reqs.size(); i++) {
        ASSERT_EQ(ibmsg_put(a, local.data(), 4096, lmem, rbase + i * 4096, rkey, &reqs[i]),
                  IBMSG_OK);
    }
    ibmsg_rkey_destroy(rkey);
    rkey = IBMSG_RKEY_NULL;
    ASSERT_EQ(ibmsg_ep_destroy(a), IBMSG_OK);
    a = IBMSG_EP_NULL;
    size_t ok = 0, canceled = 0;
    for (auto &r : reqs) {
        int ret = ibmsg_request_wait(&r, nullptr);
        ok += ret == IBMSG_OK;
        canceled += ret == IBMSG_ERR_CANCELED;
    }
    EXPECT_EQ(ok + canceled, reqs.size());
    EXPECT_GT(canceled, 0u);
    EXPECT_EQ(lmem->inflight, 0u);
}

// Two processes: the initiator puts into the target's memory, flushes, then tells it with a
// tagged message; the target checks its own memory. Then the initiator reads it back.
// rma.h: after ibmsg_mem_unmap, a peer still holding the key gets a remote access error when it
// uses it (the registration is gone in the device, not just in the table). Own context, not
// RmaTest: the refused READ is a completion error, which RmaTest's TearDown forbids.
TEST(RmaUnmap, PeerUsingAnUnmappedKeyGetsARemoteAccessError)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t a, b;
    core_test::open_pair(&ctx, &a, &b);
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    std::vector<uint8_t> remote(65536), local(65536);
    fill(remote.data(), remote.size(), 7);
    ibmsg_mem_t rmem, lmem;
    ASSERT_EQ(ibmsg_mem_map(ctx, remote.data(), remote.size(), IBMSG_MEM_REMOTE_READ, &rmem),
              IBMSG_OK);
    ASSERT_EQ(ibmsg_mem_map(ctx, local.data(), local.size(), 0, &lmem), IBMSG_OK);
    uint8_t blob[64];
    size_t len = sizeof(blob);
    ibmsg_rkey_t key;
    ASSERT_EQ(ibmsg_mem_rkey_pack(rmem, blob, &len), IBMSG_OK);
    ASSERT_EQ(ibmsg_rkey_unpack(a, blob, len, &key), IBMSG_OK);
    const uint64_t raddr = uint64_t(uintptr_t(remote.data()));
    ibmsg_request_t r;
    ASSERT_EQ(ibmsg_get(a, local.data(), 4096, lmem, raddr, key, &r), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
    EXPECT_EQ(first_bad(local.data(), 4096, 7), 4096u) << "the key reads while mapped";

    ASSERT_EQ(ibmsg_mem_unmap(rmem), IBMSG_OK);
    ASSERT_EQ(ibmsg_get(a, local.data(), 4096, lmem, raddr, key, &r), IBMSG_OK)
        << "the key's range is still valid to the peer: only the device can refuse it";
    EXPECT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_ERR_ACCESS);
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_VERBS_WC_ERRORS, CNT_READ_VALUE), 1u);
    EXPECT_EQ(ibmsg_rkey_destroy(key), IBMSG_OK);
    EXPECT_EQ(ibmsg_mem_unmap(lmem), IBMSG_OK);
    EXPECT_EQ(ibmsg_ep_destroy(a), IBMSG_OK);
    EXPECT_EQ(ibmsg_ep_destroy(b), IBMSG_OK);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

TEST(RmaTwoProcesses, PutFlushHandshakeGet)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    const char *dev_a = getenv("IBMSG_VM_DEV_A"), *dev_b = getenv("IBMSG_VM_DEV_B");
    const size_t sizes[] = {1, 13, 200, 4096, 65537, 1u << 20, (2u << 20) + 7};
    const size_t region = 4u << 20;
    ibmsg_oob_t listener;
    uint16_t port = 0;
    ASSERT_EQ(ibmsg_oob_listen("127.0.0.1", 0, &listener), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_port(listener, &port), IBMSG_OK);
    fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        // Child: the initiator.
        ibmsg_oob_close(listener);
        ibmsg_context_t ctx;
        ibmsg_ep_t ep;
        ibmsg_oob_t conn;
        if (open_context(&ctx, dev_b) != IBMSG_OK ||
            core_test::join_parent(ctx, port, &ep, &conn) != IBMSG_OK) {
            _exit(10);
        }
        uint8_t blob[64];
        size_t blen = sizeof(blob);
        ibmsg_rkey_t k;
        std::vector<uint8_t> buf(region, 0);
        ibmsg_mem_t m;
        if (ibmsg_oob_recv(conn, blob, &blen, 20000) != IBMSG_OK ||
            ibmsg_rkey_unpack(ep, blob, blen, &k) != IBMSG_OK ||
            ibmsg_mem_map(ctx, buf.data(), buf.size(), 0, &m) != IBMSG_OK) {
            _exit(11);
        }
        uint64_t base = k->base;
        for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
            size_t s = sizes[i], off = (i * 997) % (region - s);
            fill(buf.data(), s, 500 + i);
            // Implicit puts in two halves, then the flush: the target must see both.
            size_t h = s / 2;
            if (ibmsg_put(ep, buf.data(), h, m, base + off, k, nullptr) != IBMSG_OK ||
                ibmsg_put(ep, buf.data() + h, s - h, m, base + off + h, k, nullptr) != IBMSG_OK ||
                ibmsg_ep_flush_wait(ep) != IBMSG_OK) {
                _exit(12);
            }
            uint64_t msg[2] = {off, s};
            if (ibmsg_tag_send(ep, msg, sizeof(msg), 1) != IBMSG_OK) {
                _exit(13);
            }
            // Wait for the target's verdict, then read the range back.
            uint64_t verdict = 0;
            if (ibmsg_tag_recv(ctx, ep, &verdict, 8, 2, IBMSG_TAG_MASK_EXACT, nullptr) !=
                    IBMSG_OK ||
                verdict != s) {
                _exit(14);
            }
            std::memset(buf.data(), 0, s);
            ibmsg_request_t req;
            if (ibmsg_get(ep, buf.data(), s, m, base + off, k, &req) != IBMSG_OK ||
                ibmsg_request_wait(&req, nullptr) != IBMSG_OK ||
                first_bad(buf.data(), s, 500 + i) != s) {
                _exit(15);
            }
        }
        int ok = cnt_read(ctx->cnt, CNT_CORE_RMA_PUT_OPS, CNT_READ_VALUE) == 14 &&
                 cnt_read(ctx->cnt, CNT_CORE_RMA_GET_OPS, CNT_READ_VALUE) == 7 &&
                 cnt_read(ctx->cnt, CNT_CORE_RMA_FLUSHES, CNT_READ_VALUE) == 7;
        if (ibmsg_tag_send(ep, nullptr, 0, 3) != IBMSG_OK ||
            ibmsg_tag_recv(ctx, ep, nullptr, 0, 4, IBMSG_TAG_MASK_EXACT, nullptr) != IBMSG_OK) {
            _exit(16);
        }
        ibmsg_rkey_destroy(k);
        ibmsg_mem_unmap(m);
        ibmsg_oob_close(conn);
        ibmsg_context_destroy(ctx);
        _exit(ok ? 0 : 17);
    }
    // Parent: the target.
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t conn;
    ASSERT_EQ(open_context(&ctx, dev_a), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &ep), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_accept(listener, 20000, &conn), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_ep_connect(conn, ep, 20000), IBMSG_OK);
    std::vector<uint8_t> mem(region, 0);
    ibmsg_mem_t m;
    ASSERT_EQ(ibmsg_mem_map(ctx, mem.data(), mem.size(),
                            IBMSG_MEM_REMOTE_READ | IBMSG_MEM_REMOTE_WRITE, &m),
              IBMSG_OK);
    uint8_t blob[IBMSG_RKEY_BLOB_SIZE];
    size_t blen = sizeof(blob);
    ASSERT_EQ(ibmsg_mem_rkey_pack(m, blob, &blen), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_send(conn, blob, blen, 20000), IBMSG_OK);
    for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
        uint64_t msg[2] = {0, 0};
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_tag_recv(ctx, ep, msg, sizeof(msg), 1, IBMSG_TAG_MASK_EXACT, &st),
                  IBMSG_OK);
        ASSERT_EQ(st.length, sizeof(msg));
        ASSERT_EQ(msg[1], sizes[i]);
        ASSERT_LE(msg[0] + msg[1], region);
        // The target reads its own memory: every byte of the flushed puts is there.
        EXPECT_EQ(first_bad(mem.data() + msg[0], msg[1], 500 + i), msg[1]) << sizes[i];
        uint64_t verdict = first_bad(mem.data() + msg[0], msg[1], 500 + i);
        ASSERT_EQ(ibmsg_tag_send(ep, &verdict, 8, 2), IBMSG_OK);
    }
    ASSERT_EQ(ibmsg_tag_recv(ctx, ep, nullptr, 0, 3, IBMSG_TAG_MASK_EXACT, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(ep, nullptr, 0, 4), IBMSG_OK);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0) << "initiator failed (see its exit code in the test)";
    // The target posted nothing one-sided: its counters say so.
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_CORE_RMA_PUT_OPS, CNT_READ_VALUE), 0u);
    EXPECT_EQ(cnt_read(ctx->cnt, CNT_VERBS_WC_ERRORS, CNT_READ_VALUE), 0u);
    EXPECT_EQ(ibmsg_mem_unmap(m), IBMSG_OK);
    ibmsg_oob_close(conn);
    ibmsg_oob_close(listener);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}
