/* Device registrations for the registration cache (see mr.h). */
#include "verbs/mr.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ibmsg/status.h>

#include "util/log.h"
#include "verbs/pagemap.h"
#include "verbs/release_watch.h"
#include "verbs/verbs_priv.h"

typedef struct mr_ops_arg {
    verbs_dev_t *dev; /* a shared cache's: the caller's, set under its lock before each call */
    int pagemap_fd;   /* negative: frames cannot be read */
    size_t page;
    int watching; /* release events opened (reader) */
    verbs_release_reader_t reader;
} mr_ops_arg_t;

static int mr_reg(void *arg, uintptr_t addr, size_t len, unsigned access, void **handle,
                  uint32_t *lkey, uint32_t *rkey)
{
    mr_ops_arg_t *a = arg;
    int flags = ((access & VERBS_ACCESS_LOCAL_WRITE) ? IBV_ACCESS_LOCAL_WRITE : 0) |
                ((access & VERBS_ACCESS_REMOTE_READ) ? IBV_ACCESS_REMOTE_READ : 0) |
                ((access & VERBS_ACCESS_MW_BIND) ? IBV_ACCESS_MW_BIND : 0);
    struct ibv_mr *mr = verbs_register(a->dev, (void *)addr, len, (unsigned)flags);

    if (mr == NULL) {
        int err = errno;
        char hint[256];
        util_error("%s: ibv_reg_mr of %zu bytes at 0x%lx failed: %s%s", a->dev->info.name, len,
                   (unsigned long)addr, strerror(err), verbs_memlock_hint(err, hint, sizeof(hint)));
        /* Out of lockable memory: the cache releases what it keeps unused and tries again. */
        return err == ENOMEM || err == EPERM || err == EAGAIN ? IBMSG_ERR_NO_MEMORY
                                                              : verbs_errno_status(err);
    }
    *handle = mr;
    *lkey = mr->lkey;
    *rkey = mr->rkey;
    return IBMSG_OK;
}

static void mr_dereg(void *arg, void *handle)
{
    mr_ops_arg_t *a = arg;

    if (ibv_dereg_mr(handle) != 0) {
        util_warn("%s: ibv_dereg_mr failed: %s", a->dev->info.name, strerror(errno));
    }
}

