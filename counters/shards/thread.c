/* Threads as tool objects (IBMSG_T_BIND_THREAD): the public face of the thread shards. */
#include <ibmsg/tool.h>

#include "counters/shards/shard.h"

/* An ibmsg_t_thread_t is the thread's shard. */
static ibmsg_t_thread_t cnt_thread_handle(cnt_shard_t *shard)
{
    return (ibmsg_t_thread_t)(void *)shard;
}

IBMSG_API int ibmsg_t_thread_self(ibmsg_t_thread_t *thread)
{
    if (thread == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_shard_t *self = cnt_shard_get();

    cnt_shard_thread_begins(self); /* a thread older than the PAPI set-up */
    *thread = cnt_thread_handle(self);
    return IBMSG_OK;
}

IBMSG_API int ibmsg_t_thread_get_all(int len, ibmsg_t_thread_t threads[], int *num)
{
    cnt_shard_t **shards = (cnt_shard_t **)(void *)threads;

    if (len < 0 || (len > 0 && threads == NULL)) {
        return IBMSG_T_ERR_INVALID;
    }
    UTIL_STATIC_ASSERT(sizeof(ibmsg_t_thread_t) == sizeof(cnt_shard_t *), "same representation");
    cnt_thread_list(len, shards, num);
    return IBMSG_OK;
}

IBMSG_API int ibmsg_t_thread_get_info(ibmsg_t_thread_t thread, long *tid, int *numa_node,
                                      int *alive)
{
    cnt_shard_t *shard = cnt_shard_lookup(IBMSG_T_BIND_THREAD, thread, 0);

    if (shard == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    if (tid != NULL) {
        *tid = __atomic_load_n(&shard->meta.tid, __ATOMIC_RELAXED);
    }
    if (numa_node != NULL) {
        *numa_node = cnt_shard_node(shard);
    }
    if (alive != NULL) {
        *alive = __atomic_load_n(&shard->meta.state, __ATOMIC_ACQUIRE) == CNT_SHARD_ACTIVE;
    }
    return IBMSG_OK;
}
