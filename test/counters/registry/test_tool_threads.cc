/*
 * Sessions and handles created, freed, started and read from several threads at once, with
 * exact counts at the end; and lock-free reads racing with stop/start on a shared handle.
 */
#include "tool_fixture.h"

#include <algorithm>
#include <atomic>
#include <string>
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

    std::atomic<int> failures{0}, ready{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; t++) {
        threads.emplace_back([&, t] {
            /* All start together, so the threads overlap rather than run one after another. */
            for (ready++; ready.load() < kThreads;) {
                std::this_thread::yield();
            }
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

    // The writer waits for both readers, and for reads between its bursts: a writer that
    // finished before any read would leave nothing tested.
    std::atomic<bool> done{false};
    std::atomic<int> backwards{0}, errors{0}, started{0}, reads{0}, mid{0};
    std::thread writer([&] {
        while (started.load() < 2) {
            std::this_thread::yield();
        }
        for (int i = 0; i < 20000; i++) {
            __atomic_fetch_add(&src, 1, __ATOMIC_RELAXED); /* the source counts */
            if (i % 10 == 0) {
                ibmsg_t_pvar_stop(s, h);
                ibmsg_t_pvar_start(s, h);
            }
            if (i % 1000 == 0) {
                for (int r0 = reads.load(); reads.load() < r0 + 2;) {
                    std::this_thread::yield();
                }
            }
        }
        done = true;
    });
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; t++) {
        readers.emplace_back([&] {
            unsigned long long last = 0;
            bool first = true;
            while (!done) {
                unsigned long long v;
                if (ibmsg_t_pvar_read(s, h, &v) != IBMSG_T_SUCCESS) {
                    errors++;
                } else if (v < last) {
                    backwards++;
                } else {
                    last = v;
                    mid += 0 < v && v < 20000;
                }
                reads++;
                if (first) {
                    first = false;
                    started++;
                }
            }
        });
    }
    writer.join();
    for (auto &r : readers) {
        r.join();
    }
    EXPECT_GE(reads.load(), 40) << "two reads or more per burst of 1000";
    EXPECT_GT(mid.load(), 0) << "some reads fell while the writer ran";
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(backwards.load(), 0);
    unsigned long long v = 0;
    ASSERT_EQ(ibmsg_t_pvar_read(s, h, &v), IBMSG_T_SUCCESS);
    EXPECT_EQ(v, 20000u); /* stop/start in between lose nothing the source counted while started */
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS);
}

/* A string and an array cvar written whole while two threads read them: every read sees one
   write, never a mix of two (a read copies element by element, so it takes the lock that every
   write holds). */
