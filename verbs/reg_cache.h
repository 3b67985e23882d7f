/*
 * The registration cache of user buffers (rendezvous sources and destinations). Registering
 * memory pins it and costs a system call or more per page range, so the registrations of buffers
 * a program sends from or receives into again are kept, up to a size limit, and reused.
 *
 * Keying and exposure: a registration covers exactly the pages of one buffer, [addr, addr + len)
 * rounded out to page boundaries, with one access mode, and a lookup hits only an entry of
 * exactly that page range and mode. A remote key handed out for a message therefore never
 * covers more than the whole pages of that message. The price of caching is that the key stays
 * valid after the transfer, for as long as the entry is cached. The rendezvous therefore does not
 * hand out these keys: it binds a memory window (verbs/mw.h) over exactly the message on a
 * cached VERBS_ACCESS_MW_BIND registration (which grants no remote access itself), and where the
 * device has no windows it asks for VERBS_ACCESS_UNCACHED: a registration for one transfer,
 * released after it. Both are VERBS_ACCESS_EXACT, of exactly the message's bytes rather than
 * its pages: rxe checks a window's accesses against the bounds of the registration under it,
 * not the window's own (measured on Debian 12's 6.1 kernel), so the registration must not be
 * larger than the message either.
 *
 * Freed and reused memory: an entry must be dropped once its addresses map other memory (free()
 * of a large block and malloc() reusing the addresses; madvise(DONTNEED) of heap pages): the
 * registration still pins the old pages and would send stale bytes. Two ways to know, chosen by
 * params->check:
 *  - page frames (VERBS_RCACHE_CHECK_FRAMES): every hit is validated against the page frames of
 *    the range now (ops->pages, /proc/self/pagemap on Linux). A registration pins its pages, so
 *    while an entry lives its frames cannot be handed to any other mapping: if the range was
 *    unmapped and mapped again, at least one frame differs or is absent. Memory reused without
 *    unmapping keeps its frames: the registration is still right. Costs one pread of 8 bytes per
 *    page on a hit, sees every kind of mapping, but needs CAP_SYS_ADMIN (frames read as 0
 *    without it).
 *  - release events (VERBS_RCACHE_CHECK_RELEASES): the pages of each entry are watched before it
 *    is registered (ops->watch; verbs/release_watch.h, a userfaultfd) and every get first takes
 *    the ranges released since the last one (ops->released) and drops the entries they overlap.
 *    The kernel reports every munmap, madvise(DONTNEED/FREE) and mremap of watched pages, and a
 *    release whose call has returned is always seen: exact without privileges, and a hit costs
 *    no system call. Only anonymous (and shared-memory, hugetlbfs) mappings can be watched: a
 *    registration of anything else is for one transfer.
 *  - VERBS_RCACHE_CHECK_AUTO: frames where they can be read, else events; with neither the cache
 *    disables itself (a warning says why) and every registration is for one transfer.
 * No hook on munmap or free is needed either way: nothing is missed when a library calls the
 * system directly.
 *
 * Structure: entries sorted by (start, end, access) in an array (binary search; insertions
 * move pointers, next to a registration that costs far more); unused entries on an LRU list.
 * Limits: max_entries and max_bytes of cached registrations; the least recently used unused
 * entries are evicted to make room; entries in use (reference count > 0) are never evicted, and
 * when they alone fill the cache a new registration is made uncached (released at its last put).
 * A registration refused for lack of lockable memory (ops->reg: IBMSG_ERR_NO_MEMORY, as
 * RLIMIT_MEMLOCK gives) makes the cache release every unused entry and try once more.
 *
 * Not thread safe: a cache belongs to one context (one thread), or is shared by the contexts of
 * one device under a lock held around each call (verbs/mr.h, verbs_mr_get).
 */
#ifndef IBMSG_VERBS_REG_CACHE_H
#define IBMSG_VERBS_REG_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "counters/shards/shard.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Access modes of a registration. */
enum {
    VERBS_ACCESS_LOCAL_WRITE = 1u << 0, /* destination of an RDMA READ */
    VERBS_ACCESS_REMOTE_READ = 1u << 1, /* source the peer reads through the registration */
    VERBS_ACCESS_MW_BIND = 1u << 2,     /* source the peer reads through windows (verbs/mw.h) */
    VERBS_ACCESS_EXACT = 1u << 3,       /* exactly [addr, addr + len), not whole pages */
    VERBS_ACCESS_UNCACHED = 1u << 4,    /* get only: a registration for this use, never cached */
};

/* How a cached registration is known to still map the memory at its addresses. */
enum {
    VERBS_RCACHE_CHECK_AUTO = -1,    /* frames when they can be read, else release events */
    VERBS_RCACHE_CHECK_FRAMES = 0,   /* page frames on every hit */
    VERBS_RCACHE_CHECK_RELEASES = 1, /* release events */
};

