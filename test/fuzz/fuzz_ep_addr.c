/*
 * libFuzzer harness: the endpoint address blob that ibmsg_ep_connect parses
 * (core_ep_addr_parse, with verbs_addr_unpack inside). Any blob is accepted or rejected without
 * a crash; an accepted one is canonical: packing what was parsed gives the same bytes back.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>

#include "core/ep_addr.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    core_ep_addr_t a;
    verbs_addr_t v;
    uint8_t back[CORE_EP_ADDR_SIZE];
    const char *why = NULL;
    int ret = core_ep_addr_parse(data, size, &a, &why);

    if (ret == IBMSG_OK) {
        if (size != CORE_EP_ADDR_SIZE || core_ep_addr_pack(&a, back, sizeof(back)) != IBMSG_OK ||
            memcmp(back, data, size) != 0) {
            abort();
        }
    } else if (ret != IBMSG_ERR_PROTOCOL || why == NULL) {
        abort();
    }
    /* The verbs part on its own, at any length. */
    ret = verbs_addr_unpack(data, size, &v);
    if (ret == IBMSG_OK) {
        uint8_t vb[VERBS_ADDR_PACKED_SIZE];
        if (size != VERBS_ADDR_PACKED_SIZE || verbs_addr_pack(&v, vb, sizeof(vb)) != IBMSG_OK ||
            memcmp(vb, data, size) != 0) {
            abort();
        }
    } else if (ret != IBMSG_ERR_PROTOCOL) {
        abort();
    }
    return 0;
}
