#include "counters/nic/nic_port.h"

#include <ibmsg/status.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

#include "counters/nic/nic_fixture.h"

namespace
{

constexpr uint64_t kSat = CNT_NIC_TOTAL_SATURATED;

class NicPort : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        ASSERT_EQ(cnt_nic_open(sysfs_.root().c_str(), &nic_), IBMSG_OK);
    }
    void TearDown() override
    {
        cnt_nic_close(nic_);
    }
    ibmsg_t_port_t port(const char *dev, int num)
    {
        for (int i = 0; i < nic_->num_ports; i++) {
            if (strcmp(nic_->ports[i]->dev_name, dev) == 0 && nic_->ports[i]->port_num == num) {
                return nic_->ports[i];
            }
        }
        return nullptr;
    }
    uint64_t read(ibmsg_t_port_t p, bool hw, const char *name)
    {
        int idx = cnt_nic_port_find(p, hw, name);
        EXPECT_GE(idx, 0) << name;
        uint64_t total = 0;
        EXPECT_EQ(cnt_nic_port_read(p, 1, &idx, &total), IBMSG_OK) << name;
        return total;
    }

    NicSysfsCopy sysfs_;
    cnt_nic_t *nic_ = nullptr;
};

TEST_F(NicPort, DiscoversEveryDevicePortAndCounter)
{
    ASSERT_EQ(nic_->num_ports, 3);
    EXPECT_STREQ(nic_->ports[0]->dev_name, "mlx5_0");
    EXPECT_STREQ(nic_->ports[1]->dev_name, "mlx5_1");
    EXPECT_STREQ(nic_->ports[2]->dev_name, "rxe0");
    for (int i = 0; i < 3; i++) {
        EXPECT_EQ(nic_->ports[i]->port_num, 1);
        EXPECT_STREQ(nic_->ports[i]->source.ops->name, "sysfs-pread");
    }
    // mlx5_0: 21 PMA counters + 23 hw_counters (lifespan is a setting, not a counter).
    EXPECT_EQ(nic_->ports[0]->source.num_counters, 21 + 23);
    EXPECT_TRUE(nic_->ports[0]->has_hw_counters);
    // rxe0: no counters/, the 15 rxe hw_counters of kernel 6.1 (the guest shows them with
    // lifespan).
    ibmsg_t_port_t rxe = port("rxe0", 1);
    ASSERT_NE(rxe, nullptr);
    EXPECT_EQ(rxe->source.num_counters, 15);
    const char *rxe_names[] = {"sent_pkts",           "rcvd_pkts",
                               "duplicate_request",   "out_of_seq_request",
                               "rcvd_rnr_err",        "send_rnr_err",
                               "rcvd_seq_err",        "ack_deferred",
                               "retry_exceeded_err",  "retry_rnr_exceeded_err",
                               "completer_retry_err", "send_err",
                               "link_downed",         "rdma_sends",
                               "rdma_recvs"};
    for (const char *n : rxe_names) {
        EXPECT_GE(cnt_nic_port_find(rxe, true, n), 0) << n;
        EXPECT_EQ(cnt_nic_port_find(rxe, false, n), -1) << n;
    }
    EXPECT_EQ(cnt_nic_port_find(rxe, true, "lifespan"), -1);
    // Only counter files: ports/1/state is not one.
    EXPECT_EQ(cnt_nic_port_find(port("mlx5_0", 1), false, "state"), -1);
}

TEST_F(NicPort, NoRootMeansNoPorts)
{
    cnt_nic_t *none = nullptr;
    ASSERT_EQ(cnt_nic_open((sysfs_.root() + "/does-not-exist").c_str(), &none), IBMSG_OK);
    EXPECT_EQ(none->num_ports, 0);
    cnt_nic_close(none);
    EXPECT_EQ(cnt_nic_open("/tmp", nullptr), IBMSG_ERR_INVALID);
}

TEST_F(NicPort, DeltasFollowWrittenValues)
{
    ibmsg_t_port_t rxe = port("rxe0", 1);
    EXPECT_EQ(read(rxe, true, "sent_pkts"), 9000u);
    sysfs_.set("rxe0", 1, "hw_counters", "sent_pkts", 9123);
    EXPECT_EQ(read(rxe, true, "sent_pkts"), 9123u);
    sysfs_.set("rxe0", 1, "hw_counters", "sent_pkts", 10000);
    EXPECT_EQ(read(rxe, true, "sent_pkts"), 10000u);
}

TEST_F(NicPort, GoingBackwardsStartsAnEpoch)
{
    ibmsg_t_port_t rxe = port("rxe0", 1);
    EXPECT_EQ(read(rxe, true, "rcvd_pkts"), 9000u);
    sysfs_.set("rxe0", 1, "hw_counters", "rcvd_pkts", 40); // device reset, then 40 packets
    EXPECT_EQ(read(rxe, true, "rcvd_pkts"), 9040u);
    sysfs_.set("rxe0", 1, "hw_counters", "rcvd_pkts", 100);
    EXPECT_EQ(read(rxe, true, "rcvd_pkts"), 9100u);
    EXPECT_EQ(rxe->counters[cnt_nic_port_find(rxe, true, "rcvd_pkts")].value.epochs, 1u);
}

