// Counter shards: exact merged values across threads (live and exited), levels, watermarks,
// blocks, timers, the thread objects of the tool interface, and the shard layout.
#include "counters/shards/shard.h"

#include <ibmsg/tool.h>

#include <gtest/gtest.h>

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdio>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

namespace
{

// A minimal barrier (std::barrier is C++20).
class Latch
{
  public:
    explicit Latch(int n) : left_(n)
    {
    }
    void arrive_and_wait()
    {
        left_.fetch_sub(1);
        while (left_.load() > 0) {
            std::this_thread::yield();
        }
    }

  private:
    std::atomic<int> left_;
};

int64_t level(const cnt_shard_t *shard, cnt_id_t id, cnt_read_what_t what = CNT_READ_VALUE)
{
    return (int64_t)cnt_read(shard, id, what);
}

} // namespace

TEST(ShardTable, NamesAreUniqueAndKindsMatch)
{
    std::set<std::string> names;
    int n = 0;
#define CHECK_ENTRY(id, name, kind, owner, verbosity, category, desc)         \
    EXPECT_TRUE(names.insert(name).second) << "duplicate " << name;           \
    EXPECT_EQ(cnt_id_kind(CNT_##id), CNT_KIND_##kind) << name;                \
    EXPECT_STREQ(cnt_id_name(CNT_##id), name);                                \
    EXPECT_EQ(cnt_id_owner(CNT_##id), IBMSG_T_BIND_##owner) << name;          \
    EXPECT_EQ(cnt_id_has_wm(CNT_##id), CNT_KIND_##kind == CNT_KIND_LEVEL_WM); \
    n++;
    CNT_COUNTER_TABLE(CHECK_ENTRY)
#undef CHECK_ENTRY
    EXPECT_EQ(n, CNT_COUNTER_COUNT);
    // Watermark slots are not counters of their own.
    EXPECT_EQ(cnt_id_kind(CNT_CORE_POSTED_RECVQ + CNT_WM_HIGH), -1);
    EXPECT_EQ(cnt_id_kind(-1), -1);
    EXPECT_EQ(cnt_id_kind(CNT_SLOT_COUNT), -1);
    EXPECT_EQ(cnt_id_name(CNT_SLOT_COUNT), nullptr);
}

TEST(ShardLayout, AlignedPaddedAndSeparatePerThread)
{
    EXPECT_EQ(offsetof(cnt_shard_t, slot), 0u);
    EXPECT_EQ(sizeof(cnt_shard_t) % 128, 0u);
    EXPECT_EQ(offsetof(cnt_shard_t, meta) % 128, 0u);

    cnt_shard_t *mine = cnt_shard_get();
    cnt_shard_t *other = nullptr;
    std::thread([&] { other = cnt_shard_get(); }).join();
    ASSERT_NE(mine, nullptr);
    ASSERT_NE(other, nullptr);
    EXPECT_NE(mine, other);
    EXPECT_EQ((uintptr_t)mine % 128, 0u);
    EXPECT_EQ((uintptr_t)other % 128, 0u);
    // Same thread, same shard; the TLS pointer is what the hot path uses.
    EXPECT_EQ(cnt_shard_get(), mine);
    EXPECT_EQ(cnt_shard_tls, mine);
}

// N threads x M updates; half of the threads exit before the read, the others are still alive
// (and blocked) when it happens. The merged value is exact.
TEST(ShardCounter, ExactAcrossLiveAndExitedThreads)
{
    const int threads = 8;
    const uint64_t updates = 200000;
    const cnt_id_t id = CNT_CORE_MATCH_ATTEMPTS;
    uint64_t before = cnt_read(nullptr, id, CNT_READ_VALUE);
    Latch counted(threads + 1);
    std::atomic<bool> release{false};
    std::vector<std::thread> live, exiting;

    for (int t = 0; t < threads; t++) {
        auto body = [&, t] {
            cnt_shard_t *shard = cnt_shard_get();
            for (uint64_t i = 0; i < updates; i++) {
                cnt_inc(shard, id);
            }
            cnt_add(shard, id, (uint64_t)t); // a few odd amounts too
            counted.arrive_and_wait();
            if (t % 2 == 0) {
                while (!release.load()) {
                    std::this_thread::yield();
                }
            }
        };
        (t % 2 == 0 ? live : exiting).emplace_back(body);
    }
    counted.arrive_and_wait();
    for (auto &th : exiting) {
        th.join(); // their shards are folded into the retired totals now
    }
    uint64_t expect = before + threads * updates + (threads * (threads - 1)) / 2;
    EXPECT_EQ(cnt_read(nullptr, id, CNT_READ_VALUE), expect);
    release = true;
    for (auto &th : live) {
        th.join();
    }
    EXPECT_EQ(cnt_read(nullptr, id, CNT_READ_VALUE), expect);
}

// Threads come and go (their shards are retired and recycled) while readers read: every read is
// between the value before and after, never goes back, and the end value is exact. A fold that
// a reader counted twice or missed would break one of these.
TEST(ShardCounter, ReadsMonotonicWhileThreadsChurn)
{
    const cnt_id_t id = CNT_VERBS_CQ_POLLS;
    const int rounds = 40, per_round = 4;
    const uint64_t updates = 5000;
    uint64_t before = cnt_read(nullptr, id, CNT_READ_VALUE);
    uint64_t expect = before + (uint64_t)rounds * per_round * updates;
    std::atomic<bool> done{false};
    std::atomic<int> bad{0};
    std::atomic<uint64_t> reads{0};

    auto reader = [&] {
        uint64_t last = before;
        while (!done.load()) {
            uint64_t v = cnt_read(nullptr, id, CNT_READ_VALUE);
            if (v < last || v > expect) {
                bad++;
            }
            last = v;
            reads++;
        }
    };
    std::thread r1(reader), r2(reader);
    for (int round = 0; round < rounds; round++) {
        std::vector<std::thread> writers;
        for (int t = 0; t < per_round; t++) {
            writers.emplace_back([&] {
                cnt_shard_t *shard = cnt_shard_get();
                for (uint64_t i = 0; i < updates; i++) {
                    cnt_inc(shard, id);
                }
            });
        }
        for (auto &th : writers) {
            th.join();
        }
    }
    done = true;
    r1.join();
    r2.join();
    EXPECT_EQ(bad.load(), 0);
    EXPECT_GT(reads.load(), 0u);
    EXPECT_EQ(cnt_read(nullptr, id, CNT_READ_VALUE), expect);
}

TEST(ShardCounter, RecyclesShardsOfExitedThreads)
{
    int before = 0, during = 0, after = 0;
    cnt_thread_list(0, nullptr, &before);
    std::vector<cnt_shard_t *> seen;
    for (int round = 0; round < 50; round++) {
        std::thread([&] {
            seen.push_back(cnt_shard_get());
            cnt_thread_list(0, nullptr, &during);
        }).join();
        EXPECT_EQ(during, before + 1);
    }
    cnt_thread_list(0, nullptr, &after);
    EXPECT_EQ(after, before);
    // One shard, used again and again (one NUMA node here; on several a few at most).
    std::set<cnt_shard_t *> distinct(seen.begin(), seen.end());
    EXPECT_LE(distinct.size(), 4u);
}

// Levels go up in one thread and down in another: each thread's level is not zero, the sum is.
TEST(ShardLevel, ReturnsToZeroAcrossThreads)
{
    const cnt_id_t id = CNT_CORE_UNEXPECTED_RECVQ;
    const int pairs = 4, n = 100000;
    int64_t before = level(nullptr, id);
    std::vector<std::thread> threads;
    std::atomic<int> produced{0};

    for (int p = 0; p < pairs; p++) {
        threads.emplace_back([&] {
            cnt_shard_t *shard = cnt_shard_get();
            for (int i = 0; i < n; i++) {
                cnt_level_inc(shard, id);
            }
            produced += n;
        });
        threads.emplace_back([&] {
            cnt_shard_t *shard = cnt_shard_get();
            for (int i = 0; i < n; i++) {
                cnt_level_dec(shard, id);
            }
            EXPECT_EQ(level(shard, id), -n); // this thread's own shard
        });
    }
    for (auto &th : threads) {
        th.join();
    }
    EXPECT_EQ(produced.load(), pairs * n);
    EXPECT_EQ(level(nullptr, id), before);

    // A plain LEVEL of the caller's shard.
    cnt_shard_t *me = cnt_shard_get();
    cnt_level_add(me, id, 7);
    cnt_level_add(me, id, -3);
    EXPECT_EQ(level(nullptr, id), before + 4);
    cnt_level_add(me, id, -4);
    EXPECT_EQ(level(nullptr, id), before);
}

// One writer: the watermarks of its shard are exact, and a restart starts them from the
// current level.
TEST(ShardWatermark, ExactForOneShard)
{
    const cnt_id_t id = CNT_VERBS_BUF_POOL_IN_USE;
    cnt_shard_t *block = nullptr;
    int owner;
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, &owner, &block), IBMSG_OK);

    cnt_wm_start(id);                         // restart: marks from the current level (0)
    for (int64_t d : {5, -3, 5, -6, -2, 4}) { // 5 2 7 1 -1 3
        cnt_level_add(block, id, d);
    }
    EXPECT_EQ(level(block, id), 3);
    EXPECT_EQ(level(block, id, CNT_READ_HIGH), 7);
    EXPECT_EQ(level(block, id, CNT_READ_LOW), -1);

    // A second handle starting while one runs does not restart the marks (an upper bound).
    cnt_wm_start(id);
    EXPECT_EQ(level(block, id, CNT_READ_HIGH), 7);
    cnt_wm_stop(id);
    cnt_wm_stop(id);

    // Starting again when none runs: the marks restart from the current level, even though the
    // writer has not moved since (the reader uses its level) ...
    cnt_wm_start(id);
    EXPECT_EQ(level(block, id, CNT_READ_HIGH), 3);
    EXPECT_EQ(level(block, id, CNT_READ_LOW), 3);
    // ... and once it moves, from there.
    cnt_level_add(block, id, -1);
    cnt_level_add(block, id, 4);
    EXPECT_EQ(level(block, id, CNT_READ_HIGH), 6);
    EXPECT_EQ(level(block, id, CNT_READ_LOW), 2);
    cnt_level_add(block, id, -6);
    cnt_wm_stop(id);
    cnt_block_destroy(block);
}

// Several shards: the NO_OBJECT watermark is the sum of per-shard marks, an upper bound of the
// true maximum of the sum (lower bound of its minimum), exact when one shard moves; shards that
// are gone keep their marks until the next restart.
TEST(ShardWatermark, SumOfShardsIsTheDocumentedBound)
{
    const cnt_id_t id = CNT_CORE_POSTED_RECVQ;
    int own_a, own_b;
    cnt_shard_t *a = nullptr, *b = nullptr;
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, &own_a, &a), IBMSG_OK);
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, &own_b, &b), IBMSG_OK);
    int64_t base = level(nullptr, id);

    cnt_wm_start(id);
    EXPECT_EQ(level(nullptr, id, CNT_READ_HIGH), base);
    EXPECT_EQ(level(nullptr, id, CNT_READ_LOW), base);
    // a peaks at 5 while b is at 0; then b peaks at 4 while a is at 0: the true max is 5.
    cnt_level_add(a, id, 5);
    cnt_level_add(a, id, -5);
    cnt_level_add(b, id, 4);
    cnt_level_add(b, id, -4);
    // b dips to -2 while a is 0; a dips to -3 while b is 0: the true min is -3.
    cnt_level_add(b, id, -2);
    cnt_level_add(b, id, 2);
    cnt_level_add(a, id, -3);
    cnt_level_add(a, id, 3);
    EXPECT_EQ(level(nullptr, id), base);
    EXPECT_EQ(level(nullptr, id, CNT_READ_HIGH), base + 9); // >= base + 5, the true max
    EXPECT_EQ(level(nullptr, id, CNT_READ_LOW), base - 5);  // <= base - 3, the true min
    EXPECT_EQ(level(a, id, CNT_READ_HIGH), 5);              // each shard exact
    EXPECT_EQ(level(b, id, CNT_READ_LOW), -2);

    // Peaks at the same time: the bound is exact.
    cnt_level_add(a, id, 6);
    cnt_level_add(b, id, 6);
    EXPECT_EQ(level(nullptr, id, CNT_READ_HIGH), base + 12);
    cnt_level_add(a, id, -6);
    cnt_level_add(b, id, -6);

    // a goes away with level 2 after a peak of 6 since the restart: its peak stays in the sum.
    cnt_level_add(a, id, 2);
    cnt_block_destroy(a);
    EXPECT_EQ(level(nullptr, id), base + 2);
    EXPECT_EQ(level(nullptr, id, CNT_READ_HIGH), base + 12);
    EXPECT_EQ(level(nullptr, id, CNT_READ_LOW), base - 5);

    // Next restart: everything restarts from the current level, the retired level included.
    cnt_wm_stop(id);
    cnt_wm_start(id);
    EXPECT_EQ(level(nullptr, id, CNT_READ_HIGH), base + 2);
    EXPECT_EQ(level(nullptr, id, CNT_READ_LOW), base + 2);
    cnt_level_add(b, id, 1);
    cnt_level_add(b, id, -3);
    EXPECT_EQ(level(nullptr, id, CNT_READ_HIGH), base + 3);
    EXPECT_EQ(level(nullptr, id, CNT_READ_LOW), base);
    cnt_level_add(b, id, 2);
    cnt_wm_stop(id);
    cnt_block_destroy(b);
}

// Watermarks of threads: one thread is one writer, so its marks are exact; threads that exit
// leave their levels and (until the next restart) their marks in the sum.
TEST(ShardWatermark, ThreadsThatExit)
{
    const cnt_id_t id = CNT_TOOL_SESSIONS_ALIVE;
    cnt_wm_start(id);
    int64_t base = level(nullptr, id), base_high = level(nullptr, id, CNT_READ_HIGH);
    EXPECT_EQ(base_high, base);
    std::thread([&] {
        cnt_shard_t *shard = cnt_shard_get();
        for (int i = 0; i < 10; i++) {
            cnt_level_inc(shard, id);
        }
        for (int i = 0; i < 9; i++) {
            cnt_level_dec(shard, id);
        }
        EXPECT_EQ(level(shard, id, CNT_READ_HIGH), 10);
        EXPECT_EQ(level(shard, id), 1);
    }).join();
    EXPECT_EQ(level(nullptr, id), base + 1);
    EXPECT_EQ(level(nullptr, id, CNT_READ_HIGH), base + 10);
    cnt_wm_stop(id);
}

// A restart while another thread moves the level (the writer never looks for restarts): the
// marks never show what came before the start (the old peak of 500) nor "no mark yet", and
// cover the level from the start's return. The writer stays within 10..11 throughout, with
// checked steps and with runs marked at their ends.
TEST(ShardWatermark, RestartWhileAnotherThreadMoves)
{
    const cnt_id_t id = CNT_VERBS_BUF_POOL_IN_USE;
    cnt_shard_t *block = nullptr;
    int owner;
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, &owner, &block), IBMSG_OK);
    cnt_level_add(block, id, 500);
    cnt_level_add(block, id, -490);
    std::atomic<bool> stop{false};
    std::atomic<long> steps{0};
    std::thread writer([&] {
        while (!stop.load(std::memory_order_relaxed)) {
            cnt_level_add(block, id, 1);
            cnt_level_add(block, id, -1);
            cnt_level_run_add(block, id, 1);
            cnt_level_mark_high(block, id);
            cnt_level_run_add(block, id, -1);
            cnt_level_mark_low(block, id);
            steps.fetch_add(1, std::memory_order_relaxed);
        }
    });
    int bad = 0;
    for (int i = 0; i < 300; i++) {
        cnt_wm_start(id);
        int64_t hi = level(block, id, CNT_READ_HIGH), lo = level(block, id, CNT_READ_LOW);
        bad += !(10 <= lo && lo <= hi && hi <= 11);
        if (bad == 1 && !(10 <= lo && lo <= hi && hi <= 11)) {
            ADD_FAILURE() << "restart " << i << ": high " << hi << ", low " << lo;
        }
        cnt_wm_stop(id);
    }
    stop = true;
    writer.join();
    EXPECT_EQ(bad, 0);
    EXPECT_GT(steps.load(), 0);
    EXPECT_EQ(level(block, id), 10);
    cnt_wm_start(id); // the writer is done: exact from here
    EXPECT_EQ(level(block, id, CNT_READ_HIGH), 10);
    EXPECT_EQ(level(block, id, CNT_READ_LOW), 10);
    cnt_wm_stop(id);
    cnt_level_add(block, id, -10);
    cnt_block_destroy(block);
}

