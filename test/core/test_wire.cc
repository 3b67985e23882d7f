// Wire header validation and credit accounting: what a peer's header may and may not say.
#include <gtest/gtest.h>

#include "core/credit.h"
#include "core/wire.h"

namespace
{

core_wire_hdr_t eager(uint32_t seq, uint32_t len, uint16_t credits = 0)
{
    core_wire_hdr_t h{};
    h.type = CORE_WIRE_EAGER;
    h.seq = seq;
    h.tag = 0xdeadbeefcafef00dULL;
    h.length = len;
    h.credits = credits;
    return h;
}

constexpr uint32_t kHdr = sizeof(core_wire_hdr_t);

} // namespace

TEST(CoreWire, AcceptsGoodHeaders)
{
    auto h = eager(5, 100, 3);
    EXPECT_EQ(core_wire_validate(&h, kHdr + 100, 5, 3, 8192), CORE_WIRE_OK);
    auto z = eager(0, 0);
    EXPECT_EQ(core_wire_validate(&z, kHdr, 0, 0, 8192), CORE_WIRE_OK);
    auto m = eager(7, 8192);
    EXPECT_EQ(core_wire_validate(&m, kHdr + 8192, 7, 0, 8192), CORE_WIRE_OK);
    core_wire_hdr_t c{};
    c.type = CORE_WIRE_CREDIT;
    c.seq = 9;
    c.credits = 40;
    EXPECT_EQ(core_wire_validate(&c, kHdr, 9, 40, 8192), CORE_WIRE_OK);
}

TEST(CoreWire, RejectsEachBadField)
{
    auto h = eager(5, 100);
    EXPECT_EQ(core_wire_validate(&h, kHdr - 1, 5, 0, 8192), CORE_WIRE_SHORT);
    EXPECT_EQ(core_wire_validate(&h, 0, 5, 0, 8192), CORE_WIRE_SHORT);
    EXPECT_EQ(core_wire_validate(&h, kHdr + 99, 5, 0, 8192), CORE_WIRE_BAD_LENGTH);
    EXPECT_EQ(core_wire_validate(&h, kHdr + 101, 5, 0, 8192), CORE_WIRE_BAD_LENGTH);
    EXPECT_EQ(core_wire_validate(&h, kHdr + 100, 4, 0, 8192), CORE_WIRE_BAD_SEQ);
    EXPECT_EQ(core_wire_validate(&h, kHdr + 100, 6, 0, 8192), CORE_WIRE_BAD_SEQ);
    EXPECT_EQ(core_wire_validate(&h, kHdr + 100, 5, 0, 99), CORE_WIRE_BAD_LENGTH);

    auto big = eager(0, 0xffffffffu); // a length that would wrap byte_len arithmetic
    EXPECT_EQ(core_wire_validate(&big, kHdr + 10, 0, 0, 8192), CORE_WIRE_BAD_LENGTH);

    for (uint8_t t : {0, 5, 255}) {
        auto b = eager(5, 100);
        b.type = t;
        EXPECT_EQ(core_wire_validate(&b, kHdr + 100, 5, 0, 8192), CORE_WIRE_BAD_TYPE) << int(t);
    }
    auto f = eager(5, 100);
    f.flags = CORE_WIRE_FLAG_WINDOW; // an RTS's flag only
    EXPECT_EQ(core_wire_validate(&f, kHdr + 100, 5, 0, 8192), CORE_WIRE_BAD_FLAGS);
    f = eager(5, 100);
    f.reserved = 1;
    EXPECT_EQ(core_wire_validate(&f, kHdr + 100, 5, 0, 8192), CORE_WIRE_BAD_FLAGS);

    auto cr = eager(5, 100, 4);
    EXPECT_EQ(core_wire_validate(&cr, kHdr + 100, 5, 3, 8192), CORE_WIRE_BAD_CREDITS);

    core_wire_hdr_t c{};
    c.type = CORE_WIRE_CREDIT;
    c.tag = 1;
    EXPECT_EQ(core_wire_validate(&c, kHdr, 0, 0, 8192), CORE_WIRE_BAD_TAG);
    c.tag = 0;
    c.length = 4;
    EXPECT_EQ(core_wire_validate(&c, kHdr + 4, 0, 0, 8192), CORE_WIRE_BAD_LENGTH);
    EXPECT_STREQ(core_wire_check_string(CORE_WIRE_BAD_SEQ), "out of sequence");
    EXPECT_STREQ(core_wire_check_string(CORE_WIRE_CHECK_LAST), "unknown");
}

