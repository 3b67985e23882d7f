/* Memory release events through a userfaultfd and its thread (see release_watch.h). */
#include "verbs/release_watch.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ibmsg/status.h>

#ifndef UFFD_USER_MODE_ONLY
#define UFFD_USER_MODE_ONLY 1
#endif

/* Released ranges kept for readers that have not caught up; a reader overrun drops everything. */
#define RELEASE_RING 4096

#define RELEASE_EVENTS \
    (UFFD_FEATURE_EVENT_UNMAP | UFFD_FEATURE_EVENT_REMOVE | UFFD_FEATURE_EVENT_REMAP)

typedef struct release_slot {
    _Atomic uintptr_t start, end;
} release_slot_t;

static struct {
    pthread_mutex_t lock; /* open and close */
    unsigned readers;
    int fd;      /* the userfaultfd; -1 while nobody reads */
    int stop_fd; /* eventfd telling the thread to end */
    pthread_t thread;
    uint64_t generation; /* one more in a forked child */
    atomic_int reading;  /* the thread has read events it has not published yet */
    atomic_int dead;     /* the thread ended on an error: events are lost */
    _Atomic uint64_t head;
    release_slot_t ring[RELEASE_RING];
} watch = {.lock = PTHREAD_MUTEX_INITIALIZER, .fd = -1, .stop_fd = -1};

static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

/* The child has no thread and its mappings no userfaultfd: its readers have lost their events. */
static void watch_atfork_child(void)
{
    if (watch.fd >= 0) {
        close(watch.fd);
        close(watch.stop_fd);
    }
    watch.fd = watch.stop_fd = -1;
    watch.readers = 0;
    watch.generation++;
    atomic_store(&watch.reading, 0);
    pthread_mutex_init(&watch.lock, NULL);
}

static void watch_register_atfork(void)
{
    pthread_atfork(NULL, NULL, watch_atfork_child);
}

static void publish(uintptr_t start, uintptr_t end)
{
    uint64_t h = atomic_load_explicit(&watch.head, memory_order_relaxed);
    release_slot_t *s = &watch.ring[h % RELEASE_RING];

    atomic_store_explicit(&s->start, start, memory_order_relaxed);
    atomic_store_explicit(&s->end, end, memory_order_relaxed);
    atomic_store_explicit(&watch.head, h + 1, memory_order_release);
}

/* Nothing but poll, read and stores: the thread held by the kernel may hold any lock. */
static void *watch_main(void *unused)
{
    struct uffd_msg msgs[64];
    struct pollfd p[2] = {{.fd = watch.fd, .events = POLLIN},
                          {.fd = watch.stop_fd, .events = POLLIN}};

    (void)unused;
    for (;;) {
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR) {
                continue;
            }
            break;
        }
        if (p[1].revents != 0 || (p[0].revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) {
            break;
        }
        /* Set before the read that lets the releasing thread go on: see release_watch.h. */
        atomic_store(&watch.reading, 1);
        ssize_t n = read(watch.fd, msgs, sizeof(msgs));
        for (ssize_t i = 0; i < n / (ssize_t)sizeof(msgs[0]); i++) {
            const struct uffd_msg *m = &msgs[i];
            if (m->event == UFFD_EVENT_UNMAP || m->event == UFFD_EVENT_REMOVE) {
                publish((uintptr_t)m->arg.remove.start, (uintptr_t)m->arg.remove.end);
            } else if (m->event == UFFD_EVENT_REMAP) {
                publish((uintptr_t)m->arg.remap.from,
                        (uintptr_t)(m->arg.remap.from + m->arg.remap.len));
            }
        }
        atomic_store_explicit(&watch.reading, 0, memory_order_release);
    }
    if (p[1].revents == 0) {
        atomic_store(&watch.dead, 1);
    }
    return NULL;
}

/* Whether write-protect registration of private anonymous memory works (Linux 5.7). */
static int watch_probe(int fd)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *m = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    struct uffdio_register reg = {.range = {.start = (uintptr_t)m, .len = page},
                                  .mode = UFFDIO_REGISTER_MODE_WP};
    int ok;

    if (m == MAP_FAILED) {
        return 0;
    }
    ok = ioctl(fd, UFFDIO_REGISTER, &reg) == 0;
    if (ok) {
        /* Unregistered first: the munmap would otherwise wait for a thread not started yet. */
        struct uffdio_range range = reg.range;
        ioctl(fd, UFFDIO_UNREGISTER, &range);
    }
    munmap(m, page);
    return ok;
}

