// Remote-key blobs: packing, and the validation of every field of a blob from a peer (no device).
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "core/rkey.h"

namespace
{

core_rkey_blob_t key(uint64_t base = 0x7f0000001000ull, uint64_t length = 4096)
{
    core_rkey_blob_t k{};
    k.base = base;
    k.length = length;
    k.rkey = 0x1234abcd;
    k.access = IBMSG_MEM_REMOTE_READ | IBMSG_MEM_REMOTE_WRITE;
    return k;
}

std::vector<uint8_t> packed(const core_rkey_blob_t &k)
{
    std::vector<uint8_t> b(IBMSG_RKEY_BLOB_SIZE);
    EXPECT_EQ(core_rkey_pack(&k, b.data(), b.size()), IBMSG_OK);
    return b;
}

int unpack(const std::vector<uint8_t> &b, core_rkey_blob_t *out, const char **why)
{
    return core_rkey_unpack(b.data(), b.size(), out, why);
}

} // namespace

TEST(CoreRkey, RoundTripAndLayout)
{
    auto k = key();
    auto b = packed(k);
    const uint8_t want[IBMSG_RKEY_BLOB_SIZE] = {1, 3, 0,    24, 0x12, 0x34, 0xab, 0xcd,
                                                0, 0, 0x7f, 0,  0,    0,    0x10, 0,
                                                0, 0, 0,    0,  0,    0,    0x10, 0};
    EXPECT_EQ(std::memcmp(b.data(), want, sizeof(want)), 0);
    core_rkey_blob_t u{};
    const char *why = nullptr;
    ASSERT_EQ(unpack(b, &u, &why), IBMSG_OK);
    EXPECT_EQ(u.base, k.base);
    EXPECT_EQ(u.length, k.length);
    EXPECT_EQ(u.rkey, k.rkey);
    EXPECT_EQ(u.access, k.access);
    // The largest range that does not wrap: [2^64 - length, 2^64).
    auto top = key(UINT64_MAX - 4095, 4096);
    ASSERT_EQ(unpack(packed(top), &u, &why), IBMSG_OK);
    EXPECT_EQ(u.base, UINT64_MAX - 4095);
    auto all = key(0, UINT64_MAX);
    ASSERT_EQ(unpack(packed(all), &u, &why), IBMSG_OK);
}

TEST(CoreRkey, PackRefusesWhatWouldNotUnpack)
{
    uint8_t b[IBMSG_RKEY_BLOB_SIZE];
    auto k = key();
    EXPECT_EQ(core_rkey_pack(&k, b, sizeof(b) - 1), IBMSG_ERR_INVALID);
    EXPECT_EQ(core_rkey_pack(nullptr, b, sizeof(b)), IBMSG_ERR_INVALID);
    k.access = 0;
    EXPECT_EQ(core_rkey_pack(&k, b, sizeof(b)), IBMSG_ERR_INVALID);
    k = key(0, 0);
    EXPECT_EQ(core_rkey_pack(&k, b, sizeof(b)), IBMSG_ERR_INVALID);
    k = key(UINT64_MAX - 10, 12);
    EXPECT_EQ(core_rkey_pack(&k, b, sizeof(b)), IBMSG_ERR_INVALID);
}

// The atomic bit is a valid access of its own (a key for atomics only).
TEST(CoreRkey, AtomicAccessRoundTrips)
{
    auto k = key();
    k.access = IBMSG_MEM_REMOTE_ATOMIC;
    const auto b = packed(k);
    core_rkey_blob_t u{};
    const char *why = nullptr;
    ASSERT_EQ(unpack(b, &u, &why), IBMSG_OK);
    EXPECT_EQ(u.access, IBMSG_MEM_REMOTE_ATOMIC);
    EXPECT_EQ(b[1], 4);
}

