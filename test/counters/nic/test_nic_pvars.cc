// NIC port counters through the public tool API, over a temporary copy of the sysfs fixtures
// (IBMSG_NIC_SYSFS_ROOT is set before the first ibmsg_t_init_thread of the process).
#include <ibmsg/tool.h>

#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "counters/nic/nic_backend.h"
#include "counters/nic/nic_fixture.h"
#include "counters/nic/nic_port.h"

namespace
{

NicSysfsCopy *g_sysfs;

class NicEnvironment : public ::testing::Environment
{
  public:
    void SetUp() override
    {
        g_sysfs = new NicSysfsCopy();
        setenv("IBMSG_NIC_SYSFS_ROOT", g_sysfs->root().c_str(), 1);
        // Asked for, but a fixture directory is not what RDMA netlink reads: sysfs stays.
        setenv("IBMSG_NIC_BACKEND", "netlink", 1);
    }
    void TearDown() override
    {
        delete g_sysfs;
        g_sysfs = nullptr;
    }
};

const ::testing::Environment *const g_env = ::testing::AddGlobalTestEnvironment(new NicEnvironment);

class NicPvars : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        int provided;
        ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_pvar_session_create(&session_), IBMSG_T_SUCCESS);
    }
    void TearDown() override
    {
        EXPECT_EQ(ibmsg_t_pvar_session_free(&session_), IBMSG_T_SUCCESS);
        EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    }
    ibmsg_t_port_t port(const char *dev)
    {
        int num = 0;
        EXPECT_EQ(ibmsg_t_port_get_num(&num), IBMSG_T_SUCCESS);
        for (int i = 0; i < num; i++) {
            ibmsg_t_port_t p;
            char name[64];
            int len = sizeof(name), port_num = 0;
            EXPECT_EQ(ibmsg_t_port_get(i, &p), IBMSG_T_SUCCESS);
            EXPECT_EQ(ibmsg_t_port_get_info(p, name, &len, &port_num), IBMSG_T_SUCCESS);
            if (strcmp(name, dev) == 0 && port_num == 1) {
                return p;
            }
        }
        ADD_FAILURE() << "no port " << dev;
        return nullptr;
    }
    int pvar(const char *name, int var_class = IBMSG_T_PVAR_CLASS_COUNTER)
    {
        int index = -1;
        EXPECT_EQ(ibmsg_t_pvar_get_index(name, var_class, &index), IBMSG_T_SUCCESS) << name;
        return index;
    }
    ibmsg_t_pvar_handle_t handle(const char *name, ibmsg_t_port_t p,
                                 int var_class = IBMSG_T_PVAR_CLASS_COUNTER)
    {
        ibmsg_t_pvar_handle_t h = IBMSG_T_PVAR_HANDLE_NULL;
        int count = 0;
        EXPECT_EQ(ibmsg_t_pvar_handle_alloc(session_, pvar(name, var_class), &p, &h, &count),
                  IBMSG_T_SUCCESS)
            << name;
        EXPECT_EQ(count, var_class == IBMSG_T_PVAR_CLASS_GENERIC ? count : 1);
        return h;
    }
    unsigned long long read(ibmsg_t_pvar_handle_t h)
    {
        unsigned long long v = 0;
        EXPECT_EQ(ibmsg_t_pvar_read(session_, h, &v), IBMSG_T_SUCCESS);
        return v;
    }

    ibmsg_t_pvar_session_t session_ = IBMSG_T_PVAR_SESSION_NULL;
};

