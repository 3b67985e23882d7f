// The registration cache as a data structure: keying, LRU eviction, reference counts, limits
// and validation against page frames or release events, with the registration as a callback (no
// device). The frames come from a fake table, or from this process's real /proc/self/pagemap;
// the releases from a fake list, or from this process's real userfaultfd (verbs/release_watch.h).
#include <gtest/gtest.h>

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstring>
#include <map>
#include <set>

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include "counters/shards/shard.h"
#include "verbs/pagemap.h"
#include "verbs/reg_cache.h"
#include "verbs/release_watch.h"

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
    // Release events: fake ones, or the process's real ones (real_releases).
    int open_status = IBMSG_OK;
    int watch_status = IBMSG_OK;
    std::vector<std::pair<uintptr_t, size_t>> watched;
    std::vector<std::pair<uintptr_t, uintptr_t>> releases; // reported in order
    size_t next_release = 0;
    bool lose_events = false;
    bool real_releases = false;
    bool reader_open = false;
    verbs_release_reader_t reader{};

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
    static int watch_open(void *arg, const char **why)
    {
        auto *f = static_cast<Fake *>(arg);
        if (f->real_releases) {
            int st = verbs_release_watch_open(&f->reader, why);
            f->reader_open = st == IBMSG_OK;
            return st;
        }
        *why = "fake refusal";
        return f->open_status;
    }
    static int watch(void *arg, uintptr_t addr, size_t len)
    {
        auto *f = static_cast<Fake *>(arg);
        f->watched.emplace_back(addr, len);
        return f->real_releases ? verbs_release_watch_add(&f->reader, addr, len) : f->watch_status;
    }
    static int released(void *arg, uintptr_t *start, uintptr_t *end)
    {
        auto *f = static_cast<Fake *>(arg);
        if (f->real_releases) {
            return verbs_release_watch_next(&f->reader, start, end);
        }
        if (f->lose_events) {
            f->lose_events = false;
            return -1;
        }
        if (f->next_release == f->releases.size()) {
            return 0;
        }
        *start = f->releases[f->next_release].first;
        *end = f->releases[f->next_release].second;
        f->next_release++;
        return 1;
    }
};

const verbs_rcache_ops_t kOps = {Fake::reg,   Fake::dereg,    Fake::pages, Fake::watch_open,
                                 Fake::watch, Fake::released, nullptr};

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
        if (fake.reader_open) {
            verbs_release_watch_close(&fake.reader);
        }
        EXPECT_TRUE(fake.regs.empty()) << "registrations leaked";
        EXPECT_EQ(level(CNT_VERBS_REG_BYTES), 0);
        // Every registration made and released is counted, whatever released it.
        EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), fake.regs_made);
        EXPECT_EQ(c(CNT_VERBS_REG_RELEASES), fake.deregs);
        cnt_block_destroy(cnt);
    }
    void make(uint32_t max_entries = 8, uint64_t max_bytes = 1 << 20, int enabled = 1,
              int check = VERBS_RCACHE_CHECK_FRAMES)
    {
        verbs_rcache_params_t p{};
        p.enabled = enabled;
        p.check = check;
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

// Release events: a hit reads no frames; a reported release drops exactly the entries it
// overlaps (by page: an exact entry shares its pages), in use or not; lost events drop all.
TEST_F(RegCacheTest, ReleasesDropTheEntriesTheyOverlap)
{
    fake.pages_status = IBMSG_ERR_IO; // never asked for
    make(8, 1 << 20, 1, VERBS_RCACHE_CHECK_RELEASES);
    ASSERT_TRUE(verbs_rcache_enabled(rc));
    EXPECT_EQ(verbs_rcache_check(rc), VERBS_RCACHE_CHECK_RELEASES);
    verbs_reg_t *a = get(kBase + 10, 100); // page kBase
    verbs_rcache_put(rc, a);
    verbs_reg_t *b =
        get(kBase + 4 * kPage, 2 * kPage, VERBS_ACCESS_REMOTE_READ | VERBS_ACCESS_EXACT);
    verbs_rcache_put(rc, get(kBase + 8 * kPage, kPage));
    ASSERT_EQ(fake.watched.size(), 3u);
    EXPECT_EQ(fake.watched[0], std::make_pair(kBase, kPage)) << "whole pages are watched";
    EXPECT_EQ(fake.watched[1], std::make_pair(kBase + 4 * kPage, 2 * kPage));
    verbs_rcache_put(rc, get(kBase + 10, 100));
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 1u);

    fake.releases.emplace_back(kBase + 5 * kPage, kBase + 6 * kPage); // b's second page, in use
    fake.releases.emplace_back(kBase + kPage, kBase + 4 * kPage);     // between a and b: none
    verbs_rcache_put(rc, get(kBase + 10, 100));                       // a: a hit still
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 2u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_INVALIDATIONS), 1u);
    EXPECT_FALSE(b->cached);
    EXPECT_EQ(fake.deregs, 0u) << "b is in use: released at its put";
    verbs_rcache_put(rc, b);
    EXPECT_EQ(fake.deregs, 1u);

    fake.lose_events = true;
    verbs_rcache_put(rc, get(kBase + 10, 100)); // everything dropped: a miss
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_INVALIDATIONS), 3u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), 4u);
    EXPECT_EQ(fake.deregs, 3u);
    uint32_t entries = 0;
    verbs_rcache_usage(rc, &entries, nullptr);
    EXPECT_EQ(entries, 1u);
}

