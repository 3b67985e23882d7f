/*
 * Per-iteration timestamps of the latency loop. On x86 a stamp is one rdtsc, and every
 * PERF_STAMP_ANCHOR_EVERY-th stamp is anchored to CLOCK_MONOTONIC; afterwards each stamp
 * becomes monotonic nanoseconds by linear interpolation between the anchors around it. So
 * times are CLOCK_MONOTONIC's, with no calibration that can fail under emulation (perftest's
 * does) and no trust in the TSC beyond a steady rate between two anchors: the guest's
 * emulated CPU does not advertise an invariant TSC, although it reads the host's. Elsewhere
 * a stamp is CLOCK_MONOTONIC itself. Why not clock_gettime per iteration everywhere: in the
 * emulated guest the clocksource is the HPET and one read is a trapped MMIO access of 1.2 to
 * 3.4 us, which would be added to every round trip (perftest pays one rdtsc, ~14 ns there);
 * one read per 64 round trips costs under 0.4% of the smallest one.
 */
#ifndef IBMSG_PERF_LIB_STAMP_H
#define IBMSG_PERF_LIB_STAMP_H

#include <stdint.h>

#define PERF_STAMP_ANCHOR_EVERY 64

typedef struct perf_stamp_anchor {
    long index; /* which stamp */
    uint64_t tick, ns;
} perf_stamp_anchor_t;

typedef struct perf_stamp_clock {
    int tsc; /* stamps are TSC ticks; else monotonic nanoseconds */
    long n, cap;
    perf_stamp_anchor_t *anchor;
} perf_stamp_clock_t;

/** CLOCK_MONOTONIC in nanoseconds. */
uint64_t perf_stamp_monotonic_ns(void);

/** Choose the clock and make room for the anchors of max_stamps stamps; -1 without memory. */
int perf_stamp_init(perf_stamp_clock_t *c, long max_stamps);

void perf_stamp_fini(perf_stamp_clock_t *c);

/** One stamp: a few nanoseconds with the TSC. */
static inline uint64_t perf_stamp(const perf_stamp_clock_t *c)
{
#if defined(__x86_64__) || defined(__i386__)
    if (c->tsc) {
        return __builtin_ia32_rdtsc();
    }
#endif
    return perf_stamp_monotonic_ns();
}

/**
 * Anchor stamp number index (taken just before, as tick) to CLOCK_MONOTONIC; returns that
 * time in nanoseconds. The first and the last stamp must be anchored, the others at least
 * every PERF_STAMP_ANCHOR_EVERY, in increasing index order.
 */
uint64_t perf_stamp_anchor(perf_stamp_clock_t *c, long index, uint64_t tick);

/**
 * Turn stamps[0..n-1] into monotonic nanoseconds, in place. Returns how many times a stamp
 * was below the one before (a TSC that is not synchronized between CPUs, when the thread
 * moved): such intervals are not round trips and the caller drops them.
 */
long perf_stamp_to_ns(const perf_stamp_clock_t *c, uint64_t *stamps, long n);

#endif
