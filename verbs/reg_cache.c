/* The registration cache of user buffers (see reg_cache.h for keying, validation and limits). */
#include "verbs/reg_cache.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ibmsg/status.h>

#include "util/compiler.h"
#include "util/log.h"

struct verbs_rcache {
    verbs_rcache_ops_t ops;
    void *arg;
    verbs_rcache_params_t p; /* p.check: the check in use when enabled */
    cnt_shard_t *cnt;
    verbs_reg_t **index; /* cached entries sorted by (start, end, access) */
    uint32_t nentries;
    uint32_t index_cap;
    uint64_t bytes;       /* registered bytes of cached entries */
    verbs_reg_t lru;      /* sentinel: unused cached entries, least recently used first */
    uint64_t *scratch;    /* frames read for a validation */
    size_t scratch_pages; /* its capacity */
};

static void count(verbs_rcache_t *rc, cnt_id_t id, uint64_t n)
{
    if (rc->cnt != NULL) {
        cnt_add(rc->cnt, id, n);
    }
}

static void count_bytes(verbs_rcache_t *rc, int64_t delta)
{
    if (rc->cnt != NULL) {
        cnt_level_add(rc->cnt, CNT_VERBS_REG_BYTES, delta);
    }
}

static void lru_remove(verbs_reg_t *e)
{
    e->lru_prev->lru_next = e->lru_next;
    e->lru_next->lru_prev = e->lru_prev;
    e->lru_prev = e->lru_next = e;
}

static void lru_push_tail(verbs_rcache_t *rc, verbs_reg_t *e)
{
    e->lru_prev = rc->lru.lru_prev;
    e->lru_next = &rc->lru;
    rc->lru.lru_prev->lru_next = e;
    rc->lru.lru_prev = e;
}

static int key_cmp(const verbs_reg_t *e, uintptr_t start, uintptr_t end, unsigned access)
{
    if (e->start != start) {
        return e->start < start ? -1 : 1;
    }
    if (e->end != end) {
        return e->end < end ? -1 : 1;
    }
    return e->access == access ? 0 : (e->access < access ? -1 : 1);
}

/* The first index whose entry is not below the key. */
static uint32_t lower_bound(const verbs_rcache_t *rc, uintptr_t start, uintptr_t end,
                            unsigned access)
{
    uint32_t lo = 0, hi = rc->nentries;

    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        if (key_cmp(rc->index[mid], start, end, access) < 0) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return lo;
}

static void release(verbs_rcache_t *rc, verbs_reg_t *e)
{
    rc->ops.dereg(rc->arg, e->handle);
    count(rc, CNT_VERBS_REG_RELEASES, 1);
    count_bytes(rc, -(int64_t)(e->end - e->start));
    free(e->pfns);
    free(e);
}

/* Take a cached entry out of the index (and the LRU list when unused). */
static void index_remove(verbs_rcache_t *rc, verbs_reg_t *e)
{
    uint32_t i = lower_bound(rc, e->start, e->end, e->access);

    memmove(&rc->index[i], &rc->index[i + 1], (rc->nentries - i - 1) * sizeof(rc->index[0]));
    rc->nentries--;
    rc->bytes -= e->end - e->start;
    e->cached = 0;
    if (e->refcount == 0) {
        lru_remove(e);
    }
}

/* Evict unused entries, oldest first, until one more entry of size bytes fits. */
static int make_room(verbs_rcache_t *rc, uint64_t size)
{
    while (rc->nentries + 1 > rc->p.max_entries || rc->bytes + size > rc->p.max_bytes) {
        verbs_reg_t *victim = rc->lru.lru_next;
        if (victim == &rc->lru) {
            return 0; /* everything cached is in use */
        }
        index_remove(rc, victim);
        release(rc, victim);
        count(rc, CNT_VERBS_REG_CACHE_EVICTIONS, 1);
    }
    return 1;
}

/* Release every unused cached entry; returns how many. */
static uint32_t evict_unused(verbs_rcache_t *rc)
{
    uint32_t n = 0;

    while (rc->lru.lru_next != &rc->lru) {
        verbs_reg_t *victim = rc->lru.lru_next;
        index_remove(rc, victim);
        release(rc, victim);
        n++;
    }
    count(rc, CNT_VERBS_REG_CACHE_EVICTIONS, n);
    return n;
}

/* The pages under [start, end) (an exact entry's range need not be page aligned). */
static size_t span_pages(const verbs_rcache_t *rc, uintptr_t start, uintptr_t end, uintptr_t *first)
{
    uintptr_t mask = (uintptr_t)rc->p.page_size - 1;

    *first = start & ~mask;
    return (((end + mask) & ~mask) - *first) / rc->p.page_size;
}

