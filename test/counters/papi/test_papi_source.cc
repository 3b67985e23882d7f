#include "counters/papi/papi_source.h"

#include <ibmsg/status.h>

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ibmsg_config.h"
#include "counters/busy.h"
#include "guest.h"
#if IBMSG_HAVE_PAPI
#include <papi.h>
#endif

namespace
{

long self_tid()
{
    return long(syscall(SYS_gettid));
}

int find_event(const char *name)
{
    for (int i = 0; i < cnt_papi_num_events(); i++) {
        if (strcmp(cnt_papi_event(i)->event, name) == 0) {
            return i;
        }
    }
    return -1;
}

TEST(PapiSource, VariableNames)
{
    char buf[64];
    ASSERT_EQ(cnt_papi_pvar_name("perf::TASK-CLOCK", buf, sizeof(buf)), IBMSG_OK);
    EXPECT_STREQ(buf, "papi_perf_task_clock");
    ASSERT_EQ(cnt_papi_pvar_name("PAPI_TOT_INS", buf, sizeof(buf)), IBMSG_OK);
    EXPECT_STREQ(buf, "papi_tot_ins");
    ASSERT_EQ(cnt_papi_pvar_name("perf::CONTEXT-SWITCHES:u=0", buf, sizeof(buf)), IBMSG_OK);
    EXPECT_STREQ(buf, "papi_perf_context_switches_u_0");
    char small[8];
    EXPECT_EQ(cnt_papi_pvar_name("perf::TASK-CLOCK", small, sizeof(small)), IBMSG_ERR_TRUNCATED);
    EXPECT_STREQ(small, "papi_pe");
    EXPECT_EQ(cnt_papi_pvar_name(nullptr, buf, sizeof(buf)), IBMSG_ERR_INVALID);
}

TEST(PapiSource, BadListsChangeNothing)
{
    EXPECT_EQ(cnt_papi_setup(nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt_papi_setup("perf::TASK-CLOCK,,PAPI_TOT_INS"), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt_papi_setup(",perf::TASK-CLOCK"), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt_papi_setup("perf::TASK-CLOCK,"), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt_papi_setup(std::string(200, 'x').c_str()), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt_papi_num_events(), 0);
    EXPECT_EQ(cnt_papi_setup(""), IBMSG_OK);
    EXPECT_EQ(cnt_papi_num_events(), 0);
}

TEST(PapiSource, DefaultListIsRecordedAvailableOrWithAReason)
{
    ASSERT_EQ(cnt_papi_setup(CNT_PAPI_DEFAULT_EVENTS), IBMSG_OK);
    ASSERT_EQ(cnt_papi_num_events(), 5);
    // Known events are not added twice.
    ASSERT_EQ(cnt_papi_setup(" PAPI_TOT_CYC , perf::TASK-CLOCK "), IBMSG_OK);
    ASSERT_EQ(cnt_papi_num_events(), 5);
    EXPECT_STREQ(cnt_papi_event(0)->pvar_name, "papi_perf_task_clock");
    EXPECT_STREQ(cnt_papi_event(4)->pvar_name, "papi_tot_cyc");
    EXPECT_EQ(cnt_papi_event(5), nullptr);
    std::string unavailable;
    for (int i = 0; i < cnt_papi_num_events(); i++) {
        const cnt_papi_event_t *e = cnt_papi_event(i);
        EXPECT_EQ(e->available, e->reason[0] == '\0') << e->event;
        if (!e->available) {
            unavailable +=
                std::string(unavailable.empty() ? "" : "; ") + e->event + ": " + e->reason;
        }
        if (!cnt_papi_compiled()) {
            EXPECT_FALSE(e->available);
            EXPECT_NE(strstr(e->reason, "not compiled in"), nullptr);
        }
    }
    char buf[2048];
    EXPECT_EQ(cnt_papi_unavailable(buf, sizeof(buf)), unavailable.size());
    EXPECT_EQ(buf, unavailable);
    EXPECT_EQ(cnt_papi_unavailable(nullptr, 0), unavailable.size());
}

TEST(PapiSource, BogusEventIsUnavailable)
{
    ASSERT_EQ(cnt_papi_setup("nosuchpmu::NOSUCHEVENT"), IBMSG_OK);
    ASSERT_EQ(cnt_papi_num_events(), 1);
    EXPECT_FALSE(cnt_papi_event(0)->available);
    EXPECT_NE(cnt_papi_event(0)->reason[0], '\0');
    int idx = 0;
    uint64_t v;
    EXPECT_NE(cnt_papi_thread_read(&idx, self_tid(), true, 1, &idx, &v), IBMSG_OK);
}

TEST(PapiSource, TaskClockGrowsWithWork)
{
    if (!cnt_papi_compiled()) {
        GTEST_SKIP() << "PAPI support is not compiled in";
    }
    ASSERT_EQ(cnt_papi_setup("perf::TASK-CLOCK"), IBMSG_OK);
    int idx = find_event("perf::TASK-CLOCK");
    ASSERT_EQ(idx, 0);
    if (!cnt_papi_event(idx)->available) {
        IBMSG_TEST_MISSING(std::string("perf::TASK-CLOCK not available on this machine: ") +
                           cnt_papi_event(idx)->reason);
    }
    uint64_t t0 = 0, t1 = 0;
    static const int owner = 0; // this thread's identity for the source
    ASSERT_EQ(cnt_papi_thread_read(&owner, self_tid(), true, 1, &idx, &t0), IBMSG_OK);
    busy_ms(20);
    ASSERT_EQ(cnt_papi_thread_read(&owner, self_tid(), true, 1, &idx, &t1), IBMSG_OK);
    // TASK-CLOCK counts nanoseconds of this thread on a CPU: at least the 20 ms of work.
    EXPECT_GE(t1 - t0, 20000000u - BUSY_CLOCK_SLACK_NS);
    EXPECT_LT(t1 - t0, 2000000000u);
    // Counting has begun: the list is frozen.
    EXPECT_EQ(cnt_papi_setup("perf::PAGE-FAULTS"), IBMSG_ERR_BUSY);
}

} // namespace

// An application that initialised PAPI itself (without thread support) keeps its library: ours
// runs on it, adds thread support, and counts.
TEST(PapiSource, ReusesTheApplicationsPapi)
{
#if IBMSG_HAVE_PAPI
    ASSERT_EQ(PAPI_library_init(PAPI_VER_CURRENT), PAPI_VER_CURRENT);
    ASSERT_EQ(PAPI_is_initialized(), PAPI_LOW_LEVEL_INITED);
    ASSERT_EQ(cnt_papi_setup("perf::TASK-CLOCK"), IBMSG_OK);
    EXPECT_NE(PAPI_is_initialized() & PAPI_THREAD_LEVEL_INITED, 0) << "thread support added";
    int idx = find_event("perf::TASK-CLOCK");
    ASSERT_EQ(idx, 0);
    if (!cnt_papi_event(idx)->available) {
        IBMSG_TEST_MISSING(std::string("perf::TASK-CLOCK not available on this machine: ") +
                           cnt_papi_event(idx)->reason);
    }
    static const int owner = 0;
    uint64_t t0 = 0, t1 = 0;
    ASSERT_EQ(cnt_papi_thread_read(&owner, self_tid(), true, 1, &idx, &t0), IBMSG_OK);
    busy_ms(20);
    ASSERT_EQ(cnt_papi_thread_read(&owner, self_tid(), true, 1, &idx, &t1), IBMSG_OK);
    EXPECT_GE(t1 - t0, 20000000u - BUSY_CLOCK_SLACK_NS);
#else
    GTEST_SKIP() << "PAPI support is not compiled in";
#endif
}
