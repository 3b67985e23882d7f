/* Private to verbs/: the receive post lists of a queue pair's and a shared receive queue's. */
#ifndef IBMSG_VERBS_RECV_LISTS_H
#define IBMSG_VERBS_RECV_LISTS_H

#include <infiniband/verbs.h>

#include "util/compiler.h"
#include "verbs/qp.h"

/* ibv_post_recv or ibv_post_srq_recv (static inline in verbs.h), behind one signature. */
typedef int (*verbs_recv_post_fn)(void *target, struct ibv_recv_wr *wr, struct ibv_recv_wr **bad);

/*
 * Post n receives (one SGE each) to target as lists of up to VERBS_RECV_BATCH_MAX. post is a
 * constant at each caller, so this inlines to a direct call. Returns 0, or the errno of the post
 * that failed; *done: the receives the device took either way.
 */
static inline int verbs_recv_lists_post(void *target, verbs_recv_post_fn post,
                                        const verbs_sge_t *sges, const uint64_t *wr_ids, int n,
                                        int *done)
{
    struct ibv_recv_wr wr[VERBS_RECV_BATCH_MAX], *bad;
    struct ibv_sge sg[VERBS_RECV_BATCH_MAX];

    *done = 0;
    while (*done < n) {
        int batch = UTIL_MIN(n - *done, VERBS_RECV_BATCH_MAX), ret;
        for (int i = 0; i < batch; i++) {
            sg[i].addr = sges[*done + i].addr;
            sg[i].length = sges[*done + i].length;
            sg[i].lkey = sges[*done + i].lkey;
            wr[i].wr_id = wr_ids[*done + i];
            wr[i].sg_list = &sg[i];
            wr[i].num_sge = 1;
            wr[i].next = (i + 1 < batch) ? &wr[i + 1] : NULL;
        }
        ret = post(target, wr, &bad);
        if (util_unlikely(ret != 0)) {
            *done += (int)(bad - wr);
            return ret;
        }
        *done += batch;
    }
    return 0;
}

#endif