TEST_F(NicPvars, PortsAreListed)
{
    int num = 0;
    ASSERT_EQ(ibmsg_t_port_get_num(&num), IBMSG_T_SUCCESS);
    ASSERT_EQ(num, 3);
    const char *names[] = {"mlx5_0", "mlx5_1", "rxe0"};
    for (int i = 0; i < num; i++) {
        ibmsg_t_port_t p;
        ASSERT_EQ(ibmsg_t_port_get(i, &p), IBMSG_T_SUCCESS);
        int len = 0, port_num = 0;
        ASSERT_EQ(ibmsg_t_port_get_info(p, nullptr, &len, &port_num), IBMSG_T_SUCCESS);
        EXPECT_EQ(len, (int)strlen(names[i]) + 1);
        EXPECT_EQ(port_num, 1);
        char name[4];
        len = sizeof(name);
        ASSERT_EQ(ibmsg_t_port_get_info(p, name, &len, nullptr), IBMSG_T_SUCCESS);
        EXPECT_EQ(len, 4);
        EXPECT_EQ(std::string(name), std::string(names[i]).substr(0, 3));
    }
    ibmsg_t_port_t p;
    EXPECT_EQ(ibmsg_t_port_get(3, &p), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_port_get(-1, &p), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_port_get(0, nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_port_get_num(nullptr), IBMSG_T_ERR_INVALID);
    int dummy;
    EXPECT_EQ(
        ibmsg_t_port_get_info(reinterpret_cast<ibmsg_t_port_t>(&dummy), nullptr, nullptr, nullptr),
        IBMSG_T_ERR_INVALID_HANDLE);
}

TEST_F(NicPvars, CategoriesFollowDevicesAndPorts)
{
    int nic, dev, portcat;
    ASSERT_EQ(ibmsg_t_category_get_index("nic", &nic), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_get_index("nic_rxe0", &dev), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_get_index("nic_rxe0_port1", &portcat), IBMSG_T_SUCCESS);
    int num = 0, idx[64];
    ASSERT_EQ(ibmsg_t_category_get_containing(IBMSG_T_KIND_CATEGORY, portcat, 0, 64, idx, &num),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(num, 1);
    EXPECT_EQ(idx[0], dev);
    // rxe0 port 1: its 15 counters, nic_saturated and nic_hw_counters_lifespan.
    int npvars = 0;
    ASSERT_EQ(ibmsg_t_category_get_info(portcat, nullptr, nullptr, nullptr, nullptr, nullptr,
                                        &npvars, nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(npvars, 15 + 2);
    std::vector<int> members(npvars);
    ASSERT_EQ(ibmsg_t_category_get_pvars(portcat, npvars, members.data()), IBMSG_T_SUCCESS);
    bool has_sent = false, has_xmit = false;
    for (int m : members) {
        has_sent |= m == pvar("nic_sent_pkts");
        has_xmit |= m == pvar("nic_port_xmit_data");
    }
    EXPECT_TRUE(has_sent);
    EXPECT_FALSE(has_xmit);
    // Names and descriptions.
    char desc[1024];
    int desc_len = sizeof(desc), bind = -1;
    ASSERT_EQ(ibmsg_t_pvar_get_info(pvar("nic_sent_pkts"), nullptr, nullptr, nullptr, nullptr,
                                    nullptr, nullptr, desc, &desc_len, &bind, nullptr, nullptr,
                                    nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(bind, IBMSG_T_BIND_PORT);
    EXPECT_NE(strstr(desc, "Port-wide"), nullptr) << desc;
    pvar("nic_vl15_dropped");
    pvar("nic_port_rcv_bytes");
    pvar("nic_rx_write_requests");
    // rxe's hw_counters/link_downed collides with the PMA counters/link_downed of mlx5.
    pvar("nic_link_downed");
    pvar("nic_hw_link_downed");
}

TEST_F(NicPvars, SessionDeltas)
{
    ibmsg_t_port_t rxe = port("rxe0");
    ibmsg_t_pvar_handle_t h = handle("nic_sent_pkts", rxe);
    EXPECT_EQ(read(h), 0u);
    ASSERT_EQ(ibmsg_t_pvar_start(session_, h), IBMSG_T_SUCCESS);
    g_sysfs->set("rxe0", 1, "hw_counters", "sent_pkts", 9500);
    EXPECT_EQ(read(h), 500u);
    ASSERT_EQ(ibmsg_t_pvar_stop(session_, h), IBMSG_T_SUCCESS);
    g_sysfs->set("rxe0", 1, "hw_counters", "sent_pkts", 9700);
    EXPECT_EQ(read(h), 500u); // stopped: frozen
    ASSERT_EQ(ibmsg_t_pvar_start(session_, h), IBMSG_T_SUCCESS);
    g_sysfs->set("rxe0", 1, "hw_counters", "sent_pkts", 9710);
    EXPECT_EQ(read(h), 510u);
    // A device reset (counter back to 0, then 25 packets) continues the total.
    g_sysfs->set("rxe0", 1, "hw_counters", "sent_pkts", 25);
    EXPECT_EQ(read(h), 535u);
    ASSERT_EQ(ibmsg_t_pvar_stop(session_, h), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_free(session_, &h), IBMSG_T_SUCCESS);
}

TEST_F(NicPvars, BindingNeedsAPortThatHasTheCounter)
{
    ibmsg_t_port_t rxe = port("rxe0");
    ibmsg_t_pvar_handle_t h;
    int count;
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(session_, pvar("nic_port_xmit_data"), &rxe, &h, &count),
              IBMSG_T_ERR_INVALID_HANDLE);
    int dummy = 0;
    void *not_a_port = &dummy;
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(session_, pvar("nic_sent_pkts"), &not_a_port, &h, &count),
              IBMSG_T_ERR_INVALID_HANDLE);
}

TEST_F(NicPvars, WordsToBytes)
{
    ibmsg_t_port_t mlx = port("mlx5_1");
    ibmsg_t_pvar_handle_t words = handle("nic_port_xmit_data", mlx);
    ibmsg_t_pvar_handle_t bytes = handle("nic_port_xmit_bytes", mlx);
    ibmsg_t_pvar_handle_t both[] = {words, bytes};
    ASSERT_EQ(ibmsg_t_pvar_start_list(session_, 2, both), IBMSG_T_SUCCESS);
    g_sysfs->set("mlx5_1", 1, "counters", "port_xmit_data", 123456789012ull + 1000);
    EXPECT_EQ(read(words), 1000u);
    EXPECT_EQ(read(bytes), 4000u);
}

TEST_F(NicPvars, SaturationIsReportedNotAWrongDelta)
{
    ibmsg_t_port_t mlx = port("mlx5_0");
    ibmsg_t_pvar_handle_t h = handle("nic_port_rcv_data", mlx);
    ASSERT_EQ(ibmsg_t_pvar_start(session_, h), IBMSG_T_SUCCESS); // at 1000 words
    g_sysfs->set("mlx5_0", 1, "counters", "port_rcv_data", 4294967295ull);
    EXPECT_EQ(read(h), UINT64_MAX - 1000);
    EXPECT_GE(read(h), 1ull << 63);

    ibmsg_t_pvar_handle_t sat = IBMSG_T_PVAR_HANDLE_NULL;
    int count = 0;
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(session_, pvar("nic_saturated", IBMSG_T_PVAR_CLASS_GENERIC),
                                        &mlx, &sat, &count),
              IBMSG_T_SUCCESS);
    ASSERT_GT(count, 100);
    std::vector<char> list(count);
    ASSERT_EQ(ibmsg_t_pvar_read(session_, sat, list.data()), IBMSG_T_SUCCESS);
    EXPECT_STREQ(list.data(), "port_rcv_data");
    // port_xmit_data is saturated in the fixture: known once read.
    ibmsg_t_pvar_handle_t x = handle("nic_port_xmit_data", mlx);
    ASSERT_EQ(ibmsg_t_pvar_start(session_, x), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_read(session_, sat, list.data()), IBMSG_T_SUCCESS);
    EXPECT_STREQ(list.data(), "port_rcv_data,port_xmit_data");
}

TEST_F(NicPvars, LifespanAndRoot)
{
    ibmsg_t_pvar_handle_t h =
        handle("nic_hw_counters_lifespan", port("rxe0"), IBMSG_T_PVAR_CLASS_SIZE);
    EXPECT_EQ(read(h), 12u);
    int cvar = -1;
    ASSERT_EQ(ibmsg_t_cvar_get_index("nic_sysfs_root", &cvar), IBMSG_T_SUCCESS);
    ibmsg_t_cvar_handle_t ch;
    int count = 0;
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(cvar, nullptr, &ch, &count), IBMSG_T_SUCCESS);
    std::vector<char> root(count);
    ASSERT_EQ(ibmsg_t_cvar_read(ch, root.data()), IBMSG_T_SUCCESS);
    EXPECT_EQ(std::string(root.data()), g_sysfs->root());
    std::vector<char> other(count, '\0');
    strcpy(other.data(), "/tmp");
    EXPECT_EQ(ibmsg_t_cvar_write(ch, other.data()), IBMSG_T_ERR_CVAR_SET_NOT_NOW);
    ASSERT_EQ(ibmsg_t_cvar_handle_free(&ch), IBMSG_T_SUCCESS);
}

// nic_backend: netlink was asked for (the environment above, by name), but the root is a fixture,
// which RDMA netlink cannot read: every port keeps the pread backend. The cvar is an INT of the
// enumeration nic_backends, so tools list its three values; the value is frozen after discovery,
// and a value outside the enumeration is refused.
TEST_F(NicPvars, BackendCvarKeepsSysfsForAFixtureRoot)
{
    int cvar = -1, count = 0;
    ASSERT_EQ(ibmsg_t_cvar_get_index("nic_backend", &cvar), IBMSG_T_SUCCESS);
    ibmsg_t_datatype_t type;
    ibmsg_t_enum_t backends = IBMSG_T_ENUM_NULL;
    ASSERT_EQ(ibmsg_t_cvar_get_info(cvar, nullptr, nullptr, nullptr, &type, &backends, nullptr,
                                    nullptr, nullptr, nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(type, IBMSG_T_INT);
    ASSERT_NE(backends, IBMSG_T_ENUM_NULL);
    int num = 0, len = 64;
    char name[64];
    ASSERT_EQ(ibmsg_t_enum_get_info(backends, &num, name, &len), IBMSG_T_SUCCESS);
    EXPECT_STREQ(name, "nic_backends");
    ASSERT_EQ(num, 3);
    const char *const items[] = {"auto", "sysfs", "netlink"};
    for (int i = 0; i < num; i++) {
        int value = -1;
        len = 64;
        ASSERT_EQ(ibmsg_t_enum_get_item(backends, i, &value, name, &len), IBMSG_T_SUCCESS);
        EXPECT_EQ(value, i);
        EXPECT_STREQ(name, items[i]);
    }
    EXPECT_EQ(ibmsg_t_enum_get_item(backends, 3, nullptr, name, &len), IBMSG_T_ERR_INVALID_ITEM);

    ibmsg_t_cvar_handle_t ch;
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(cvar, nullptr, &ch, &count), IBMSG_T_SUCCESS);
    EXPECT_EQ(count, 1);
    int v = -1;
    ASSERT_EQ(ibmsg_t_cvar_read(ch, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, CNT_NIC_BACKEND_NETLINK);
    for (const char *dev : {"mlx5_0", "mlx5_1", "rxe0"}) {
        EXPECT_STREQ(port(dev)->source.ops->name, "sysfs-pread") << dev;
    }
    v = CNT_NIC_BACKEND_SYSFS;
    EXPECT_EQ(ibmsg_t_cvar_write(ch, &v), IBMSG_T_ERR_CVAR_SET_NOT_NOW);
    for (int bad : {3, -1}) {
        EXPECT_EQ(ibmsg_t_cvar_write(ch, &bad), IBMSG_T_ERR_INVALID) << bad;
    }
    ASSERT_EQ(ibmsg_t_cvar_read(ch, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, CNT_NIC_BACKEND_NETLINK);
    ASSERT_EQ(ibmsg_t_cvar_handle_free(&ch), IBMSG_T_SUCCESS);
    cnt_nic_backend_t b;
    EXPECT_EQ(cnt_nic_backend_parse("auto", &b), IBMSG_OK);
    EXPECT_EQ(b, CNT_NIC_BACKEND_AUTO);
    EXPECT_EQ(cnt_nic_backend_parse("Netlink", &b), IBMSG_ERR_INVALID);
}

} // namespace
