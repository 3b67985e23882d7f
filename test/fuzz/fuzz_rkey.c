/*
 * libFuzzer harness: remote-key blobs (core_rkey_unpack, as ibmsg_rkey_unpack uses it) and the
 * bounds check of puts and gets. The first 24 bytes (or fewer) are the blob; 16 more, when
 * present, are an access (address, length) checked against the key's range in 128-bit
 * arithmetic. An accepted blob is canonical (packs back to the same bytes) and its range does
 * not wrap.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>

#include "core/rkey.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static uint64_t get64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t blob = size >= IBMSG_RKEY_BLOB_SIZE + 16 ? size - 16 : size;
    core_rkey_blob_t k;
    const char *why = NULL;
    uint8_t back[IBMSG_RKEY_BLOB_SIZE];
    int ret = core_rkey_unpack(data, blob, &k, &why);

    if (ret != IBMSG_OK) {
        if (ret != IBMSG_ERR_PROTOCOL || why == NULL) {
            abort();
        }
        return 0;
    }
    if (blob != IBMSG_RKEY_BLOB_SIZE || k.length == 0 ||
        (unsigned __int128)k.base + k.length > ((unsigned __int128)1 << 64) ||
        core_rkey_pack(&k, back, sizeof(back)) != IBMSG_OK || memcmp(back, data, blob) != 0) {
        abort();
    }
    if (size >= blob + 16) {
        uint64_t raw = get64(data + blob), len = get64(data + blob + 8);
        /* The raw address, and addresses near the range's start and end: random bytes alone
         * rarely land there. */
        uint64_t addrs[3] = {raw, k.base + (uint64_t)(int64_t)(int16_t)raw,
                             k.base + k.length + (uint64_t)(int64_t)(int16_t)raw};
        uint64_t lens[2] = {len, len & 0xffff};
        for (int i = 0; i < 3; i++) {
            for (int j = 0; j < 2; j++) {
                uint64_t addr = addrs[i];
                int want = addr >= k.base && (unsigned __int128)addr + lens[j] <=
                                                 (unsigned __int128)k.base + k.length;
                if (core_rkey_in_bounds(k.base, k.length, addr, lens[j]) != want) {
                    abort();
                }
            }
        }
    }
    return 0;
}