// Without membarrier(2) (a seccomp filter refuses it, as some container profiles do): a restart
// still starts the marks from the current level, and the library says once, on stderr, what it
// can no longer promise for a level that another thread moves. Run in a child, which keeps the
// filter to itself.
TEST(ShardWatermark, RestartWithoutMembarrier)
{
#if defined(__x86_64__)
    const cnt_id_t id = CNT_VERBS_BUF_POOL_IN_USE;
    FILE *log = tmpfile();
    ASSERT_NE(log, nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        struct sock_filter f[] = {
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
            BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
            BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_membarrier, 0, 1),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
            BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = {(unsigned short)(sizeof(f) / sizeof(f[0])), f};
        if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
            prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
            _exit(2);
        }
        if (syscall(__NR_membarrier, 0, 0, 0) != -1 || errno != ENOSYS) {
            _exit(3);
        }
        dup2(fileno(log), 2);
        cnt_shard_t *block = nullptr;
        int owner;
        if (cnt_block_create(IBMSG_T_BIND_CONTEXT, &owner, &block) != IBMSG_OK) {
            _exit(4);
        }
        cnt_level_add(block, id, 9);
        cnt_level_add(block, id, -7); // 2, after a peak of 9
        int bad = 0;
        for (int round = 0; round < 2; round++) {
            cnt_wm_start(id);
            bad += level(block, id, CNT_READ_HIGH) != 2 || level(block, id, CNT_READ_LOW) != 2;
            cnt_level_add(block, id, 4);
            cnt_level_add(block, id, -5);
            bad += level(block, id, CNT_READ_HIGH) != 6 || level(block, id, CNT_READ_LOW) != 1;
            cnt_level_add(block, id, 1);
            cnt_wm_stop(id);
        }
        fflush(stderr);
        _exit(bad == 0 ? 0 : 5);
    }
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    ASSERT_TRUE(WIFEXITED(status));
    if (WEXITSTATUS(status) == 2) {
        fclose(log);
        GTEST_SKIP() << "this host refuses seccomp filters (prctl PR_SET_SECCOMP failed in the "
                        "child), so membarrier(2) cannot be taken away here";
    }
    EXPECT_EQ(WEXITSTATUS(status), 0) << "3: the filter let membarrier through, 4: no block, "
                                         "5: the marks did not restart exactly";
    std::string text;
    char buf[4096];
    rewind(log);
    for (size_t n; (n = fread(buf, 1, sizeof(buf), log)) > 0;) {
        text.append(buf, n);
    }
    fclose(log);
    const std::string warning = "membarrier(2) unavailable (Function not implemented)";
    size_t at = text.find(warning);
    EXPECT_NE(at, std::string::npos) << text;
    EXPECT_EQ(text.find(warning, at + 1), std::string::npos) << "said once: " << text;
