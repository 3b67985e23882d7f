// PAPI variables through the public tool API.
#include <ibmsg/tool.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <time.h>
#include <vector>

#include "counters/papi_source.h"

namespace
{

void busy_ms(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; i++) {
            x = x + (unsigned long)i;
        }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    } while ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 < ms);
}

class PapiPvars : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        int provided;
        ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_pvar_session_create(&session_), IBMSG_T_SUCCESS);
    }
    void TearDown() override
    {
        EXPECT_EQ(ibmsg_t_pvar_session_free(&session_), IBMSG_T_SUCCESS);
        EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
    }
    std::string unavailable()
    {
        int index = -1, count = 0;
        ibmsg_t_pvar_handle_t h;
        EXPECT_EQ(
            ibmsg_t_pvar_get_index("papi_unavailable_events", IBMSG_T_PVAR_CLASS_GENERIC, &index),
            IBMSG_T_SUCCESS);
        EXPECT_EQ(ibmsg_t_pvar_handle_alloc(session_, index, nullptr, &h, &count), IBMSG_T_SUCCESS);
        EXPECT_GE(count, 1);
        std::vector<char> buf(count);
        EXPECT_EQ(ibmsg_t_pvar_read(session_, h, buf.data()), IBMSG_T_SUCCESS);
        EXPECT_EQ(ibmsg_t_pvar_handle_free(session_, &h), IBMSG_T_SUCCESS);
        return buf.data();
    }

    ibmsg_t_pvar_session_t session_ = IBMSG_T_PVAR_SESSION_NULL;
};

TEST_F(PapiPvars, EventListAndUnavailableEvents)
{
    int cvar = -1;
    ASSERT_EQ(ibmsg_t_cvar_get_index("papi_events", &cvar), IBMSG_T_SUCCESS);
    ibmsg_t_cvar_handle_t ch;
    int count = 0;
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(cvar, nullptr, &ch, &count), IBMSG_T_SUCCESS);
    std::vector<char> list(count);
    ASSERT_EQ(ibmsg_t_cvar_read(ch, list.data()), IBMSG_T_SUCCESS);
    EXPECT_STREQ(list.data(), CNT_PAPI_DEFAULT_EVENTS);
    ASSERT_EQ(ibmsg_t_cvar_handle_free(&ch), IBMSG_T_SUCCESS);

    // Every listed event has a variable or is listed with its reason; never both.
    std::string unavail = unavailable();
    const char *events[] = {"perf::TASK-CLOCK", "perf::PAGE-FAULTS", "perf::CONTEXT-SWITCHES",
                            "PAPI_TOT_INS", "PAPI_TOT_CYC"};
    const char *names[] = {"papi_perf_task_clock", "papi_perf_page_faults",
                           "papi_perf_context_switches", "papi_tot_ins", "papi_tot_cyc"};
    for (int i = 0; i < 5; i++) {
        int index;
        bool registered =
            ibmsg_t_pvar_get_index(names[i], IBMSG_T_PVAR_CLASS_COUNTER, &index) == IBMSG_T_SUCCESS;
        bool listed = unavail.find(std::string(events[i]) + ": ") != std::string::npos;
        EXPECT_NE(registered, listed) << events[i] << " in \"" << unavail << "\"";
    }
    if (!cnt_papi_compiled()) {
        EXPECT_NE(unavail.find("not compiled in"), std::string::npos) << unavail;
        char desc[512];
        int len = sizeof(desc);
        ASSERT_EQ(ibmsg_t_cvar_get_info(cvar, nullptr, nullptr, nullptr, nullptr, nullptr, desc,
                                        &len, nullptr, nullptr),
                  IBMSG_T_SUCCESS);
        EXPECT_NE(strstr(desc, "not compiled in"), nullptr) << desc;
    }
}

TEST_F(PapiPvars, TaskClockCountsOnlyWhileStarted)
{
    int index;
    if (ibmsg_t_pvar_get_index("papi_perf_task_clock", IBMSG_T_PVAR_CLASS_COUNTER, &index) !=
        IBMSG_T_SUCCESS) {
        GTEST_SKIP() << "perf::TASK-CLOCK cannot be counted on this machine: " << unavailable();
    }
    ibmsg_t_pvar_handle_t h;
    int count = 0;
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(session_, index, nullptr, &h, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(count, 1);
    ASSERT_EQ(ibmsg_t_pvar_start(session_, h), IBMSG_T_SUCCESS);
    busy_ms(20);
    ASSERT_EQ(ibmsg_t_pvar_stop(session_, h), IBMSG_T_SUCCESS);
    unsigned long long a = 0, b = 0;
    ASSERT_EQ(ibmsg_t_pvar_read(session_, h, &a), IBMSG_T_SUCCESS);
    EXPECT_GE(a, 20000000u); // ns of this thread on a CPU
    busy_ms(20);
    ASSERT_EQ(ibmsg_t_pvar_read(session_, h, &b), IBMSG_T_SUCCESS);
    EXPECT_EQ(a, b);
    // Counting has begun: the event list is frozen.
    int cvar;
    ASSERT_EQ(ibmsg_t_cvar_get_index("papi_events", &cvar), IBMSG_T_SUCCESS);
    ibmsg_t_cvar_handle_t ch;
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(cvar, nullptr, &ch, &count), IBMSG_T_SUCCESS);
    std::vector<char> list(count, '\0');
    strcpy(list.data(), "perf::TASK-CLOCK");
    EXPECT_EQ(ibmsg_t_cvar_write(ch, list.data()), IBMSG_T_ERR_CVAR_SET_NOT_NOW);
    ASSERT_EQ(ibmsg_t_cvar_handle_free(&ch), IBMSG_T_SUCCESS);
}

} // namespace
