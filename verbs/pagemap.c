/* Page frames from /proc/self/pagemap (see pagemap.h). */
#include "verbs/pagemap.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include <ibmsg/status.h>

#include "util/log.h"

#define PAGEMAP_PRESENT  (1ull << 63)
#define PAGEMAP_PFN_MASK ((1ull << 55) - 1)

int verbs_pagemap_open(void)
{
    int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);

    if (fd < 0) {
        util_warn("cannot open /proc/self/pagemap: %s", strerror(errno));
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    return fd;
}

void verbs_pagemap_close(int fd)
{
    if (fd >= 0) {
        close(fd);
    }
}

int verbs_pagemap_read(int fd, uintptr_t addr, size_t npages, size_t page, uint64_t *pfns)
{
    size_t want = npages * sizeof(uint64_t), got = 0;
    off_t off = (off_t)(addr / page * sizeof(uint64_t));

    while (got < want) {
        ssize_t n = pread(fd, (char *)pfns + got, want - got, off + (off_t)got);
        if (n <= 0) {
            if (n < 0 && errno == EINTR) {
                continue;
            }
            return IBMSG_ERR_IO;
        }
        got += (size_t)n;
    }
    for (size_t i = 0; i < npages; i++) {
        uint64_t e = pfns[i];
        if ((e & PAGEMAP_PRESENT) == 0) {
            pfns[i] = 0;
            continue;
        }
        pfns[i] = e & PAGEMAP_PFN_MASK;
        if (pfns[i] == 0) {
            return IBMSG_ERR_NOT_SUPPORTED;
        }
    }
    return IBMSG_OK;
}
