/* Packing and validation of endpoint address blobs (layout in ep_addr.h). */
#include "core/ep_addr.h"

#include <ibmsg/status.h>

#include "core/config.h"

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

int core_ep_addr_pack(const core_ep_addr_t *a, void *buf, size_t len)
{
    uint8_t *p = buf;

    if (a == NULL || buf == NULL || len < CORE_EP_ADDR_SIZE) {
        return IBMSG_ERR_INVALID;
    }
    p[0] = CORE_EP_ADDR_VERSION;
    p[1] = 0;
    p[2] = 0;
    p[3] = CORE_EP_ADDR_SIZE;
    put_be32(p + 4, a->credits);
    put_be32(p + 8, a->eager_limit);
    p[12] = a->responder_resources;
    p[13] = a->initiator_depth;
    p[14] = 0;
    p[15] = 0;
    return verbs_addr_pack(&a->qp, p + CORE_EP_ADDR_HDR, VERBS_ADDR_PACKED_SIZE);
}

int core_ep_addr_parse(const void *blob, size_t len, core_ep_addr_t *a, const char **why)
{
    const uint8_t *p = blob;
    core_ep_addr_t t;

    if (blob == NULL || a == NULL || why == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (len != CORE_EP_ADDR_SIZE) {
        *why = "wrong size";
        return IBMSG_ERR_PROTOCOL;
    }
    if (p[0] != CORE_EP_ADDR_VERSION || p[1] != 0 || p[2] != 0 || p[3] != CORE_EP_ADDR_SIZE) {
        *why = "unknown version, flags or size field";
        return IBMSG_ERR_PROTOCOL;
    }
    t.credits = get_be32(p + 4);
    t.eager_limit = get_be32(p + 8);
    if (!core_config_check("core_credits", t.credits) ||
        !core_config_check("core_eager_limit", t.eager_limit)) {
        *why = "credits or eager limit out of range";
        return IBMSG_ERR_PROTOCOL;
    }
    t.responder_resources = p[12];
    t.initiator_depth = p[13];
    if (!core_config_check("verbs_max_rd_atomic", t.responder_resources) ||
        !core_config_check("verbs_max_rd_atomic", t.initiator_depth) || p[14] != 0 || p[15] != 0) {
        *why = "RDMA READ depths out of range or reserved bytes set";
        return IBMSG_ERR_PROTOCOL;
    }
    if (verbs_addr_unpack(p + CORE_EP_ADDR_HDR, VERBS_ADDR_PACKED_SIZE, &t.qp) != IBMSG_OK) {
        *why = "malformed queue-pair address";
        return IBMSG_ERR_PROTOCOL;
    }
    *a = t;
    return IBMSG_OK;
}
