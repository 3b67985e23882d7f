// Probes on a real device: probe then receive of every size class (inline, eager, rendezvous),
// probes of any endpoint, mprobe and imrecv (a rendezvous pulled only at the receive,
// truncation), two threads taking messages with mprobe (each received exactly once), what
// becomes of a matched message whose endpoint fails or is destroyed or whose context ends, and
// bad arguments.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <thread>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"
#include "core_fixture.h"
#include "ibmsg/ibmsg.h"

namespace
{

using core_test::pattern;
using core_test::payload;

struct ProbeTest : core_test::PairTest {
    void SetUp() override
    {
        open_pair();
    }
    void TearDown() override
    {
        if (ctx != IBMSG_CONTEXT_NULL) {
            EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
        }
    }
    uint64_t cnt(cnt_id_t id) const
    {
        return cnt_read(ctx->cnt, id, CNT_READ_VALUE);
    }
    // Probes ep (or any) until a message matching (tag, mask) is there; its status.
    ibmsg_tag_status_t probe_until(ibmsg_ep_t ep, uint64_t tag, uint64_t mask)
    {
        ibmsg_tag_status_t st{};
        int found = 0;
        for (int i = 0; i < 1000000 && !found; i++) {
            EXPECT_EQ(ibmsg_tag_probe(ctx, ep, tag, mask, &found, &st), IBMSG_OK);
        }
        EXPECT_EQ(found, 1);
        return st;
    }
    ibmsg_message_t mprobe_until(ibmsg_ep_t ep, uint64_t tag, uint64_t mask, ibmsg_tag_status_t *st)
    {
        ibmsg_message_t m = IBMSG_MESSAGE_NULL;
        for (int i = 0; i < 1000000 && m == IBMSG_MESSAGE_NULL; i++) {
            EXPECT_EQ(ibmsg_tag_mprobe(ctx, ep, tag, mask, &m, st), IBMSG_OK);
        }
        EXPECT_NE(m, IBMSG_MESSAGE_NULL);
        return m;
    }
};

// Every size class is probed with its full length, stays there for a second probe, and is then
// received intact; a rendezvous message's data is read only by the receive (bytes changed in the
// sender's buffer after the probe arrive changed).
TEST_F(ProbeTest, ProbeThenReceiveEverySizeClass)
{
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    ibmsg_context_attr_t attr;
    ASSERT_EQ(ibmsg_context_query(ctx, &attr), IBMSG_OK);
    const size_t sizes[] = {0,    1,     7,         attr.inline_limit, attr.inline_limit + 1,
                            4097, limit, limit + 1, 1u << 20,          (3u << 20) + 5};
    uint64_t probes = cnt(CNT_CORE_PROBES), found = cnt(CNT_CORE_PROBES_FOUND);
    uint64_t calls = 0, hits = 0;
    for (size_t k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
        const size_t len = sizes[k];
        const uint64_t tag = k % 2 == 0 ? 100 + k : (1ull << 40) + k; // compact and header tags
        std::vector<uint8_t> src = payload(k, len);
        std::vector<uint8_t> dst(len + 16, 0xee);
        ibmsg_request_t sreq, rreq;
        ASSERT_EQ(ibmsg_tag_isend(a, src.data(), len, tag, &sreq), IBMSG_OK);
        ibmsg_tag_status_t st{};
        int hit = 0;
        do {
            ASSERT_EQ(ibmsg_tag_probe(ctx, b, tag, IBMSG_TAG_MASK_EXACT, &hit, &st), IBMSG_OK);
            calls++;
        } while (!hit);
        hits++;
        EXPECT_EQ(st.source, b) << len;
        EXPECT_EQ(st.tag, tag) << len;
        EXPECT_EQ(st.length, len) << len;
        EXPECT_EQ(st.error, IBMSG_OK) << len;
        // Still there, also through the wildcard and any endpoint.
        ibmsg_tag_status_t st2{};
        ASSERT_EQ(ibmsg_tag_probe(ctx, IBMSG_EP_NULL, 0, IBMSG_TAG_MASK_ANY, &hit, &st2), IBMSG_OK);
        calls++;
        hits++;
        EXPECT_EQ(hit, 1);
        EXPECT_EQ(st2.length, len);
        EXPECT_EQ(st2.tag, tag);
        // A probe of another tag, or of the sending endpoint, finds nothing.
        ASSERT_EQ(ibmsg_tag_probe(ctx, b, tag + 1, IBMSG_TAG_MASK_EXACT, &hit, nullptr), IBMSG_OK);
        EXPECT_EQ(hit, 0);
        ASSERT_EQ(ibmsg_tag_probe(ctx, a, tag, IBMSG_TAG_MASK_EXACT, &hit, nullptr), IBMSG_OK);
        EXPECT_EQ(hit, 0);
        calls += 2;
        const bool rndv = len > limit - (tag > IBMSG_TAG_COMPACT_MAX ? 24 : 0);
        if (rndv) {
            src[0] ^= 0xff; // read at the receive, not at the probe
            src[len - 1] ^= 0xff;
        }
        ASSERT_EQ(ibmsg_tag_irecv(ctx, b, dst.data(), st.length, tag, IBMSG_TAG_MASK_EXACT, &rreq),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&rreq, &st2), IBMSG_OK) << len;
        ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK) << len;
        EXPECT_EQ(st2.length, len);
        EXPECT_TRUE(len == 0 || memcmp(dst.data(), src.data(), len) == 0) << len;
        for (size_t i = len; i < dst.size(); i++) {
            ASSERT_EQ(dst[i], 0xee) << len;
        }
        ASSERT_EQ(ibmsg_tag_probe(ctx, IBMSG_EP_NULL, 0, IBMSG_TAG_MASK_ANY, &hit, nullptr),
                  IBMSG_OK);
        calls++;
        EXPECT_EQ(hit, 0) << len;
    }