#else
    GTEST_SKIP() << "the seccomp filter of this test is written for x86-64";
#endif
}

TEST(ShardBlock, ValuesOutliveTheBlock)
{
    const cnt_id_t id = CNT_CORE_EAGER_BYTES_SENT;
    int owner;
    cnt_shard_t *block = nullptr;
    uint64_t before = cnt_read(nullptr, id, CNT_READ_VALUE);

    EXPECT_EQ(cnt_block_create(IBMSG_T_BIND_ENDPOINT, nullptr, &block), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt_block_create(IBMSG_T_BIND_THREAD, &owner, &block), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt_block_create(IBMSG_T_BIND_LAST, &owner, &block), IBMSG_ERR_INVALID);
    EXPECT_EQ(cnt_block_create(IBMSG_T_BIND_ENDPOINT, &owner, nullptr), IBMSG_ERR_INVALID);
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_ENDPOINT, &owner, &block), IBMSG_OK);
    EXPECT_EQ((uintptr_t)block % 128, 0u);

    cnt_add(block, id, 4096);
    cnt_add(block, id, 100);
    EXPECT_EQ(cnt_read(block, id, CNT_READ_VALUE), 4196u);
    EXPECT_EQ(cnt_read(nullptr, id, CNT_READ_VALUE), before + 4196);

    // Found by its owner and bind type only.
    EXPECT_EQ(cnt_shard_lookup(IBMSG_T_BIND_ENDPOINT, &owner, 0), block);
    EXPECT_EQ(cnt_shard_lookup(IBMSG_T_BIND_CONTEXT, &owner, 0), nullptr);
    EXPECT_EQ(cnt_shard_lookup(IBMSG_T_BIND_ENDPOINT, &before, 0), nullptr);
    EXPECT_EQ(cnt_shard_lookup(IBMSG_T_BIND_ENDPOINT, nullptr, 0), nullptr);

    // A bound handle keeps the destroyed block readable at its final values.
    ASSERT_EQ(cnt_shard_lookup(IBMSG_T_BIND_ENDPOINT, &owner, 1), block);
    cnt_block_destroy(block);
    EXPECT_EQ(cnt_read(nullptr, id, CNT_READ_VALUE), before + 4196); // retired, not lost
    EXPECT_EQ(cnt_shard_lookup(IBMSG_T_BIND_ENDPOINT, &owner, 0), block);
    EXPECT_EQ(cnt_read(block, id, CNT_READ_VALUE), 4196u);

    // A new block of another owner while the old one is kept: not the same memory.
    int owner2;
    cnt_shard_t *block2 = nullptr;
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_ENDPOINT, &owner2, &block2), IBMSG_OK);
    EXPECT_NE(block2, block);
    EXPECT_EQ(cnt_read(block2, id, CNT_READ_VALUE), 0u);
    cnt_block_destroy(block2);

    cnt_shard_unref(block);
    EXPECT_EQ(cnt_shard_lookup(IBMSG_T_BIND_ENDPOINT, &owner, 0), nullptr);
    EXPECT_EQ(cnt_read(nullptr, id, CNT_READ_VALUE), before + 4196);
    cnt_block_destroy(nullptr);
}

