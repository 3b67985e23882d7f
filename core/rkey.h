/*
 * The packed remote key of a one-sided mapping as it travels to a peer, and its validation.
 * Pure functions (no device, no context), so the unit tests and the fuzz harness run anywhere.
 *
 * Layout, IBMSG_RKEY_BLOB_SIZE (24) bytes, big-endian:
 *   0 version (CORE_RKEY_VERSION)   1 access (IBMSG_MEM_REMOTE_READ | _WRITE | _ATOMIC, other
 *                                     bits 0; a peer before atomics rejects _ATOMIC cleanly)
 *   2..3 blob size                  4..7 device rkey
 *   8..15 base address              16..23 length
 * The range [base, base + length) must be non-empty and must not wrap around 2^64.
 */
#ifndef IBMSG_CORE_RKEY_H
#define IBMSG_CORE_RKEY_H

#include <stddef.h>
#include <stdint.h>

#include <ibmsg/rma.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CORE_RKEY_VERSION 1

typedef struct core_rkey_blob {
    uint64_t base;
    uint64_t length;
    uint32_t rkey;
    uint8_t access; /* IBMSG_MEM_REMOTE_* */
} core_rkey_blob_t;

/** Pack k into buf (at least IBMSG_RKEY_BLOB_SIZE bytes). Returns IBMSG_OK or IBMSG_ERR_INVALID
 * when k itself would not unpack (no access, unknown access bits, empty or wrapping range). */
int core_rkey_pack(const core_rkey_blob_t *k, void *buf, size_t len);

/**
 * Unpack and validate a blob from a peer. Returns IBMSG_OK and fills *k; IBMSG_ERR_PROTOCOL for
 * a malformed blob (*why names the first rule it breaks; *k untouched); IBMSG_ERR_INVALID for
 * NULL pointers.
 */
int core_rkey_unpack(const void *buf, size_t len, core_rkey_blob_t *k, const char **why);

/**
 * Whether [addr, addr + len) lies inside [base, base + length), without overflow for any
 * inputs. len 0 is inside when addr is in [base, base + length].
 */
static inline int core_rkey_in_bounds(uint64_t base, uint64_t length, uint64_t addr, uint64_t len)
{
    uint64_t off = addr - base; /* wraps to a huge value when addr < base */

    return addr >= base && off <= length && len <= length - off;
}

#ifdef __cplusplus
}
#endif

#endif
