/* The registry's own variables: log_level and the session/handle pvars, in a live tree. */
#include "tool_fixture.h"

#include "util/log.h"

#include <cstring>
#include <string>
#include <vector>

using ToolVars = ToolTest;

TEST_F(ToolVars, LogLevelCvarWritesTheLoggerLevel)
{
    int index = -1, count;
    ASSERT_EQ(ibmsg_t_cvar_get_index("log_level", &index), IBMSG_T_SUCCESS);
    ibmsg_t_enum_t e;
    int scope, bind;
    ibmsg_t_datatype_t dt;
    ASSERT_EQ(ibmsg_t_cvar_get_info(index, nullptr, nullptr, nullptr, &dt, &e, nullptr, nullptr,
                                    &bind, &scope),
              IBMSG_T_SUCCESS);
    EXPECT_EQ(dt, IBMSG_T_INT);
    EXPECT_EQ(scope, IBMSG_T_SCOPE_LOCAL);
    EXPECT_EQ(bind, IBMSG_T_BIND_NO_OBJECT);
    char name[32];
    int len = sizeof(name), num;
    ASSERT_EQ(ibmsg_t_enum_get_info(e, &num, name, &len), IBMSG_T_SUCCESS);
    EXPECT_STREQ(name, "log_levels");
    EXPECT_EQ(num, (int)UTIL_LOG_LAST);
    for (int i = 0; i < num; i++) {
        int value;
        len = sizeof(name);
        ASSERT_EQ(ibmsg_t_enum_get_item(e, i, &value, name, &len), IBMSG_T_SUCCESS);
        EXPECT_EQ(value, i);
        EXPECT_STREQ(name, util_log_level_name((util_log_level_t)i));
    }

    int saved = util_log_level;
    ibmsg_t_cvar_handle_t h;
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(index, nullptr, &h, &count), IBMSG_T_SUCCESS);
    int v = UTIL_LOG_DEBUG, r = -1;
    ASSERT_EQ(ibmsg_t_cvar_write(h, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(util_log_level, UTIL_LOG_DEBUG);
    ASSERT_EQ(ibmsg_t_cvar_read(h, &r), IBMSG_T_SUCCESS);
    EXPECT_EQ(r, UTIL_LOG_DEBUG);
    v = UTIL_LOG_LAST;
    EXPECT_EQ(ibmsg_t_cvar_write(h, &v), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(cnt_cvar_set_string(index, "error"), IBMSG_OK);
    EXPECT_EQ(util_log_level, UTIL_LOG_ERROR);
    v = saved;
    ASSERT_EQ(ibmsg_t_cvar_write(h, &v), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_handle_free(&h), IBMSG_T_SUCCESS);
}

static unsigned long long read_pvar(ibmsg_t_pvar_session_t s, const char *name, int var_class)
{
    int index = -1, count;
    ibmsg_t_pvar_handle_t h;
    unsigned long long v = 0;
    EXPECT_EQ(ibmsg_t_pvar_get_index(name, var_class, &index), IBMSG_T_SUCCESS) << name;
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, index, nullptr, &h, &count), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_read(s, h, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(ibmsg_t_pvar_handle_free(s, &h), IBMSG_T_SUCCESS);
    return v;
}

TEST_F(ToolVars, SessionAndHandlePvarsCountExactly)
{
    ibmsg_t_pvar_session_t s, extra[3];
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_T_SUCCESS);
    unsigned long long base_sessions =
        read_pvar(s, "tool_sessions_alive", IBMSG_T_PVAR_CLASS_LEVEL);
    for (auto &e : extra) {
        ASSERT_EQ(ibmsg_t_pvar_session_create(&e), IBMSG_T_SUCCESS);
    }
    EXPECT_EQ(read_pvar(s, "tool_sessions_alive", IBMSG_T_PVAR_CLASS_LEVEL), base_sessions + 3);
    for (auto &e : extra) {
        ASSERT_EQ(ibmsg_t_pvar_session_free(&e), IBMSG_T_SUCCESS);
    }
    EXPECT_EQ(read_pvar(s, "tool_sessions_alive", IBMSG_T_PVAR_CLASS_LEVEL), base_sessions);
    EXPECT_GE(read_pvar(s, "tool_sessions_alive_hwm", IBMSG_T_PVAR_CLASS_HIGHWATERMARK),
              base_sessions + 3);
    /* read_pvar's own handle is alive while it reads. */
    EXPECT_GE(read_pvar(s, "tool_handles_alive_hwm", IBMSG_T_PVAR_CLASS_HIGHWATERMARK), 1u);
    EXPECT_EQ(read_pvar(s, "tool_handles_alive", IBMSG_T_PVAR_CLASS_LEVEL), 1u);

    /* The allocation counter counts every handle, including its own. */
    int index, count;
    ASSERT_EQ(ibmsg_t_pvar_get_index("tool_handle_allocs", IBMSG_T_PVAR_CLASS_COUNTER, &index),
              IBMSG_T_SUCCESS);
    ibmsg_t_pvar_handle_t h, tmp;
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, index, nullptr, &h, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);
    for (int i = 0; i < 5; i++) {
        ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, index, nullptr, &tmp, &count), IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_pvar_handle_free(s, &tmp), IBMSG_T_SUCCESS);
    }
    unsigned long long v = 0;
    ASSERT_EQ(ibmsg_t_pvar_readreset(s, h, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, 5u);
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS);
}

