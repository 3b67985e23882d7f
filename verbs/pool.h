/*
 * Pools of registered bounce buffers. Each buffer has a descriptor of desc_size bytes whose first
 * member is a verbs_buf_t, so a user (core/) embeds verbs_buf_t first in its own descriptor and
 * keeps protocol state next to it. get and put are O(1) free-list operations with no lock: a
 * pool belongs to one context (one thread). When the free list is empty the pool grows by one
 * registered chunk (slow path, out of line) up to max_bufs.
 */
#ifndef IBMSG_VERBS_POOL_H
#define IBMSG_VERBS_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "util/compiler.h"
#include "verbs/device.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct verbs_buf {
    struct verbs_buf *next; /* free-list link while free; the user's while in use */
    void *data;             /* registered memory of the pool's buf_size bytes */
    uint32_t lkey;
    uint32_t size;
} verbs_buf_t;

typedef struct verbs_pool_chunk verbs_pool_chunk_t;

typedef struct verbs_pool {
    verbs_buf_t *free_list;
    uint64_t in_use; /* buffers handed out now */
    uint64_t total;  /* buffers the pool has */
    uint64_t max_bufs;
    size_t buf_size;
    size_t desc_size;
    uint32_t bufs_per_chunk;
    verbs_dev_t *dev;
    verbs_pool_chunk_t *chunks;
    const char *name;
    int grow_status; /* why the last growth failed (IBMSG_ERR_NO_MEMORY / NO_RESOURCE, logged) */
} verbs_pool_t;

/**
 * Create a pool of buffers of buf_size bytes with descriptors of desc_size bytes (at least
 * sizeof(verbs_buf_t)), registering chunks of bufs_per_chunk buffers; the first chunk is
 * registered now. max_bufs bounds the growth (0: no bound). name is used in logs (kept).
 */
int verbs_pool_create(verbs_dev_t *dev, const char *name, size_t buf_size, size_t desc_size,
                      uint32_t bufs_per_chunk, uint64_t max_bufs, verbs_pool_t **pool_p);

/** Deregister and free every chunk. Buffers still in use become invalid. NULL is ignored. */
void verbs_pool_destroy(verbs_pool_t *pool);

/** Slow path of verbs_pool_get: grow by one chunk. NULL when the bound or memory is reached. */
verbs_buf_t *verbs_pool_grow_get(verbs_pool_t *pool);

/** A free buffer, or NULL when the pool is exhausted and cannot grow. */
static inline verbs_buf_t *verbs_pool_get(verbs_pool_t *pool)
{
    verbs_buf_t *buf = pool->free_list;

    if (util_likely(buf != NULL)) {
        pool->free_list = buf->next;
        pool->in_use++;
        return buf;
    }
    return verbs_pool_grow_get(pool);
}

/** Return a buffer to its pool. */
static inline void verbs_pool_put(verbs_pool_t *pool, verbs_buf_t *buf)
{
    buf->next = pool->free_list;
    pool->free_list = buf;
    pool->in_use--;
}

#ifdef __cplusplus
}
#endif

#endif
