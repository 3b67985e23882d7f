/* QP number -> endpoint (core/qpt.h). */
#include "core/qpt.h"

#include <stdlib.h>

#include <ibmsg/status.h>

static void qpt_put(core_qpt_slot_t *slots, uint32_t mask, uint32_t qpn, struct ibmsg_ep_s *ep)
{
    uint32_t i = core_qpt_hash(qpn, mask);

    while (slots[i].ep != NULL) {
        i = (i + 1) & mask;
    }
    slots[i].qpn = qpn;
    slots[i].ep = ep;
}

int core_qpt_add(core_qpt_t *t, uint32_t qpn, struct ibmsg_ep_s *ep)
{
    if (t->slots == NULL || 2 * (t->used + 1) > t->mask + 1) {
        uint32_t size = t->slots == NULL ? 64 : 2 * (t->mask + 1);
        core_qpt_slot_t *slots = calloc(size, sizeof(*slots));
        if (slots == NULL) {
            return IBMSG_ERR_NO_MEMORY;
        }
        for (uint32_t i = 0; t->slots != NULL && i <= t->mask; i++) {
            if (t->slots[i].ep != NULL) {
                qpt_put(slots, size - 1, t->slots[i].qpn, t->slots[i].ep);
            }
        }
        free(t->slots);
        t->slots = slots;
        t->mask = size - 1;
    }
    qpt_put(t->slots, t->mask, qpn, ep);
    t->used++;
    return IBMSG_OK;
}

void core_qpt_del(core_qpt_t *t, uint32_t qpn)
{
    uint32_t i, j;

    if (t->slots == NULL) {
        return;
    }
    for (i = core_qpt_hash(qpn, t->mask); t->slots[i].qpn != qpn; i = (i + 1) & t->mask) {
        if (t->slots[i].ep == NULL) {
            return;
        }
    }
    if (t->slots[i].ep == NULL) {
        return;
    }
    t->slots[i].ep = NULL;
    t->used--;
    /* Backward shift: move later entries of the run into the hole when their home allows it,
       so every lookup still finds its key before an empty slot. */
    for (j = (i + 1) & t->mask; t->slots[j].ep != NULL; j = (j + 1) & t->mask) {
        uint32_t home = core_qpt_hash(t->slots[j].qpn, t->mask);
        /* j may move to i when home is not in the cyclic range (i, j]. */
        if (((j - home) & t->mask) >= ((j - i) & t->mask)) {
            t->slots[i] = t->slots[j];
            t->slots[j].ep = NULL;
            i = j;
        }
    }
}

void core_qpt_free(core_qpt_t *t)
{
    free(t->slots);
    t->slots = NULL;
    t->mask = 0;
    t->used = 0;
}