static int mr_pages(void *arg, uintptr_t addr, size_t npages, uint64_t *pfns)
{
    mr_ops_arg_t *a = arg;

    if (a->pagemap_fd < 0) {
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    return verbs_pagemap_read(a->pagemap_fd, addr, npages, a->page, pfns);
}

static int mr_watch_open(void *arg, const char **why)
{
    mr_ops_arg_t *a = arg;
    int status = verbs_release_watch_open(&a->reader, why);

    a->watching = status == IBMSG_OK;
    return status;
}

static int mr_watch(void *arg, uintptr_t addr, size_t len)
{
    mr_ops_arg_t *a = arg;

    return verbs_release_watch_add(&a->reader, addr, len);
}

static int mr_released(void *arg, uintptr_t *start, uintptr_t *end)
{
    mr_ops_arg_t *a = arg;

    return verbs_release_watch_next(&a->reader, start, end);
}

static void mr_cleanup(void *arg)
{
    mr_ops_arg_t *a = arg;

    if (a->watching) {
        verbs_release_watch_close(&a->reader);
    }
    verbs_pagemap_close(a->pagemap_fd);
    free(a);
}

static int mr_cache_create(verbs_dev_t *dev, const verbs_rcache_params_t *params, cnt_shard_t *cnt,
                           verbs_rcache_t **rc_p, mr_ops_arg_t **arg_p)
{
    static const verbs_rcache_ops_t ops = {
        .reg = mr_reg,
        .dereg = mr_dereg,
        .pages = mr_pages,
        .watch_open = mr_watch_open,
        .watch = mr_watch,
        .released = mr_released,
        .cleanup = mr_cleanup,
    };
    mr_ops_arg_t *a;
    int status;

    if (dev == NULL || params == NULL) {
        return IBMSG_ERR_INVALID;
    }
    a = calloc(1, sizeof(*a));
    if (a == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    a->dev = dev;
    a->page = (size_t)sysconf(_SC_PAGESIZE);
    /* Release events only: the page map is not opened (it would log its failure). */
    a->pagemap_fd =
        params->enabled && params->check != VERBS_RCACHE_CHECK_RELEASES ? verbs_pagemap_open() : -1;
    status = verbs_rcache_create(&ops, a, params, cnt, rc_p);
    if (status != IBMSG_OK) {
        mr_cleanup(a);
        return status;
    }
    *arg_p = a;
    return IBMSG_OK;
}

/*
 * A cache and its users: one context's, or the one the contexts of a shared device use (hca->
 * mr_shared). Registrations go to the device's protection domain, which outlives every member;
 * the verbs_dev_t of the context calling (its name in logs, its relaxed-ordering fallback) is
 * set in the operations' argument for each call, so no context's closing leaves it dangling.
 */
typedef struct verbs_mr_shared {
    pthread_mutex_t lock; /* around every use of rc by a user: shared ones only */
    int shared;           /* the device's: other contexts may use it at once */
    verbs_rcache_t *rc;
    mr_ops_arg_t *arg;
    verbs_rcache_params_t params; /* as asked (max_bytes before the locked-memory cap) */
    unsigned users;               /* under the hca's lock, as need */
    uint64_t need;                /* what its users pin themselves, summed */
} verbs_mr_shared_t;

struct verbs_mr_cache {
    verbs_mr_shared_t *sh;
    verbs_dev_t *dev;
    cnt_shard_t *cnt;
    uint64_t need;
};

static int same_params(const verbs_rcache_params_t *a, const verbs_rcache_params_t *b)
{
    return a->enabled == b->enabled && a->max_entries == b->max_entries &&
           a->max_bytes == b->max_bytes && a->page_size == b->page_size && a->check == b->check;
}

/* Cap the cache at what the locked-memory limit leaves beside its users' own needs; logged when
   the cap changes (or first set). Under the hca's lock for a shared one. */
static void mr_cap(verbs_mr_shared_t *sh, int first)
{
    uint64_t limit = verbs_memlock_limit(), cap;

    if (!sh->params.enabled || limit == UINT64_MAX) {
        return;
    }
    cap = verbs_rcache_memlock_cap(limit, sh->need, sh->params.max_bytes);
    if (!first && cap == verbs_rcache_max_bytes(sh->rc)) {
        return;
    }
    if (sh->shared) {
        pthread_mutex_lock(&sh->lock);
    }
    verbs_rcache_set_max_bytes(sh->rc, cap);
    if (sh->shared) {
        pthread_mutex_unlock(&sh->lock);
    }
    char who[64];
    if (sh->users == 1) {
        snprintf(who, sizeof(who), "this context pins itself");
    } else {
        snprintf(who, sizeof(who), "the %u contexts sharing it pin", sh->users);
    }
    util_info("registration cache: at most %llu KiB: RLIMIT_MEMLOCK (ulimit -l) %llu KiB less "
              "%llu KiB %s (floor %llu KiB)",
              (unsigned long long)cap / 1024, (unsigned long long)limit / 1024,
              (unsigned long long)sh->need / 1024, who,
              (unsigned long long)limit / VERBS_RCACHE_MEMLOCK_FLOOR / 1024);
}

static int mr_shared_create(verbs_dev_t *dev, const verbs_rcache_params_t *params, int shared,
                            cnt_shard_t *cnt, verbs_mr_shared_t **sh_p)
{
    verbs_mr_shared_t *sh = calloc(1, sizeof(*sh));
    int status;

    if (sh == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    status = mr_cache_create(dev, params, cnt, &sh->rc, &sh->arg);
    if (status != IBMSG_OK) {
        free(sh);
        return status;
    }
    pthread_mutex_init(&sh->lock, NULL);
    sh->shared = shared;
    sh->params = *params;
    *sh_p = sh;
    return IBMSG_OK;
}

static void mr_shared_destroy(verbs_mr_shared_t *sh)
{
    verbs_rcache_destroy(sh->rc);
    pthread_mutex_destroy(&sh->lock);
    free(sh);
}

int verbs_mr_cache_open(verbs_dev_t *dev, const verbs_rcache_params_t *params, uint64_t need,
                        cnt_shard_t *cnt, verbs_mr_cache_t **mc_p)
{
    verbs_hca_t *hca;
    verbs_mr_cache_t *mc;
    int status = IBMSG_OK;

    if (dev == NULL || params == NULL || mc_p == NULL) {
        return IBMSG_ERR_INVALID;
    }
    hca = dev->hca;
    mc = calloc(1, sizeof(*mc));
    if (mc == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    mc->dev = dev;
    mc->cnt = cnt;
    mc->need = need;
    if (hca->shared) {
        pthread_mutex_lock(&hca->lock);
    }
    if (hca->shared && hca->mr_shared != NULL && same_params(&hca->mr_shared->params, params)) {
        mc->sh = hca->mr_shared;
    } else {
        /* The context's own cache (its device not shared, or settings of its own); a shared
           device's is shared with later contexts alike if the device has none. */
        status = mr_shared_create(dev, params, hca->shared, cnt, &mc->sh);
        if (status == IBMSG_OK && hca->shared && hca->mr_shared == NULL) {
            hca->mr_shared = mc->sh;
        }
    }
    if (status == IBMSG_OK) {
        mc->sh->users++;
        mc->sh->need += need;
        mr_cap(mc->sh, mc->sh->users == 1);
    }
    if (hca->shared) {
        pthread_mutex_unlock(&hca->lock);
    }
    if (status != IBMSG_OK) {
        free(mc);
        return status;
    }
    *mc_p = mc;
    return IBMSG_OK;
}

void verbs_mr_cache_close(verbs_mr_cache_t *mc)
{
    verbs_hca_t *hca;
    verbs_mr_shared_t *sh;
    int last;

    if (mc == NULL) {
        return;
    }
    hca = mc->dev->hca;
    sh = mc->sh;
    if (sh->shared) {
        pthread_mutex_lock(&hca->lock);
    }
    last = --sh->users == 0;
    sh->need -= mc->need;
    if (last && hca->mr_shared == sh) {
        hca->mr_shared = NULL;
    } else if (!last) {
        mr_cap(sh, 0);
    }
    if (sh->shared) {
        pthread_mutex_unlock(&hca->lock);
    }
    if (last) {
        sh->arg->dev = mc->dev; /* the last user's, alive until after this */
        verbs_rcache_set_counters(sh->rc, mc->cnt);
        mr_shared_destroy(sh);
    }
    free(mc);
}

/* Take a shared cache for mc's context: its device and counters for the call. */
static verbs_rcache_t *mr_enter(verbs_mr_cache_t *mc)
{
    verbs_mr_shared_t *sh = mc->sh;

    if (sh->shared) {
        pthread_mutex_lock(&sh->lock);
        sh->arg->dev = mc->dev;
        verbs_rcache_set_counters(sh->rc, mc->cnt);
    }
    return sh->rc;
}

static void mr_leave(verbs_mr_cache_t *mc)
{
    if (mc->sh->shared) {
        pthread_mutex_unlock(&mc->sh->lock);
    }
}

int verbs_mr_get(verbs_mr_cache_t *mc, const void *addr, size_t len, unsigned access,
                 verbs_reg_t **reg_p)
{
    int status = verbs_rcache_get(mr_enter(mc), addr, len, access, reg_p);

    mr_leave(mc);
    return status;
}

void verbs_mr_put(verbs_mr_cache_t *mc, verbs_reg_t *reg)
{
    verbs_rcache_put(mr_enter(mc), reg);
    mr_leave(mc);
}

verbs_rcache_t *verbs_mr_cache_rcache(const verbs_mr_cache_t *mc)
{
    return mc->sh->rc;
}

unsigned verbs_mr_cache_users(const verbs_mr_cache_t *mc)
{
    return mc->sh->users;
}
