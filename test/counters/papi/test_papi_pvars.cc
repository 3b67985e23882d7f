// PAPI variables through the public tool API.
#include <ibmsg/tool.h>

#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <time.h>
#include <vector>

#include "counters/papi/papi_source.h"
#include "util/log.h"
#include "counters/busy.h"
#include "guest.h"

namespace
{

// Touch npages fresh anonymous pages (no huge pages, so each first touch is one page fault).
void touch_pages(size_t npages)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE), len = npages * page;
    void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    madvise(p, len, MADV_NOHUGEPAGE);
    for (size_t i = 0; i < npages; i++) {
        static_cast<volatile char *>(p)[i * page] = 1;
    }
    munmap(p, len);
}

// Everything the library logs at info and above in this process (the PAPI events are probed
// once per process, at the first tool init: SetUp installs the sink before it).
std::mutex log_mutex;
std::string log_text;
void log_sink(util_log_level_t level, const char *, int, const char *message, void *)
{
    std::lock_guard<std::mutex> g(log_mutex);
    log_text += std::string(util_log_level_name(level)) + ": " + message + "\n";
}

class PapiPvars : public ::testing::Test
{
  protected:
    void SetUp() override
    {
        int provided;
        if (util_log_level < UTIL_LOG_INFO) {
            util_log_level = UTIL_LOG_INFO;
        }
        util_log_set_sink(log_sink, nullptr, nullptr, nullptr);
        ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_pvar_session_create(&session_), IBMSG_T_SUCCESS);
    }
    void TearDown() override
    {
        EXPECT_EQ(ibmsg_t_pvar_session_free(&session_), IBMSG_T_SUCCESS);
        EXPECT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
        util_log_set_sink(nullptr, nullptr, nullptr, nullptr);
    }
    // A handle on a COUNTER variable (bound to thread when given), or -1 (no such variable here).
    int counter(const char *name, ibmsg_t_pvar_handle_t *h, ibmsg_t_thread_t *thread = nullptr)
    {
        int index, count = 0;
        if (ibmsg_t_pvar_get_index(name, IBMSG_T_PVAR_CLASS_COUNTER, &index) != IBMSG_T_SUCCESS) {
            return -1;
        }
        EXPECT_EQ(ibmsg_t_pvar_handle_alloc(session_, index, thread, h, &count), IBMSG_T_SUCCESS)
            << name;
        EXPECT_EQ(count, 1);
        return index;
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
    ibmsg_t_thread_t self;
    ibmsg_t_pvar_handle_t h;
    ASSERT_EQ(ibmsg_t_thread_self(&self), IBMSG_T_SUCCESS);
    if (counter("papi_thread_perf_task_clock", &h, &self) < 0) {
        IBMSG_TEST_MISSING(std::string("perf::TASK-CLOCK cannot be counted on this machine: ") +
                           unavailable());
    }
    ASSERT_EQ(ibmsg_t_pvar_start(session_, h), IBMSG_T_SUCCESS);
    busy_ms(20);
    ASSERT_EQ(ibmsg_t_pvar_stop(session_, h), IBMSG_T_SUCCESS);
    unsigned long long a = 0, b = 0;
    ASSERT_EQ(ibmsg_t_pvar_read(session_, h, &a), IBMSG_T_SUCCESS);
    EXPECT_GE(a, 20000000u - BUSY_CLOCK_SLACK_NS); // ns of this thread on a CPU
    busy_ms(20);
    ASSERT_EQ(ibmsg_t_pvar_read(session_, h, &b), IBMSG_T_SUCCESS);
    EXPECT_EQ(a, b);
    // Counting has begun: the event list is frozen.
    int cvar, count = 0;
    ASSERT_EQ(ibmsg_t_cvar_get_index("papi_events", &cvar), IBMSG_T_SUCCESS);
    ibmsg_t_cvar_handle_t ch;
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(cvar, nullptr, &ch, &count), IBMSG_T_SUCCESS);
    std::vector<char> list(count, '\0');
    strcpy(list.data(), "perf::TASK-CLOCK");
    EXPECT_EQ(ibmsg_t_cvar_write(ch, list.data()), IBMSG_T_ERR_CVAR_SET_NOT_NOW);
    ASSERT_EQ(ibmsg_t_cvar_handle_free(&ch), IBMSG_T_SUCCESS);
}