static int read_frames(verbs_rcache_t *rc, uintptr_t start, size_t npages)
{
    if (npages > rc->scratch_pages) {
        uint64_t *s = realloc(rc->scratch, npages * sizeof(*s));
        if (s == NULL) {
            return IBMSG_ERR_NO_MEMORY;
        }
        rc->scratch = s;
        rc->scratch_pages = npages;
    }
    return rc->ops.pages(rc->arg, start, npages, rc->scratch);
}

/* Whether page frames can be read: a page of our own stack must show one. */
static const char *frames_hidden(verbs_rcache_t *rc)
{
    uint64_t probe = 0;
    uintptr_t here = (uintptr_t)&probe & ~(uintptr_t)(rc->p.page_size - 1);
    int status =
        rc->ops.pages != NULL ? rc->ops.pages(rc->arg, here, 1, &probe) : IBMSG_ERR_NOT_SUPPORTED;

    if (status != IBMSG_OK) {
        return ibmsg_status_string(status);
    }
    return probe == 0 ? "they read as 0" : NULL;
}

/* Set p.check to a check that works (see reg_cache.h); 0 (disabled, warned) when none does. */
static int choose_check(verbs_rcache_t *rc)
{
    const char *no_frames = NULL, *no_events = NULL;
    int want = rc->p.check;

    if (want != VERBS_RCACHE_CHECK_RELEASES) {
        no_frames = frames_hidden(rc);
        if (no_frames == NULL) {
            rc->p.check = VERBS_RCACHE_CHECK_FRAMES;
            return 1;
        }
    }
    if (want != VERBS_RCACHE_CHECK_FRAMES) {
        no_events = "no release events";
        if (rc->ops.watch_open != NULL && rc->ops.watch_open(rc->arg, &no_events) == IBMSG_OK) {
            rc->p.check = VERBS_RCACHE_CHECK_RELEASES;
            util_info("registration cache: page frames %s; freed memory is seen through "
                      "release events (userfaultfd)",
                      no_frames != NULL ? "hidden" : "not used");
            return 1;
        }
    }
    util_warn("registration cache disabled: %s%s%s%s%s, so reuse of freed memory could not be "
              "detected; every rendezvous registers anew",
              no_frames != NULL ? "page frames cannot be read (" : "",
              no_frames != NULL ? no_frames : "", no_frames != NULL ? ")" : "",
              no_frames != NULL && no_events != NULL ? " and " : "",
              no_events != NULL ? no_events : "");
    return 0;
}

