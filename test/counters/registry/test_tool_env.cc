/*
 * Control variables take IBMSG_<NAME> from the environment when they register. The variables
 * are set before main, before the built-ins register (lazily, at the first init).
 */
#include "tool_fixture.h"

#include "util/log.h"

#include <cstdlib>
#include <string>

static int set_env()
{
    setenv("IBMSG_LOG_LEVEL", "Debug", 1);
    setenv("IBMSG_TEST_ENV_GOOD", "1234", 1);
    setenv("IBMSG_TEST_ENV_BAD", "12x", 1);
    setenv("IBMSG_TEST_ENV_CONST", "5", 1);
    return 0;
}
static int env_ready = set_env();

static int add(const char *name, int *v, int scope)
{
    cnt_cvar_desc_t d = {};
    d.name = name;
    d.datatype = IBMSG_T_INT;
    d.verbosity = IBMSG_T_VERBOSITY_USER_BASIC;
    d.scope = scope;
    d.ctx = v;
    int index = -1;
    EXPECT_EQ(cnt_cvar_register(&d, &index), IBMSG_OK);
    return index;
}

TEST(ToolEnv, EnvironmentSetsCvarsAtRegistration)
{
    ASSERT_EQ(env_ready, 0);
    int saved = util_log_level;
    int provided;
    ASSERT_EQ(ibmsg_t_init_thread(0, &provided), IBMSG_T_SUCCESS);
    EXPECT_EQ(util_log_level, UTIL_LOG_DEBUG);
    /* The bad value below is logged once as a warning: capture it. */
    util_log_level = UTIL_LOG_WARN;
    std::string warnings;
    util_log_sink_cb_t old_sink;
    void *old_arg;
    util_log_set_sink([](util_log_level_t, const char *, int, const char *msg,
                         void *arg) { *static_cast<std::string *>(arg) += msg; },
                      &warnings, &old_sink, &old_arg);

    int good = 1, bad = 2, cst = 3;
    add("test_env_good", &good, IBMSG_T_SCOPE_LOCAL);
    add("test_env_bad", &bad, IBMSG_T_SCOPE_LOCAL);
    add("test_env_const", &cst, IBMSG_T_SCOPE_CONSTANT);
    EXPECT_EQ(good, 1234);
    EXPECT_EQ(bad, 2); /* unparsable: ignored, the default stays */
    EXPECT_EQ(cst, 3); /* constants are never set */
    util_log_set_sink(old_sink, old_arg, nullptr, nullptr);
    EXPECT_NE(warnings.find("IBMSG_TEST_ENV_BAD"), std::string::npos) << warnings;
    EXPECT_EQ(warnings.find("IBMSG_TEST_ENV_GOOD"), std::string::npos) << warnings;
    util_log_level = saved;
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
}