TEST_F(NicPort, SaturatedCountersAreListed)
{
    ibmsg_t_port_t mlx = port("mlx5_0", 1);
    char list[256];
    // Nothing is known saturated before it is read.
    EXPECT_EQ(cnt_nic_port_saturated(mlx, list, sizeof(list)), 0);
    EXPECT_STREQ(list, "");
    EXPECT_EQ(read(mlx, false, "port_xmit_data"), kSat);
    EXPECT_EQ(read(mlx, false, "port_rcv_data"), 1000u);
    EXPECT_EQ(read(mlx, false, "symbol_error"), kSat);
    EXPECT_EQ(cnt_nic_port_saturated(mlx, list, sizeof(list)), 2);
    EXPECT_STREQ(list, "port_xmit_data,symbol_error");
    // Truncation keeps the string terminated and still counts every one.
    char tiny[6];
    EXPECT_EQ(cnt_nic_port_saturated(mlx, tiny, sizeof(tiny)), 2);
    EXPECT_STREQ(tiny, "port_");
    // 32-bit port_rcv_data reaching all ones saturates too.
    sysfs_.set("mlx5_0", 1, "counters", "port_rcv_data", 4294967295u);
    EXPECT_EQ(read(mlx, false, "port_rcv_data"), kSat);
    EXPECT_EQ(cnt_nic_port_saturated(mlx, nullptr, 0), 3);
}

TEST_F(NicPort, SixtyFourBitPmaCounters)
{
    ibmsg_t_port_t mlx = port("mlx5_1", 1);
    EXPECT_EQ(read(mlx, false, "port_xmit_data"), 123456789012u);
    sysfs_.set("mlx5_1", 1, "counters", "port_xmit_data", 123456789012u + 1000);
    EXPECT_EQ(read(mlx, false, "port_xmit_data"), 123456789012u + 1000);
    EXPECT_EQ(read(mlx, false, "port_rcv_data"), 8589934592u);
    EXPECT_EQ(cnt_nic_port_saturated(mlx, nullptr, 0), 0);
}

TEST_F(NicPort, SnapshotReadsEveryCounter)
{
    ibmsg_t_port_t rxe = port("rxe0", 1);
    std::vector<uint64_t> totals(rxe->source.num_counters);
    sysfs_.set("rxe0", 1, "hw_counters", "rdma_sends", 1234);
    ASSERT_EQ(cnt_nic_port_snapshot(rxe, totals.data()), IBMSG_OK);
    EXPECT_EQ(totals[cnt_nic_port_find(rxe, true, "rdma_sends")], 1234u);
    EXPECT_EQ(totals[cnt_nic_port_find(rxe, true, "sent_pkts")], 9000u);
    EXPECT_EQ(totals[cnt_nic_port_find(rxe, true, "send_err")], 0u);
}

TEST_F(NicPort, LifespanIsExposed)
{
    uint64_t ms = 0;
    ASSERT_EQ(cnt_nic_port_lifespan(port("rxe0", 1), &ms), IBMSG_OK);
    EXPECT_EQ(ms, 12u);
    ASSERT_EQ(cnt_nic_port_lifespan(port("mlx5_0", 1), &ms), IBMSG_OK);
    EXPECT_EQ(ms, 10u);
}

TEST_F(NicPort, BadInputGivesErrors)
{
    ibmsg_t_port_t rxe = port("rxe0", 1);
    int bad = rxe->source.num_counters;
    uint64_t v;
    EXPECT_EQ(cnt_nic_port_read(rxe, 1, &bad, &v), IBMSG_ERR_INVALID);
    bad = -1;
    EXPECT_EQ(cnt_nic_port_read(rxe, 1, &bad, &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt_nic_port_read(nullptr, 1, &bad, &v), IBMSG_ERR_INVALID);
    // A file that does not hold a number (mlx5 RoCE ports show "N/A (no PMA)").
    sysfs_.set_text("rxe0", 1, "hw_counters", "send_err", "N/A (no PMA)\n");
    int idx = cnt_nic_port_find(rxe, true, "send_err");
    EXPECT_EQ(cnt_nic_port_read(rxe, 1, &idx, &v), IBMSG_ERR_NOT_SUPPORTED);
}

TEST(NicParse, Values)
{
    uint64_t v = 7;
    EXPECT_EQ(cnt_nic_parse_value("0\n", 2, &v), IBMSG_OK);
    EXPECT_EQ(v, 0u);
    EXPECT_EQ(cnt_nic_parse_value("18446744073709551615\n", 21, &v), IBMSG_OK);
    EXPECT_EQ(v, UINT64_MAX);
    EXPECT_EQ(cnt_nic_parse_value("18446744073709551616\n", 21, &v), IBMSG_ERR_OUT_OF_RANGE);
    EXPECT_EQ(cnt_nic_parse_value("12", 2, &v), IBMSG_OK);
    EXPECT_EQ(v, 12u);
    EXPECT_EQ(cnt_nic_parse_value("", 0, &v), IBMSG_ERR_NOT_SUPPORTED);
    EXPECT_EQ(cnt_nic_parse_value("-1\n", 3, &v), IBMSG_ERR_NOT_SUPPORTED);
    EXPECT_EQ(cnt_nic_parse_value("12 \n", 4, &v), IBMSG_ERR_NOT_SUPPORTED);
    EXPECT_EQ(cnt_nic_parse_value("12\n\n", 4, &v), IBMSG_ERR_NOT_SUPPORTED);
}

} // namespace