TEST(CoreWire, CompactImmediate)
{
    // The layout: format bit 31, credits in bits 23..30, the tag in bits 0..22.
    EXPECT_EQ(core_wire_imm_make(0, 0), 0x80000000u);
    EXPECT_EQ(core_wire_imm_make(CORE_WIRE_IMM_TAG_MAX, CORE_WIRE_IMM_CREDITS_MAX), 0xffffffffu);
    EXPECT_EQ(core_wire_imm_make(0x123456, 0x5a), 0x80000000u | (0x5au << 23) | 0x123456u);
    uint32_t imm = core_wire_imm_make(0x7abcde, 200);
    EXPECT_EQ(core_wire_imm_tag(imm), 0x7abcdeu);
    EXPECT_EQ(core_wire_imm_credits(imm), 200u);
    EXPECT_EQ(CORE_WIRE_IMM_TAG_MAX, 0x7fffffu);

    EXPECT_EQ(core_wire_validate_imm(imm, 1, 200, 8192), CORE_WIRE_OK);
    EXPECT_EQ(core_wire_validate_imm(imm, 8192, 201, 8192), CORE_WIRE_OK);
    EXPECT_EQ(core_wire_validate_imm(imm, 8193, 200, 8192), CORE_WIRE_BAD_LENGTH);
    EXPECT_EQ(core_wire_validate_imm(imm, 0, 200, 8192), CORE_WIRE_BAD_LENGTH)
        << "empty messages keep the full header";
    EXPECT_EQ(core_wire_validate_imm(imm, 100, 199, 8192), CORE_WIRE_BAD_CREDITS);
    EXPECT_EQ(core_wire_validate_imm(imm & ~CORE_WIRE_IMM_COMPACT, 100, 200, 8192),
              CORE_WIRE_BAD_TYPE)
        << "format 0 is reserved";
    EXPECT_EQ(core_wire_validate_imm(core_wire_imm_make(5, 0), 4096, 0, 4096), CORE_WIRE_OK);
}

namespace
{

// A rendezvous message: header and body in one buffer, as it arrives.
struct RndvMsg {
    core_wire_hdr_t h{};
    core_wire_rndv_t b{};
};

RndvMsg rndv(uint8_t type, uint64_t addr, uint64_t len)
{
    RndvMsg m;
    m.h.type = type;
    m.h.seq = 3;
    m.h.tag = type == CORE_WIRE_RTS ? 77 : 0;
    m.h.length = sizeof(core_wire_rndv_t);
    m.b.addr = addr;
    m.b.length = len;
    m.b.rkey = 0x1234;
    m.b.id = 9;
    return m;
}

constexpr uint32_t kRndv = sizeof(RndvMsg);

} // namespace

