#include <gtest/gtest.h>

extern "C" {
#include <ibmsg/status.h>

#include "mpit/index_map.h"
}

class IndexMap : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        mpit_index_map_init(&map);
    }
    void TearDown() override
    {
        mpit_index_map_cleanup(&map);
    }
    void ExpectAt(int view, mpit_side_t side, int native)
    {
        mpit_side_t s;
        int n;
        ASSERT_EQ(IBMSG_OK, mpit_index_map_lookup(&map, view, &s, &n)) << "view " << view;
        EXPECT_EQ(side, s) << "view " << view;
        EXPECT_EQ(native, n) << "view " << view;
        EXPECT_EQ(view, mpit_index_map_to_view(&map, side, native));
    }
    mpit_index_map_t map;
};

TEST_F(IndexMap, EmptyHasNoIndices)
{
    mpit_side_t s;
    int n;
    EXPECT_EQ(0, map.num);
    EXPECT_EQ(IBMSG_T_ERR_INVALID_INDEX, mpit_index_map_lookup(&map, 0, &s, &n));
    EXPECT_EQ(IBMSG_T_ERR_INVALID_INDEX, mpit_index_map_lookup(&map, -1, &s, &n));
    EXPECT_EQ(-1, mpit_index_map_to_view(&map, MPIT_SIDE_MPI, 0));
}

TEST_F(IndexMap, FirstAppearanceOrderMpiFirst)
{
    ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_MPI, 3));
    ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_IBMSG, 2));
    ASSERT_EQ(5, map.num);
    ExpectAt(0, MPIT_SIDE_MPI, 0);
    ExpectAt(2, MPIT_SIDE_MPI, 2);
    ExpectAt(3, MPIT_SIDE_IBMSG, 0);
    ExpectAt(4, MPIT_SIDE_IBMSG, 1);
}

// MPICH adds pvars at MPI_Init: the new ones go to the end, nothing earlier moves.
TEST_F(IndexMap, GrowthAppendsAndNeverRenumbers)
{
    ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_MPI, 2));
    ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_IBMSG, 2));
    ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_MPI, 4));
    ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_IBMSG, 3));
    ASSERT_EQ(7, map.num);
    ExpectAt(0, MPIT_SIDE_MPI, 0);
    ExpectAt(1, MPIT_SIDE_MPI, 1);
    ExpectAt(2, MPIT_SIDE_IBMSG, 0);
    ExpectAt(3, MPIT_SIDE_IBMSG, 1);
    ExpectAt(4, MPIT_SIDE_MPI, 2);
    ExpectAt(5, MPIT_SIDE_MPI, 3);
    ExpectAt(6, MPIT_SIDE_IBMSG, 2);
}

TEST_F(IndexMap, ShrinkingOrRepeatedCountsChangeNothing)
{
    ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_IBMSG, 3));
    ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_IBMSG, 3));
    ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_IBMSG, 1)); // a finalized side
    ASSERT_EQ(3, map.num);
    ExpectAt(2, MPIT_SIDE_IBMSG, 2);
    EXPECT_EQ(-1, mpit_index_map_to_view(&map, MPIT_SIDE_MPI, 0));
}

TEST_F(IndexMap, BadArgumentsAreErrors)
{
    EXPECT_EQ(IBMSG_ERR_INVALID, mpit_index_map_sync(&map, MPIT_SIDE_MPI, -1));
    EXPECT_EQ(IBMSG_ERR_INVALID, mpit_index_map_sync(&map, (mpit_side_t)7, 1));
    EXPECT_EQ(-1, mpit_index_map_to_view(&map, (mpit_side_t)7, 0));
    EXPECT_EQ(-1, mpit_index_map_to_view(&map, MPIT_SIDE_MPI, -3));
}

TEST_F(IndexMap, ManyItemsStayConsistent)
{
    for (int round = 1; round <= 50; round++) {
        ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_MPI, round * 7));
        ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_IBMSG, round * 3));
    }
    ASSERT_EQ(500, map.num);
    for (int v = 0; v < map.num; v++) {
        mpit_side_t s;
        int n;
        ASSERT_EQ(IBMSG_OK, mpit_index_map_lookup(&map, v, &s, &n));
        ASSERT_EQ(v, mpit_index_map_to_view(&map, s, n));
    }
}

