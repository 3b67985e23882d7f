// Address blobs: round trip, and every way a blob from the wire can be wrong.
#include <gtest/gtest.h>

#include <sys/resource.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

#include "ibmsg/status.h"
#include "verbs/addr.h"
#include "verbs/device.h"

namespace
{

verbs_addr_t roce_addr()
{
    verbs_addr_t a{};
    a.qpn = 0x123456;
    a.psn = 0xabcdef;
    a.lid = 0;
    a.mtu = 5;
    a.link_layer = VERBS_LINK_ETHERNET;
    const uint8_t gid[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 192, 168, 77, 1};
    std::memcpy(a.gid, gid, sizeof(gid));
    return a;
}

std::vector<uint8_t> packed(const verbs_addr_t &a)
{
    std::vector<uint8_t> b(VERBS_ADDR_PACKED_SIZE);
    EXPECT_EQ(verbs_addr_pack(&a, b.data(), b.size()), IBMSG_OK);
    return b;
}

} // namespace

TEST(VerbsAddr, RoundTrip)
{
    verbs_addr_t a = roce_addr(), b{};
    auto blob = packed(a);
    EXPECT_EQ(blob[0], VERBS_ADDR_VERSION);
    ASSERT_EQ(verbs_addr_unpack(blob.data(), blob.size(), &b), IBMSG_OK);
    EXPECT_EQ(b.qpn, a.qpn);
    EXPECT_EQ(b.psn, a.psn);
    EXPECT_EQ(b.lid, a.lid);
    EXPECT_EQ(b.mtu, a.mtu);
    EXPECT_EQ(b.link_layer, a.link_layer);
    EXPECT_EQ(std::memcmp(a.gid, b.gid, 16), 0);
}

TEST(VerbsAddr, IbWithLidOnly)
{
    verbs_addr_t a = roce_addr(), b{};
    a.link_layer = VERBS_LINK_IB;
    a.lid = 7;
    std::memset(a.gid, 0, sizeof(a.gid));
    auto blob = packed(a);
    ASSERT_EQ(verbs_addr_unpack(blob.data(), blob.size(), &b), IBMSG_OK);
    EXPECT_EQ(b.lid, 7);
}

TEST(VerbsAddr, PackRejectsBadArguments)
{
    verbs_addr_t a = roce_addr();
    uint8_t buf[VERBS_ADDR_PACKED_SIZE];
    EXPECT_EQ(verbs_addr_pack(nullptr, buf, sizeof(buf)), IBMSG_ERR_INVALID);
    EXPECT_EQ(verbs_addr_pack(&a, nullptr, sizeof(buf)), IBMSG_ERR_INVALID);
    EXPECT_EQ(verbs_addr_pack(&a, buf, sizeof(buf) - 1), IBMSG_ERR_INVALID);
    a.qpn = 1 << 24;
    EXPECT_EQ(verbs_addr_pack(&a, buf, sizeof(buf)), IBMSG_ERR_INVALID);
}

TEST(VerbsAddr, UnpackRejectsTruncatedAndLong)
{
    auto blob = packed(roce_addr());
    verbs_addr_t out{};
    out.qpn = 99;
    for (size_t len = 0; len < blob.size(); len++) {
        EXPECT_EQ(verbs_addr_unpack(blob.data(), len, &out), IBMSG_ERR_PROTOCOL) << len;
    }
    blob.push_back(0);
    EXPECT_EQ(verbs_addr_unpack(blob.data(), blob.size(), &out), IBMSG_ERR_PROTOCOL);
    EXPECT_EQ(out.qpn, 99u) << "nothing written on error";
    EXPECT_EQ(verbs_addr_unpack(nullptr, 32, &out), IBMSG_ERR_INVALID);
    EXPECT_EQ(verbs_addr_unpack(blob.data(), 32, nullptr), IBMSG_ERR_INVALID);
}

TEST(VerbsAddr, UnpackRejectsEachBadField)
{
    const auto good = packed(roce_addr());
    struct Case {
        size_t offset;
        uint8_t value;
        const char *what;
    } cases[] = {
        {0, 2, "version"},
        {1, 1, "flags"},
        {3, 33, "size"},
        {4, 1, "qpn above 24 bits"},
        {8, 1, "psn above 24 bits"},
        {14, 0, "mtu 0"},
        {14, 6, "mtu 6"},
        {15, 0, "link layer 0"},
        {15, 3, "link layer 3"},
    };
    for (const auto &c : cases) {
        auto blob = good;
        blob[c.offset] = c.value;
        verbs_addr_t out{};
        EXPECT_EQ(verbs_addr_unpack(blob.data(), blob.size(), &out), IBMSG_ERR_PROTOCOL) << c.what;
    }
    // QPN 0 and 1 are special queue pairs; a RoCE address without a GID cannot be routed.
    auto blob = good;
    std::memset(&blob[4], 0, 4);
    blob[7] = 1;
    verbs_addr_t out{};
    EXPECT_EQ(verbs_addr_unpack(blob.data(), blob.size(), &out), IBMSG_ERR_PROTOCOL);
    blob = good;
    std::memset(&blob[16], 0, 16);
    EXPECT_EQ(verbs_addr_unpack(blob.data(), blob.size(), &out), IBMSG_ERR_PROTOCOL);
}

TEST(VerbsAddr, MtuBytes)
{
    EXPECT_EQ(verbs_mtu_bytes(1), 256u);
    EXPECT_EQ(verbs_mtu_bytes(3), 1024u);
    EXPECT_EQ(verbs_mtu_bytes(5), 4096u);
    EXPECT_EQ(verbs_mtu_bytes(0), 0u);
    EXPECT_EQ(verbs_mtu_bytes(6), 0u);
}

// A registration refused for lack of lockable memory names the limit and ulimit -l; other errors
// get no hint.
TEST(MemlockHint, NamesTheLimitAndUlimit)
{
    struct rlimit old, low;
    ASSERT_EQ(getrlimit(RLIMIT_MEMLOCK, &old), 0);
    low = old;
    low.rlim_cur = 65536 * 1024;
    if (old.rlim_max != RLIM_INFINITY && old.rlim_max < low.rlim_cur) {
        low.rlim_cur = old.rlim_max;
    }
    ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &low), 0);
    char buf[256];
    std::string h = verbs_memlock_hint(ENOMEM, buf, sizeof(buf));
    EXPECT_NE(h.find("ulimit -l"), std::string::npos) << h;
    EXPECT_NE(h.find(std::to_string(low.rlim_cur / 1024) + " KiB"), std::string::npos) << h;
    EXPECT_EQ(std::string(verbs_memlock_hint(EINVAL, buf, sizeof(buf))), "");
    EXPECT_EQ(verbs_memlock_limit() == UINT64_MAX || verbs_memlock_limit() == low.rlim_cur, true);
    ASSERT_EQ(setrlimit(RLIMIT_MEMLOCK, &old), 0);
}