TEST(CoreWire, RendezvousBodies)
{
    static_assert(sizeof(RndvMsg) == 48, "header and body back to back");
    for (uint8_t t : {uint8_t(CORE_WIRE_RTS), uint8_t(CORE_WIRE_FIN)}) {
        auto m = rndv(t, 0x7f0000001000, 1 << 20);
        EXPECT_EQ(core_wire_validate(&m.h, kRndv, 3, 0, 8192), CORE_WIRE_OK) << int(t);
        // The eager limit does not apply: rendezvous bodies are fixed-size.
        EXPECT_EQ(core_wire_validate(&m.h, kRndv, 3, 0, 0), CORE_WIRE_OK) << int(t);
        EXPECT_EQ(core_wire_validate(&m.h, kRndv - 1, 3, 0, 8192), CORE_WIRE_BAD_LENGTH);
        auto l = m;
        l.h.length = sizeof(core_wire_rndv_t) - 8;
        EXPECT_EQ(core_wire_validate(&l.h, kRndv - 8, 3, 0, 8192), CORE_WIRE_BAD_LENGTH);
        auto z = rndv(t, 0, 100);
        EXPECT_EQ(core_wire_validate(&z.h, kRndv, 3, 0, 8192), CORE_WIRE_BAD_RNDV) << "address 0";
        auto w = rndv(t, UINT64_MAX - 10, 100);
        EXPECT_EQ(core_wire_validate(&w.h, kRndv, 3, 0, 8192), CORE_WIRE_BAD_RNDV) << "wraps";
        auto e = rndv(t, 0x1000, UINT64_MAX);
        EXPECT_EQ(core_wire_validate(&e.h, kRndv, 3, 0, 8192), CORE_WIRE_BAD_RNDV) << "wraps";
        auto f = rndv(t, 0x1000, 10);
        f.h.flags = 4;
        EXPECT_EQ(core_wire_validate(&f.h, kRndv, 3, 0, 8192), CORE_WIRE_BAD_FLAGS);
        // The window flag: an RTS's key is a window; on a FIN it means nothing and is refused.
        f.h.flags = CORE_WIRE_FLAG_WINDOW;
        EXPECT_EQ(core_wire_validate(&f.h, kRndv, 3, 0, 8192),
                  t == CORE_WIRE_RTS ? CORE_WIRE_OK : CORE_WIRE_BAD_FLAGS);
        // The invalidated flag: a FIN sent with invalidate; on an RTS it is refused.
        f.h.flags = CORE_WIRE_FLAG_INVALIDATED;
        EXPECT_EQ(core_wire_validate(&f.h, kRndv, 3, 0, 8192),
                  t == CORE_WIRE_FIN ? CORE_WIRE_OK : CORE_WIRE_BAD_FLAGS);
        f.h.flags = CORE_WIRE_FLAG_WINDOW | CORE_WIRE_FLAG_INVALIDATED;
        EXPECT_EQ(core_wire_validate(&f.h, kRndv, 3, 0, 8192), CORE_WIRE_BAD_FLAGS);
        f.h.flags = CORE_WIRE_FLAG_WINDOW | 4;
        EXPECT_EQ(core_wire_validate(&f.h, kRndv, 3, 0, 8192), CORE_WIRE_BAD_FLAGS);
    }
    auto empty = rndv(CORE_WIRE_RTS, 0x1000, 0);
    EXPECT_EQ(core_wire_validate(&empty.h, kRndv, 3, 0, 8192), CORE_WIRE_BAD_RNDV);
    auto fin0 = rndv(CORE_WIRE_FIN, 0x1000, 0);
    EXPECT_EQ(core_wire_validate(&fin0.h, kRndv, 3, 0, 8192), CORE_WIRE_OK)
        << "a FIN of 0 bytes read (truncated to nothing, or a failed pull)";
    auto tagged = rndv(CORE_WIRE_FIN, 0x1000, 10);
    tagged.h.tag = 1;
    EXPECT_EQ(core_wire_validate(&tagged.h, kRndv, 3, 0, 8192), CORE_WIRE_BAD_TAG);
    EXPECT_STREQ(core_wire_check_string(CORE_WIRE_BAD_RNDV), "bad rendezvous address or length");
}

