// The core's settings read IBMSG_<NAME> when they register (the first ibmsg_t_init_thread or
// context), not when the library loads: linked to the shared library, whose constructors run at
// load (the world's events register their category there), a program may setenv() first.
#include <gtest/gtest.h>

#include <cstdlib>

#include "ibmsg/tool.h"

TEST(CoreConfigLoad, TheEnvironmentSetAfterLoadIsReadAtInit)
{
    ASSERT_EQ(setenv("IBMSG_CORE_CREDITS", "24", 1), 0);
    int provided = -1, index = -1, count = 0, world = -1;
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_get_index("core_credits", &index), IBMSG_T_SUCCESS);
    ibmsg_t_cvar_handle_t h = IBMSG_T_CVAR_HANDLE_NULL;
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(index, nullptr, &h, &count), IBMSG_T_SUCCESS);
    long long credits = -1; // IBMSG_T_COUNT
    ASSERT_EQ(ibmsg_t_cvar_read(h, &credits), IBMSG_T_SUCCESS);
    EXPECT_EQ(credits, 24) << "registered before the setenv: at load";
    EXPECT_EQ(ibmsg_t_cvar_handle_free(&h), IBMSG_T_SUCCESS);
    // The world's category, registered at load, holds its settings.
    ASSERT_EQ(ibmsg_t_category_get_index("world", &world), IBMSG_T_SUCCESS);
    int ncvars = 0;
    ASSERT_EQ(ibmsg_t_category_get_info(world, nullptr, nullptr, nullptr, nullptr, &ncvars, nullptr,
                                        nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(ncvars, 2) << "world_wireup and world_connect_timeout_ms";
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
}
