#include "counters/nic/nic_value.h"

#include <gtest/gtest.h>

#include <cstdint>

namespace
{

constexpr uint64_t kSat = CNT_NIC_TOTAL_SATURATED;

TEST(NicValue, WidthsOfWellKnownPmaCounters)
{
    cnt_nic_value_t v;
    cnt_nic_value_init(&v, false, "symbol_error");
    EXPECT_EQ(v.width, 16);
    cnt_nic_value_init(&v, false, "local_link_integrity_errors");
    EXPECT_EQ(v.width, 4);
    cnt_nic_value_init(&v, false, "link_downed");
    EXPECT_EQ(v.width, 8);
    cnt_nic_value_init(&v, false, "VL15_dropped");
    EXPECT_EQ(v.width, 16);
    cnt_nic_value_init(&v, false, "port_xmit_wait");
    EXPECT_EQ(v.width, 32);
    EXPECT_FALSE(v.may_widen);
    cnt_nic_value_init(&v, false, "port_xmit_data");
    EXPECT_EQ(v.width, 32);
    EXPECT_TRUE(v.may_widen);
    // The same name in hw_counters is a 64-bit driver counter (rxe's link_downed).
    cnt_nic_value_init(&v, true, "link_downed");
    EXPECT_EQ(v.width, 64);
    cnt_nic_value_init(&v, false, "some_new_counter");
    EXPECT_EQ(v.width, 64);
}

TEST(NicValue, TotalFollowsReadings)
{
    cnt_nic_value_t v;
    cnt_nic_value_init(&v, true, "sent_pkts");
    EXPECT_EQ(cnt_nic_value_total(&v), 0u);
    EXPECT_EQ(cnt_nic_value_update(&v, 100), 100u);
    EXPECT_EQ(cnt_nic_value_update(&v, 250), 250u);
    EXPECT_EQ(cnt_nic_value_update(&v, 250), 250u);
    EXPECT_EQ(cnt_nic_value_total(&v), 250u);
    EXPECT_EQ(v.epochs, 0u);
}

TEST(NicValue, GoingBackwardsStartsANewEpoch)
{
    cnt_nic_value_t v;
    cnt_nic_value_init(&v, true, "sent_pkts");
    EXPECT_EQ(cnt_nic_value_update(&v, 1000), 1000u);
    // Device reset: the counter restarts from 0 and counts 30.
    EXPECT_EQ(cnt_nic_value_update(&v, 30), 1030u);
    EXPECT_EQ(v.epochs, 1u);
    EXPECT_EQ(cnt_nic_value_update(&v, 50), 1050u);
    EXPECT_EQ(cnt_nic_value_update(&v, 0), 1050u);
    EXPECT_EQ(v.epochs, 2u);
    EXPECT_EQ(cnt_nic_value_update(&v, 5), 1055u);
}

TEST(NicValue, NarrowCounterSaturatesAtAllOnes)
{
    cnt_nic_value_t v;
    cnt_nic_value_init(&v, false, "symbol_error");
    EXPECT_EQ(cnt_nic_value_update(&v, 65534), 65534u);
    EXPECT_FALSE(v.saturated);
    EXPECT_EQ(cnt_nic_value_update(&v, 65535), kSat);
    EXPECT_TRUE(v.saturated);
    // Absorbing: even after someone clears the counter the total since start is unknown.
    EXPECT_EQ(cnt_nic_value_update(&v, 3), kSat);
    EXPECT_EQ(cnt_nic_value_total(&v), kSat);
}

TEST(NicValue, FourBitCounter)
{
    cnt_nic_value_t v;
    cnt_nic_value_init(&v, false, "excessive_buffer_overrun_errors");
    EXPECT_EQ(cnt_nic_value_update(&v, 14), 14u);
    EXPECT_EQ(cnt_nic_value_update(&v, 15), kSat);
}

TEST(NicValue, DataCounter32BitSaturates)
{
    cnt_nic_value_t v;
    cnt_nic_value_init(&v, false, "port_xmit_data");
    EXPECT_EQ(cnt_nic_value_update(&v, 4294967294u), 4294967294u);
    EXPECT_EQ(cnt_nic_value_update(&v, 4294967295u), kSat);
}

TEST(NicValue, DataCounterProvenSixtyFourBit)
{
    cnt_nic_value_t v;
    cnt_nic_value_init(&v, false, "port_xmit_data");
    EXPECT_EQ(cnt_nic_value_update(&v, 123456789012u), 123456789012u);
    EXPECT_EQ(v.width, 64);
    EXPECT_FALSE(v.may_widen);
    // Once proven 64-bit, passing 2^32-1 on the way after a reset is not a saturation.
    EXPECT_EQ(cnt_nic_value_update(&v, 4294967295u), 123456789012u + 4294967295u);
    EXPECT_FALSE(v.saturated);
}

TEST(NicValue, SumThatNoLongerFitsIsUnknown)
{
    cnt_nic_value_t v;
    cnt_nic_value_init(&v, true, "x");
    EXPECT_EQ(cnt_nic_value_update(&v, UINT64_MAX - 10), UINT64_MAX - 10);
    EXPECT_EQ(cnt_nic_value_update(&v, 100), kSat);
}

TEST(NicValue, WordsToBytes)
{
    EXPECT_TRUE(cnt_nic_counts_words(false, "port_xmit_data"));
    EXPECT_TRUE(cnt_nic_counts_words(false, "port_rcv_data"));
    EXPECT_FALSE(cnt_nic_counts_words(true, "port_xmit_data"));
    EXPECT_FALSE(cnt_nic_counts_words(false, "port_xmit_packets"));
    EXPECT_EQ(cnt_nic_words_to_bytes(1000), 4000u);
    EXPECT_EQ(cnt_nic_words_to_bytes(kSat), kSat);
    EXPECT_EQ(cnt_nic_words_to_bytes(UINT64_MAX / 4 + 1), kSat);
    EXPECT_EQ(cnt_nic_words_to_bytes(UINT64_MAX / 4), (UINT64_MAX / 4) * 4);
}

} // namespace
