// Remote atomics on a real device (Soft-RoCE in the guest: atomic_cap HCA): fetch-and-add and
// compare-and-swap results and final words, implicit atomics completed by a flush, ordering
// with puts and gets, refusals (misaligned, out of range, access, arguments) with their counters;
// several processes adding to one counter (the final value and every fetched value exact), and
// compare-and-swap as a lock around a get / put update.
#include <gtest/gtest.h>

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/core.h"
#include "counters/shards/shard.h"
#include "core_fixture.h"
#include "ibmsg/ibmsg.h"
#include "ibmsg/rma.h"

namespace
{

using core_test::open_context;

constexpr size_t kWords = 512;

struct AtomicTest : ::testing::Test {
    ibmsg_context_t ctx = IBMSG_CONTEXT_NULL;
    ibmsg_ep_t a = IBMSG_EP_NULL, b = IBMSG_EP_NULL;
    std::vector<uint64_t> remote = std::vector<uint64_t>(kWords, 0);
    ibmsg_mem_t rmem = IBMSG_MEM_NULL;
    ibmsg_rkey_t rkey = IBMSG_RKEY_NULL;
    uint64_t rbase = 0;

    void SetUp() override
    {
        core_test::open_pair(&ctx, &a, &b);
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        ASSERT_EQ(
            ibmsg_mem_map(ctx, remote.data(), remote.size() * 8,
                          IBMSG_MEM_REMOTE_READ | IBMSG_MEM_REMOTE_WRITE | IBMSG_MEM_REMOTE_ATOMIC,
                          &rmem),
            IBMSG_OK);
        rkey = unpack_key(rmem);
        rbase = uint64_t(uintptr_t(remote.data()));
    }
    void TearDown() override
    {
        if (ctx == IBMSG_CONTEXT_NULL) {
            return;
        }
        EXPECT_EQ(cnt(CNT_VERBS_WC_ERRORS), 0u);
        if (rkey != IBMSG_RKEY_NULL) {
            EXPECT_EQ(ibmsg_rkey_destroy(rkey), IBMSG_OK);
        }
        if (rmem != IBMSG_MEM_NULL) {
            EXPECT_EQ(ibmsg_mem_unmap(rmem), IBMSG_OK);
        }
        EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
    }
    ibmsg_rkey_t unpack_key(ibmsg_mem_t m)
    {
        return core_test::unpack_key(m, a);
    }
    uint64_t cnt(cnt_id_t id) const
    {
        return cnt_read(ctx->cnt, id, CNT_READ_VALUE);
    }
};

// Every fetch-and-add returns the word before it; wrapping is modulo 2^64; compare-and-swap
// swaps only on equality and always returns the old word.
TEST_F(AtomicTest, FetchAddAndCompareSwap)
{
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    uint64_t expect = 0;
    for (uint64_t i = 1; i <= 100; i++) {
        uint64_t old = 0xdeadbeef;
        ibmsg_request_t r;
        ibmsg_tag_status_t st;
        ASSERT_EQ(ibmsg_atomic_fetch_add64(a, i * 3, &old, rbase + 8 * 7, rkey, &r), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&r, &st), IBMSG_OK);
        EXPECT_EQ(old, expect);
        EXPECT_EQ(st.length, 8u);
        expect += i * 3;
    }
    EXPECT_EQ(remote[7], expect);
    // Wrap around.
    uint64_t old = 0;
    ibmsg_request_t r;
    remote[8] = UINT64_MAX - 1;
    ASSERT_EQ(ibmsg_atomic_fetch_add64(a, 5, &old, rbase + 64, rkey, &r), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
    EXPECT_EQ(old, UINT64_MAX - 1);
    EXPECT_EQ(remote[8], 3u);
    // Compare-and-swap: a miss leaves the word, a hit swaps it.
    remote[9] = 42;
    ASSERT_EQ(ibmsg_atomic_cswap64(a, 41, 1000, &old, rbase + 72, rkey, &r), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
    EXPECT_EQ(old, 42u);
    EXPECT_EQ(remote[9], 42u);
    ASSERT_EQ(ibmsg_atomic_cswap64(a, 42, 1000, &old, rbase + 72, rkey, &r), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
    EXPECT_EQ(old, 42u);
    EXPECT_EQ(remote[9], 1000u);
    // The first and the last word of the range; results into unaligned local memory.
    alignas(8) uint8_t odd[16] = {};
    ASSERT_EQ(
        ibmsg_atomic_fetch_add64(a, 9, reinterpret_cast<uint64_t *>(odd + 3), rbase, rkey, &r),
        IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
    remote[kWords - 1] = 77;
    ASSERT_EQ(ibmsg_atomic_fetch_add64(a, 1, &old, rbase + 8 * (kWords - 1), rkey, &r), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r, nullptr), IBMSG_OK);
    EXPECT_EQ(old, 77u);
    EXPECT_EQ(remote[0], 9u);
#if IBMSG_HAVE_CORE_COUNTERS
    EXPECT_EQ(cnt(CNT_CORE_RMA_FETCH_ADDS), 103u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_CSWAPS), 2u);
#endif
}

// Implicit atomics (no request) more than the send queue holds, in order with puts and gets on
// the same words: the flush completes them all and every result is written.
TEST_F(AtomicTest, ImplicitAtomicsOrderedWithPutsAndGets)
{
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    constexpr int kOps = 3000;
    std::vector<uint64_t> results(kOps, UINT64_MAX);
    std::vector<uint64_t> local(4, 0);
    ibmsg_mem_t lmem;
    ASSERT_EQ(ibmsg_mem_map(ctx, local.data(), local.size() * 8, 0, &lmem), IBMSG_OK);
    local[0] = 1000;
    ASSERT_EQ(ibmsg_put(a, &local[0], 8, lmem, rbase + 16, rkey, nullptr), IBMSG_OK);
    for (int i = 0; i < kOps; i++) {
        ASSERT_EQ(ibmsg_atomic_fetch_add64(a, 1, &results[i], rbase + 16, rkey, nullptr), IBMSG_OK);
        if (i == kOps / 2) {
            // A get in the middle reads what the atomics before it made; a put after it is
            // fenced behind it and the atomics that follow see the put's value.
            ASSERT_EQ(ibmsg_get(a, &local[1], 8, lmem, rbase + 16, rkey, nullptr), IBMSG_OK);
            local[2] = 50000;
            ASSERT_EQ(ibmsg_put(a, &local[2], 8, lmem, rbase + 16, rkey, nullptr), IBMSG_OK);
        }
    }
    ASSERT_EQ(ibmsg_ep_flush_wait(a), IBMSG_OK);
    for (int i = 0; i <= kOps / 2; i++) {
        ASSERT_EQ(results[i], 1000u + uint64_t(i)) << i;
    }
    EXPECT_EQ(local[1], 1000u + kOps / 2 + 1);
    for (int i = kOps / 2 + 1; i < kOps; i++) {
        ASSERT_EQ(results[i], 50000u + uint64_t(i - kOps / 2 - 1)) << i;
    }
    EXPECT_EQ(remote[2], 50000u + kOps - kOps / 2 - 1);
    EXPECT_EQ(ibmsg_mem_unmap(lmem), IBMSG_OK);
}

// Refusals happen locally, post nothing and are counted: misaligned and out-of-range addresses
// (OUT_OF_BOUNDS), a key without atomic access (ACCESS), bad arguments (INVALID).
TEST_F(AtomicTest, BadArguments)
{
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    uint64_t old = 5;
    ibmsg_request_t r = IBMSG_REQUEST_NULL;
    const uint64_t posted = cnt(CNT_VERBS_SEND_WRS_POSTED);
    EXPECT_EQ(ibmsg_atomic_fetch_add64(a, 1, &old, rbase + 4, rkey, &r), IBMSG_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(ibmsg_atomic_cswap64(a, 0, 1, &old, rbase + 1, rkey, &r), IBMSG_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(ibmsg_atomic_fetch_add64(a, 1, &old, rbase + kWords * 8, rkey, &r),
              IBMSG_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(ibmsg_atomic_cswap64(a, 0, 1, &old, rbase - 8, rkey, &r), IBMSG_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(ibmsg_atomic_fetch_add64(a, 1, &old, UINT64_MAX - 7, rkey, &r),
              IBMSG_ERR_OUT_OF_BOUNDS);
    EXPECT_EQ(ibmsg_atomic_fetch_add64(a, 1, nullptr, rbase, rkey, &r), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_atomic_fetch_add64(nullptr, 1, &old, rbase, rkey, &r), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_atomic_cswap64(a, 0, 1, &old, rbase, nullptr, &r), IBMSG_ERR_INVALID);
    // A key of another endpoint.
    EXPECT_EQ(ibmsg_atomic_cswap64(b, 0, 1, &old, rbase, rkey, &r), IBMSG_ERR_INVALID);
    // Memory mapped without IBMSG_MEM_REMOTE_ATOMIC.
    std::vector<uint64_t> plain(8, 0);
    ibmsg_mem_t pmem;
    ASSERT_EQ(
        ibmsg_mem_map(ctx, plain.data(), 64, IBMSG_MEM_REMOTE_READ | IBMSG_MEM_REMOTE_WRITE, &pmem),
        IBMSG_OK);
    ibmsg_rkey_t pkey = unpack_key(pmem);
    EXPECT_EQ(ibmsg_atomic_fetch_add64(a, 1, &old, uint64_t(uintptr_t(plain.data())), pkey, &r),
              IBMSG_ERR_ACCESS);
    // Unknown map flags.
    ibmsg_mem_t bad;
    EXPECT_EQ(ibmsg_mem_map(ctx, plain.data(), 64, 0x8, &bad), IBMSG_ERR_INVALID);
    EXPECT_EQ(old, 5u);
    EXPECT_EQ(r, IBMSG_REQUEST_NULL);
    EXPECT_EQ(remote[0], 0u);
#if IBMSG_HAVE_CORE_COUNTERS
    EXPECT_EQ(cnt(CNT_CORE_RMA_REFUSED_OOB), 5u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_FETCH_ADDS), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RMA_CSWAPS), 0u);
    EXPECT_EQ(cnt(CNT_VERBS_SEND_WRS_POSTED), posted);
#else
    (void)posted;
#endif
    EXPECT_EQ(ibmsg_rkey_destroy(pkey), IBMSG_OK);
    EXPECT_EQ(ibmsg_mem_unmap(pmem), IBMSG_OK);
}

// The child side of the multi-process tests: connect to the parent, take the key.
struct Child {
    ibmsg_context_t ctx = IBMSG_CONTEXT_NULL;
    ibmsg_ep_t ep = IBMSG_EP_NULL;
    ibmsg_oob_t conn = nullptr;
    ibmsg_rkey_t k = IBMSG_RKEY_NULL;
    uint64_t base = 0;

    bool join(uint16_t port)
    {
        uint8_t blob[64];
        size_t blen = sizeof(blob);
        return open_context(&ctx) == IBMSG_OK &&
               core_test::join_parent(ctx, port, &ep, &conn) == IBMSG_OK &&
               ibmsg_oob_recv(conn, blob, &blen, 30000) == IBMSG_OK &&
               ibmsg_rkey_unpack(ep, blob, blen, &k) == IBMSG_OK &&
               ibmsg_rkey_range(k, &base, nullptr) == IBMSG_OK;
    }
    int wait_op(ibmsg_request_t *r)
    {
        return ibmsg_request_wait(r, nullptr);
    }
};

// The parent: forks n children running body(child, index) (exit status 0: success), serves them
// the key of words, and waits for them all.
template <typename Body> void run_children(int n, std::vector<uint64_t> &words, Body body)
{
    ibmsg_oob_t listener;
    uint16_t port = 0;
    ASSERT_EQ(ibmsg_oob_listen("127.0.0.1", 0, &listener), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_port(listener, &port), IBMSG_OK);
    fflush(nullptr);
    std::vector<pid_t> pids;
    for (int i = 0; i < n; i++) {
        pid_t pid = fork();
        ASSERT_GE(pid, 0);
        if (pid == 0) {
            ibmsg_oob_close(listener);
            Child c;
            if (!c.join(port)) {
                _exit(10);
            }
            int rc = body(c, i);
            // Tell the parent, and stay until it has everyone's word.
            uint8_t done = 1;
            if (ibmsg_oob_send(c.conn, &done, 1, 30000) != IBMSG_OK) {
                _exit(20);
            }
            size_t dl = sizeof(done);
            ibmsg_oob_recv(c.conn, &done, &dl, 60000);
            ibmsg_rkey_destroy(c.k);
            ibmsg_oob_close(c.conn);
            ibmsg_context_destroy(c.ctx);
            _exit(rc);
        }
        pids.push_back(pid);
    }
    ibmsg_context_t ctx;
    ASSERT_EQ(open_context(&ctx), IBMSG_OK);
    ibmsg_mem_t m;
    ASSERT_EQ(
        ibmsg_mem_map(ctx, words.data(), words.size() * 8,
                      IBMSG_MEM_REMOTE_READ | IBMSG_MEM_REMOTE_WRITE | IBMSG_MEM_REMOTE_ATOMIC, &m),
        IBMSG_OK);
    uint8_t blob[IBMSG_RKEY_BLOB_SIZE];
    size_t blen = sizeof(blob);
    ASSERT_EQ(ibmsg_mem_rkey_pack(m, blob, &blen), IBMSG_OK);
    std::vector<ibmsg_oob_t> conns(n);
    std::vector<ibmsg_ep_t> eps(n);
    for (int i = 0; i < n; i++) {
        ASSERT_EQ(ibmsg_ep_create(ctx, &eps[i]), IBMSG_OK);
        ASSERT_EQ(ibmsg_oob_accept(listener, 30000, &conns[i]), IBMSG_OK);
        ASSERT_EQ(ibmsg_oob_ep_connect(conns[i], eps[i], 30000), IBMSG_OK);
        ASSERT_EQ(ibmsg_oob_send(conns[i], blob, blen, 30000), IBMSG_OK);
    }
    for (int i = 0; i < n; i++) {
        uint8_t done = 0;
        size_t dl = sizeof(done);
        EXPECT_EQ(ibmsg_oob_recv(conns[i], &done, &dl, 120000), IBMSG_OK) << i;
    }
    for (int i = 0; i < n; i++) {
        uint8_t done = 1;
        ibmsg_oob_send(conns[i], &done, 1, 30000);
    }
    for (pid_t pid : pids) {
        int st = 0;
        ASSERT_EQ(waitpid(pid, &st, 0), pid);
        EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0)
            << "child exit " << (WIFEXITED(st) ? WEXITSTATUS(st) : -1);
    }
    for (int i = 0; i < n; i++) {
        ibmsg_oob_close(conns[i]);
    }
    ibmsg_oob_close(listener);
    EXPECT_EQ(ibmsg_mem_unmap(m), IBMSG_OK);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// Four processes add to one counter, with requests and implicitly: the final value is exact and
// the values fetched are every value from 0 to the total, each once.
TEST(AtomicProcesses, SeveralProcessesAddToOneCounter)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    constexpr int kProcs = 4, kOps = 500;
    std::vector<uint64_t> words(16, 0);
    // Fetched values come back through a pipe per child.
    int fds[kProcs][2];
    for (auto &fd : fds) {
        ASSERT_EQ(pipe(fd), 0);
    }
    std::vector<uint64_t> all;
    run_children(kProcs, words, [&](Child &c, int idx) -> int {
        std::vector<uint64_t> got(kOps, UINT64_MAX);
        for (int j = 0; j < kOps; j += 10) {
            ibmsg_request_t r[5];
            for (int q = 0; q < 5; q++) { // five with requests
                if (ibmsg_atomic_fetch_add64(c.ep, 1, &got[j + q], c.base + 8, c.k, &r[q]) !=
                    IBMSG_OK) {
                    return 30;
                }
            }
            for (int q = 5; q < 10; q++) { // five implicit
                if (ibmsg_atomic_fetch_add64(c.ep, 1, &got[j + q], c.base + 8, c.k, nullptr) !=
                    IBMSG_OK) {
                    return 31;
                }
            }
            for (auto &q : r) {
                if (c.wait_op(&q) != IBMSG_OK) {
                    return 32;
                }
            }
            if (ibmsg_ep_flush_wait(c.ep) != IBMSG_OK) {
                return 33;
            }
        }
        ssize_t w = write(fds[idx][1], got.data(), got.size() * 8);
        return w == ssize_t(got.size() * 8) ? 0 : 34;
    });
    for (auto &fd : fds) {
        close(fd[1]);
        std::vector<uint64_t> got(kOps);
        ASSERT_EQ(read(fd[0], got.data(), got.size() * 8), ssize_t(got.size() * 8));
        close(fd[0]);
        // One process's own values rise.
        EXPECT_TRUE(std::is_sorted(got.begin(), got.end()));
        all.insert(all.end(), got.begin(), got.end());
    }
    EXPECT_EQ(words[1], uint64_t(kProcs * kOps));
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), size_t(kProcs * kOps));
    for (size_t i = 0; i < all.size(); i++) {
        ASSERT_EQ(all[i], i);
    }
}

// Compare-and-swap as a lock: three processes each take it (0 -> their id), read the shared
// word with a get, write it plus one with a put, flush, and release it (id -> 0). The word ends
// exact, and every release finds the lock held by its releaser.
TEST(AtomicProcesses, CompareAndSwapAsLock)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    constexpr int kProcs = 3, kRounds = 100;
    std::vector<uint64_t> words(16, 0);
    run_children(kProcs, words, [&](Child &c, int idx) -> int {
        const uint64_t me = uint64_t(idx) + 1;
        std::vector<uint64_t> local(2, 0);
        ibmsg_mem_t lm;
        if (ibmsg_mem_map(c.ctx, local.data(), 16, 0, &lm) != IBMSG_OK) {
            return 40;
        }
        for (int i = 0; i < kRounds; i++) {
            uint64_t old = 1;
            ibmsg_request_t r;
            do { // acquire
                if (ibmsg_atomic_cswap64(c.ep, 0, me, &old, c.base, c.k, &r) != IBMSG_OK ||
                    c.wait_op(&r) != IBMSG_OK) {
                    return 41;
                }
            } while (old != 0);
            if (ibmsg_get(c.ep, &local[0], 8, lm, c.base + 16, c.k, &r) != IBMSG_OK ||
                c.wait_op(&r) != IBMSG_OK) {
                return 42;
            }
            local[1] = local[0] + 1;
            if (ibmsg_put(c.ep, &local[1], 8, lm, c.base + 16, c.k, nullptr) != IBMSG_OK ||
                ibmsg_ep_flush_wait(c.ep) != IBMSG_OK) {
                return 43;
            }
            if (ibmsg_atomic_cswap64(c.ep, me, 0, &old, c.base, c.k, &r) != IBMSG_OK ||
                c.wait_op(&r) != IBMSG_OK) {
                return 44;
            }
            if (old != me) {
                return 45; // someone else held it
            }
        }
        ibmsg_mem_unmap(lm);
        return 0;
    });
    EXPECT_EQ(words[0], 0u);
    EXPECT_EQ(words[2], uint64_t(kProcs * kRounds));
}

} // namespace
