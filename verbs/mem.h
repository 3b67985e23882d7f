/*
 * Registration of user memory for one-sided access: a memory region of the device's protection
 * domain with its local key (for this side's work requests) and remote key (for the peer's).
 * Registration pins pages and costs a system call: callers do it off the hot path.
 */
#ifndef IBMSG_VERBS_MEM_H
#define IBMSG_VERBS_MEM_H

#include <stddef.h>
#include <stdint.h>

#include "verbs/device.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Remote access a registration grants (local read and write are always granted). */
enum {
    VERBS_MEM_REMOTE_READ = 1u << 0,
    VERBS_MEM_REMOTE_WRITE = 1u << 1,
    VERBS_MEM_REMOTE_ATOMIC = 1u << 2, /* 64-bit fetch-and-add and compare-and-swap */
};

typedef struct verbs_mem {
    void *mr; /* the struct ibv_mr */
    uint32_t lkey;
    uint32_t rkey;
} verbs_mem_t;

/**
 * Register [addr, addr + len) with the given VERBS_MEM_* access. len must be at least 1.
 * Returns IBMSG_OK and fills *mem; IBMSG_ERR_NO_RESOURCE when the device or the locked-memory
 * limit refuses, IBMSG_ERR_INVALID for bad arguments (both logged).
 */
int verbs_mem_reg(verbs_dev_t *dev, void *addr, size_t len, unsigned access, verbs_mem_t *mem);

/** Deregister (mem->mr NULL is ignored). Returns IBMSG_OK or IBMSG_ERR_BUSY (logged). */
int verbs_mem_dereg(verbs_mem_t *mem);

#ifdef __cplusplus
}
#endif

#endif