int verbs_rcache_create(const verbs_rcache_ops_t *ops, void *arg,
                        const verbs_rcache_params_t *params, cnt_shard_t *cnt,
                        verbs_rcache_t **rc_p)
{
    verbs_rcache_t *rc;
    size_t page;

    if (ops == NULL || ops->reg == NULL || ops->dereg == NULL || params == NULL || rc_p == NULL ||
        (ops->watch_open != NULL && (ops->watch == NULL || ops->released == NULL))) {
        return IBMSG_ERR_INVALID;
    }
    page = params->page_size != 0 ? params->page_size : (size_t)sysconf(_SC_PAGESIZE);
    if ((page & (page - 1)) != 0) {
        return IBMSG_ERR_INVALID;
    }
    rc = calloc(1, sizeof(*rc));
    if (rc == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    rc->ops = *ops;
    rc->arg = arg;
    rc->p = *params;
    rc->p.page_size = page;
    rc->cnt = cnt;
    rc->lru.lru_prev = rc->lru.lru_next = &rc->lru;
    if (rc->p.enabled && (rc->p.max_entries == 0 || rc->p.max_bytes == 0)) {
        rc->p.enabled = 0;
    }
    if (rc->p.enabled) {
        rc->p.enabled = choose_check(rc);
    }
    *rc_p = rc;
    return IBMSG_OK;
}

void verbs_rcache_destroy(verbs_rcache_t *rc)
{
    if (rc == NULL) {
        return;
    }
    for (uint32_t i = 0; i < rc->nentries; i++) {
        verbs_reg_t *e = rc->index[i];
        if (e->refcount != 0) {
            util_warn("registration cache: [0x%lx, 0x%lx) still has %u users at destruction",
                      (unsigned long)e->start, (unsigned long)e->end, e->refcount);
        }
        release(rc, e);
    }
    if (rc->ops.cleanup != NULL) {
        rc->ops.cleanup(rc->arg);
    }
    free(rc->index);
    free(rc->scratch);
    free(rc);
}

int verbs_rcache_enabled(const verbs_rcache_t *rc)
{
    return rc->p.enabled;
}

int verbs_rcache_check(const verbs_rcache_t *rc)
{
    return rc->p.check;
}

/* Whether every page has a frame: one that has none cannot be told from a later absent one. */
static int all_present(const uint64_t *pfns, size_t npages)
{
    for (size_t i = 0; i < npages; i++) {
        if (pfns[i] == 0) {
            return 0;
        }
    }
    return 1;
}

/* Register a new entry; cache it when validation and the limits allow. */
static int rcache_miss(verbs_rcache_t *rc, uintptr_t start, uintptr_t end, unsigned access,
                       int cacheable, verbs_reg_t **reg_p)
{
    uintptr_t first;
    size_t npages = span_pages(rc, start, end, &first);
    verbs_reg_t *e = calloc(1, sizeof(*e));
    int status;

    if (e == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    /* Make room first: evicted registrations unpin memory the new one may need. */
    int fits =
        cacheable && rc->p.enabled && end - start <= rc->p.max_bytes && make_room(rc, end - start);
    /* Watched before it is registered: a release in between is seen at the next get. */
    if (fits && rc->p.check == VERBS_RCACHE_CHECK_RELEASES &&
        rc->ops.watch(rc->arg, first, npages * rc->p.page_size) != IBMSG_OK) {
        util_debug("registration cache: [0x%lx, 0x%lx) cannot be watched (not anonymous "
                   "memory): registered for this transfer",
                   (unsigned long)start, (unsigned long)end);
        fits = 0;
    }
    status = rc->ops.reg(rc->arg, start, end - start, access, &e->handle, &e->lkey, &e->rkey);
    if (status == IBMSG_ERR_NO_MEMORY && evict_unused(rc) > 0) {
        /* Out of lockable memory (RLIMIT_MEMLOCK): what the cache kept unused is unpinned now,
           and the registration is tried once more. */
        util_info("registration cache: out of lockable memory for %zu bytes: unused "
                  "registrations released, trying once more",
                  (size_t)(end - start));
        status = rc->ops.reg(rc->arg, start, end - start, access, &e->handle, &e->lkey, &e->rkey);
    }
    if (status != IBMSG_OK) {
        free(e);
        return status;
    }
    count(rc, CNT_VERBS_REG_CACHE_MISSES, 1);
    count_bytes(rc, (int64_t)(end - start));
    e->start = start;
    e->end = end;
    e->access = access;
    e->refcount = 1;
    e->lru_prev = e->lru_next = e;
    if (fits && rc->nentries == rc->index_cap) {
        uint32_t cap = rc->index_cap != 0 ? rc->index_cap * 2 : 64;
        verbs_reg_t **idx = realloc(rc->index, cap * sizeof(*idx));
        if (idx != NULL) {
            rc->index = idx;
            rc->index_cap = cap;
        } else {
            fits = 0;
        }
    }
    /* The frames are read after registering: they are the pinned ones later hits compare to. */
    if (fits && rc->p.check == VERBS_RCACHE_CHECK_FRAMES) {
        e->pfns = malloc(npages * sizeof(*e->pfns));
        if (e->pfns == NULL || rc->ops.pages(rc->arg, first, npages, e->pfns) != IBMSG_OK ||
            !all_present(e->pfns, npages)) {
            free(e->pfns);
            e->pfns = NULL;
            fits = 0;
        }
    }
    if (fits) {
        uint32_t i = lower_bound(rc, start, end, access);
        memmove(&rc->index[i + 1], &rc->index[i], (rc->nentries - i) * sizeof(rc->index[0]));
        rc->index[i] = e;
        rc->nentries++;
        rc->bytes += end - start;
        e->cached = 1;
    }
    *reg_p = e;
    return IBMSG_OK;
}

/* Whether the frames under a cached entry are still those it pinned. */
static int frames_unchanged(verbs_rcache_t *rc, const verbs_reg_t *e)
{
    uintptr_t first;
    size_t npages = span_pages(rc, e->start, e->end, &first);

    return read_frames(rc, first, npages) == IBMSG_OK &&
           memcmp(rc->scratch, e->pfns, npages * sizeof(uint64_t)) == 0;
}

/* Drop every cached entry overlapping [a, b) (those in use are released at their last put). */
static void invalidate_range(verbs_rcache_t *rc, uintptr_t a, uintptr_t b)
{
    for (uint32_t i = 0; i < rc->nentries;) {
        verbs_reg_t *e = rc->index[i];
        if (e->start < b && a < e->end) {
            count(rc, CNT_VERBS_REG_CACHE_INVALIDATIONS, 1);
            index_remove(rc, e);
            if (e->refcount == 0) {
                release(rc, e);
            }
            continue;
        }
        i++;
    }
}

/* Apply the releases reported since the last get; lost events drop everything. */
static void take_releases(verbs_rcache_t *rc)
{
    uintptr_t a, b;
    int got;

    while ((got = rc->ops.released(rc->arg, &a, &b)) != 0) {
        if (got < 0) {
            util_debug("registration cache: release events were lost: every entry dropped");
            a = 0;
            b = UINTPTR_MAX;
        }
        invalidate_range(rc, a, b);
    }
}

int verbs_rcache_get(verbs_rcache_t *rc, const void *addr, size_t len, unsigned access,
                     verbs_reg_t **reg_p)
{
    uintptr_t a = (uintptr_t)addr, mask = (uintptr_t)rc->p.page_size - 1, start, end;
    uint32_t i;

    if (rc == NULL || reg_p == NULL || len == 0 || a + len < a || a + len + mask < a + len) {
        return IBMSG_ERR_INVALID;
    }
    if (access & VERBS_ACCESS_EXACT) {
        start = a;
        end = a + len;
    } else {
        start = a & ~mask;
        end = (a + len + mask) & ~mask;
    }
    if (!rc->p.enabled || (access & VERBS_ACCESS_UNCACHED)) {
        return rcache_miss(rc, start, end, access & ~VERBS_ACCESS_UNCACHED, 0, reg_p);
    }
    if (rc->p.check == VERBS_RCACHE_CHECK_RELEASES) {
        take_releases(rc);
    }
    i = lower_bound(rc, start, end, access);
    if (i < rc->nentries && key_cmp(rc->index[i], start, end, access) == 0) {
        verbs_reg_t *e = rc->index[i];
        if (rc->p.check == VERBS_RCACHE_CHECK_RELEASES || frames_unchanged(rc, e)) {
            if (e->refcount++ == 0) {
                lru_remove(e);
            }
            count(rc, CNT_VERBS_REG_CACHE_HITS, 1);
            *reg_p = e;
            return IBMSG_OK;
        }
        /* Unmapped and mapped again: other pages now live at these addresses. */
        util_debug("registration cache: [0x%lx, 0x%lx) maps other pages now: invalidated",
                   (unsigned long)start, (unsigned long)end);
        count(rc, CNT_VERBS_REG_CACHE_INVALIDATIONS, 1);
        index_remove(rc, e);
        if (e->refcount == 0) {
            release(rc, e);
        }
    }
    return rcache_miss(rc, start, end, access, 1, reg_p);
}

void verbs_rcache_put(verbs_rcache_t *rc, verbs_reg_t *reg)
{
    if (--reg->refcount != 0) {
        return;
    }
    if (reg->cached) {
        lru_push_tail(rc, reg);
    } else {
        release(rc, reg);
    }
}

void verbs_rcache_invalidate(verbs_rcache_t *rc, const void *addr, size_t len)
{
    invalidate_range(rc, (uintptr_t)addr, (uintptr_t)addr + len);
}

uint64_t verbs_rcache_max_bytes(const verbs_rcache_t *rc)
{
    return rc->p.max_bytes;
}

void verbs_rcache_set_max_bytes(verbs_rcache_t *rc, uint64_t max_bytes)
{
    rc->p.max_bytes = max_bytes;
}

void verbs_rcache_set_counters(verbs_rcache_t *rc, cnt_shard_t *cnt)
{
    rc->cnt = cnt;
}

uint64_t verbs_rcache_memlock_cap(uint64_t limit, uint64_t need, uint64_t max_bytes)
{
    uint64_t floor = UTIL_MAX(limit / VERBS_RCACHE_MEMLOCK_FLOOR, (uint64_t)4096);
    uint64_t left = limit > need ? limit - need : 0;

    if (limit == UINT64_MAX) {
        return max_bytes;
    }
    return UTIL_MIN(max_bytes, UTIL_MAX(left, floor));
}

void verbs_rcache_usage(const verbs_rcache_t *rc, uint32_t *entries, uint64_t *bytes)
{
    if (entries != NULL) {
        *entries = rc->nentries;
    }
    if (bytes != NULL) {
        *bytes = rc->bytes;
    }
}
