// The registration cache as a data structure: keying, LRU eviction, reference counts, limits
// and validation against page frames, with the registration as a callback (no device). The
// frames come from a fake table, or from this process's real /proc/self/pagemap.
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include "counters/shards/shard.h"
#include "verbs/pagemap.h"
#include "verbs/reg_cache.h"

namespace
{

constexpr size_t kPage = 4096;

// Registrations and page frames as the test says.
struct Fake {
    uint32_t next_key = 100;
    std::set<uintptr_t> live; // handles (the registration's start | its serial)
    std::map<void *, std::pair<uintptr_t, size_t>> regs;
    std::map<uintptr_t, uint64_t> frames; // page address -> frame (absent: 1000 + page index)
    int fail_reg = 0;
    size_t lockable = 0; // > 0: bytes registrations may hold in all, NO_MEMORY beyond
    size_t locked = 0;
    size_t attempts = 0;
    int pages_status = IBMSG_OK;
    int pagemap_fd = -1; // >= 0: real frames
    size_t regs_made = 0, deregs = 0;

    static int reg(void *arg, uintptr_t addr, size_t len, unsigned, void **handle, uint32_t *lkey,
                   uint32_t *rkey)
    {
        auto *f = static_cast<Fake *>(arg);
        f->attempts++;
        if (f->fail_reg != 0) {
            return f->fail_reg;
        }
        if (f->lockable != 0 && f->locked + len > f->lockable) {
            return IBMSG_ERR_NO_MEMORY; // as RLIMIT_MEMLOCK refuses a registration
        }
        f->locked += len;
        void *h = new int(0);
        f->regs[h] = {addr, len};
        *handle = h;
        *lkey = f->next_key++;
        *rkey = f->next_key++;
        f->regs_made++;
        return IBMSG_OK;
    }
    static void dereg(void *arg, void *handle)
    {
        auto *f = static_cast<Fake *>(arg);
        auto it = f->regs.find(handle);
        if (it != f->regs.end()) {
            f->locked -= it->second.second;
        }
        EXPECT_EQ(f->regs.erase(handle), 1u) << "deregistered twice or never registered";
        delete static_cast<int *>(handle);
        f->deregs++;
    }
    static int pages(void *arg, uintptr_t addr, size_t npages, uint64_t *pfns)
    {
        auto *f = static_cast<Fake *>(arg);
        if (f->pages_status != IBMSG_OK) {
            return f->pages_status;
        }
        if (f->pagemap_fd >= 0) {
            return verbs_pagemap_read(f->pagemap_fd, addr, npages, kPage, pfns);
        }
        for (size_t i = 0; i < npages; i++) {
            uintptr_t p = addr + i * kPage;
            auto it = f->frames.find(p);
            pfns[i] = it != f->frames.end() ? it->second : 1000 + p / kPage;
        }
        return IBMSG_OK;
    }
};

const verbs_rcache_ops_t kOps = {Fake::reg, Fake::dereg, Fake::pages, nullptr};

struct RegCacheTest : ::testing::Test {
    Fake fake;
    cnt_shard_t *cnt = nullptr;
    verbs_rcache_t *rc = nullptr;
    int owner = 0;

    void SetUp() override
    {
        ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_CONTEXT, &owner, &cnt), IBMSG_OK);
    }
    void TearDown() override
    {
        verbs_rcache_destroy(rc);
        EXPECT_TRUE(fake.regs.empty()) << "registrations leaked";
        EXPECT_EQ(level(CNT_VERBS_REG_BYTES), 0);
        // Every registration made and released is counted, whatever released it.
        EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), fake.regs_made);
        EXPECT_EQ(c(CNT_VERBS_REG_RELEASES), fake.deregs);
        cnt_block_destroy(cnt);
    }
    void make(uint32_t max_entries = 8, uint64_t max_bytes = 1 << 20, int enabled = 1)
    {
        verbs_rcache_params_t p{};
        p.enabled = enabled;
        p.max_entries = max_entries;
        p.max_bytes = max_bytes;
        p.page_size = kPage;
        ASSERT_EQ(verbs_rcache_create(&kOps, &fake, &p, cnt, &rc), IBMSG_OK);
    }
    uint64_t c(cnt_id_t id) const
    {
        return cnt_read(cnt, id, CNT_READ_VALUE);
    }
    int64_t level(cnt_id_t id, cnt_read_what_t w = CNT_READ_VALUE) const
    {
        return (int64_t)cnt_read(cnt, id, w);
    }
    verbs_reg_t *get(uintptr_t addr, size_t len, unsigned access = VERBS_ACCESS_REMOTE_READ)
    {
        verbs_reg_t *r = nullptr;
        EXPECT_EQ(verbs_rcache_get(rc, reinterpret_cast<void *>(addr), len, access, &r), IBMSG_OK);
        return r;
    }
};