#if IBMSG_HAVE_CORE_COUNTERS
    EXPECT_EQ(cnt(CNT_CORE_PROBES) - probes, calls);
    EXPECT_EQ(cnt(CNT_CORE_PROBES_FOUND) - found, hits);
#else
    (void)probes;
    (void)found;
    (void)calls;
    (void)hits;
#endif
}

// ep NULL probes every endpoint, in arrival order; an endpoint probes only its own.
TEST_F(ProbeTest, ProbeAnyEndpoint)
{
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    ibmsg_ep_t c, d;
    ASSERT_EQ(ibmsg_ep_create(ctx, &c), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &d), IBMSG_OK);
    ASSERT_EQ(core_test::connect_pair(c, d), IBMSG_OK);
    uint32_t x = 0x11111111, y = 0x2222;
    ASSERT_EQ(ibmsg_tag_send(a, &x, sizeof(x), 7), IBMSG_OK); // arrives on b
    ibmsg_tag_status_t st = probe_until(IBMSG_EP_NULL, 0, IBMSG_TAG_MASK_ANY);
    EXPECT_EQ(st.source, b);
    EXPECT_EQ(st.length, sizeof(x));
    ASSERT_EQ(ibmsg_tag_send(c, &y, sizeof(y), 9), IBMSG_OK); // arrives on d
    st = probe_until(d, 0, IBMSG_TAG_MASK_ANY);
    EXPECT_EQ(st.source, d);
    EXPECT_EQ(st.tag, 9u);
    EXPECT_EQ(st.length, sizeof(y));
    st = probe_until(IBMSG_EP_NULL, 0, IBMSG_TAG_MASK_ANY); // the first to arrive comes first
    EXPECT_EQ(st.source, b);
    st = probe_until(IBMSG_EP_NULL, 8, ~1ull); // tag 9 only under this mask
    EXPECT_EQ(st.source, d);
    ibmsg_tag_status_t rs;
    uint32_t got = 0;
    ASSERT_EQ(ibmsg_tag_recv(ctx, IBMSG_EP_NULL, &got, sizeof(got), 0, IBMSG_TAG_MASK_ANY, &rs),
              IBMSG_OK);
    EXPECT_EQ(rs.source, b);
    EXPECT_EQ(got, x);
    st = probe_until(IBMSG_EP_NULL, 0, IBMSG_TAG_MASK_ANY);
    EXPECT_EQ(st.source, d);
    ASSERT_EQ(ibmsg_tag_recv(ctx, d, &got, sizeof(got), 9, IBMSG_TAG_MASK_EXACT, &rs), IBMSG_OK);
    EXPECT_EQ(got, y);
    EXPECT_EQ(rs.length, sizeof(y));
}

