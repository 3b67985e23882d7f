/*
 * The address of one RC queue pair as it travels between processes: what the peer needs to
 * move its queue pair to RTR (QPN, PSN, LID, GID, MTU). Packed into a fixed, versioned,
 * big-endian blob; a blob from elsewhere is untrusted and unpacking validates every field.
 */
#ifndef IBMSG_VERBS_ADDR_H
#define IBMSG_VERBS_ADDR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define VERBS_ADDR_VERSION     1
#define VERBS_ADDR_PACKED_SIZE 32

/* Link layers, as the peer needs to know whether to route by GID. */
enum {
    VERBS_LINK_IB = 1,
    VERBS_LINK_ETHERNET = 2,
};

typedef struct verbs_addr {
    uint32_t qpn;       /* 24 bits */
    uint32_t psn;       /* 24 bits */
    uint16_t lid;       /* 0 on RoCE */
    uint8_t mtu;        /* IB MTU code: 1 = 256 B ... 5 = 4096 B */
    uint8_t link_layer; /* VERBS_LINK_* */
    uint8_t gid[16];    /* all zero when the peer has no GID (IB without GRH) */
} verbs_addr_t;

/**
 * Pack addr into buf (VERBS_ADDR_PACKED_SIZE bytes). Returns IBMSG_OK, or IBMSG_ERR_INVALID for
 * NULL pointers, a buffer that is too small or a field out of range.
 */
int verbs_addr_pack(const verbs_addr_t *addr, void *buf, size_t len);

/**
 * Unpack and validate a blob: exact size, version, reserved bits zero, QPN and PSN in 24 bits,
 * QPN not 0 or 1 (special QPs), MTU code 1..5, known link layer, a LID on IB or a GID on RoCE.
 * Returns IBMSG_OK and fills *addr, IBMSG_ERR_PROTOCOL for a malformed blob (nothing written),
 * IBMSG_ERR_INVALID for NULL pointers.
 */
int verbs_addr_unpack(const void *buf, size_t len, verbs_addr_t *addr);

/** Whether a GID (16 bytes) is all zero: no GID. */
int verbs_gid_is_zero(const uint8_t *gid);

/** Bytes of an IB MTU code (256 << (code - 1)), 0 for an invalid code. */
uint32_t verbs_mtu_bytes(uint8_t mtu);

#ifdef __cplusplus
}
#endif

#endif
