/*
 * Registration of user memory on a device through the registration cache (reg_cache.h): the
 * cache's operations are ibv_reg_mr / ibv_dereg_mr on the device's protection domain and the
 * page frames of /proc/self/pagemap.
 *
 * Contexts that share a device (verbs/hca.c) also share its cache when their cache settings are
 * the same: a buffer several threads send from is registered (and pinned) once, not once per
 * context. Each context holds a verbs_mr_cache_t; a shared cache is used under its mutex, taken
 * per rendezvous or large-message lookup and release, never per eager message.
 */
#ifndef IBMSG_VERBS_MR_H
#define IBMSG_VERBS_MR_H

#include "verbs/device.h"
#include "verbs/reg_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A context's access to the registration cache of its device (its own, or the shared one). */
typedef struct verbs_mr_cache verbs_mr_cache_t;

/**
 * The cache for dev's context: the device's shared one when dev shares its device and the
 * shared cache has the same params (enabled, max_entries, max_bytes, page_size, check), or one
 * made now (shared from now on if the device is shared and has none). Its counters move in cnt.
 * need: the bytes the context pins itself; under RLIMIT_MEMLOCK the cache keeps at most the
 * limit less what every context using it pins (verbs_rcache_memlock_cap), recomputed and logged
 * when a context starts or stops using it. Returns IBMSG_OK or an error.
 */
int verbs_mr_cache_open(verbs_dev_t *dev, const verbs_rcache_params_t *params, uint64_t need,
                        cnt_shard_t *cnt, verbs_mr_cache_t **mc_p);

/** Stop using the cache (NULL is ignored); the last user destroys it. Its entries must be put. */
void verbs_mr_cache_close(verbs_mr_cache_t *mc);

/** verbs_rcache_get on the context's cache, counted in its counters. */
int verbs_mr_get(verbs_mr_cache_t *mc, const void *addr, size_t len, unsigned access,
                 verbs_reg_t **reg_p);

/** verbs_rcache_put on the context's cache. */
void verbs_mr_put(verbs_mr_cache_t *mc, verbs_reg_t *reg);

/** The cache itself (for tests and logs: not to be used while another context may use it). */
verbs_rcache_t *verbs_mr_cache_rcache(const verbs_mr_cache_t *mc);

/** How many contexts use the cache (1: the context's own). */
unsigned verbs_mr_cache_users(const verbs_mr_cache_t *mc);

#ifdef __cplusplus
}
#endif

#endif