// A counter of CNT_SUM_TABLE reads as its own slot plus its parts' slots: on a block, in its
// parent (a context over its endpoints), over every shard, and after the block is gone. Each
// part is a counter of the same owner, so the sum binds to the same objects.
TEST(ShardSum, ACounterReadsAsItsSlotPlusItsParts)
{
#define CHECK_PART(id, part)                                                          \
    EXPECT_EQ(cnt_id_kind(CNT_##id), CNT_KIND_COUNTER) << #id;                        \
    EXPECT_EQ(cnt_id_kind(CNT_##part), CNT_KIND_COUNTER) << #part;                    \
    EXPECT_EQ(cnt_id_owner(CNT_##id), cnt_id_owner(CNT_##part)) << #id " and " #part; \
    EXPECT_NE(CNT_##id, CNT_##part);
    CNT_SUM_TABLE(CHECK_PART)
#undef CHECK_PART
    const cnt_id_t eager = CNT_CORE_EAGER_MSGS_SENT, inl = CNT_CORE_INLINE_MSGS_SENT,
                   compact = CNT_CORE_COMPACT_MSGS_SENT, header = CNT_CORE_HEADER_MSGS_SENT,
                   credit = CNT_CORE_CREDIT_MSGS_SENT, wrs = CNT_VERBS_SEND_WRS_POSTED;
    const cnt_id_t ids[] = {eager, inl, compact, header, credit, wrs};
    const int nids = 6;
    uint64_t all[nids];
    for (int i = 0; i < nids; i++) {
        all[i] = cnt_read(nullptr, ids[i], CNT_READ_VALUE);
    }
    int ctx_owner, ep_owner;
    cnt_shard_t *ctx = nullptr, *ep = nullptr;
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, &ctx_owner, &ctx), IBMSG_OK);
    ASSERT_EQ(cnt_block_create_child(IBMSG_T_BIND_ENDPOINT, &ep_owner, ctx, &ep), IBMSG_OK);

    // An eager message adds to the slot of its pair of kinds (counter_table.h), as post_msg does.
    cnt_add(ep, eager, 5);    // from bounce buffers, with the header
    cnt_add(ep, compact, 13); // from bounce buffers, compact
    cnt_add(ep, header, 17);  // inline, with the header
    cnt_add(ep, inl, 3);      // inline, compact
    cnt_add(ep, credit, 7);   // credit returns
    cnt_add(ep, wrs, 11);     // anything else
    cnt_add(ctx, inl, 100);   // the context's own block counts too
    // eager: all four; inline: 3 + 17; compact: 13 + 3; header: 17 + 5; wrs: the eager, the
    // credit returns and its own.
    const uint64_t ep_want[] = {38, 20, 16, 22, 7, 56};
    const uint64_t ctx_want[] = {138, 120, 116, 22, 7, 156};
    for (int i = 0; i < nids; i++) {
        EXPECT_EQ(cnt_read(ep, ids[i], CNT_READ_VALUE), ep_want[i]) << cnt_id_name(ids[i]);
        EXPECT_EQ(cnt_read(ctx, ids[i], CNT_READ_VALUE), ctx_want[i]) << cnt_id_name(ids[i]);
        EXPECT_EQ(cnt_read(nullptr, ids[i], CNT_READ_VALUE), all[i] + ctx_want[i])
            << cnt_id_name(ids[i]);
    }
    // The endpoint's block folds into its context, the context's into the retired totals.
    cnt_block_destroy(ep);
    for (int i = 0; i < nids; i++) {
        EXPECT_EQ(cnt_read(ctx, ids[i], CNT_READ_VALUE), ctx_want[i]) << cnt_id_name(ids[i]);
    }
    cnt_block_destroy(ctx);
    for (int i = 0; i < nids; i++) {
        EXPECT_EQ(cnt_read(nullptr, ids[i], CNT_READ_VALUE), all[i] + ctx_want[i])
            << cnt_id_name(ids[i]);
    }
}

TEST(ShardTimer, GatedByStartedHandles)
{
    const cnt_id_t id = CNT_CORE_PROGRESS_TIME;
    cnt_shard_t *shard = cnt_shard_get();
    uint64_t before = cnt_read(shard, id, CNT_READ_VALUE);

    // No handle started: no clock read, nothing added.
    cnt_tick_t t0 = cnt_timer_start(id);
    EXPECT_EQ(t0, 0u);
    usleep(1000);
    cnt_timer_stop(shard, id, t0);
    EXPECT_EQ(cnt_read(shard, id, CNT_READ_VALUE), before);

    cnt_timer_gate_start(id);
    // CLOCK_MONOTONIC read around each end of the timed region brackets it, however long the
    // thread waits for a CPU in between: inner <= timed <= outer, within the calibration's 0.5%.
    uint64_t m0 = cnt_tick_monotonic_ns();
    t0 = cnt_timer_start(id);
    uint64_t m1 = cnt_tick_monotonic_ns();
    EXPECT_NE(t0, 0u);
    usleep(20000);
    uint64_t m2 = cnt_tick_monotonic_ns();
    cnt_timer_stop(shard, id, t0);
    uint64_t m3 = cnt_tick_monotonic_ns();
    uint64_t got = cnt_read(shard, id, CNT_READ_VALUE) - before;
    EXPECT_GE(got, (m2 - m1) * 995 / 1000);
    EXPECT_LE(got, (m3 - m0) * 1005 / 1000);
    EXPECT_EQ(cnt_read(nullptr, id, CNT_READ_VALUE) >= got, true);
    cnt_timer_gate_stop(id);
    EXPECT_EQ(cnt_timer_start(id), 0u);

    // Nested starts: the gate stays open until the last stop.
    cnt_timer_gate_start(id);
    cnt_timer_gate_start(id);
    cnt_timer_gate_stop(id);
    EXPECT_NE(cnt_timer_start(id), 0u);
    cnt_timer_gate_stop(id);
    EXPECT_EQ(cnt_timer_start(id), 0u);
    cnt_timer_gate_stop(id); // one stop too many changes nothing
    EXPECT_EQ(cnt_timer_start(id), 0u);
}

// A block watching a timer mirrors its gate into one bit of its owner's byte: set at the watch
// when a handle already runs, set and cleared with the gate, other bits untouched, and never
// written once the block is destroyed.
TEST(ShardTimer, WatchingBlocksMirrorTheGate)
{
    const cnt_id_t id = CNT_CORE_PROGRESS_TIME;
    const uint8_t bit = 4, other = 1;
    int owner_a, owner_b;
    uint8_t flags_a = other, flags_b = 0;
    cnt_shard_t *a = nullptr, *b = nullptr;

    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, &owner_a, &a), IBMSG_OK);
    cnt_block_watch_timer(a, id, &flags_a, bit);
    EXPECT_EQ(flags_a, other) << "no handle runs: the bit stays clear";

    cnt_timer_gate_start(id);
    EXPECT_EQ(flags_a, other | bit);
    // A block that starts watching while the gate is open sees it at once.
    ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, &owner_b, &b), IBMSG_OK);
    cnt_block_watch_timer(b, id, &flags_b, bit);
    EXPECT_EQ(flags_b, bit);
    // Another timer's gate is not this one's.
    cnt_timer_gate_start(CNT_TOOL_PVAR_READ_TIME);
    cnt_timer_gate_stop(CNT_TOOL_PVAR_READ_TIME);
    EXPECT_EQ(flags_a, other | bit);

    // Nested starts: the bit stays until the last stop.
    cnt_timer_gate_start(id);
    cnt_timer_gate_stop(id);
    EXPECT_EQ(flags_b, bit);
    cnt_timer_gate_stop(id);
    EXPECT_EQ(flags_a, other);
    EXPECT_EQ(flags_b, 0);

    // A destroyed block's owner byte is its owner's again.
    cnt_block_destroy(b);
    flags_b = 0xa0;
    cnt_timer_gate_start(id);
    EXPECT_EQ(flags_a, other | bit);
    EXPECT_EQ(flags_b, 0xa0);
    cnt_timer_gate_stop(id);
    EXPECT_EQ(flags_a, other);
    EXPECT_EQ(flags_b, 0xa0);
    cnt_block_destroy(a);
}

TEST(ShardTick, CalibratedAgainstMonotonic)
{
    cnt_tick_setup(); // the clock is chosen before ticks are taken (timer gates do this)
    // A tick read between two monotonic reads; a preempted pair (more than 20 us apart) is
    // read again, so the comparison's error is the sandwich width, not the scheduler.
    auto pair = [](uint64_t *tick, uint64_t *mono, uint64_t *width) {
        for (int i = 0; i < 1000; i++) {
            uint64_t a = cnt_tick_monotonic_ns();
            *tick = cnt_tick_now();
            uint64_t b = cnt_tick_monotonic_ns();
            *mono = a + (b - a) / 2;
            *width = b - a;
            if (*width <= 20000) {
                return;
            }
        }
    };
    uint64_t t0, m0, w0, t1, m1, w1;
    pair(&t0, &m0, &w0);
    usleep(30000);
    pair(&t1, &m1, &w1);
    double ns = (double)cnt_tick_to_ns(t1 - t0), real = (double)(m1 - m0);
    EXPECT_NEAR(ns, real, 0.005 * real + double(w0 + w1)) << "calibrated within 0.5%";
    EXPECT_GT(cnt_tick_hz(), 1e6);
    if (!cnt_tick_is_tsc()) {
        EXPECT_EQ(cnt_tick_hz(), 1e9);
        EXPECT_EQ(cnt_tick_to_ns(12345), 12345u);
    }
    // Monotonic in ticks.
    EXPECT_LE(cnt_tick_to_ns(1000000), cnt_tick_to_ns(1000001));
}

TEST(ShardThread, ToolObjects)
{
    ibmsg_t_thread_t self = nullptr;
    EXPECT_EQ(ibmsg_t_thread_self(nullptr), IBMSG_T_ERR_INVALID);
    ASSERT_EQ(ibmsg_t_thread_self(&self), IBMSG_OK);
    EXPECT_EQ((void *)self, (void *)cnt_shard_get());

    long tid = 0;
    int node = -2, alive = 0;
    ASSERT_EQ(ibmsg_t_thread_get_info(self, &tid, &node, &alive), IBMSG_OK);
    EXPECT_EQ(tid, (long)syscall(SYS_gettid));
    EXPECT_EQ(alive, 1);
    EXPECT_GE(node, -1);
    EXPECT_EQ(ibmsg_t_thread_get_info(self, nullptr, nullptr, nullptr), IBMSG_OK);
    int junk;
    EXPECT_EQ(ibmsg_t_thread_get_info((ibmsg_t_thread_t)(void *)&junk, &tid, nullptr, nullptr),
              IBMSG_T_ERR_INVALID_HANDLE);
    EXPECT_EQ(ibmsg_t_thread_get_info(nullptr, &tid, nullptr, nullptr), IBMSG_T_ERR_INVALID_HANDLE);

    // Another thread, alive while listed, then gone.
    ibmsg_t_thread_t other = nullptr;
    std::atomic<bool> listed{false}, go{false};
    std::thread th([&] {
        ASSERT_EQ(ibmsg_t_thread_self(&other), IBMSG_OK);
        cnt_inc(cnt_shard_get(), CNT_VERBS_RNR_EVENTS);
        listed = true;
        while (!go.load()) {
            std::this_thread::yield();
        }
    });
    while (!listed.load()) {
        std::this_thread::yield();
    }
    int num = 0;
    EXPECT_EQ(ibmsg_t_thread_get_all(-1, nullptr, &num), IBMSG_T_ERR_INVALID);
    EXPECT_EQ(ibmsg_t_thread_get_all(1, nullptr, &num), IBMSG_T_ERR_INVALID);
    ASSERT_EQ(ibmsg_t_thread_get_all(0, nullptr, &num), IBMSG_OK);
    ASSERT_GE(num, 2);
    std::vector<ibmsg_t_thread_t> all(num);
    int num2 = 0;
    ASSERT_EQ(ibmsg_t_thread_get_all(num, all.data(), &num2), IBMSG_OK);
    EXPECT_EQ(num2, num);
    EXPECT_NE(std::find(all.begin(), all.end(), self), all.end());
    EXPECT_NE(std::find(all.begin(), all.end(), other), all.end());

    // Bound (as a tool handle would be) before it exits: its final values stay readable.
    cnt_shard_t *kept = cnt_shard_lookup(IBMSG_T_BIND_THREAD, other, 1);
    ASSERT_EQ((void *)kept, (void *)other);
    go = true;
    th.join();
    ASSERT_EQ(ibmsg_t_thread_get_info(other, nullptr, nullptr, &alive), IBMSG_OK);
    EXPECT_EQ(alive, 0);
    EXPECT_EQ(cnt_read(kept, CNT_VERBS_RNR_EVENTS, CNT_READ_VALUE), 1u);
    ASSERT_EQ(ibmsg_t_thread_get_all(0, nullptr, &num2), IBMSG_OK);
    EXPECT_EQ(num2, num - 1);
    cnt_shard_unref(kept);
    EXPECT_EQ(ibmsg_t_thread_get_info(other, nullptr, nullptr, &alive), IBMSG_T_ERR_INVALID_HANDLE);
}
