#include "util/log.h"

#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>

#include "util/fork_locks.h"

int util_log_level = UTIL_LOG_WARN;

static uint64_t log_counts[UTIL_LOG_LAST];
/* Guards log_sink and log_arg. Recursive: a sink may log, or fork (the lock is held across it). */
static pthread_mutex_t log_sink_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
UTIL_FORK_LOCK(UTIL_FORK_LOCK_LOG_SINK, log_sink_lock, 1)
static util_log_sink_cb_t log_sink;
static void *log_arg;

static const char *const log_level_names[UTIL_LOG_LAST] = {
    [UTIL_LOG_NONE] = "none", [UTIL_LOG_ERROR] = "error", [UTIL_LOG_WARN] = "warn",
    [UTIL_LOG_INFO] = "info", [UTIL_LOG_DEBUG] = "debug", [UTIL_LOG_TRACE] = "trace",
};

const char *util_log_level_name(util_log_level_t level)
{
    if ((int)level < 0 || level >= UTIL_LOG_LAST) {
        return NULL;
    }
    return log_level_names[level];
}

uint64_t util_log_count(util_log_level_t level)
{
    if ((int)level < 0 || level >= UTIL_LOG_LAST) {
        return 0;
    }
    return __atomic_load_n(&log_counts[level], __ATOMIC_RELAXED);
}

void util_log_set_sink(util_log_sink_cb_t sink, void *arg, util_log_sink_cb_t *old_sink,
                       void **old_arg)
{
    pthread_mutex_lock(&log_sink_lock);
    if (old_sink != NULL) {
        *old_sink = log_sink;
    }
    if (old_arg != NULL) {
        *old_arg = log_arg;
    }
    log_sink = sink;
    log_arg = arg;
    pthread_mutex_unlock(&log_sink_lock);
}

void util_log_emit(util_log_level_t level, const char *file, int line, const char *fmt, ...)
{
    char message[1024];
    va_list ap;

    if ((int)level <= UTIL_LOG_NONE || level >= UTIL_LOG_LAST) {
        return;
    }
    __atomic_fetch_add(&log_counts[level], 1, __ATOMIC_RELAXED);
    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);

    /* The lock keeps a sink from being replaced (and its arg freed) while it runs. */
    pthread_mutex_lock(&log_sink_lock);
    if (log_sink != NULL) {
        log_sink(level, file, line, message, log_arg);
    } else {
        fprintf(stderr, "ibmsg %s: %s (%s:%d)\n", log_level_names[level], message, file, line);
    }
    pthread_mutex_unlock(&log_sink_lock);
}
