#include "util/fork_locks.h"

/* Guards the table, and is the first lock a fork takes: forks and registrations go one by one. */
static pthread_mutex_t fork_locks_guard = PTHREAD_MUTEX_INITIALIZER;
static struct {
    pthread_mutex_t *lock; /* a lock, or */
    int recursive;
    const util_fork_set_t *set; /* a set of them */
} fork_locks[UTIL_FORK_LOCK_COUNT];
static pthread_once_t fork_locks_once = PTHREAD_ONCE_INIT;

static void fork_locks_take(void)
{
    pthread_mutex_lock(&fork_locks_guard);
    for (int i = 0; i < UTIL_FORK_LOCK_COUNT; i++) {
        if (fork_locks[i].lock != NULL) {
            pthread_mutex_lock(fork_locks[i].lock);
        } else if (fork_locks[i].set != NULL) {
            fork_locks[i].set->take();
        }
    }
}

static void fork_locks_parent(void)
{
    for (int i = UTIL_FORK_LOCK_COUNT - 1; i >= 0; i--) {
        if (fork_locks[i].lock != NULL) {
            pthread_mutex_unlock(fork_locks[i].lock);
        } else if (fork_locks[i].set != NULL) {
            fork_locks[i].set->release();
        }
    }
    pthread_mutex_unlock(&fork_locks_guard);
}

/* The child's one thread held them all under its parent's thread id: each is made anew, free. */
static void fork_locks_child(void)
{
    pthread_mutexattr_t recursive;

    pthread_mutexattr_init(&recursive);
    pthread_mutexattr_settype(&recursive, PTHREAD_MUTEX_RECURSIVE);
    for (int i = 0; i < UTIL_FORK_LOCK_COUNT; i++) {
        if (fork_locks[i].lock != NULL) {
            pthread_mutex_init(fork_locks[i].lock, fork_locks[i].recursive ? &recursive : NULL);
        } else if (fork_locks[i].set != NULL) {
            fork_locks[i].set->renew();
        }
    }
    pthread_mutexattr_destroy(&recursive);
    pthread_mutex_init(&fork_locks_guard, NULL);
}

static void fork_locks_install(void)
{
    pthread_atfork(fork_locks_take, fork_locks_parent, fork_locks_child);
}

static void fork_locks_put(util_fork_lock_t which, pthread_mutex_t *lock, int recursive,
                           const util_fork_set_t *set)
{
    if ((int)which < 0 || which >= UTIL_FORK_LOCK_COUNT) {
        return;
    }
    pthread_once(&fork_locks_once, fork_locks_install);
    pthread_mutex_lock(&fork_locks_guard);
    fork_locks[which].lock = lock;
    fork_locks[which].recursive = recursive;
    fork_locks[which].set = set;
    pthread_mutex_unlock(&fork_locks_guard);
}

void util_fork_lock_add(util_fork_lock_t which, pthread_mutex_t *lock, int recursive)
{
    fork_locks_put(which, lock, recursive, NULL);
}

void util_fork_set_add(util_fork_lock_t which, const util_fork_set_t *set)
{
    fork_locks_put(which, NULL, 0, set);
}

pthread_mutex_t *util_fork_lock_at(util_fork_lock_t which)
{
    pthread_mutex_t *lock = NULL;

    if ((int)which >= 0 && which < UTIL_FORK_LOCK_COUNT) {
        pthread_mutex_lock(&fork_locks_guard);
        lock = fork_locks[which].lock;
        pthread_mutex_unlock(&fork_locks_guard);
    }
    return lock;
}