/* How the cache registers memory and sees it change (a device, or a test's fakes). */
typedef struct verbs_rcache_ops {
    /** Register [addr, addr + len) (page aligned but for VERBS_ACCESS_EXACT) with access. */
    int (*reg)(void *arg, uintptr_t addr, size_t len, unsigned access, void **handle,
               uint32_t *lkey, uint32_t *rkey);
    /** Release a registration. */
    void (*dereg)(void *arg, void *handle);
    /**
     * The page frames of npages pages from addr (page aligned), 0 for a page not present.
     * IBMSG_ERR_NOT_SUPPORTED when frames cannot be seen; another error when the read failed.
     */
    int (*pages)(void *arg, uintptr_t addr, size_t npages, uint64_t *pfns);
    /**
     * Release events (NULL when there are none): start receiving them; IBMSG_OK, or an error and
     * in *why a static string saying why not. Stopped by cleanup.
     */
    int (*watch_open)(void *arg, const char **why);
    /** Report later releases of [addr, addr + len) (page aligned); IBMSG_OK or an error. */
    int (*watch)(void *arg, uintptr_t addr, size_t len);
    /** The next range released: 1 and [*start, *end), 0 none, -1 some were lost. */
    int (*released)(void *arg, uintptr_t *start, uintptr_t *end);
    /** Called by verbs_rcache_destroy after the last dereg, to free arg (may be NULL). */
    void (*cleanup)(void *arg);
} verbs_rcache_ops_t;

typedef struct verbs_rcache_params {
    int enabled;          /* 0: every registration is for one use */
    uint32_t max_entries; /* cached registrations at most */
    uint64_t max_bytes;   /* bytes of cached registrations at most */
    size_t page_size;     /* 0: the system's */
    int check;            /* VERBS_RCACHE_CHECK_* */
} verbs_rcache_params_t;

/* A registration handed out by verbs_rcache_get (read-only for the user but keys and range). */
typedef struct verbs_reg {
    uintptr_t start; /* page-rounded range registered */
    uintptr_t end;
    uint32_t lkey;
    uint32_t rkey;
    unsigned access;
    uint32_t refcount;
    uint8_t cached; /* in the index; otherwise released at its last put */
    struct verbs_reg *lru_prev, *lru_next;
    void *handle;
    uint64_t *pfns; /* the frames it pinned (cached entries) */
} verbs_reg_t;

typedef struct verbs_rcache verbs_rcache_t;

/**
 * Create a cache registering through ops (arg is passed to them) and counting into cnt (the
 * reg_cache counters; NULL: not counted). When enabled, the check is chosen (params->check):
 * frames are probed once through ops->pages, events opened through ops->watch_open; without the
 * one chosen the cache is created disabled, with a warning. Returns IBMSG_OK,
 * IBMSG_ERR_INVALID or IBMSG_ERR_NO_MEMORY.
 */
int verbs_rcache_create(const verbs_rcache_ops_t *ops, void *arg,
                        const verbs_rcache_params_t *params, cnt_shard_t *cnt,
                        verbs_rcache_t **rc_p);

/** Release every registration and the cache (NULL is ignored). Entries must be unused. */
void verbs_rcache_destroy(verbs_rcache_t *rc);

/** Whether the cache keeps registrations (0 when disabled or when it has no check). */
int verbs_rcache_enabled(const verbs_rcache_t *rc);

/** VERBS_RCACHE_CHECK_FRAMES or VERBS_RCACHE_CHECK_RELEASES: how an enabled cache checks. */
int verbs_rcache_check(const verbs_rcache_t *rc);

/**
 * A registration covering [addr, addr + len) (len > 0) with access, with one more reference:
 * a valid cached one (a hit) or a new one (a miss; cached when the limits allow). The range
 * is rounded out to pages unless access has VERBS_ACCESS_EXACT; VERBS_ACCESS_UNCACHED makes a
 * new registration released at its put. Returns
 * IBMSG_OK, IBMSG_ERR_INVALID, IBMSG_ERR_NO_MEMORY or the registration's error.
 */
int verbs_rcache_get(verbs_rcache_t *rc, const void *addr, size_t len, unsigned access,
                     verbs_reg_t **reg_p);

/** Drop a reference taken by verbs_rcache_get (uncached registrations are released at 0). */
void verbs_rcache_put(verbs_rcache_t *rc, verbs_reg_t *reg);

/**
 * Drop every cached registration overlapping [addr, addr + len) (for users who know the memory
 * goes away); those in use are released at their last put.
 */
void verbs_rcache_invalidate(verbs_rcache_t *rc, const void *addr, size_t len);

/** Cached entries now and their registered bytes (for tests and logs). */
void verbs_rcache_usage(const verbs_rcache_t *rc, uint32_t *entries, uint64_t *bytes);

/** The bytes the cache keeps registered at most (its max_bytes, as created or set). */
uint64_t verbs_rcache_max_bytes(const verbs_rcache_t *rc);

/**
 * A new byte limit: later registrations evict down to it (entries cached now stay until then).
 */
void verbs_rcache_set_max_bytes(verbs_rcache_t *rc, uint64_t max_bytes);

/** Count into cnt from now on (NULL: not counted): a shared cache counts into its caller's. */
void verbs_rcache_set_counters(verbs_rcache_t *rc, cnt_shard_t *cnt);

/* The least share of the locked-memory limit the cache keeps: 1/VERBS_RCACHE_MEMLOCK_FLOOR. */
#define VERBS_RCACHE_MEMLOCK_FLOOR 8

/**
 * The cache's byte limit under a locked-memory limit (RLIMIT_MEMLOCK; UINT64_MAX: none):
 * max_bytes, at most what the limit leaves beside need, the bytes the context pins itself
 * (buffer pools at their largest, rings), and at least the floor, 1/VERBS_RCACHE_MEMLOCK_FLOOR
 * of the limit (4096 bytes at the least). A context whose own needs leave less lives on the
 * floor and on the eviction when a registration is refused.
 */
uint64_t verbs_rcache_memlock_cap(uint64_t limit, uint64_t need, uint64_t max_bytes);

#ifdef __cplusplus
}
#endif

#endif