TEST(CoreWire, BuffersAreTheLimitAndTheHeaderTakesItsBytes)
{
    constexpr uint32_t kRndv = sizeof(core_wire_rndv_t), kLeast = kHdr + kRndv;
    constexpr uint64_t kCompact = CORE_WIRE_IMM_TAG_MAX, kFull = CORE_WIRE_IMM_TAG_MAX + 1ull;
    static_assert(kHdr == 24 && kRndv == 24, "the sizes below assume these");
    // A page-multiple limit gives buffers of exactly that size.
    EXPECT_EQ(core_wire_buf_size(8192), 8192u);
    EXPECT_EQ(core_wire_buf_size(4096), 4096u);
    EXPECT_EQ(core_wire_buf_size(kLeast + 1), kLeast + 1);
    // Never too small for a header with a rendezvous body.
    EXPECT_EQ(core_wire_buf_size(0), kLeast);
    EXPECT_EQ(core_wire_buf_size(kLeast), kLeast);
    // A compact message carries the limit; one with the header the limit less the header.
    EXPECT_EQ(core_wire_eager_max(8192, 0), 8192u);
    EXPECT_EQ(core_wire_eager_max(8192, kCompact), 8192u);
    EXPECT_EQ(core_wire_eager_max(8192, kFull), 8192u - kHdr);
    EXPECT_EQ(core_wire_eager_max(8192, UINT64_MAX), 8192u - kHdr);
    // Below a header and a body the buffer is bigger than the limit: the limit holds for both.
    EXPECT_EQ(core_wire_eager_max(0, kFull), 0u);
    EXPECT_EQ(core_wire_eager_max(kRndv, kFull), kRndv);
    EXPECT_EQ(core_wire_eager_max(kRndv + 1, kFull), kRndv)
        << "48-byte buffer: 24 after the header";
    EXPECT_EQ(core_wire_eager_max(kRndv + 1, kCompact), kRndv + 1);
    EXPECT_EQ(core_wire_eager_max(kLeast + 1, kFull), kLeast + 1 - kHdr);
    // Whatever the limit, the largest message of either form fits its buffer.
    for (uint32_t limit : {0u, 1u, 23u, 24u, 25u, 47u, 48u, 49u, 100u, 4096u, 8192u, 1048576u}) {
        EXPECT_LE(core_wire_eager_max(limit, kCompact), core_wire_buf_size(limit)) << limit;
        EXPECT_LE(kHdr + core_wire_eager_max(limit, kFull), core_wire_buf_size(limit)) << limit;
        EXPECT_LE(core_wire_eager_max(limit, kFull), core_wire_eager_max(limit, kCompact)) << limit;
    }
}

TEST(CoreCredit, DataKeepsOneCreditForReturns)
{
    core_credit_t c;
    core_credit_init(&c, 4, 8);
    EXPECT_EQ(c.threshold, 4u);
    int sent = 0;
    while (core_credit_can_send_data(&c)) {
        EXPECT_EQ(core_credit_consume(&c, CORE_CREDIT_MAX_GRANT), 0);
        sent++;
    }
    EXPECT_EQ(sent, 3);
    EXPECT_TRUE(core_credit_can_send_return(&c));
    EXPECT_EQ(core_credit_unreturned(&c), 3u);
    core_credit_grant(&c, 3);
    EXPECT_EQ(c.avail, 4u);
    EXPECT_EQ(core_credit_unreturned(&c), 0u);
}

TEST(CoreCredit, PiggyBackAndExplicitReturn)
{
    core_credit_t c;
    core_credit_init(&c, 16, 16);
    core_credit_reposted(&c, 5);
    EXPECT_FALSE(core_credit_return_due(&c));
    EXPECT_EQ(core_credit_consume(&c, CORE_CREDIT_MAX_GRANT), 5)
        << "all owed credits ride on the next message";
    EXPECT_EQ(c.to_return, 0u);
    core_credit_reposted(&c, 8);
    EXPECT_TRUE(core_credit_return_due(&c));
    core_credit_reposted(&c, 70000);
    // The header's credits field is 16 bits (wire.h): one message returns at most 65535.
    static_assert(sizeof(core_wire_hdr_t{}.credits) == 2, "16-bit credits field");
    EXPECT_EQ(core_credit_consume(&c, CORE_CREDIT_MAX_GRANT), 65535);
    EXPECT_EQ(c.to_return, 4473u);
}

TEST(CoreCredit, ThresholdAtLeastTwo)
{
    core_credit_t c;
    core_credit_init(&c, 4, 4);
    EXPECT_EQ(c.threshold, 2u);
    core_credit_reposted(&c, 1);
    EXPECT_FALSE(core_credit_return_due(&c)) << "one returned credit alone must not ping-pong";
}
