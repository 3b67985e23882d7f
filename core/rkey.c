/* Packing and validation of remote-key blobs (layout in rkey.h). */
#include "core/rkey.h"

#include <ibmsg/status.h>

#include "util/compiler.h"

UTIL_STATIC_ASSERT(IBMSG_RKEY_BLOB_SIZE == 24, "the rkey blob layout is 24 bytes");

#define CORE_RKEY_ACCESS_ALL \
    (IBMSG_MEM_REMOTE_READ | IBMSG_MEM_REMOTE_WRITE | IBMSG_MEM_REMOTE_ATOMIC)

static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static uint64_t get_be(const uint8_t *p, int n)
{
    uint64_t v = 0;

    for (int i = 0; i < n; i++) {
        v = (v << 8) | p[i];
    }
    return v;
}

/* Why k is not a valid key, or NULL. */
static const char *rkey_check(const core_rkey_blob_t *k)
{
    if (k->access == 0) {
        return "no remote access granted";
    }
    if ((k->access & ~CORE_RKEY_ACCESS_ALL) != 0) {
        return "unknown access bits";
    }
    if (k->length == 0) {
        return "empty range";
    }
    if (k->length - 1 > UINT64_MAX - k->base) {
        return "range wraps around the address space";
    }
    return NULL;
}

int core_rkey_pack(const core_rkey_blob_t *k, void *buf, size_t len)
{
    uint8_t *p = buf;

    if (k == NULL || buf == NULL || len < IBMSG_RKEY_BLOB_SIZE || rkey_check(k) != NULL) {
        return IBMSG_ERR_INVALID;
    }
    p[0] = CORE_RKEY_VERSION;
    p[1] = k->access;
    put_be(p + 2, IBMSG_RKEY_BLOB_SIZE, 2);
    put_be(p + 4, k->rkey, 4);
    put_be(p + 8, k->base, 8);
    put_be(p + 16, k->length, 8);
    return IBMSG_OK;
}

int core_rkey_unpack(const void *buf, size_t len, core_rkey_blob_t *k, const char **why)
{
    const uint8_t *p = buf;
    core_rkey_blob_t t;
    const char *bad;

    if (buf == NULL || k == NULL || why == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (len != IBMSG_RKEY_BLOB_SIZE) {
        *why = "wrong size";
        return IBMSG_ERR_PROTOCOL;
    }
    if (p[0] != CORE_RKEY_VERSION) {
        *why = "unknown version";
        return IBMSG_ERR_PROTOCOL;
    }
    if (get_be(p + 2, 2) != IBMSG_RKEY_BLOB_SIZE) {
        *why = "size field does not match";
        return IBMSG_ERR_PROTOCOL;
    }
    t.access = p[1];
    t.rkey = (uint32_t)get_be(p + 4, 4);
    t.base = get_be(p + 8, 8);
    t.length = get_be(p + 16, 8);
    bad = rkey_check(&t);
    if (bad != NULL) {
        *why = bad;
        return IBMSG_ERR_PROTOCOL;
    }
    *k = t;
    return IBMSG_OK;
}
