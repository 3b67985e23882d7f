/* Device registrations for the registration cache (see mr.h). */
#include "verbs/mr.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ibmsg/status.h>

#include "util/log.h"
#include "verbs/pagemap.h"
#include "verbs/release_watch.h"
#include "verbs/verbs_priv.h"

typedef struct mr_ops_arg {
    verbs_dev_t *dev;
    int pagemap_fd; /* negative: frames cannot be read */
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

int verbs_mr_cache_create(verbs_dev_t *dev, const verbs_rcache_params_t *params, cnt_shard_t *cnt,
                          verbs_rcache_t **rc_p)
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
    }
    return status;
}