static int watch_start(const char **why)
{
    struct uffdio_api api = {.api = UFFD_API, .features = RELEASE_EVENTS};
    sigset_t all, old;
    int fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK | UFFD_USER_MODE_ONLY);

    if (fd < 0 && errno == EINVAL) {
        fd = (int)syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK); /* before Linux 5.11 */
    }
    if (fd < 0) {
        *why = "userfaultfd is refused to this process (kernel, seccomp or "
               "vm.unprivileged_userfaultfd)";
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    if (ioctl(fd, UFFDIO_API, &api) != 0 || (api.features & RELEASE_EVENTS) != RELEASE_EVENTS) {
        *why = "userfaultfd has no unmap, remove and remap events (Linux 4.11)";
        close(fd);
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    if (!watch_probe(fd)) {
        *why = "userfaultfd cannot watch anonymous memory in write-protect mode (Linux 5.7)";
        close(fd);
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    watch.stop_fd = eventfd(0, EFD_CLOEXEC);
    if (watch.stop_fd < 0) {
        *why = "no eventfd";
        close(fd);
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    watch.fd = fd;
    atomic_store(&watch.dead, 0);
    /* The program's signals are not for this thread. */
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int err = pthread_create(&watch.thread, NULL, watch_main, NULL);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (err != 0) {
        *why = "no thread to read the events";
        close(watch.stop_fd);
        close(fd);
        watch.fd = watch.stop_fd = -1;
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    return IBMSG_OK;
}

int verbs_release_watch_open(verbs_release_reader_t *r, const char **why)
{
    int status = IBMSG_OK;

    pthread_once(&atfork_once, watch_register_atfork);
    pthread_mutex_lock(&watch.lock);
    if (watch.readers == 0) {
        status = watch_start(why);
    }
    if (status == IBMSG_OK) {
        watch.readers++;
        r->cursor = atomic_load_explicit(&watch.head, memory_order_acquire);
        r->generation = watch.generation;
    }
    pthread_mutex_unlock(&watch.lock);
    return status;
}

void verbs_release_watch_close(verbs_release_reader_t *r)
{
    pthread_mutex_lock(&watch.lock);
    if (r->generation == watch.generation && watch.readers > 0 && --watch.readers == 0) {
        uint64_t one = 1;
        if (write(watch.stop_fd, &one, sizeof(one)) != (ssize_t)sizeof(one)) {
            pthread_cancel(watch.thread);
        }
        pthread_join(watch.thread, NULL);
        /* Closing the userfaultfd takes it off every mapping and lets go any thread it held. */
        close(watch.fd);
        close(watch.stop_fd);
        watch.fd = watch.stop_fd = -1;
    }
    pthread_mutex_unlock(&watch.lock);
}

int verbs_release_watch_add(const verbs_release_reader_t *r, uintptr_t addr, size_t len)
{
    struct uffdio_register reg = {.range = {.start = addr, .len = len},
                                  .mode = UFFDIO_REGISTER_MODE_WP};

    if (r->generation != watch.generation || watch.fd < 0 || atomic_load(&watch.dead)) {
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    return ioctl(watch.fd, UFFDIO_REGISTER, &reg) == 0 ? IBMSG_OK : IBMSG_ERR_NOT_SUPPORTED;
}

int verbs_release_watch_next(verbs_release_reader_t *r, uintptr_t *start, uintptr_t *end)
{
    uint64_t head;

    if (r->generation != watch.generation ||
        atomic_load_explicit(&watch.dead, memory_order_relaxed)) {
        return -1;
    }
    /* Events read but not published yet may be of a release that has returned already. */
    for (unsigned spins = 0; atomic_load_explicit(&watch.reading, memory_order_acquire) != 0;
         spins++) {
        if (spins >= 64) {
            sched_yield();
        }
    }
    head = atomic_load_explicit(&watch.head, memory_order_acquire);
    if (r->cursor == head) {
        return 0;
    }
    if (head - r->cursor > RELEASE_RING) {
        r->cursor = head;
        return -1;
    }
    const release_slot_t *s = &watch.ring[r->cursor % RELEASE_RING];
    *start = atomic_load_explicit(&s->start, memory_order_relaxed);
    *end = atomic_load_explicit(&s->end, memory_order_relaxed);
    atomic_thread_fence(memory_order_acquire);
    if (atomic_load_explicit(&watch.head, memory_order_relaxed) - r->cursor > RELEASE_RING) {
        r->cursor = atomic_load_explicit(&watch.head, memory_order_acquire);
        return -1; /* overwritten while read */
    }
    r->cursor++;
    return 1;
}
