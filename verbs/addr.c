/* Packing and validation of queue-pair addresses (see addr.h for the layout rules). */
#include "verbs/addr.h"

#include <string.h>

#include <ibmsg/status.h>

#include "util/log.h"

/*
 * Layout, big-endian:
 *   0 version  1 flags (0)  2..3 blob size  4..7 qpn  8..11 psn  12..13 lid  14 mtu
 *   15 link layer  16..31 gid
 */
static void put16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static uint16_t get16(const uint8_t *p)
{
    return (uint16_t)((p[0] << 8) | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

uint32_t verbs_mtu_bytes(uint8_t mtu)
{
    return (mtu >= 1 && mtu <= 5) ? 256u << (mtu - 1) : 0;
}

int verbs_gid_is_zero(const uint8_t *gid)
{
    static const uint8_t zero[16];
    return memcmp(gid, zero, sizeof(zero)) == 0;
}

static int addr_check(const verbs_addr_t *a)
{
    if (a->qpn > 0xffffff || a->qpn < 2) {
        return 0;
    }
    if (a->psn > 0xffffff || verbs_mtu_bytes(a->mtu) == 0) {
        return 0;
    }
    if (a->link_layer == VERBS_LINK_IB) {
        return a->lid != 0 || !verbs_gid_is_zero(a->gid);
    }
    if (a->link_layer == VERBS_LINK_ETHERNET) {
        return !verbs_gid_is_zero(a->gid);
    }
    return 0;
}

int verbs_addr_pack(const verbs_addr_t *addr, void *buf, size_t len)
{
    uint8_t *p = buf;

    if (addr == NULL || buf == NULL || len < VERBS_ADDR_PACKED_SIZE || !addr_check(addr)) {
        return IBMSG_ERR_INVALID;
    }
    p[0] = VERBS_ADDR_VERSION;
    p[1] = 0;
    put16(p + 2, VERBS_ADDR_PACKED_SIZE);
    put32(p + 4, addr->qpn);
    put32(p + 8, addr->psn);
    put16(p + 12, addr->lid);
    p[14] = addr->mtu;
    p[15] = addr->link_layer;
    memcpy(p + 16, addr->gid, 16);
    return IBMSG_OK;
}

int verbs_addr_unpack(const void *buf, size_t len, verbs_addr_t *addr)
{
    const uint8_t *p = buf;
    verbs_addr_t a;

    if (buf == NULL || addr == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (len != VERBS_ADDR_PACKED_SIZE) {
        util_debug("address blob: %zu bytes, expected %d", len, VERBS_ADDR_PACKED_SIZE);
        return IBMSG_ERR_PROTOCOL;
    }
    if (p[0] != VERBS_ADDR_VERSION || p[1] != 0 || get16(p + 2) != VERBS_ADDR_PACKED_SIZE) {
        util_debug("address blob: version %u flags %u size %u, expected version %d", (unsigned)p[0],
                   (unsigned)p[1], (unsigned)get16(p + 2), VERBS_ADDR_VERSION);
        return IBMSG_ERR_PROTOCOL;
    }
    a.qpn = get32(p + 4);
    a.psn = get32(p + 8);
    a.lid = get16(p + 12);
    a.mtu = p[14];
    a.link_layer = p[15];
    memcpy(a.gid, p + 16, 16);
    if (!addr_check(&a)) {
        util_debug("address blob: qpn 0x%x psn 0x%x lid %u mtu %u link %u out of range", a.qpn,
                   a.psn, (unsigned)a.lid, (unsigned)a.mtu, (unsigned)a.link_layer);
        return IBMSG_ERR_PROTOCOL;
    }
    *addr = a;
    return IBMSG_OK;
}