TEST_F(ToolVars, TheTreeIsLive)
{
    int ibmsg, tool, util, nsub = -1, np = -1, nc = -1;
    ASSERT_EQ(ibmsg_t_category_get_index("ibmsg", &ibmsg), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_get_index("tool", &tool), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_get_index("util", &util), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_category_get_info(ibmsg, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr,
                                        &nsub),
              IBMSG_T_SUCCESS);
    EXPECT_GE(nsub, 2);
    int subs[8];
    ASSERT_EQ(ibmsg_t_category_get_categories(ibmsg, 2, subs), IBMSG_T_SUCCESS);
    EXPECT_EQ(subs[0], tool);
    EXPECT_EQ(subs[1], util);
    ASSERT_EQ(
        ibmsg_t_category_get_info(tool, nullptr, nullptr, nullptr, nullptr, &nc, &np, nullptr),
        IBMSG_T_SUCCESS);
    EXPECT_EQ(nc, 0);
    /*
     * The tool's counters are counter shards (counters/shards/counter_table.h): each has a
     * NO_OBJECT and a per-thread view, levels have high and low watermarks, and ibmsg_t_pvar_read
     * is timed. The registry counts event instances delivered and dropped itself.
     */
    EXPECT_EQ(np, 18);
    std::vector<int> pv(np);
    ASSERT_EQ(ibmsg_t_category_get_pvars(tool, np, pv.data()), IBMSG_T_SUCCESS);
    struct {
        const char *name;
        int ro, cont;
    } want[] = {{"tool_handle_allocs", 0, 0},         {"tool_handle_allocs_thread", 0, 0},
                {"tool_handles_alive", 1, 1},         {"tool_handles_alive_hwm", 1, 0},
                {"tool_handles_alive_lwm", 1, 0},     {"tool_handles_alive_thread", 1, 1},
                {"tool_sessions_alive", 1, 1},        {"tool_sessions_alive_hwm", 1, 0},
                {"tool_sessions_alive_thread", 1, 1}, {"tool_pvar_read_time", 0, 0},
                {"tool_events_delivered", 1, 0},      {"tool_events_dropped", 1, 0}};
    for (const auto &w : want) {
        bool found = false;
        for (int i : pv) {
            char name[64];
            int len = sizeof(name), cont, ro;
            ASSERT_EQ(ibmsg_t_pvar_get_info(i, name, &len, nullptr, nullptr, nullptr, nullptr,
                                            nullptr, nullptr, nullptr, &ro, &cont, nullptr),
                      IBMSG_T_SUCCESS);
            if (strcmp(name, w.name) == 0) {
                found = true;
                EXPECT_EQ(ro, w.ro) << w.name;
                EXPECT_EQ(cont, w.cont) << w.name;
            }
        }
        EXPECT_TRUE(found) << w.name;
    }
    ASSERT_EQ(
        ibmsg_t_category_get_info(util, nullptr, nullptr, nullptr, nullptr, &nc, nullptr, nullptr),
        IBMSG_T_SUCCESS);
    EXPECT_EQ(nc, 1);
}
