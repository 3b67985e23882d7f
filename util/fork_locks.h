/*
 * The library's process-wide locks across fork(). A child has only the thread that forked: a
 * lock another thread held at that moment would stay locked in the child for good, and the
 * child's first log line, context or variable would hang. So fork() takes every registered lock
 * first (in the order below, the library's lock order) and releases each on both sides after.
 * fork() then waits for whatever holds one (a log sink that runs, a context being opened).
 *
 * The order, outermost first: a thread holding one of these takes only those after it. Locks of
 * objects (a context's, a cache's, a handle's) are not here: a child cannot use its parent's
 * objects, and opens what it needs anew. A library linking its own copy of util/ (libibmsg-mpit)
 * has its own table and handlers, installed after libibmsg's, so that fork() takes its locks
 * first: it calls libibmsg with its lock held, never the reverse.
 */
#ifndef IBMSG_UTIL_FORK_LOCKS_H
#define IBMSG_UTIL_FORK_LOCKS_H

#include <pthread.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef enum util_fork_lock {
    UTIL_FORK_LOCK_MPIT_LAYER, /* the MPI_T layer (libibmsg-mpit, its own table of these) */
    UTIL_FORK_LOCK_NIC_REG,    /* the NIC variables' registration (registers in the registry) */
    UTIL_FORK_LOCK_REGISTRY,   /* the tool registry (recursive; its notify callbacks run in it) */
    UTIL_FORK_LOCK_PAPI_REG,   /* the PAPI variables' registration (from registry callbacks) */
    UTIL_FORK_LOCK_PAPI,       /* the PAPI event sets */
    UTIL_FORK_LOCK_CONFIG,     /* the control variables' values */
    UTIL_FORK_LOCK_HCA_TABLE,  /* the devices open and shared */
    UTIL_FORK_LOCK_SHARDS,     /* the counter shards' lists */
    UTIL_FORK_LOCK_EV_SOURCES, /* the event sources' queues (a set: one lock per source) */
    UTIL_FORK_LOCK_LOG_SINK,   /* the log sink (recursive; the sink runs in it): logged under any */
    UTIL_FORK_LOCK_COUNT
} util_fork_lock_t;

/** Hold lock across every fork() from now on, at its place in the order (once per place). The
    child has it anew (initialised, recursive or not as said): the forking thread has another
    thread id there, which a recursive mutex would not take for its owner's. */
void util_fork_lock_add(util_fork_lock_t which, pthread_mutex_t *lock, int recursive);

/* Locks a module keeps several of (one per object of a fixed table): it takes them all, releases
   them in the parent, and renews them (and what they guard) in the child. */
typedef struct util_fork_set {
    void (*take)(void);
    void (*release)(void);
    void (*renew)(void);
} util_fork_set_t;

/** Hold a set across every fork() from now on, at its place in the order. */
void util_fork_set_add(util_fork_lock_t which, const util_fork_set_t *set);

/** The lock registered at a place, or NULL (for the tests). */
pthread_mutex_t *util_fork_lock_at(util_fork_lock_t which);

/* Beside a lock's definition: added at load, before any thread of the program's can fork. */
#define UTIL_FORK_LOCK(which, lock, recursive)                                    \
    __attribute__((constructor)) static void util_fork_lock_at_load_##which(void) \
    {                                                                             \
        util_fork_lock_add(which, &(lock), recursive);                            \
    }

#ifdef __cplusplus
}
#endif

#endif
