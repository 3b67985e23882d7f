/*
 * Memory windows (type 2B): a remote key over exactly one byte range of a registration, bound by
 * a work request on one QP, usable only through that QP, and dead once invalidated. A
 * registration made for windows (VERBS_ACCESS_MW_BIND) grants no remote access by itself, so
 * what a peer can reach is exactly the windows bound for it, for as long as they are bound:
 * registrations can stay cached while every key a peer sees is good for one transfer.
 *
 * Each bind gives the window a new key (its low 8 bits step, ibv_inc_rkey), so a peer holding
 * the key of an earlier bind of the same window is refused by the device.
 */
#ifndef IBMSG_VERBS_MW_H
#define IBMSG_VERBS_MW_H

#include <stdint.h>

#include "verbs/device.h"
#include "verbs/qp.h"
#include "verbs/reg_cache.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct verbs_mw verbs_mw_t;

/* Largest window one bind covers on every device: mlx5 refuses more (its KLM lengths are 31
   bits, EOPNOTSUPP at ibv_post_send). */
#define VERBS_MW_BIND_MAX (1ull << 31)

/**
 * Allocate a type 2 window on dev's protection domain. Returns IBMSG_OK or an error (logged):
 * IBMSG_ERR_NOT_SUPPORTED where the provider has no windows.
 */
int verbs_mw_alloc(verbs_dev_t *dev, verbs_mw_t **mw_p);

/**
 * Whether windows can be allocated on dev: a type 2 window allocated and freed at once. Some
 * devices advertise type 2B windows while their user-space provider has no alloc_mw (bnxt_re,
 * hns: EOPNOTSUPP). Returns IBMSG_OK or the allocation's error (not logged).
 */
int verbs_mw_probe(verbs_dev_t *dev);

/** Free a window, bound or not (NULL is ignored). */
void verbs_mw_free(verbs_mw_t *mw);

/** The window's key: of its last bind, or the initial one before any. */
uint32_t verbs_mw_rkey(const verbs_mw_t *mw);

/**
 * Post a BIND_MW of mw (not bound: new or invalidated) over [addr, addr + len) of reg (a
 * registration with VERBS_ACCESS_MW_BIND covering the range), granting remote read through qp
 * only. The window takes its next key (verbs_mw_rkey). flags: VERBS_SEND_SIGNALED,
 * VERBS_SEND_DEFER (held like a send: verbs_qp_post_send) or 0; the bind is done before any later
 * work request of qp starts. Returns IBMSG_OK, IBMSG_ERR_NO_RESOURCE when the send queue is
 * full, IBMSG_ERR_NOT_SUPPORTED for len above VERBS_MW_BIND_MAX (nothing posted or held: see
 * verbs_post_refused), or another error (logged).
 */
int verbs_qp_post_bind(verbs_qp_t *qp, verbs_mw_t *mw, const verbs_reg_t *reg, uint64_t addr,
                       uint64_t len, unsigned flags, uint64_t wr_id);

/**
 * Post a LOCAL_INV of key rkey (a window bound through qp): once it completes, the key opens
 * nothing and the window may be bound again. Returns as verbs_qp_post_bind.
 */
int verbs_qp_post_local_inv(verbs_qp_t *qp, uint32_t rkey, unsigned flags, uint64_t wr_id);

#ifdef __cplusplus
}
#endif

#endif
