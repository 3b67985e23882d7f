/* Events (none) and timestamp sources (one, monotonic). */
#include "tool_fixture.h"

#include <cstring>

using ToolEvent = ToolTest;

TEST_F(ToolEvent, ThereAreNoEvents)
{
    int n = -1, len = 8, i;
    ibmsg_t_event_registration_t reg = IBMSG_T_EVENT_REGISTRATION_NULL;
    ASSERT_EQ(ibmsg_t_event_get_num(&n), IBMSG_T_SUCCESS);
    EXPECT_EQ(n, 0);
    EXPECT_EQ(ibmsg_t_event_get_num(nullptr), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_event_get_info(0, nullptr, &len, nullptr, nullptr, nullptr, nullptr, nullptr,
                                     nullptr, nullptr, nullptr, nullptr),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_event_get_index("anything", &i), IBMSG_T_ERR_INVALID_NAME);
    EXPECT_EQ(ibmsg_t_event_get_index(nullptr, &i), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_event_handle_alloc(0, nullptr, IBMSG_INFO_NULL, &reg),
              IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_event_handle_free(reg, nullptr, nullptr), IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_event_register_callback(reg, IBMSG_T_CB_REQUIRE_NONE, IBMSG_INFO_NULL,
                                              nullptr, nullptr),
              IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_event_set_dropped_handler(reg, nullptr), IBMSG_T_ERR_INVALID_HANDLE);
}

TEST_F(ToolEvent, OneMonotonicSource)
{
    int n = -1;
    ASSERT_EQ(ibmsg_t_source_get_num(&n), IBMSG_T_SUCCESS);
    EXPECT_EQ(n, 1);
    EXPECT_EQ(ibmsg_t_source_get_num(nullptr), IBMSG_T_ERR_INVALID);

    char name[64], desc[64];
    int nl = sizeof(name), dl = sizeof(desc);
    ibmsg_t_source_order_t order;
    long long tps = 0, max = 0;
    ibmsg_info_t info = IBMSG_INFO_NULL;
    ASSERT_EQ(ibmsg_t_source_get_info(0, name, &nl, desc, &dl, &order, &tps, &max, &info),
              IBMSG_T_SUCCESS);
    EXPECT_STREQ(name, "ibmsg_monotonic");
    EXPECT_EQ(nl, 16);
    EXPECT_GT(dl, 1);
    EXPECT_EQ(order, IBMSG_T_SOURCE_ORDERED);
    EXPECT_EQ(tps, 1000000000LL);
    EXPECT_GT(max, 0);
    int nkeys = -1;
    ASSERT_EQ(ibmsg_info_get_nkeys(info, &nkeys), IBMSG_OK);
    EXPECT_EQ(nkeys, 0);
    EXPECT_EQ(ibmsg_info_free(&info), IBMSG_OK);
    nl = 0;
    ASSERT_EQ(ibmsg_t_source_get_info(0, nullptr, &nl, nullptr, nullptr, nullptr, nullptr, nullptr,
                                      nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(nl, 16);
    EXPECT_EQ(ibmsg_t_source_get_info(1, nullptr, &nl, nullptr, nullptr, nullptr, nullptr, nullptr,
                                      nullptr),
              IBMSG_T_ERR_INVALID_INDEX);

    long long t1 = 0, t2 = 0;
    ASSERT_EQ(ibmsg_t_source_get_timestamp(0, &t1), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_source_get_timestamp(0, &t2), IBMSG_T_SUCCESS);
    EXPECT_GT(t1, 0);
    EXPECT_GE(t2, t1);
    EXPECT_EQ(ibmsg_t_source_get_timestamp(-1, &t1), IBMSG_T_ERR_INVALID_INDEX);
    EXPECT_EQ(ibmsg_t_source_get_timestamp(0, nullptr), IBMSG_T_ERR_INVALID);
}