TEST_F(RegCacheTest, MemoryThatCannotBeWatchedIsRegisteredPerUse)
{
    make(8, 1 << 20, 1, VERBS_RCACHE_CHECK_RELEASES);
    fake.watch_status = IBMSG_ERR_NOT_SUPPORTED; // a file mapping
    for (int i = 0; i < 2; i++) {
        verbs_reg_t *r = get(kBase, kPage);
        EXPECT_FALSE(r->cached);
        verbs_rcache_put(rc, r);
    }
    EXPECT_EQ(fake.regs_made, 2u);
    EXPECT_EQ(fake.deregs, 2u);
}

// Automatic choice: frames when visible (no watch opened), else events; neither: disabled.
TEST_F(RegCacheTest, AutoTakesFramesThenEventsThenNothing)
{
    make(8, 1 << 20, 1, VERBS_RCACHE_CHECK_AUTO);
    EXPECT_EQ(verbs_rcache_check(rc), VERBS_RCACHE_CHECK_FRAMES);
    verbs_rcache_destroy(rc);
    rc = nullptr;

    fake.pages_status = IBMSG_ERR_NOT_SUPPORTED;
    make(8, 1 << 20, 1, VERBS_RCACHE_CHECK_AUTO);
    EXPECT_TRUE(verbs_rcache_enabled(rc));
    EXPECT_EQ(verbs_rcache_check(rc), VERBS_RCACHE_CHECK_RELEASES);
    verbs_rcache_destroy(rc);
    rc = nullptr;

    fake.open_status = IBMSG_ERR_NOT_SUPPORTED;
    make(8, 1 << 20, 1, VERBS_RCACHE_CHECK_AUTO);
    EXPECT_FALSE(verbs_rcache_enabled(rc));
    verbs_rcache_put(rc, get(kBase, 1));
    EXPECT_EQ(fake.deregs, 1u);
}

// The process's real release events: rewriting the same pages keeps the entry; munmap and a
// new mapping at the same address, madvise(MADV_DONTNEED), mremap away, and mmap MAP_FIXED over
// it each drop it, seen by the very next get.
TEST_F(RegCacheTest, RealReleaseEventsSeeMemoryMappedAgain)
{
    fake.real_releases = true;
    fake.pages_status = IBMSG_ERR_NOT_SUPPORTED;
    make(8, 1 << 20, 1, VERBS_RCACHE_CHECK_AUTO);
    ASSERT_TRUE(verbs_rcache_enabled(rc)) << "userfaultfd refused here (see the warning)";
    ASSERT_EQ(verbs_rcache_check(rc), VERBS_RCACHE_CHECK_RELEASES);
    const size_t len = 8 * kPage;
    auto *p = static_cast<char *>(
        mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(p, MAP_FAILED);
    std::memset(p, 1, len);
    auto cycle = [&] { verbs_rcache_put(rc, get(uintptr_t(p), len)); };
    cycle();
    std::memset(p, 2, len); // same pages, new contents: still right
    cycle();
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 1u);

    ASSERT_EQ(munmap(p, len), 0);
    ASSERT_EQ(mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
              p);
    cycle();
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_INVALIDATIONS), 1u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), 2u);

    ASSERT_EQ(madvise(p + 3 * kPage, kPage, MADV_DONTNEED), 0);
    cycle();
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_INVALIDATIONS), 2u);

    ASSERT_EQ(mmap(p + kPage, kPage, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
              p + kPage);
    cycle();
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_INVALIDATIONS), 3u);

    void *away = mmap(nullptr, len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ASSERT_NE(away, MAP_FAILED);
    ASSERT_EQ(mremap(p, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, away), away);
    ASSERT_EQ(mmap(p, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0),
              p);
    cycle();
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_INVALIDATIONS), 4u);
    cycle();
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_HITS), 2u);
    EXPECT_EQ(c(CNT_VERBS_REG_CACHE_MISSES), 5u);
    verbs_rcache_destroy(rc);
    rc = nullptr;
    munmap(away, len);
    munmap(p, len);
}