constexpr uintptr_t kBase = 0x10000000;

} // namespace

TEST_F(RegCacheTest, HitsTheSamePageRangeOnly)
{
    make();
    verbs_reg_t *r = get(kBase + 10, 100);
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(r->start, kBase);
    EXPECT_EQ(r->end, kBase + kPage) << "whole pages, never more";
    EXPECT_TRUE(r->cached);
    verbs_rcache_put(rc, r);
    EXPECT_EQ(get(kBase + 20, 50), r) << "same page range: a hit";
    verbs_rcache_put(rc, r);
    verbs_reg_t *wider = get(kBase, kPage + 1);
    EXPECT_NE(wider, r) << "another page range: its own registration";
    EXPECT_EQ(wider->end, kBase + 2 * kPage);
    verbs_reg_t *write = get(kBase + 10, 100, VERBS_ACCESS_LOCAL_WRITE);
    EXPECT_NE(write, r) << "another access mode: its own registration";
    verbs_rcache_put(rc, wider);
    verbs_rcache_put(rc, write);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 1u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), 3u);
    EXPECT_EQ(fake.regs_made, 3u);
    EXPECT_EQ(level(CNT_VERBS_REG_BYTES), int64_t(4 * kPage));
    uint32_t n = 0;
    uint64_t bytes = 0;
    verbs_rcache_usage(rc, &n, &bytes);
    EXPECT_EQ(n, 3u);
    EXPECT_EQ(bytes, 4 * kPage);
}

TEST_F(RegCacheTest, EvictsLeastRecentlyUsedUnusedEntries)
{
    make(3);
    verbs_reg_t *r[4];
    for (int i = 0; i < 3; i++) {
        r[i] = get(kBase + i * 0x10000, 100);
        verbs_rcache_put(rc, r[i]);
    }
    EXPECT_EQ(get(kBase, 100), r[0]); // 0 is now the most recently used
    verbs_rcache_put(rc, r[0]);
    r[3] = get(kBase + 3 * 0x10000, 100);
    verbs_rcache_put(rc, r[3]);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_EVICTIONS), 1u);
    EXPECT_EQ(fake.deregs, 1u);
    // 1 was the least recently used: gone; 0, 2 and 3 still hit.
    EXPECT_EQ(get(kBase, 100), r[0]);
    verbs_rcache_put(rc, r[0]);
    EXPECT_EQ(get(kBase + 2 * 0x10000, 100), r[2]);
    verbs_rcache_put(rc, r[2]);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 3u);
    verbs_reg_t *again = get(kBase + 0x10000, 100); // 1 again: a miss that evicts 3
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), 5u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_EVICTIONS), 2u);
    EXPECT_EQ(get(kBase + 0x10000, 100), again); // a second reference
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 4u);
    verbs_rcache_put(rc, again);
    verbs_rcache_put(rc, again);
}

TEST_F(RegCacheTest, EntriesInUseAreNeverEvicted)
{
    make(2);
    verbs_reg_t *a = get(kBase, 100), *b = get(kBase + 0x10000, 100);
    verbs_reg_t *c3 = get(kBase + 0x20000, 100);
    EXPECT_FALSE(c3->cached) << "the cache is full of entries in use: one-off registration";
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_EVICTIONS), 0u);
    EXPECT_EQ(level(CNT_VERBS_REG_BYTES), int64_t(3 * kPage));
    verbs_rcache_put(rc, c3);
    EXPECT_EQ(fake.deregs, 1u) << "an uncached registration goes at its last put";
    EXPECT_EQ(level(CNT_VERBS_REG_BYTES), int64_t(2 * kPage));
    EXPECT_EQ(level(CNT_VERBS_REG_BYTES, CNT_READ_HIGH), int64_t(3 * kPage));
    EXPECT_EQ(get(kBase, 100), a) << "two references to one entry";
    EXPECT_EQ(a->refcount, 2u);
    verbs_rcache_put(rc, a);
    verbs_rcache_put(rc, a);
    verbs_rcache_put(rc, b);
    EXPECT_EQ(fake.deregs, 1u);
}

