/* Registered bounce-buffer pools (see pool.h). */
#include "verbs/pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <ibmsg/status.h>

#include "util/log.h"
#include "verbs/verbs_priv.h"

struct verbs_pool_chunk {
    verbs_pool_chunk_t *next;
    struct ibv_mr *mr;
    void *mem;
    void *descs;
};

static int pool_add_chunk(verbs_pool_t *pool)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t bytes = pool->buf_size * pool->bufs_per_chunk;
    verbs_pool_chunk_t *chunk;
    int status;

    if (pool->max_bufs != 0 && pool->total + pool->bufs_per_chunk > pool->max_bufs) {
        util_error("pool %s: all %llu buffers in use (the pool's bound)", pool->name,
                   (unsigned long long)pool->max_bufs);
        return pool->grow_status = IBMSG_ERR_NO_RESOURCE;
    }
    chunk = calloc(1, sizeof(*chunk));
    if (chunk == NULL) {
        util_error("pool %s: out of memory for a chunk descriptor", pool->name);
        return pool->grow_status = IBMSG_ERR_NO_MEMORY;
    }
    chunk->descs = calloc(pool->bufs_per_chunk, pool->desc_size);
    if (chunk->descs == NULL || posix_memalign(&chunk->mem, page, bytes) != 0) {
        util_error("pool %s: out of memory for %u buffers of %zu bytes", pool->name,
                   pool->bufs_per_chunk, pool->buf_size);
        status = IBMSG_ERR_NO_MEMORY;
        goto err_free;
    }
    chunk->mr = verbs_register(pool->dev, chunk->mem, bytes, IBV_ACCESS_LOCAL_WRITE);
    if (chunk->mr == NULL) {
        int err = errno;
        /* Out of registrations (device limit, cgroup rdma.max, or RLIMIT_MEMLOCK): a resource,
         * not memory, whatever errno the kernel chose. */
        status = err == EINVAL ? IBMSG_ERR_INVALID : IBMSG_ERR_NO_RESOURCE;
        char hint[256];
        util_error("%s: pool %s: ibv_reg_mr of %zu bytes failed (out of registrations?): %s%s",
                   pool->dev->info.name, pool->name, bytes, strerror(err),
                   verbs_memlock_hint(err, hint, sizeof(hint)));
        goto err_free;
    }
    /* Thread the new buffers onto the free list in address order. */
    for (uint32_t i = pool->bufs_per_chunk; i-- > 0;) {
        verbs_buf_t *buf = (verbs_buf_t *)((char *)chunk->descs + i * pool->desc_size);
        buf->data = (char *)chunk->mem + i * pool->buf_size;
        buf->lkey = chunk->mr->lkey;
        buf->size = (uint32_t)pool->buf_size;
        buf->next = pool->free_list;
        pool->free_list = buf;
    }
    chunk->next = pool->chunks;
    pool->chunks = chunk;
    pool->total += pool->bufs_per_chunk;
    return IBMSG_OK;

err_free:
    free(chunk->mem);
    free(chunk->descs);
    free(chunk);
    return pool->grow_status = status;
}

int verbs_pool_create(verbs_dev_t *dev, const char *name, size_t buf_size, size_t desc_size,
                      uint32_t bufs_per_chunk, uint64_t max_bufs, verbs_pool_t **pool_p)
{
    verbs_pool_t *pool;
    int status;

    if (dev == NULL || name == NULL || pool_p == NULL || buf_size == 0 || buf_size > UINT32_MAX ||
        desc_size < sizeof(verbs_buf_t) || bufs_per_chunk == 0 ||
        (max_bufs != 0 && max_bufs < bufs_per_chunk)) {
        return IBMSG_ERR_INVALID;
    }
    pool = calloc(1, sizeof(*pool));
    if (pool == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    pool->dev = dev;
    pool->name = name;
    /* Cache-line multiples keep neighbouring buffers' DMA and copies apart. */
    pool->buf_size = (buf_size + UTIL_CACHE_LINE - 1) & ~(size_t)(UTIL_CACHE_LINE - 1);
    pool->desc_size = (desc_size + 15) & ~(size_t)15;
    pool->bufs_per_chunk = bufs_per_chunk;
    pool->max_bufs = max_bufs;
    status = pool_add_chunk(pool);
    if (status != IBMSG_OK) {
        free(pool);
        return status;
    }
    *pool_p = pool;
    return IBMSG_OK;
}

void verbs_pool_destroy(verbs_pool_t *pool)
{
    verbs_pool_chunk_t *chunk, *next;

    if (pool == NULL) {
        return;
    }
    for (chunk = pool->chunks; chunk != NULL; chunk = next) {
        next = chunk->next;
        if (ibv_dereg_mr(chunk->mr) != 0) {
            util_warn("pool %s: ibv_dereg_mr failed: %s", pool->name, strerror(errno));
        }
        free(chunk->mem);
        free(chunk->descs);
        free(chunk);
    }
    free(pool);
}

verbs_buf_t *verbs_pool_grow_get(verbs_pool_t *pool)
{
    if (pool_add_chunk(pool) != IBMSG_OK) {
        return NULL;
    }
    return verbs_pool_get(pool);
}
