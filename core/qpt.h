/*
 * QP number -> endpoint, for receives from the shared receive queue: its completions name the QP
 * (wc.qp_num) and not the endpoint. Open addressing with linear probing, at most half full, and
 * backward-shift deletion (no tombstones), so a lookup is a hash and a probe or two.
 */
#ifndef IBMSG_CORE_QPT_H
#define IBMSG_CORE_QPT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct ibmsg_ep_s;

typedef struct core_qpt_slot {
    uint32_t qpn;
    struct ibmsg_ep_s *ep; /* NULL: empty */
} core_qpt_slot_t;

typedef struct core_qpt {
    core_qpt_slot_t *slots;
    uint32_t mask; /* slots - 1 (a power of two), or 0 before the first add */
    uint32_t used;
} core_qpt_t;

static inline uint32_t core_qpt_hash(uint32_t qpn, uint32_t mask)
{
    return (qpn * 0x9E3779B1u >> 8) & mask;
}

/** The endpoint of qpn, or NULL (never added, or deleted: its QP is gone). */
static inline struct ibmsg_ep_s *core_qpt_find(const core_qpt_t *t, uint32_t qpn)
{
    if (t->slots == NULL) {
        return NULL;
    }
    for (uint32_t i = core_qpt_hash(qpn, t->mask);; i = (i + 1) & t->mask) {
        if (t->slots[i].ep == NULL || t->slots[i].qpn == qpn) {
            return t->slots[i].ep;
        }
    }
}

/** Add qpn (not present); grows the table. IBMSG_OK or IBMSG_ERR_NO_MEMORY. */
int core_qpt_add(core_qpt_t *t, uint32_t qpn, struct ibmsg_ep_s *ep);

/** Delete qpn (no effect when absent). */
void core_qpt_del(core_qpt_t *t, uint32_t qpn);

/** Free the table. */
void core_qpt_free(core_qpt_t *t);

#ifdef __cplusplus
}
#endif

#endif
