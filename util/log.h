/*
 * The library's logger: no printf in the library, everything goes through here. The level comes
 * from the control variable log_level (environment IBMSG_LOG_LEVEL); messages go to stderr or to
 * a sink a program (or a test) installs.
 */
#ifndef IBMSG_UTIL_LOG_H
#define IBMSG_UTIL_LOG_H

#include <stdint.h>

#include "util/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum util_log_level {
    UTIL_LOG_NONE = 0,
    UTIL_LOG_ERROR,
    UTIL_LOG_WARN,
    UTIL_LOG_INFO,
    UTIL_LOG_DEBUG,
    UTIL_LOG_TRACE,
    UTIL_LOG_LAST,
} util_log_level_t;

/* The current level; an int so the log_level cvar can read and write it through its pointer. */
extern int util_log_level;

/** Messages emitted so far at a level (those the level filter let through). */
uint64_t util_log_count(util_log_level_t level);

typedef void (*util_log_sink_cb_t)(util_log_level_t level, const char *file, int line,
                                   const char *message, void *arg);

/** Replace the stderr sink (NULL restores it). Returns the previous sink and its arg. */
void util_log_set_sink(util_log_sink_cb_t sink, void *arg, util_log_sink_cb_t *old_sink,
                       void **old_arg);

/** Name of a level ("error", ...), or NULL when out of range. */
const char *util_log_level_name(util_log_level_t level);

void util_log_emit(util_log_level_t level, const char *file, int line, const char *fmt, ...)
    UTIL_PRINTF(4, 5) UTIL_COLD;

#define util_log(level, ...)                                         \
    do {                                                             \
        if (util_unlikely((int)(level) <= util_log_level)) {         \
            util_log_emit((level), __FILE__, __LINE__, __VA_ARGS__); \
        }                                                            \
    } while (0)

#define util_error(...) util_log(UTIL_LOG_ERROR, __VA_ARGS__)
#define util_warn(...)  util_log(UTIL_LOG_WARN, __VA_ARGS__)
#define util_info(...)  util_log(UTIL_LOG_INFO, __VA_ARGS__)
#define util_debug(...) util_log(UTIL_LOG_DEBUG, __VA_ARGS__)
#define util_trace(...) util_log(UTIL_LOG_TRACE, __VA_ARGS__)

#ifdef __cplusplus
}
#endif

#endif
