/*
 * The page frames behind virtual addresses of this process, from /proc/self/pagemap (one 64-bit
 * entry per page: bit 63 present, bits 0-54 the frame number). The registration cache compares
 * them to tell memory that was unmapped and mapped again from the memory it registered. Frame
 * numbers read as 0 without CAP_SYS_ADMIN: then nothing can be compared.
 */
#ifndef IBMSG_VERBS_PAGEMAP_H
#define IBMSG_VERBS_PAGEMAP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Open this process's page map. Returns a descriptor or a negative status (logged). */
int verbs_pagemap_open(void);

/** Close what verbs_pagemap_open returned (negative values are ignored). */
void verbs_pagemap_close(int fd);

/**
 * The frames of npages pages from addr (aligned to page, the system's page size) into pfns: the
 * frame number, or 0 for a page that is not present. One pread. Returns IBMSG_OK,
 * IBMSG_ERR_NOT_SUPPORTED when a present page shows frame 0 (frames are hidden from us) or
 * IBMSG_ERR_IO.
 */
int verbs_pagemap_read(int fd, uintptr_t addr, size_t npages, size_t page, uint64_t *pfns);

#ifdef __cplusplus
}
#endif

#endif
