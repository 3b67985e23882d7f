/*
 * The clock of the software timers. Timed regions read an unfenced rdtsc when the TSC is
 * invariant (CPUID 0x80000007 EDX bit 8: constant rate, runs in every C- and P-state), which
 * costs a few nanoseconds; otherwise CLOCK_MONOTONIC through the vDSO (~20 ns). Ticks are
 * converted to nanoseconds only when read: the TSC rate is calibrated once against
 * CLOCK_MONOTONIC. An unfenced rdtsc may run a few instructions early or late; for regions of
 * hundreds of nanoseconds that error is far below the cost a fence would add.
 */
#ifndef IBMSG_COUNTERS_TICK_H
#define IBMSG_COUNTERS_TICK_H

#include <stdint.h>
#include <time.h>

#include "util/compiler.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Set once by cnt_tick_setup() before any timer can run; read with relaxed loads. */
extern UTIL_HIDDEN int cnt_tick_use_tsc;

/** Choose the clock (TSC or CLOCK_MONOTONIC); idempotent, thread safe. */
void cnt_tick_setup(void);

/** Whether timers use the TSC (after cnt_tick_setup()). */
int cnt_tick_is_tsc(void);

/** CLOCK_MONOTONIC in nanoseconds. */
static inline uint64_t cnt_tick_monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/** The current tick: TSC cycles or monotonic nanoseconds, per cnt_tick_setup(). */
static UTIL_ALWAYS_INLINE uint64_t cnt_tick_now(void)
{
#if defined(__x86_64__) || defined(__i386__)
    if (util_likely(__atomic_load_n(&cnt_tick_use_tsc, __ATOMIC_RELAXED))) {
        return __builtin_ia32_rdtsc();
    }
#endif
    return cnt_tick_monotonic_ns();
}

/**
 * Convert a number of ticks to nanoseconds. The first call with the TSC calibrates its rate
 * (waiting until at least 20 ms have passed since cnt_tick_setup(), at most once per process).
 * Monotonic in ticks. Thread safe.
 */
uint64_t cnt_tick_to_ns(uint64_t ticks);

/** Ticks per second (1e9 for CLOCK_MONOTONIC); calibrates like cnt_tick_to_ns(). */
double cnt_tick_hz(void);

#ifdef __cplusplus
}
#endif

#endif
