#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

extern "C" {
#include <ibmsg/status.h>

#include "mpit/slots.h"
}

namespace
{
struct Entry {
    mpit_slot_t hdr;
    int payload;
};
} // namespace

class Slots : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        mpit_slots_init(&t, sizeof(Entry));
    }
    void TearDown() override
    {
        mpit_slots_cleanup(&t);
    }
    mpit_slots_t t;
};

TEST_F(Slots, AllocGivesZeroedLiveEntryFoundByValue)
{
    void *e;
    uint64_t v;
    ASSERT_EQ(IBMSG_OK, mpit_slots_alloc(&t, &e, &v));
    EXPECT_EQ(0, static_cast<Entry *>(e)->payload);
    EXPECT_EQ(e, mpit_slots_get(&t, v));
    EXPECT_EQ(v, mpit_slots_value(e));
    EXPECT_EQ(1u, t.live);
}

// The MPI libraries' special handle values are never ours.
TEST_F(Slots, ValuesNeverCollideWithNullOneMinusOneOrPointers)
{
    void *e;
    uint64_t v;
    for (int i = 0; i < 1000; i++) {
        ASSERT_EQ(IBMSG_OK, mpit_slots_alloc(&t, &e, &v));
        ASSERT_NE(0u, v);
        ASSERT_NE(1u, v);
        ASSERT_NE(UINT64_MAX, v);
        ASSERT_NE(0u, v >> 63) << "value could be a user-space address";
    }
    int local = 0;
    EXPECT_EQ(nullptr, mpit_slots_get(&t, 0));
    EXPECT_EQ(nullptr, mpit_slots_get(&t, 1));
    EXPECT_EQ(nullptr, mpit_slots_get(&t, UINT64_MAX));
    EXPECT_EQ(nullptr, mpit_slots_get(&t, reinterpret_cast<uintptr_t>(&local)));
}

TEST_F(Slots, FreedValueIsStaleEvenAfterReuse)
{
    void *e1, *e2;
    uint64_t v1, v2;
    ASSERT_EQ(IBMSG_OK, mpit_slots_alloc(&t, &e1, &v1));
    static_cast<Entry *>(e1)->payload = 42;
    mpit_slots_free(&t, e1);
    EXPECT_EQ(nullptr, mpit_slots_get(&t, v1));
    ASSERT_EQ(IBMSG_OK, mpit_slots_alloc(&t, &e2, &v2));
    EXPECT_EQ(e1, e2) << "the slot is reused";
    EXPECT_NE(v1, v2);
    EXPECT_EQ(nullptr, mpit_slots_get(&t, v1));
    EXPECT_EQ(e2, mpit_slots_get(&t, v2));
    EXPECT_EQ(0, static_cast<Entry *>(e2)->payload) << "reused entries are zeroed";
    mpit_slots_free(&t, e2);
    mpit_slots_free(&t, e2); // double free is ignored
    EXPECT_EQ(0u, t.live);
}

TEST_F(Slots, GrowsAcrossChunksAndEveryValueStaysValid)
{
    std::vector<std::pair<void *, uint64_t>> all;
    for (unsigned i = 0; i < 3 * MPIT_SLOTS_CHUNK + 5; i++) {
        void *e;
        uint64_t v;
        ASSERT_EQ(IBMSG_OK, mpit_slots_alloc(&t, &e, &v));
        static_cast<Entry *>(e)->payload = static_cast<int>(i);
        all.emplace_back(e, v);
    }
    for (size_t i = 0; i < all.size(); i++) {
        ASSERT_EQ(all[i].first, mpit_slots_get(&t, all[i].second));
        ASSERT_EQ(static_cast<int>(i), static_cast<Entry *>(all[i].first)->payload);
    }
    // A slot number beyond what exists, with a plausible generation, is not found.
    uint64_t beyond = (all[0].second & ~0xffffffffull) | (MPIT_SLOTS_CHUNK * 10u + 2u);
    EXPECT_EQ(nullptr, mpit_slots_get(&t, beyond));
}