// A matched rendezvous message leaves matching: probes and receives no longer see it, its data is
// pulled only by imrecv, and imrecv truncates like a receive. The handle is spent.
TEST_F(ProbeTest, MprobeRendezvousAndTruncation)
{
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    const size_t len = (2u << 20) + 3;
    std::vector<uint8_t> big = payload(5, len), small = payload(6, 100);
    ibmsg_request_t s1, s2, r, r2;
    ASSERT_EQ(ibmsg_tag_isend(a, big.data(), len, 42, &s1), IBMSG_OK);
    ibmsg_tag_status_t st{};
    ibmsg_message_t m = mprobe_until(b, 42, IBMSG_TAG_MASK_EXACT, &st);
    ASSERT_NE(m, IBMSG_MESSAGE_NULL);
    EXPECT_EQ(st.length, len);
    EXPECT_EQ(st.tag, 42u);
    EXPECT_EQ(st.source, b);
#if IBMSG_HAVE_CORE_COUNTERS
    EXPECT_EQ(cnt(CNT_CORE_MPROBED_MSGS), 1u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_BYTES_RECVD), 0u);
#endif
    int hit = 1;
    ASSERT_EQ(ibmsg_tag_probe(ctx, IBMSG_EP_NULL, 0, IBMSG_TAG_MASK_ANY, &hit, nullptr), IBMSG_OK);
    EXPECT_EQ(hit, 0);
    ibmsg_message_t none = m;
    ASSERT_EQ(ibmsg_tag_mprobe(ctx, IBMSG_EP_NULL, 0, IBMSG_TAG_MASK_ANY, &none, nullptr),
              IBMSG_OK);
    EXPECT_EQ(none, IBMSG_MESSAGE_NULL);
    // A receive posted now takes the next message of the tag, not the matched one.
    std::vector<uint8_t> got2(100);
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, got2.data(), got2.size(), 42, IBMSG_TAG_MASK_EXACT, &r2),
              IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_isend(a, small.data(), small.size(), 42, &s2), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r2, &st), IBMSG_OK);
    EXPECT_EQ(st.length, small.size());
    EXPECT_EQ(got2, small);
    ASSERT_EQ(ibmsg_request_wait(&s2, nullptr), IBMSG_OK);
    // Truncated: the first 1 MiB + 1 arrives, nothing past it is written.
    const size_t room = (1u << 20) + 1;
    std::vector<uint8_t> got(room + 64, 0xee);
    ibmsg_message_t copy = m;
    ASSERT_EQ(ibmsg_tag_imrecv(&m, got.data(), room, &r), IBMSG_OK);
    EXPECT_EQ(m, IBMSG_MESSAGE_NULL);
    EXPECT_EQ(ibmsg_request_wait(&r, &st), IBMSG_ERR_TRUNCATED);
    EXPECT_EQ(st.length, len);
    EXPECT_EQ(st.error, IBMSG_ERR_TRUNCATED);
    EXPECT_EQ(memcmp(got.data(), big.data(), room), 0);
    for (size_t i = room; i < got.size(); i++) {
        ASSERT_EQ(got[i], 0xee);
    }
    ASSERT_EQ(ibmsg_request_wait(&s1, nullptr), IBMSG_OK);
    // The spent handle (a copy kept) is refused.
    ibmsg_request_t bad = IBMSG_REQUEST_NULL;
    EXPECT_EQ(ibmsg_tag_imrecv(&copy, got.data(), room, &bad), IBMSG_ERR_INVALID);
    EXPECT_EQ(bad, IBMSG_REQUEST_NULL);
#if IBMSG_HAVE_CORE_COUNTERS
    EXPECT_EQ(cnt(CNT_CORE_MPROBED_MSGS), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_BYTES_RECVD), room);
    EXPECT_GE(cnt(CNT_CORE_MPROBES_MATCHED), 1u);
#endif
}

