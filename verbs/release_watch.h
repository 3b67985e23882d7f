/*
 * Memory release events of this process, for the registration cache when page frames are hidden
 * (ordinary users: reg_cache.h). A userfaultfd is registered over the pages of each cached
 * registration in write-protect mode without ever protecting a page, so no fault is ever
 * delivered to it; it only asks for the non-cooperative events: UNMAP (munmap, mmap MAP_FIXED
 * over it, brk shrinking), REMOVE (madvise DONTNEED, FREE, REMOVE) and REMAP (mremap). The kernel
 * reports these whoever calls the system (free() inside libc, another library, a raw syscall),
 * which symbol interposition of munmap would miss.
 *
 * The kernel holds the releasing thread until the event is read, so a thread of the process (one
 * for all contexts, started by the first verbs_release_watch_open) reads them and publishes each
 * released range in a ring. A reader's verbs_release_watch_next first waits while that thread
 * is between reading events and publishing them: a release whose system call has returned is
 * therefore always seen by the next call, which makes the invalidation exact. The thread calls
 * nothing but poll and read (the releasing thread may hold malloc's lock: it must not allocate).
 *
 * Needs Linux 5.11 for unprivileged users (UFFD_USER_MODE_ONLY; before it, root or the sysctl
 * vm.unprivileged_userfaultfd = 1) and 5.7 for write-protect registration of anonymous memory.
 * Only anonymous, shared-memory and hugetlbfs mappings can be watched: verbs_release_watch_add
 * refuses file mappings (their registrations are then not cached). A forked child gets no events
 * (the kernel drops the registration from its mappings): after fork every reader of the child
 * is told its events were lost.
 */
#ifndef IBMSG_VERBS_RELEASE_WATCH_H
#define IBMSG_VERBS_RELEASE_WATCH_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/** A reader of release events (one per registration cache). */
typedef struct verbs_release_reader {
    uint64_t cursor;     /* the next event to read */
    uint64_t generation; /* of the watch it was opened on (a fork starts a new one) */
} verbs_release_reader_t;

/**
 * Start reading release events (the first reader of the process starts the watch: a userfaultfd
 * and its thread). Returns IBMSG_OK or IBMSG_ERR_NOT_SUPPORTED (why is in *why, a static
 * string: no userfaultfd for this user or kernel, or no thread).
 */
int verbs_release_watch_open(verbs_release_reader_t *r, const char **why);

/** Stop reading; the last reader stops the watch. */
void verbs_release_watch_close(verbs_release_reader_t *r);

/**
 * Report any later release of a page of [addr, addr + len) (page aligned). Returns IBMSG_OK, or
 * IBMSG_ERR_NOT_SUPPORTED when the pages cannot be watched (a file mapping, a hole, another
 * userfaultfd, or a forked child).
 */
int verbs_release_watch_add(const verbs_release_reader_t *r, uintptr_t addr, size_t len);

/**
 * The next range released since the reader's last call: 1 and [*start, *end), 0 when there is
 * none, -1 when events were lost (the ring overran the reader, or the process forked): the
 * reader must then assume everything it watched was released.
 */
int verbs_release_watch_next(verbs_release_reader_t *r, uintptr_t *start, uintptr_t *end);

#ifdef __cplusplus
}
#endif

#endif
