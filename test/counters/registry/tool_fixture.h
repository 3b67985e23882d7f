/* Shared helpers of the tool interface tests: an initialized fixture and test-only sources. */
#ifndef IBMSG_TEST_COUNTERS_TOOL_FIXTURE_H
#define IBMSG_TEST_COUNTERS_TOOL_FIXTURE_H

#include <ibmsg/tool.h>

#include "counters/registry/registry.h"

#include <gtest/gtest.h>

#include <string>

/* Counts tests started in this process, so a repeated test (--gtest_repeat) gets fresh names. */
class ToolRunCounter : public ::testing::EmptyTestEventListener
{
  public:
    static int &runs()
    {
        static int n = 0;
        return n;
    }
    void OnTestStart(const ::testing::TestInfo &) override
    {
        runs()++;
    }
};
inline const int tool_run_counter_installed =
    (::testing::UnitTest::GetInstance()->listeners().Append(new ToolRunCounter), 0);

/*
 * The registry is process-global and its indices are forever: names carry the test's name and
 * its run number in this process.
 */
inline std::string tool_unique(const char *what)
{
    const ::testing::TestInfo *t = ::testing::UnitTest::GetInstance()->current_test_info();
    return std::string("test_") + t->test_suite_name() + "_" + t->name() + "_" +
           std::to_string(ToolRunCounter::runs()) + "_" + what;
}

class ToolTest : public ::testing::Test
{
  public:
    void SetUp() override
    {
        int provided = -1;
        ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
        ASSERT_EQ(provided, IBMSG_T_THREAD_MULTIPLE);
    }
    void TearDown() override
    {
        EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    }

    /* A pvar over a test-owned source, read through the default context-pointer read. */
    int add_pvar(const char *what, int var_class, ibmsg_t_datatype_t dt, void *ctx,
                 unsigned flags = 0, const char *category = nullptr)
    {
        std::string name = tool_unique(what);
        cnt_pvar_desc_t d = {};
        d.name = name.c_str();
        d.var_class = var_class;
        d.datatype = dt;
        d.verbosity = IBMSG_T_VERBOSITY_USER_BASIC;
        d.bind = IBMSG_T_BIND_NO_OBJECT;
        d.flags = flags;
        d.category = category;
        d.desc = "a test variable";
        d.ctx = ctx;
        int index = -1;
        EXPECT_EQ(cnt_pvar_register(&d, &index), IBMSG_OK) << name;
        return index;
    }
    /* A cvar over a test-owned variable, read and written through the context pointer. */
    int add_cvar(const char *what, ibmsg_t_datatype_t dt, void *ctx,
                 int scope = IBMSG_T_SCOPE_LOCAL, int count = 1,
                 ibmsg_t_enum_t et = IBMSG_T_ENUM_NULL, cnt_cvar_write_cb_t write = nullptr,
                 const char *category = nullptr)
    {
        std::string n = tool_unique(what);
        cnt_cvar_desc_t d = {};
        d.name = n.c_str();
        d.datatype = dt;
        d.enumtype = et;
        d.verbosity = IBMSG_T_VERBOSITY_USER_DETAIL;
        d.scope = scope;
        d.count = count;
        d.desc = "a test setting";
        d.write = write;
        d.category = category;
        d.ctx = ctx;
        int index = -1;
        EXPECT_EQ(cnt_cvar_register(&d, &index), IBMSG_OK) << n;
        return index;
    }
};

#endif