// An mprobed eager message, received whole and truncated.
TEST_F(ProbeTest, MprobeEagerAndTruncation)
{
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    std::vector<uint8_t> msg = payload(9, 1000);
    ASSERT_EQ(ibmsg_tag_send(a, msg.data(), msg.size(), 3), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(a, msg.data(), msg.size(), 4), IBMSG_OK);
    ibmsg_tag_status_t st{};
    ibmsg_message_t m4 = mprobe_until(b, 4, IBMSG_TAG_MASK_EXACT, &st); // overtakes tag 3
    EXPECT_EQ(st.length, msg.size());
    ibmsg_message_t m3 = mprobe_until(IBMSG_EP_NULL, 0, IBMSG_TAG_MASK_ANY, &st);
    EXPECT_EQ(st.tag, 3u);
    std::vector<uint8_t> got(msg.size() + 8, 0xee);
    ibmsg_request_t r;
    ASSERT_EQ(ibmsg_tag_imrecv(&m3, got.data(), 999, &r), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&r, &st), IBMSG_ERR_TRUNCATED);
    EXPECT_EQ(st.length, msg.size());
    EXPECT_EQ(st.tag, 3u);
    EXPECT_EQ(memcmp(got.data(), msg.data(), 999), 0);
    EXPECT_EQ(got[999], 0xee);
    ASSERT_EQ(ibmsg_tag_imrecv(&m4, got.data(), got.size(), &r), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&r, &st), IBMSG_OK);
    EXPECT_EQ(st.tag, 4u);
    EXPECT_EQ(st.source, b);
    EXPECT_EQ(memcmp(got.data(), msg.data(), msg.size()), 0);
}

// Two threads take messages with mprobe (one context: every call under a mutex, as the context
// requires) and receive each: every message, eager and rendezvous, exactly once.
TEST_F(ProbeTest, TwoThreadsRacingWithMprobe)
{
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    constexpr int kMsgs = 400;
    std::vector<std::vector<uint8_t>> payloads(kMsgs);
    std::vector<ibmsg_request_t> sends(kMsgs);
    for (int i = 0; i < kMsgs; i++) {
        size_t len = i % 10 == 0 ? limit + 1000 + size_t(i) : 8 + size_t(i) * 3;
        payloads[i] = payload(uint64_t(i) + 100, len);
        memcpy(payloads[i].data(), &i, sizeof(i));
        ASSERT_EQ(ibmsg_tag_isend(a, payloads[i].data(), len, uint64_t(i % 3), &sends[i]),
                  IBMSG_OK);
    }
    std::mutex mu;
    std::vector<std::atomic<int>> seen(kMsgs);
    std::atomic<int> total{0}, bad{0};
    auto consumer = [&]() {
        while (total.load() < kMsgs) {
            ibmsg_message_t m = IBMSG_MESSAGE_NULL;
            ibmsg_tag_status_t st{};
            {
                std::lock_guard<std::mutex> g(mu);
                if (ibmsg_tag_mprobe(ctx, IBMSG_EP_NULL, 0, IBMSG_TAG_MASK_ANY, &m, &st) !=
                    IBMSG_OK) {
                    bad++;
                    return;
                }
            }
            if (m == IBMSG_MESSAGE_NULL) {
                std::this_thread::yield();
                continue;
            }
            std::vector<uint8_t> buf(st.length);
            ibmsg_request_t r;
            int done = 0, ret;
            {
                std::lock_guard<std::mutex> g(mu);
                ret = ibmsg_tag_imrecv(&m, buf.data(), buf.size(), &r);
            }
            while (ret == IBMSG_OK && !done) {
                std::lock_guard<std::mutex> g(mu);
                ret = ibmsg_request_test(&r, &done, nullptr);
            }
            int id = -1;
            memcpy(&id, buf.data(), sizeof(id));
            if (ret != IBMSG_OK || id < 0 || id >= kMsgs || buf != payloads[id] ||
                st.tag != uint64_t(id % 3)) {
                bad++;
                return;
            }
            seen[id]++;
            total++;
        }
    };
    std::thread t1(consumer), t2(consumer);
    t1.join();
    t2.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_EQ(total.load(), kMsgs);
    for (int i = 0; i < kMsgs; i++) {
        EXPECT_EQ(seen[i].load(), 1) << i;
        ASSERT_EQ(ibmsg_request_wait(&sends[i], nullptr), IBMSG_OK) << i;
    }
#if IBMSG_HAVE_CORE_COUNTERS
    EXPECT_EQ(cnt(CNT_CORE_MPROBES_MATCHED), uint64_t(kMsgs));
    EXPECT_EQ(cnt(CNT_CORE_MPROBED_MSGS), 0u);
#endif
}