/* Native item n of the IBMSG side: n % 3 == 0 hidden, == 1 itself, == 2 on objects 0, 2 and 5. */
static int ExpandEveryThird(void *arg, int native, int objs[], int cap)
{
    (void)arg;
    switch (native % 3) {
    case 0:
        return 0;
    case 1:
        objs[0] = MPIT_OBJ_SELF;
        return 1;
    default:
        if (cap < 3) {
            return IBMSG_ERR_INVALID;
        }
        objs[0] = 0;
        objs[1] = 2;
        objs[2] = 5;
        return 3;
    }
}

TEST_F(IndexMap, ExpandedItemsGetConsecutiveIndicesHiddenOnesNone)
{
    ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_MPI, 2));
    ASSERT_EQ(IBMSG_OK,
              mpit_index_map_sync_expand(&map, MPIT_SIDE_IBMSG, 3, ExpandEveryThird, nullptr, 4));
    // MPI 0, 1; ibmsg 0 hidden; ibmsg 1 itself; ibmsg 2 on objects 0, 2, 5.
    ASSERT_EQ(6, map.num);
    ExpectAt(0, MPIT_SIDE_MPI, 0);
    ExpectAt(1, MPIT_SIDE_MPI, 1);
    ExpectAt(2, MPIT_SIDE_IBMSG, 1);
    int first = -1, num = -1;
    ASSERT_EQ(IBMSG_OK, mpit_index_map_range(&map, MPIT_SIDE_IBMSG, 0, &first, &num));
    EXPECT_EQ(0, num);
    EXPECT_EQ(-1, mpit_index_map_to_view(&map, MPIT_SIDE_IBMSG, 0));
    ASSERT_EQ(IBMSG_OK, mpit_index_map_range(&map, MPIT_SIDE_IBMSG, 2, &first, &num));
    EXPECT_EQ(3, first);
    EXPECT_EQ(3, num);
    EXPECT_EQ(-1, mpit_index_map_to_view(&map, MPIT_SIDE_IBMSG, 2)); // shown per object only
    const int objs[] = {0, 2, 5};
    for (int i = 0; i < 3; i++) {
        mpit_side_t s;
        int n;
        ASSERT_EQ(IBMSG_OK, mpit_index_map_lookup(&map, first + i, &s, &n));
        EXPECT_EQ(MPIT_SIDE_IBMSG, s);
        EXPECT_EQ(2, n);
        EXPECT_EQ(objs[i], mpit_index_map_obj(&map, first + i));
    }
    EXPECT_EQ(MPIT_OBJ_SELF, mpit_index_map_obj(&map, 2));
    EXPECT_EQ(-1, mpit_index_map_obj(&map, 6));
    // Not synced yet.
    EXPECT_EQ(IBMSG_T_ERR_INVALID_INDEX,
              mpit_index_map_range(&map, MPIT_SIDE_IBMSG, 3, &first, &num));

    // Both sides grow: earlier indices keep their items, new ones come after.
    ASSERT_EQ(IBMSG_OK, mpit_index_map_sync(&map, MPIT_SIDE_MPI, 3));
    ASSERT_EQ(IBMSG_OK,
              mpit_index_map_sync_expand(&map, MPIT_SIDE_IBMSG, 5, ExpandEveryThird, nullptr, 4));
    ASSERT_EQ(8, map.num);
    ExpectAt(6, MPIT_SIDE_MPI, 2);
    ExpectAt(7, MPIT_SIDE_IBMSG, 4);
    ExpectAt(2, MPIT_SIDE_IBMSG, 1);
}

TEST_F(IndexMap, ExpandErrorKeepsWhatWasSynced)
{
    // cap 1 is too small for native 2: natives 0 and 1 are synced, 2 is not.
    EXPECT_EQ(IBMSG_ERR_INVALID,
              mpit_index_map_sync_expand(&map, MPIT_SIDE_IBMSG, 3, ExpandEveryThird, nullptr, 1));
    EXPECT_EQ(1, map.num);
    ExpectAt(0, MPIT_SIDE_IBMSG, 1);
    int first, num;
    EXPECT_EQ(IBMSG_T_ERR_INVALID_INDEX,
              mpit_index_map_range(&map, MPIT_SIDE_IBMSG, 2, &first, &num));
    EXPECT_EQ(IBMSG_ERR_INVALID,
              mpit_index_map_sync_expand(&map, MPIT_SIDE_IBMSG, 3, nullptr, nullptr, 1));
}