// The scheme of papi_source.h: event sets attached to threads, so the main thread binds, starts,
// reads and stops handles on two workers. Worker A works (CPU time, page faults) while B only
// waits; the main thread works too. Each bound handle shows its own thread's work only, from
// whichever thread reads it; the sum over threads holds both workers, keeps their final values
// after they exit, and holds nothing of a thread ibmsg does not know.
TEST_F(PapiPvars, ThreadBoundCountsReadFromAnotherThreadAndSumOverThreads)
{
    int probe;
    if (ibmsg_t_pvar_get_index("papi_thread_perf_task_clock", IBMSG_T_PVAR_CLASS_COUNTER, &probe) !=
            IBMSG_T_SUCCESS ||
        ibmsg_t_pvar_get_index("papi_thread_perf_page_faults", IBMSG_T_PVAR_CLASS_COUNTER,
                               &probe) != IBMSG_T_SUCCESS) {
        IBMSG_TEST_MISSING(std::string("perf software events cannot be counted here (") +
                           unavailable() + "); run test/vm/run -- ctest --test-dir build -R Papi");
    }
    std::mutex m;
    std::condition_variable cv;
    int phase = 0; // 1: both registered; 2: handles started, A works; 3: A done
    int registered = 0;
    ibmsg_t_thread_t ta{}, tb{};
    long long own_ns = 0; // A's CPU time over its work, from the kernel's thread clock
    auto wait_for = [&](int p) {
        std::unique_lock<std::mutex> l(m);
        cv.wait(l, [&] { return phase >= p; });
    };
    std::thread a([&] {
        {
            std::lock_guard<std::mutex> l(m);
            ASSERT_EQ(ibmsg_t_thread_self(&ta), IBMSG_T_SUCCESS); // an ibmsg thread
            registered++;
            cv.notify_all();
        }
        wait_for(2);
        struct timespec c0, c1;
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        busy_ms(50);
        touch_pages(1000);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        own_ns = (c1.tv_sec - c0.tv_sec) * 1000000000ll + (c1.tv_nsec - c0.tv_nsec);
        std::lock_guard<std::mutex> l(m);
        phase = 3;
        cv.notify_all();
    });
    std::thread b([&] {
        {
            std::lock_guard<std::mutex> l(m);
            ASSERT_EQ(ibmsg_t_thread_self(&tb), IBMSG_T_SUCCESS);
            registered++;
            cv.notify_all();
        }
        wait_for(3);
    });
    {
        std::unique_lock<std::mutex> l(m);
        cv.wait(l, [&] { return registered == 2; });
    }
    // Bound to A and B, started here, in the main thread.
    ibmsg_t_pvar_handle_t clk_a, pf_a, clk_b, pf_b, clk_sum, pf_sum;
    ASSERT_GE(counter("papi_thread_perf_task_clock", &clk_a, &ta), 0);
    ASSERT_GE(counter("papi_thread_perf_page_faults", &pf_a, &ta), 0);
    ASSERT_GE(counter("papi_thread_perf_task_clock", &clk_b, &tb), 0);
    ASSERT_GE(counter("papi_thread_perf_page_faults", &pf_b, &tb), 0);
    ASSERT_GE(counter("papi_perf_task_clock", &clk_sum), 0);
    ASSERT_GE(counter("papi_perf_page_faults", &pf_sum), 0);
    ibmsg_t_pvar_handle_t all[] = {clk_a, pf_a, clk_b, pf_b, clk_sum, pf_sum};
    ASSERT_EQ(ibmsg_t_pvar_start_list(session_, 6, all), IBMSG_T_SUCCESS);
    // The main thread works before A does: none of it may show in A's or B's handles.
    busy_ms(60);
    touch_pages(3000);
    unsigned long long v0[6], v1[6], v2[6];
    for (int i = 0; i < 6; i++) {
        ASSERT_EQ(ibmsg_t_pvar_read(session_, all[i], &v0[i]), IBMSG_T_SUCCESS);
    }
    {
        std::lock_guard<std::mutex> l(m);
        phase = 2;
        cv.notify_all();
    }
    a.join();
    b.join();
    for (int i = 0; i < 6; i++) {
        ASSERT_EQ(ibmsg_t_pvar_read(session_, all[i], &v1[i]), IBMSG_T_SUCCESS);
    }
    // Before A worked: the main thread's 60 ms and 3000 faults are in neither worker.
    EXPECT_LT(v0[0], 20000000u) << "ns of A while it waited";
    EXPECT_LT(v0[1], 100u);
    EXPECT_LT(v0[2], 20000000u) << "ns of B while it waited";
    // A's work, read from here: its 50 ms and 1000 first touches (perf's task clock and the
    // thread CPU clock account slightly differently: 5 % apart at most).
    long long busy_ns = (long long)(v1[0] - v0[0]);
    EXPECT_GE(busy_ns, own_ns - own_ns / 20 - 2000000) << "ns, A's own CPU time " << own_ns;
    EXPECT_LE(busy_ns, own_ns + own_ns / 20 + 20000000) << "ns: more than A's own CPU time";
    EXPECT_GE(v1[1] - v0[1], 1000u);
    EXPECT_LT(v1[1] - v0[1], 2000u) << "the main thread's 3000 faults leaked in";
    // B only waited.
    EXPECT_LT(v1[2] - v0[2], 20000000u) << "ns of B";
    EXPECT_LT(v1[3] - v0[3], 100u);
    // The sum over threads holds both workers (and whatever other ibmsg threads did: this
    // process's main thread is one when it used ibmsg, so its 60 ms may be in): at least A + B.
    EXPECT_GE(v1[4] - v0[4], (v1[0] - v0[0]) + (v1[2] - v0[2]));
    EXPECT_GE(v1[5] - v0[5], (v1[1] - v0[1]) + (v1[3] - v0[3]));
    // A and B have exited: their handles keep their final values, and the sum never goes back.
    busy_ms(20);
    for (int i = 0; i < 6; i++) {
        ASSERT_EQ(ibmsg_t_pvar_read(session_, all[i], &v2[i]), IBMSG_T_SUCCESS);
    }
    for (int i = 0; i < 4; i++) {
        EXPECT_EQ(v2[i], v1[i]) << "handle " << i << " of an exited thread moved";
    }
    EXPECT_GE(v2[4], v1[4]);
    EXPECT_GE(v2[5], v1[5]);
    ASSERT_EQ(ibmsg_t_pvar_stop_list(session_, 6, all), IBMSG_T_SUCCESS);
}