// A matched message whose endpoint fails: an eager one is still received, a rendezvous one
// completes with PEER_FAILED; probes of the failed endpoint then say PEER_FAILED.
TEST_F(ProbeTest, MprobedMessageOfFailedEndpoint)
{
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    std::vector<uint8_t> small = payload(1, 300), big = payload(2, limit * 4);
    ibmsg_request_t sbig;
    ASSERT_EQ(ibmsg_tag_send(a, small.data(), small.size(), 1), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_isend(a, big.data(), big.size(), 2, &sbig), IBMSG_OK);
    ibmsg_tag_status_t st{};
    ibmsg_message_t me = mprobe_until(b, 1, IBMSG_TAG_MASK_EXACT, &st);
    ibmsg_message_t mr = mprobe_until(b, 2, IBMSG_TAG_MASK_EXACT, &st);
    EXPECT_EQ(st.length, big.size());
    core_ep_fail(b, IBMSG_ERR_PEER_FAILED); // what a failing completion does
    int hit = 1;
    EXPECT_EQ(ibmsg_tag_probe(ctx, b, 0, IBMSG_TAG_MASK_ANY, &hit, nullptr), IBMSG_ERR_PEER_FAILED);
    ibmsg_message_t none = IBMSG_MESSAGE_NULL;
    EXPECT_EQ(ibmsg_tag_mprobe(ctx, b, 0, IBMSG_TAG_MASK_ANY, &none, nullptr),
              IBMSG_ERR_PEER_FAILED);
    std::vector<uint8_t> got(big.size());
    ibmsg_request_t r;
    ASSERT_EQ(ibmsg_tag_imrecv(&me, got.data(), got.size(), &r), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r, &st), IBMSG_OK);
    EXPECT_EQ(st.length, small.size());
    EXPECT_EQ(memcmp(got.data(), small.data(), small.size()), 0);
    ASSERT_EQ(ibmsg_tag_imrecv(&mr, got.data(), got.size(), &r), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&r, &st), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(st.length, big.size());
    EXPECT_EQ(st.tag, 2u);
    (void)sbig; // never read: its peer failed; freed with the context
}

// A matched message whose endpoint is destroyed gives its buffer back at once; its receive then
// completes with CANCELED. One never received is freed by the context's destruction.
TEST_F(ProbeTest, MprobedMessageOfDestroyedEndpointAndContext)
{
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    std::vector<uint8_t> small = payload(1, 300), big = payload(2, limit * 4);
    ibmsg_request_t sbig;
    ASSERT_EQ(ibmsg_tag_send(a, small.data(), small.size(), 1), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(a, small.data(), small.size(), 5), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_isend(a, big.data(), big.size(), 2, &sbig), IBMSG_OK);
    ibmsg_tag_status_t st{};
    ibmsg_message_t me = mprobe_until(b, 1, IBMSG_TAG_MASK_EXACT, &st);
    ibmsg_message_t mr = mprobe_until(b, 2, IBMSG_TAG_MASK_EXACT, &st);
#if IBMSG_HAVE_CORE_COUNTERS
    EXPECT_EQ(cnt(CNT_CORE_MPROBED_MSGS), 2u);
#endif
    const uint64_t in_use = cnt(CNT_VERBS_BUF_POOL_IN_USE);
    ASSERT_EQ(ibmsg_ep_destroy(b), IBMSG_OK);
    b = IBMSG_EP_NULL;
#if IBMSG_HAVE_CORE_COUNTERS
    // Its two matched messages and the unexpected one of tag 5 went back, and its own posted
    // receive buffers (none with a shared receive queue).
    EXPECT_LE(cnt(CNT_VERBS_BUF_POOL_IN_USE) + 3, in_use);
#else
    (void)in_use;
#endif
    std::vector<uint8_t> got(big.size(), 0xee);
    ibmsg_request_t r;
    for (ibmsg_message_t *m : {&me, &mr}) {
        ASSERT_EQ(ibmsg_tag_imrecv(m, got.data(), got.size(), &r), IBMSG_OK);
        EXPECT_EQ(ibmsg_request_wait(&r, &st), IBMSG_ERR_CANCELED);
        EXPECT_EQ(got[0], 0xee);
    }
#if IBMSG_HAVE_CORE_COUNTERS
    EXPECT_EQ(cnt(CNT_CORE_MPROBED_MSGS), 0u);
#endif
    // Another pair: a message matched and never received when the context ends.
    ibmsg_ep_t c, d;
    ASSERT_EQ(ibmsg_ep_create(ctx, &c), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(ctx, &d), IBMSG_OK);
    ASSERT_EQ(core_test::connect_pair(c, d), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_send(c, small.data(), small.size(), 8), IBMSG_OK);
    ibmsg_message_t left = mprobe_until(d, 8, IBMSG_TAG_MASK_EXACT, &st);
    EXPECT_NE(left, IBMSG_MESSAGE_NULL);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK); // frees it (ASan: no leak)
    ctx = IBMSG_CONTEXT_NULL;
}