TEST_F(RegCacheTest, ByteLimitEvictsAndOversizeStaysUncached)
{
    make(100, 4 * kPage);
    verbs_reg_t *a = get(kBase, 2 * kPage);
    verbs_rcache_put(rc, a);
    verbs_reg_t *b = get(kBase + 0x10000, 2 * kPage);
    verbs_rcache_put(rc, b);
    verbs_reg_t *big = get(kBase + 0x20000, 5 * kPage);
    EXPECT_FALSE(big->cached);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_EVICTIONS), 0u) << "nothing evicted for what cannot fit";
    verbs_rcache_put(rc, big);
    verbs_reg_t *d = get(kBase + 0x30000, 1);
    verbs_rcache_put(rc, d);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_EVICTIONS), 1u) << "a evicted to fit one more page";
    EXPECT_EQ(get(kBase + 0x10000, 2 * kPage), b) << "b, used more recently, stays";
    verbs_rcache_put(rc, b);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 1u);
}

TEST_F(RegCacheTest, RemappedPagesInvalidate)
{
    make();
    verbs_reg_t *r = get(kBase, 3 * kPage);
    verbs_rcache_put(rc, r);
    fake.frames[kBase + kPage] = 7; // the middle page maps another frame now
    verbs_reg_t *r2 = get(kBase, 3 * kPage);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_INVALIDATIONS), 1u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 0u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), 2u);
    EXPECT_EQ(fake.deregs, 1u) << "the stale registration is released";
    verbs_rcache_put(rc, r2);
    verbs_rcache_put(rc, get(kBase, 3 * kPage)); // unchanged since: a hit
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 1u);

    // Invalidated while in use: valid for its user until the last put.
    verbs_reg_t *held = get(kBase, 3 * kPage);
    fake.frames[kBase] = 8;
    verbs_reg_t *fresh = get(kBase, 3 * kPage);
    EXPECT_NE(fresh, held);
    EXPECT_FALSE(held->cached);
    EXPECT_EQ(fake.deregs, 1u);
    verbs_rcache_put(rc, held);
    EXPECT_EQ(fake.deregs, 2u);
    verbs_rcache_put(rc, fresh);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_INVALIDATIONS), 2u);
}

TEST_F(RegCacheTest, ExplicitInvalidateOfARange)
{
    make();
    verbs_reg_t *a = get(kBase, kPage), *b = get(kBase + 4 * kPage, kPage);
    verbs_rcache_put(rc, a);
    verbs_rcache_invalidate(rc, reinterpret_cast<void *>(kBase + 100), 10);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_INVALIDATIONS), 1u);
    EXPECT_EQ(fake.deregs, 1u);
    verbs_rcache_invalidate(rc, reinterpret_cast<void *>(kBase + 4 * kPage), kPage);
    EXPECT_FALSE(b->cached);
    verbs_rcache_put(rc, b);
    EXPECT_EQ(fake.deregs, 2u);
}

TEST_F(RegCacheTest, DisabledRegistersEveryTime)
{
    make(8, 1 << 20, 0);
    EXPECT_FALSE(verbs_rcache_enabled(rc));
    for (int i = 0; i < 3; i++) {
        verbs_reg_t *r = get(kBase, 100);
        EXPECT_FALSE(r->cached);
        verbs_rcache_put(rc, r);
    }
    EXPECT_EQ(fake.regs_made, 3u);
    EXPECT_EQ(fake.deregs, 3u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), 3u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 0u);
}

TEST_F(RegCacheTest, HiddenFramesDisableTheCache)
{
    fake.pages_status = IBMSG_ERR_NOT_SUPPORTED;
    make();
    EXPECT_FALSE(verbs_rcache_enabled(rc));
    verbs_rcache_put(rc, get(kBase, 1));
    EXPECT_EQ(fake.deregs, 1u);
}

TEST_F(RegCacheTest, ErrorsAreReturnedNotCached)
{
    make();
    verbs_reg_t *r = nullptr;
    EXPECT_EQ(verbs_rcache_get(rc, reinterpret_cast<void *>(kBase), 0, 0, &r), IBMSG_ERR_INVALID);
    EXPECT_EQ(verbs_rcache_get(rc, reinterpret_cast<void *>(UINTPTR_MAX - 10), 100, 0, &r),
              IBMSG_ERR_INVALID);
    EXPECT_EQ(verbs_rcache_get(rc, reinterpret_cast<void *>(kBase), 1, 0, nullptr),
              IBMSG_ERR_INVALID);
    fake.fail_reg = IBMSG_ERR_NO_MEMORY;
    EXPECT_EQ(verbs_rcache_get(rc, reinterpret_cast<void *>(kBase), 1, 0, &r), IBMSG_ERR_NO_MEMORY);
    EXPECT_EQ(r, nullptr);
    fake.fail_reg = 0;
    verbs_rcache_put(rc, get(kBase, 1));
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), 1u);
}

