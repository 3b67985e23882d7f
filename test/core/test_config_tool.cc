// The core's settings through the tool interface before any context: ibmsg_t_init_thread
// registers them (with IBMSG_<NAME> from the environment), a tool reads and writes them, and the
// next context takes what it wrote. Its own executable: the environment is set before main, before
// anything in the process registers them.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>
#include <vector>

#include "core/config.h"
#include "ibmsg/status.h"
#include "ibmsg/tool.h"

static int set_env()
{
    setenv("IBMSG_VERBS_TIMEOUT", "18", 1);
    setenv("IBMSG_CORE_WAIT_MODE", "sleep", 1); // an enumeration, given by name
    unsetenv("IBMSG_CORE_CREDITS");
    return 0;
}
static int env_ready = set_env();

namespace
{

long long read_cvar(int index)
{
    ibmsg_t_cvar_handle_t h = IBMSG_T_CVAR_HANDLE_NULL;
    int count = 0;
    long long v = -1;
    EXPECT_EQ(ibmsg_t_cvar_handle_alloc(index, nullptr, &h, &count), IBMSG_T_SUCCESS);
    EXPECT_EQ(count, 1);
    int iv = -1;
    ibmsg_t_datatype_t dt;
    EXPECT_EQ(ibmsg_t_cvar_get_info(index, nullptr, nullptr, nullptr, &dt, nullptr, nullptr,
                                    nullptr, nullptr, nullptr),
              IBMSG_T_SUCCESS);
    if (dt == IBMSG_T_INT) {
        EXPECT_EQ(ibmsg_t_cvar_read(h, &iv), IBMSG_T_SUCCESS);
        v = iv;
    } else {
        EXPECT_EQ(ibmsg_t_cvar_read(h, &v), IBMSG_T_SUCCESS);
    }
    EXPECT_EQ(ibmsg_t_cvar_handle_free(&h), IBMSG_T_SUCCESS);
    return v;
}

int write_count(int index, long long v)
{
    ibmsg_t_cvar_handle_t h = IBMSG_T_CVAR_HANDLE_NULL;
    int count = 0;
    EXPECT_EQ(ibmsg_t_cvar_handle_alloc(index, nullptr, &h, &count), IBMSG_T_SUCCESS);
    int rc = ibmsg_t_cvar_write(h, &v);
    EXPECT_EQ(ibmsg_t_cvar_handle_free(&h), IBMSG_T_SUCCESS);
    return rc;
}

std::vector<int> category_cvars(const char *name)
{
    int cat = -1, n = -1;
    EXPECT_EQ(ibmsg_t_category_get_index(name, &cat), IBMSG_T_SUCCESS) << name;
    EXPECT_EQ(
        ibmsg_t_category_get_info(cat, nullptr, nullptr, nullptr, nullptr, &n, nullptr, nullptr),
        IBMSG_T_SUCCESS);
    std::vector<int> v(size_t(n > 0 ? n : 0));
    if (n > 0) {
        EXPECT_EQ(ibmsg_t_category_get_cvars(cat, n, v.data()), IBMSG_T_SUCCESS);
    }
    return v;
}

bool contains(const std::vector<int> &v, int x)
{
    for (int y : v) {
        if (y == x) {
            return true;
        }
    }
    return false;
}

} // namespace

TEST(CoreConfigTool, SettingsAreListedReadAndWrittenBeforeAnyContext)
{
    ASSERT_EQ(env_ready, 0);
    int provided = -1, timeout = -1, credits = -1, wait_mode = -1;
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
    // No context exists, nothing of the core ran: the tool's init registered them.
    ASSERT_EQ(ibmsg_t_cvar_get_index("verbs_timeout", &timeout), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_get_index("core_credits", &credits), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_get_index("core_wait_mode", &wait_mode), IBMSG_T_SUCCESS);
    EXPECT_TRUE(contains(category_cvars("verbs"), timeout));
    EXPECT_TRUE(contains(category_cvars("core"), credits));
    EXPECT_TRUE(contains(category_cvars("core"), wait_mode));
    EXPECT_FALSE(contains(category_cvars("core"), timeout));
    // The world's settings in the world's category (where its pvars and events are), not verbs.
    for (const char *name : {"world_wireup", "world_connect_timeout_ms"}) {
        int index = -1;
        ASSERT_EQ(ibmsg_t_cvar_get_index(name, &index), IBMSG_T_SUCCESS) << name;
        EXPECT_TRUE(contains(category_cvars("world"), index)) << name;
        EXPECT_FALSE(contains(category_cvars("verbs"), index)) << name;
    }
    char desc[128];
    int world = -1, desc_len = (int)sizeof(desc);
    ASSERT_EQ(ibmsg_t_category_get_index("world", &world), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_get_info(world, nullptr, nullptr, desc, &desc_len, nullptr, nullptr,
                                        nullptr),
              IBMSG_T_SUCCESS);
    EXPECT_STREQ(desc, "Job bootstrap: PMIx / TCP wireup of the world");

    // The environment's values, read when they registered; the default where it has none.
    EXPECT_EQ(read_cvar(timeout), 18);
    EXPECT_EQ(read_cvar(wait_mode), 1) << "sleep";
    EXPECT_EQ(read_cvar(credits), 64) << "config.h's default";

    // A tool's write is what the next context takes; out of range is refused and changes nothing.
    EXPECT_EQ(write_count(credits, 16), IBMSG_T_SUCCESS);
    EXPECT_EQ(write_count(credits, 3), IBMSG_T_ERR_INVALID) << "below core_credits' minimum 4";
    EXPECT_EQ(read_cvar(credits), 16);
    setenv("IBMSG_VERBS_TIMEOUT", "20", 1); // after registration: not seen (ibmsg(7))
    core_config_t cfg{};
    ASSERT_EQ(core_config_acquire(IBMSG_INFO_NULL, &cfg), IBMSG_OK);
    EXPECT_EQ(cfg.credits, 16);
    EXPECT_EQ(cfg.timeout, 18);
    EXPECT_EQ(cfg.wait_mode, 1);
    // Frozen while a context holds them.
    EXPECT_EQ(write_count(credits, 32), IBMSG_T_ERR_CVAR_SET_NOT_NOW);
    EXPECT_EQ(read_cvar(credits), 16);
    core_config_release();
    EXPECT_EQ(write_count(credits, 32), IBMSG_T_SUCCESS);
    EXPECT_EQ(read_cvar(credits), 32);

    // Finalized and initialized again: the same indices, the values kept.
    ASSERT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
    int again = -1;
    ASSERT_EQ(ibmsg_t_cvar_get_index("core_credits", &again), IBMSG_T_SUCCESS);
    EXPECT_EQ(again, credits);
    EXPECT_EQ(read_cvar(credits), 32);
    EXPECT_EQ(read_cvar(timeout), 18);
    EXPECT_EQ(write_count(credits, 64), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
}