// Bad arguments are refused with their codes and change nothing.
TEST_F(ProbeTest, BadArguments)
{
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    ibmsg_context_t other;
    ASSERT_EQ(core_test::open_context(&other), IBMSG_OK);
    ibmsg_ep_t foreign;
    ASSERT_EQ(ibmsg_ep_create(other, &foreign), IBMSG_OK);
    int found = 7;
    ibmsg_message_t m = IBMSG_MESSAGE_NULL;
    ibmsg_tag_status_t st{};
    EXPECT_EQ(ibmsg_tag_probe(nullptr, b, 0, 0, &found, &st), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_probe(ctx, b, 0, 0, nullptr, &st), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_probe(ctx, foreign, 0, 0, &found, &st), IBMSG_ERR_INVALID);
    EXPECT_EQ(found, 7);
    EXPECT_EQ(ibmsg_tag_mprobe(nullptr, b, 0, 0, &m, &st), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_mprobe(ctx, b, 0, 0, nullptr, &st), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_mprobe(ctx, foreign, 0, 0, &m, &st), IBMSG_ERR_INVALID);
    ibmsg_request_t r = IBMSG_REQUEST_NULL;
    uint8_t buf[8];
    EXPECT_EQ(ibmsg_tag_imrecv(nullptr, buf, sizeof(buf), &r), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_imrecv(&m, buf, sizeof(buf), &r), IBMSG_ERR_INVALID); // NULL message
    uint32_t x = 5;
    ASSERT_EQ(ibmsg_tag_send(a, &x, sizeof(x), 1), IBMSG_OK);
    m = mprobe_until(b, 1, IBMSG_TAG_MASK_EXACT, &st);
    EXPECT_EQ(ibmsg_tag_imrecv(&m, nullptr, 4, &r), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_imrecv(&m, buf, sizeof(buf), nullptr), IBMSG_ERR_INVALID);
    EXPECT_NE(m, IBMSG_MESSAGE_NULL); // still to be received
    // A request handle is not a message.
    ibmsg_request_t rr;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, b, buf, sizeof(buf), 99, IBMSG_TAG_MASK_EXACT, &rr), IBMSG_OK);
    ibmsg_message_t fake = (ibmsg_message_t)(void *)rr;
    EXPECT_EQ(ibmsg_tag_imrecv(&fake, buf, sizeof(buf), &r), IBMSG_ERR_INVALID);
    ASSERT_EQ(ibmsg_request_cancel(rr), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&rr, nullptr), IBMSG_ERR_CANCELED);
    ASSERT_EQ(ibmsg_tag_imrecv(&m, buf, sizeof(buf), &r), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&r, &st), IBMSG_OK);
    EXPECT_EQ(st.length, sizeof(x));
    EXPECT_EQ(ibmsg_context_destroy(other), IBMSG_OK);
}

} // namespace