TEST_F(ToolThreads, CvarReadsNeverMixTwoWrites)
{
    char str[64] = {};
    int arr[8] = {};
    int si = add_cvar("s", IBMSG_T_CHAR, str, IBMSG_T_SCOPE_LOCAL, 64);
    int ai = add_cvar("a", IBMSG_T_INT, arr, IBMSG_T_SCOPE_LOCAL, 8);
    ibmsg_t_cvar_handle_t hs, ha;
    int count = 0;
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(si, nullptr, &hs, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(count, 64);
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(ai, nullptr, &ha, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(count, 8);
    constexpr int kWrites = 20000;
    std::atomic<bool> done{false};
    std::atomic<int> started{0}, reads{0}, torn{0}, errors{0};
    std::thread writer([&] {
        while (started.load() < 2) {
            std::this_thread::yield();
        }
        for (int i = 0; i < kWrites; i++) {
            std::string s(63, i % 2 ? 'b' : 'a');
            int v[8];
            std::fill(v, v + 8, i);
            if (ibmsg_t_cvar_write(hs, s.c_str()) != IBMSG_T_SUCCESS ||
                ibmsg_t_cvar_write(ha, v) != IBMSG_T_SUCCESS) {
                errors++;
            }
            if (i % 1000 == 0) {
                for (int r0 = reads.load(); reads.load() < r0 + 2;) {
                    std::this_thread::yield();
                }
            }
        }
        done = true;
    });
    std::vector<std::thread> readers;
    for (int t = 0; t < 2; t++) {
        readers.emplace_back([&] {
            bool first = true;
            while (!done) {
                char s[64];
                int v[8];
                if (ibmsg_t_cvar_read(hs, s) != IBMSG_T_SUCCESS ||
                    ibmsg_t_cvar_read(ha, v) != IBMSG_T_SUCCESS) {
                    errors++;
                } else if (s[63] != '\0' ||
                           (s[0] != '\0' && std::string(s, 63) != std::string(63, s[0])) ||
                           std::count(v, v + 8, v[0]) != 8) {
                    torn++;
                }
                reads++;
                if (first) {
                    first = false;
                    started++;
                }
            }
        });
    }
    writer.join();
    for (auto &r : readers) {
        r.join();
    }
    EXPECT_EQ(errors.load(), 0);
    EXPECT_EQ(torn.load(), 0) << "reads mixing two writes";
    EXPECT_GE(reads.load(), 40);
    ASSERT_EQ(ibmsg_t_cvar_handle_free(&hs), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_handle_free(&ha), IBMSG_T_SUCCESS);
}

/* tool.h: a handle freed by one thread while another reads it gives an error, never a crash and
   never another handle's value, even when the slot is reused at once (the reader's copy of the
   old handle names the slot of the new one). Sessions and cvar handles too. */
TEST_F(ToolThreads, HandleFreedWhileAnotherThreadReadsIt)
{
    unsigned long long src1 = 7, src2 = 1000000007;
    int p1 = add_pvar("p1", IBMSG_T_PVAR_CLASS_LEVEL, IBMSG_T_UNSIGNED_LONG_LONG, &src1);
    int p2 = add_pvar("p2", IBMSG_T_PVAR_CLASS_LEVEL, IBMSG_T_UNSIGNED_LONG_LONG, &src2);
    int cv1 = 11, cv2 = 22;
    int c1 = add_cvar("c1", IBMSG_T_INT, &cv1);
    int c2 = add_cvar("c2", IBMSG_T_INT, &cv2);
    ibmsg_t_pvar_session_t s, s2;
    ibmsg_t_pvar_handle_t h, h2;
    ibmsg_t_cvar_handle_t ch, ch2;
    int count;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, p1, nullptr, &h, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_start(s, h), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(c1, nullptr, &ch, &count), IBMSG_T_SUCCESS);

    const ibmsg_t_pvar_session_t s_copy = s;
    const ibmsg_t_pvar_handle_t h_copy = h;
    const ibmsg_t_cvar_handle_t ch_copy = ch;
    std::atomic<int> phase{0}, ok_before{0}, invalid_after{0}, wrong{0};
    std::thread reader([&] {
        while (phase.load() < 3) {
            /* Phases read around the calls: only calls wholly inside one phase are judged. */
            const int ph = phase.load();
            unsigned long long v = 0;
            int cv = 0;
            int r = ibmsg_t_pvar_read(s_copy, h_copy, &v);
            int rc = ibmsg_t_cvar_read(ch_copy, &cv);
            if (phase.load() != ph) {
                continue;
            }
            if (ph == 0) {
                wrong += r != IBMSG_T_SUCCESS || v != 7 || rc != IBMSG_T_SUCCESS || cv != 11;
                ok_before++;
            } else if (ph == 2) {
                /* freed and reallocated: the old handles are invalid, whatever the slot holds */
                wrong += (r != IBMSG_T_ERR_INVALID_HANDLE && r != IBMSG_T_ERR_INVALID_SESSION) ||
                         rc != IBMSG_T_ERR_INVALID_HANDLE;
                invalid_after++;
            }
        }
    });
    while (ok_before.load() < 1000) {
        std::this_thread::yield();
    }
    phase = 1;
    ASSERT_EQ(ibmsg_t_pvar_handle_free(s, &h), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_handle_free(&ch), IBMSG_T_SUCCESS);
    /* The same slots again, for other variables. */
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, p2, nullptr, &h2, &count), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_start(s, h2), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(c2, nullptr, &ch2, &count), IBMSG_T_SUCCESS);
    phase = 2;
    while (invalid_after.load() < 1000) {
        std::this_thread::yield();
    }
    /* Then the session goes, and another takes its slot. */
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s2), IBMSG_T_SUCCESS);
    const int before = invalid_after.load();
    while (invalid_after.load() < before + 1000) {
        std::this_thread::yield();
    }
    phase = 3;
    reader.join();
    EXPECT_EQ(wrong.load(), 0) << "a read of a freed handle succeeded or gave another value";
    unsigned long long v = 0;
    int cv = 0;
    EXPECT_EQ(ibmsg_t_cvar_read(ch2, &cv), IBMSG_T_SUCCESS);
    EXPECT_EQ(cv, 22);
    EXPECT_EQ(ibmsg_t_pvar_read(s2, h2, &v), IBMSG_T_ERR_INVALID_HANDLE) << "h2 went with s";
    ASSERT_EQ(ibmsg_t_cvar_handle_free(&ch2), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s2), IBMSG_T_SUCCESS);
}
