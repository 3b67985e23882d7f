// Port selection as a pure function (verbs/dev_rank.h) over synthetic device descriptions: the
// search passes ports that cannot serve (down, iWARP, no RC, RoCE without a GID) for a usable
// one listed later, and prefers the calling thread's NUMA node.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "verbs/dev_rank.h"

namespace
{

verbs_port_desc_t port(const char *dev, unsigned p, int numa = -1)
{
    verbs_port_desc_t d{};
    d.device = dev;
    d.port = p;
    d.active = 1;
    d.transport = VERBS_TRANSPORT_IB;
    d.ethernet = 0;
    d.gid_index = -1;
    d.numa_node = numa;
    return d;
}

verbs_port_desc_t roce(const char *dev, unsigned p, int gid, int numa = -1)
{
    verbs_port_desc_t d = port(dev, p, numa);
    d.ethernet = 1;
    d.gid_index = gid;
    return d;
}

} // namespace

TEST(PortRank, FirstUsablePortInListOrder)
{
    std::vector<verbs_port_desc_t> v = {port("mlx5_0", 1), port("mlx5_1", 1)};
    const char *why[2] = {"x", "x"};
    EXPECT_EQ(verbs_port_rank(v.data(), v.size(), -1, why), 0);
    EXPECT_EQ(why[0], nullptr);
    EXPECT_EQ(why[1], nullptr);
}

TEST(PortRank, PassesUnusablePortsWithTheirReasons)
{
    std::vector<verbs_port_desc_t> v = {port("mlx5_0", 1), roce("mlx5_0", 2, -1), port("irdma0", 1),
                                        port("efa_0", 1), roce("mlx5_1", 1, 3)};
    v[0].active = 0;
    v[2].transport = VERBS_TRANSPORT_IWARP;
    v[2].ethernet = 1;
    v[2].gid_index = 0;
    v[3].transport = VERBS_TRANSPORT_OTHER;
    const char *why[5];
    EXPECT_EQ(verbs_port_rank(v.data(), v.size(), 0, why), 4);
    EXPECT_STREQ(why[0], "not ACTIVE");
    EXPECT_STREQ(why[1], "no RoCE v2 GID");
    EXPECT_STREQ(why[2], "iWARP: no SEND_WITH_IMM");
    EXPECT_STREQ(why[3], "no RC queue pairs (efa, usNIC)");
    EXPECT_EQ(why[4], nullptr);
}

TEST(PortRank, NothingUsable)
{
    std::vector<verbs_port_desc_t> v = {roce("rxe0", 1, -1), port("efa_0", 1)};
    v[1].transport = VERBS_TRANSPORT_OTHER;
    const char *why[2];
    EXPECT_EQ(verbs_port_rank(v.data(), v.size(), 0, why), -1);
    EXPECT_STREQ(why[0], "no RoCE v2 GID");
    EXPECT_STREQ(why[1], "no RC queue pairs (efa, usNIC)");
    EXPECT_EQ(verbs_port_rank(nullptr, 0, 0, nullptr), -1);
}

TEST(PortRank, PrefersTheThreadsNumaNode)
{
    // Dual-HCA node: mlx5_0 on node 0, mlx5_1 on node 1.
    std::vector<verbs_port_desc_t> v = {port("mlx5_0", 1, 0), port("mlx5_1", 1, 1)};
    const char *why[2];
    EXPECT_EQ(verbs_port_rank(v.data(), v.size(), 1, why), 1);
    EXPECT_EQ(why[0], nullptr);
    EXPECT_EQ(verbs_port_rank(v.data(), v.size(), 0, why), 0);
    // Unknown node of the thread or of the devices: list order.
    EXPECT_EQ(verbs_port_rank(v.data(), v.size(), -1, why), 0);
    std::vector<verbs_port_desc_t> u = {port("rxe0", 1), port("rxe1", 1)};
    EXPECT_EQ(verbs_port_rank(u.data(), u.size(), 1, nullptr), 0);
    // The local one is down: the remote one rather than none.
    v[1].active = 0;
    EXPECT_EQ(verbs_port_rank(v.data(), v.size(), 1, why), 0);
    EXPECT_STREQ(why[1], "not ACTIVE");
    // A usable port behind the local one still gets its reason filled in.
    std::vector<verbs_port_desc_t> w = {port("a", 1, 1), roce("b", 1, -1, 0)};
    const char *why2[2] = {"x", "x"};
    EXPECT_EQ(verbs_port_rank(w.data(), w.size(), 1, why2), 0);
    EXPECT_STREQ(why2[1], "no RoCE v2 GID");
}
