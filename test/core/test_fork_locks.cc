// fork() while another thread holds one of the library's process-wide locks: the fork waits for
// it, and the child can take every lock (util/fork_locks.h). In test_core: this binary links
// every module that owns such a lock.
#include <gtest/gtest.h>
#include <pthread.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <thread>

#include <ibmsg/ibmsg.h>

#include "counters/registry/tool_internal.h"
#include "util/fork_locks.h"
#include "util/log.h"

namespace
{

// The places libibmsg fills (the MPI_T layer's lock lives in libibmsg-mpit's own table).
const util_fork_lock_t kLibraryLocks[] = {
    UTIL_FORK_LOCK_NIC_REG, UTIL_FORK_LOCK_REGISTRY, UTIL_FORK_LOCK_PAPI_REG,
    UTIL_FORK_LOCK_PAPI,    UTIL_FORK_LOCK_CONFIG,   UTIL_FORK_LOCK_HCA_TABLE,
    UTIL_FORK_LOCK_SHARDS,  UTIL_FORK_LOCK_LOG_SINK,
};

// body in a child process: its exit status, or 128 + the signal that ended it (a child that
// hangs is ended by its alarm: SIGALRM, 142).
int in_child(const std::function<int()> &body)
{
    pid_t pid = fork();
    if (pid == 0) {
        alarm(20);
        _exit(body());
    }
    int st = 0;
    if (pid < 0 || waitpid(pid, &st, 0) != pid) {
        return -1;
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

// fork() while another thread holds lock (having run while_held with it, then 50 ms): child runs
// in the child, and its status is 2 when the fork did not wait for the holder to let go.
int fork_while_held(pthread_mutex_t *lock, const std::function<void()> &while_held,
                    const std::function<int()> &child)
{
    std::atomic<bool> held{false}, released{false};
    std::thread holder([&] {
        pthread_mutex_lock(lock);
        while_held();
        held = true;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        released = true;
        pthread_mutex_unlock(lock);
    });
    while (!held) {
        std::this_thread::yield();
    }
    int status = in_child([&] { return released ? child() : 2; });
    bool waited = released;
    holder.join();
    return waited ? status : 2;
}

TEST(ForkLocks, EveryProcessWideLockOfTheLibraryIsHeldAcrossFork)
{
    for (util_fork_lock_t which : kLibraryLocks) {
        EXPECT_NE(util_fork_lock_at(which), nullptr) << "place " << which;
    }
    EXPECT_EQ(util_fork_lock_at(UTIL_FORK_LOCK_MPIT_LAYER), nullptr);
    EXPECT_EQ(util_fork_lock_at(UTIL_FORK_LOCK_COUNT), nullptr);
    EXPECT_EQ(util_fork_lock_at((util_fork_lock_t)-1), nullptr);
}

// Another thread holds the lock when fork() is called: fork returns only after it let go, and
// the child (and the parent) can take every lock.
TEST(ForkLocks, AForkWaitsForEachLockAndTheChildCanTakeThemAll)
{
    for (util_fork_lock_t which : kLibraryLocks) {
        pthread_mutex_t *lock = util_fork_lock_at(which);
        ASSERT_NE(lock, nullptr);
        int status = fork_while_held(
            lock, [] {},
            [] {
                for (util_fork_lock_t w : kLibraryLocks) {
                    if (pthread_mutex_trylock(util_fork_lock_at(w)) != 0) {
                        return 10 + (int)w;
                    }
                }
                return 0;
            });
        EXPECT_EQ(status, 0) << "place " << which;
        EXPECT_EQ(pthread_mutex_trylock(lock), 0) << "place " << which;
        pthread_mutex_unlock(lock);
    }
}

// An event source being delivered by another thread at the fork, its lock held and an instance
// queued: the fork waits for the lock, and the child's source is free, idle and empty (the queued
// instance is the parent's to deliver).
TEST(ForkLocks, AnEventSourceIsFreeIdleAndEmptyInTheChild)
{
    int provided;
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_MULTIPLE, &provided), IBMSG_OK);
    ASSERT_GT(cnt_table_num(&cnt_reg.sources), 0);
    auto *s = static_cast<cnt_source_t *>(cnt_table_get(&cnt_reg.sources, 0));
    int status = fork_while_held(
        &s->lock,
        [s] {
            s->busy = 1;
            s->head++;
        },
        [s] {
            if (pthread_mutex_trylock(&s->lock) != 0) {
                return 3;
            }
            return s->busy == 0 && s->head == s->tail ? 0 : 4;
        });
    EXPECT_EQ(status, 0);
    pthread_mutex_lock(&s->lock);
    EXPECT_EQ(s->busy, 1); // the parent's own state is untouched
    EXPECT_EQ(s->head - s->tail, 1u);
    s->busy = 0;
    s->tail = s->head;
    pthread_mutex_unlock(&s->lock);
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_OK);
}

// A log sink runs with the sink's lock held; one that forks (system() to a site's logger, say)
// neither hangs nor leaves the child without a log.
struct ForkingSink {
    std::atomic<int> calls{0};
    int child_status = -1;
    bool forked = false;
    std::string child_saw;
    static void sink(util_log_level_t, const char *, int, const char *msg, void *arg)
    {
        auto *s = static_cast<ForkingSink *>(arg);
        if (s->forked) {
            s->child_saw = msg;
            return;
        }
        if (s->calls++ == 0) {
            s->child_status = in_child([s] {
                s->forked = true;
                util_error("logged in the child");
                return s->child_saw == "logged in the child" ? 0 : 3;
            });
        }
    }
};

TEST(ForkLocks, ALogSinkMayForkAndTheChildLogs)
{
    int status = in_child([] {
        ForkingSink s;
        util_log_set_sink(&ForkingSink::sink, &s, nullptr, nullptr);
        std::thread t([] { util_error("logged in the parent"); });
        t.join();
        return s.calls == 1 ? s.child_status : 4;
    });
    EXPECT_EQ(status, 0);
}

// A thread that logs while another forks: the child logs through the sink it inherited.
TEST(ForkLocks, AChildLogsWhileAnotherThreadOfItsParentWasLogging)
{
    struct SlowSink {
        std::atomic<bool> entered{false};
        std::string last;
        static void sink(util_log_level_t, const char *, int, const char *msg, void *arg)
        {
            auto *s = static_cast<SlowSink *>(arg);
            s->last = msg;
            if (!s->entered.exchange(true)) {
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        }
    } s;
    util_log_sink_cb_t old_sink;
    void *old_arg;
    util_log_set_sink(&SlowSink::sink, &s, &old_sink, &old_arg);
    std::thread logger([] { util_warn("the parent's thread"); });
    while (!s.entered) {
        std::this_thread::yield();
    }
    int status = in_child([&] {
        util_warn("the child");
        return s.last == "the child" ? 0 : 5;
    });
    logger.join();
    util_log_set_sink(old_sink, old_arg, nullptr, nullptr);
    EXPECT_EQ(status, 0);
}

} // namespace
