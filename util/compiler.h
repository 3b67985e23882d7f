/* Compiler helpers used across ibmsg. */
#ifndef IBMSG_UTIL_COMPILER_H
#define IBMSG_UTIL_COMPILER_H

#include <stddef.h>

#define util_likely(x)   __builtin_expect(!!(x), 1)
#define util_unlikely(x) __builtin_expect(!!(x), 0)

#define UTIL_ALWAYS_INLINE inline __attribute__((always_inline))
#define UTIL_NOINLINE      __attribute__((noinline))
#define UTIL_COLD          __attribute__((cold, noinline))
#define UTIL_UNUSED        __attribute__((unused))
#define UTIL_PRINTF(f, a)  __attribute__((format(printf, f, a)))
/* For extern data of the library read on the hot path: no GOT load in the shared library. */
#define UTIL_HIDDEN        __attribute__((visibility("hidden")))

/*
 * Per-thread data is aligned and padded to 128 bytes, not 64: Intel's adjacent-line prefetcher
 * pulls cache lines in pairs, so two writers 64 bytes apart still disturb each other.
 */
#define UTIL_CACHE_LINE        64
#define UTIL_FALSE_SHARING_GAP 128
#define UTIL_CACHE_ALIGNED     __attribute__((aligned(UTIL_FALSE_SHARING_GAP)))

#define UTIL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))
#define UTIL_MIN(a, b)     ((a) < (b) ? (a) : (b))
#define UTIL_MAX(a, b)     ((a) > (b) ? (a) : (b))

#define util_container_of(ptr, type, member) ((type *)((char *)(ptr)-offsetof(type, member)))

#ifdef __cplusplus
#define UTIL_STATIC_ASSERT(cond, msg) static_assert(cond, msg)
#else
#define UTIL_STATIC_ASSERT(cond, msg) _Static_assert(cond, msg)
#endif

#endif
