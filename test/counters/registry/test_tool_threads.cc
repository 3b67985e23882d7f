/*
 * Sessions and handles created, freed, started and read from several threads at once, with
 * exact counts at the end; and lock-free reads racing with stop/start on a shared handle.
 */
#include "tool_fixture.h"

#include <atomic>
#include <thread>
#include <vector>

using ToolThreads = ToolTest;

static constexpr int kThreads = 4;
static constexpr int kIters = 1000;

TEST_F(ToolThreads, ConcurrentSessionsAndHandlesKeepExactCounts)
{
    unsigned long long src = 0;
    int p = add_pvar("c", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src);
    int allocs = -1, alive = -1, count;
    ASSERT_EQ(ibmsg_t_pvar_get_index("tool_handle_allocs", IBMSG_T_PVAR_CLASS_COUNTER, &allocs),
              IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_get_index("tool_handles_alive", IBMSG_T_PVAR_CLASS_LEVEL, &alive),
              IBMSG_T_SUCCESS);
    ibmsg_t_pvar_session_t s;
    ibmsg_t_pvar_handle_t ha, hl;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, allocs, nullptr, &ha, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, alive, nullptr, &hl, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_start(s, ha), IBMSG_T_SUCCESS);

    std::atomic<int> failures{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([&, t] {
            for (int i = 0; i < kIters; i++) {
                ibmsg_t_pvar_session_t ts;
                ibmsg_t_pvar_handle_t h1, h2;
                int n;
                unsigned long long v = 1;
                bool ok = ibmsg_t_pvar_session_create(&ts) == IBMSG_T_SUCCESS &&
                          ibmsg_t_pvar_handle_alloc(ts, p, nullptr, &h1, &n) == IBMSG_T_SUCCESS &&
                          ibmsg_t_pvar_handle_alloc(ts, p, nullptr, &h2, &n) == IBMSG_T_SUCCESS &&
                          ibmsg_t_pvar_start(ts, h1) == IBMSG_T_SUCCESS &&
                          ibmsg_t_pvar_read(ts, h1, &v) == IBMSG_T_SUCCESS &&
                          ibmsg_t_pvar_read(ts, h2, &v) == IBMSG_T_SUCCESS && v == 0 &&
                          ibmsg_t_pvar_stop(ts, IBMSG_T_PVAR_ALL_HANDLES) == IBMSG_T_SUCCESS;
                /* Half the sessions free their handles one by one, half all at once. */
                if (ok && (i + t) % 2 == 0) {
                    ok = ibmsg_t_pvar_handle_free(ts, &h1) == IBMSG_T_SUCCESS &&
                         ibmsg_t_pvar_read(ts, h1, &v) == IBMSG_T_ERR_INVALID_HANDLE;
                }
                ok = ok && ibmsg_t_pvar_session_free(&ts) == IBMSG_T_SUCCESS;
                if (!ok) {
                    failures++;
                }
            }
        });
    }
    for (auto &th : threads) {
        th.join();
    }
    EXPECT_EQ(failures.load(), 0);
    unsigned long long n_allocs = 0, n_alive = 0;
    ASSERT_EQ(ibmsg_t_pvar_read(s, ha, &n_allocs), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_read(s, hl, &n_alive), IBMSG_T_SUCCESS);
    EXPECT_EQ(n_allocs, (unsigned long long)kThreads * kIters * 2);
    EXPECT_EQ(n_alive, 2u); /* ha and hl */
    EXPECT_FALSE(cnt_pvar_is_started(p));
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS);
}

TEST_F(ToolThreads, ReadsRacingWithStopStartNeverGoBackwards)
{
    unsigned long long src = 0;
    int p = add_pvar("c", IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_UNSIGNED_LONG_LONG, &src);
    ibmsg_t_pvar_session_t s;
    ibmsg_t_pvar_handle_t h;
    int count;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, p, nullptr, &h, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);

    std::atomic<bool> done{false};
    std::atomic<int> backwards{0}, errors{0};
    std::thread writer([&] {
        for (int i = 0; i < 20000; i++) {
            __atomic_fetch_add(&src, 1, __ATOMIC_RELAXED); /* the source counts */
            if (i % 10 == 0) {
                ibmsg_t_pvar_stop(s, h);
                ibmsg_t_pvar_start(s, h);
            }
        }
        done = true;
    });
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; t++) {
        readers.emplace_back([&] {
            unsigned long long last = 0;
            while (!done) {
                unsigned long long v;
                if (ibmsg_t_pvar_read(s, h, &v) != IBMSG_T_SUCCESS) {
                    errors++;
                } else if (v < last) {
                    backwards++;
                } else {
                    last = v;
                }
            }
        });
    }
    writer.join();
    for (auto &r : readers) {
        r.join();
    }
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(backwards.load(), 0);
    unsigned long long v = 0;
    ASSERT_EQ(ibmsg_t_pvar_read(s, h, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, 20000u); /* stop/start in between lose nothing the source counted while started */
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS);
}