TEST(CoreRkey, RejectsEachBadField)
{
    const auto good = packed(key());
    core_rkey_blob_t u = key(1, 1), before = u;
    const char *why = nullptr;
    struct Case {
        const char *name;
        size_t at;
        uint8_t value;
    } cases[] = {
        {"version 0", 0, 0},    {"version 2", 0, 2},      {"no access", 1, 0},
        {"access bit 3", 1, 8}, {"access 0xff", 1, 0xff}, {"size high byte", 2, 1},
        {"size 23", 3, 23},     {"size 25", 3, 25},
    };
    for (const auto &c : cases) {
        auto b = good;
        b[c.at] = c.value;
        why = nullptr;
        EXPECT_EQ(unpack(b, &u, &why), IBMSG_ERR_PROTOCOL) << c.name;
        EXPECT_NE(why, nullptr) << c.name;
        EXPECT_EQ(std::memcmp(&u, &before, sizeof(u)), 0) << c.name << ": output written";
    }
    // Length 0, and ranges that wrap around 2^64.
    auto b = good;
    std::memset(b.data() + 16, 0, 8);
    EXPECT_EQ(unpack(b, &u, &why), IBMSG_ERR_PROTOCOL);
    EXPECT_STREQ(why, "empty range");
    b = good;
    std::memset(b.data() + 8, 0xff, 8); // base 2^64 - 1, length 4096
    EXPECT_EQ(unpack(b, &u, &why), IBMSG_ERR_PROTOCOL);
    EXPECT_STREQ(why, "range wraps around the address space");
    b = good;
    std::memset(b.data() + 16, 0xff, 8); // length 2^64 - 1 from a non-zero base
    EXPECT_EQ(unpack(b, &u, &why), IBMSG_ERR_PROTOCOL);
    // Wrong sizes: truncated, padded, empty.
    for (size_t len : {size_t(0), size_t(1), size_t(23), size_t(25), size_t(64)}) {
        std::vector<uint8_t> v(64, 0); // the bytes are there; only len says otherwise
        std::memcpy(v.data(), good.data(), good.size());
        why = nullptr;
        EXPECT_EQ(core_rkey_unpack(v.data(), len, &u, &why), IBMSG_ERR_PROTOCOL) << len;
        EXPECT_STREQ(why, "wrong size");
    }
    EXPECT_EQ(core_rkey_unpack(nullptr, 24, &u, &why), IBMSG_ERR_INVALID);
    EXPECT_EQ(core_rkey_unpack(good.data(), 24, nullptr, &why), IBMSG_ERR_INVALID);
    EXPECT_EQ(std::memcmp(&u, &before, sizeof(u)), 0);
}

TEST(CoreRkey, BoundsWithoutOverflow)
{
    const uint64_t base = 0x1000, len = 0x100;
    EXPECT_TRUE(core_rkey_in_bounds(base, len, base, len));
    EXPECT_TRUE(core_rkey_in_bounds(base, len, base + 1, len - 1));
    EXPECT_TRUE(core_rkey_in_bounds(base, len, base + len, 0)); // empty, at the end
    EXPECT_TRUE(core_rkey_in_bounds(base, len, base + len - 1, 1));
    EXPECT_FALSE(core_rkey_in_bounds(base, len, base, len + 1));
    EXPECT_FALSE(core_rkey_in_bounds(base, len, base - 1, 1));
    EXPECT_FALSE(core_rkey_in_bounds(base, len, base + len, 1));
    EXPECT_FALSE(core_rkey_in_bounds(base, len, base + len + 1, 0));
    EXPECT_FALSE(core_rkey_in_bounds(base, len, base + 1, UINT64_MAX)); // addr + len wraps
    EXPECT_FALSE(core_rkey_in_bounds(base, len, UINT64_MAX, 2));
    EXPECT_FALSE(core_rkey_in_bounds(base, len, 0, base + 1));
    EXPECT_TRUE(core_rkey_in_bounds(UINT64_MAX - 9, 10, UINT64_MAX - 9, 10));
    EXPECT_FALSE(core_rkey_in_bounds(UINT64_MAX - 9, 10, UINT64_MAX - 9, 11));
    EXPECT_TRUE(core_rkey_in_bounds(0, UINT64_MAX, 0, UINT64_MAX));
    EXPECT_FALSE(core_rkey_in_bounds(0, UINT64_MAX, 1, UINT64_MAX));
}