// A forked child has no reader thread and its mappings no userfaultfd: its munmap of watched
// memory must not wait for one, and its readers are told their events were lost. The parent
// goes on seeing its own releases.
TEST(ReleaseWatch, AForkedChildNeitherHangsNorTrustsItsEvents)
{
    verbs_release_reader_t r{};
    const char *why = nullptr;
    ASSERT_EQ(verbs_release_watch_open(&r, &why), IBMSG_OK) << why;
    const size_t len = 4 * kPage;
    auto *p = static_cast<char *>(
        mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    ASSERT_NE(p, MAP_FAILED);
    std::memset(p, 1, len);
    ASSERT_EQ(verbs_release_watch_add(&r, uintptr_t(p), len), IBMSG_OK);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
        alarm(10); // a munmap held for a reader that does not exist would end here
        uintptr_t a = 0, b = 0;
        int ok = munmap(p, len) == 0 && verbs_release_watch_next(&r, &a, &b) == -1 &&
                 verbs_release_watch_add(&r, uintptr_t(p), len) == IBMSG_ERR_NOT_SUPPORTED;
        _exit(ok ? 0 : 1);
    }
    int st = 0;
    ASSERT_EQ(waitpid(pid, &st, 0), pid);
    EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << "child status " << st;
    uintptr_t a = 0, b = 0;
    EXPECT_EQ(verbs_release_watch_next(&r, &a, &b), 0) << "the child's munmap is not ours";
    ASSERT_EQ(munmap(p + kPage, kPage), 0);
    ASSERT_EQ(verbs_release_watch_next(&r, &a, &b), 1);
    EXPECT_EQ(a, uintptr_t(p) + kPage);
    EXPECT_EQ(b, uintptr_t(p) + 2 * kPage);
    EXPECT_EQ(verbs_release_watch_next(&r, &a, &b), 0);
    munmap(p, len);
    verbs_release_watch_close(&r);
}

// Under a locked-memory limit the cache keeps what the limit leaves beside the context's own
// pinned bytes, never less than an eighth of the limit, never more than its own maximum.
TEST(RegCacheMemlock, CapIsTheLimitLessTheContextsNeedWithAFloor)
{
    const uint64_t MiB = 1 << 20, GiB = 1 << 30;
    EXPECT_EQ(verbs_rcache_memlock_cap(UINT64_MAX, 17 * MiB, GiB), GiB) << "no limit";
    EXPECT_EQ(verbs_rcache_memlock_cap(64 * MiB, 17 * MiB, GiB), 47 * MiB);
    EXPECT_EQ(verbs_rcache_memlock_cap(64 * MiB, 17 * MiB, 16 * MiB), 16 * MiB) << "its maximum";
    EXPECT_EQ(verbs_rcache_memlock_cap(64 * MiB, 56 * MiB, GiB), 8 * MiB) << "the floor, exactly";
    EXPECT_EQ(verbs_rcache_memlock_cap(64 * MiB, 57 * MiB, GiB), 8 * MiB) << "the floor";
    EXPECT_EQ(verbs_rcache_memlock_cap(64 * MiB, 128 * MiB, GiB), 8 * MiB) << "needs above it";
    EXPECT_EQ(verbs_rcache_memlock_cap(8192, 8192, GiB), 4096u) << "4096 bytes at the least";
    EXPECT_EQ(verbs_rcache_memlock_cap(0, 0, GiB), 4096u);
}