// An event the machine cannot count is reported, not fatal: no variable, listed with its reason
// in papi_unavailable_events, and one info line in the log.
TEST_F(PapiPvars, UnavailableEventIsReportedAndNotFatal)
{
    if (!cnt_papi_compiled()) {
        GTEST_SKIP() << "PAPI support is not compiled in";
    }
    const cnt_papi_event_t *ins = nullptr;
    for (int i = 0; i < cnt_papi_num_events(); i++) {
        if (strcmp(cnt_papi_event(i)->event, "PAPI_TOT_INS") == 0) {
            ins = cnt_papi_event(i);
        }
    }
    ASSERT_NE(ins, nullptr);
    if (ins->available) {
        GTEST_SKIP() << "PAPI_TOT_INS can be counted on this machine";
    }
    int index;
    EXPECT_EQ(ibmsg_t_pvar_get_index("papi_tot_ins", IBMSG_T_PVAR_CLASS_COUNTER, &index),
              IBMSG_T_ERR_INVALID_NAME);
    std::string unavail = unavailable();
    EXPECT_NE(unavail.find(std::string("PAPI_TOT_INS: ") + ins->reason), std::string::npos)
        << unavail;
    std::lock_guard<std::mutex> g(log_mutex);
    EXPECT_NE(log_text.find("info: papi: PAPI_TOT_INS unavailable: "), std::string::npos)
        << log_text;
    EXPECT_EQ(log_text.find("error:"), std::string::npos) << log_text;
}

} // namespace
