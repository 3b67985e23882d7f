/*
 * Registration of user memory on a device through the registration cache (reg_cache.h): the
 * cache's operations are ibv_reg_mr / ibv_dereg_mr on the device's protection domain and the
 * page frames of /proc/self/pagemap.
 */
#ifndef IBMSG_VERBS_MR_H
#define IBMSG_VERBS_MR_H

#include "verbs/device.h"
#include "verbs/reg_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Create a registration cache for dev (see verbs_rcache_create; destroy it with
 * verbs_rcache_destroy). Returns IBMSG_OK or an error.
 */
int verbs_mr_cache_create(verbs_dev_t *dev, const verbs_rcache_params_t *params, cnt_shard_t *cnt,
                          verbs_rcache_t **rc_p);

#ifdef __cplusplus
}
#endif

#endif