TEST_F(RegCacheTest, ManyEntriesStaySorted)
{
    make(1000, 1ull << 30);
    std::vector<verbs_reg_t *> regs;
    // Insert in a scrambled order, then find each again.
    for (uint32_t i = 0; i < 500; i++) {
        uint32_t k = (i * 7919u) % 500u;
        regs.push_back(get(kBase + uintptr_t(k) * 2 * kPage, kPage + (k % 3)));
    }
    for (auto *r : regs) {
        verbs_rcache_put(rc, r);
    }
    for (uint32_t k = 0; k < 500; k++) {
        verbs_reg_t *r = get(kBase + uintptr_t(k) * 2 * kPage, kPage + (k % 3));
        EXPECT_EQ(r->start, kBase + uintptr_t(k) * 2 * kPage);
        verbs_rcache_put(rc, r);
    }
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 500u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), 500u);
}

// Real page frames: a range moved away (its pages stay alive, as a registration keeps them)
// and fresh memory mapped at the same address is seen as other pages; rewriting the same pages
// is not.
TEST_F(RegCacheTest, RealPagemapSeesMemoryMappedAgain)
{
    fake.pagemap_fd = verbs_pagemap_open();
    ASSERT_GE(fake.pagemap_fd, 0);
    const size_t len = 8 * kPage;
    void *p = mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(p, MAP_FAILED);
    std::memset(p, 1, len);
    uint64_t probe[8];
    int st = verbs_pagemap_read(fake.pagemap_fd, uintptr_t(p), 8, kPage, probe);
    if (st == IBMSG_ERR_NOT_SUPPORTED) {
        munmap(p, len);
        verbs_pagemap_close(fake.pagemap_fd);
        GTEST_SKIP() << "page frames are hidden (needs CAP_SYS_ADMIN)";
    }
    ASSERT_EQ(st, IBMSG_OK);
    make();
    ASSERT_TRUE(verbs_rcache_enabled(rc));
    verbs_rcache_put(rc, get(uintptr_t(p), len));
    std::memset(p, 2, len); // same pages, new contents: still right
    verbs_rcache_put(rc, get(uintptr_t(p), len));
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 1u);

    void *away = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(away, MAP_FAILED);
    ASSERT_EQ(mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, away), away);
    void *again =
        mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    ASSERT_EQ(again, p);
    std::memset(again, 3, len);
    verbs_rcache_put(rc, get(uintptr_t(p), len));
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_INVALIDATIONS), 1u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), 2u);
    munmap(again, len);
    verbs_rcache_put(rc, get(uintptr_t(p), len)); // unmapped: absent pages never match
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_INVALIDATIONS), 2u);
    munmap(away, len);
    verbs_rcache_destroy(rc);
    rc = nullptr;
    verbs_pagemap_close(fake.pagemap_fd);
}

// Out of lockable memory (RLIMIT_MEMLOCK): the unused cached registrations are released and the
// registration is tried exactly once more; entries in use stay, and with nothing unused to
// release the error comes back after one attempt.
TEST_F(RegCacheTest, OutOfLockableMemoryEvictsUnusedAndRetriesOnce)
{
    make(8, 1 << 20);
    fake.lockable = 4 * kPage;
    verbs_reg_t *held = get(kBase, kPage);
    for (int i = 1; i <= 3; i++) {
        verbs_rcache_put(rc, get(kBase + i * 2 * kPage, kPage)); // cached, unused
    }
    EXPECT_EQ(fake.locked, 4 * kPage);
    fake.attempts = 0;
    verbs_reg_t *big = get(kBase + 16 * kPage, 2 * kPage);
    ASSERT_NE(big, nullptr);
    EXPECT_EQ(fake.attempts, 2u) << "one refusal, one retry";
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_EVICTIONS), 3u);
    EXPECT_EQ(fake.locked, 3 * kPage) << "the held page and the new two";
    // Nothing unused now: a registration that does not fit fails after one attempt.
    fake.attempts = 0;
    verbs_reg_t *r = nullptr;
    EXPECT_EQ(verbs_rcache_get(rc, reinterpret_cast<void *>(kBase + 32 * kPage), 2 * kPage,
                               VERBS_ACCESS_REMOTE_READ, &r),
              IBMSG_ERR_NO_MEMORY);
    EXPECT_EQ(fake.attempts, 1u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_EVICTIONS), 3u);
    verbs_rcache_put(rc, big);
    verbs_rcache_put(rc, held);
}
