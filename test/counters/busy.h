// busy_ms: burn ms milliseconds of this thread's CPU time, for tests of CPU-time counters.
#ifndef IBMSG_TEST_COUNTERS_BUSY_H
#define IBMSG_TEST_COUNTERS_BUSY_H

#include <time.h>

// What perf's task clock may show below busy_ms(ms)'s CLOCK_THREAD_CPUTIME_ID for the same run:
// the two clocks are sampled at different instants (measured on a loaded 2-core host: up to
// 17 us short of 20 ms), so tests of CPU-time counters allow this much, no more.
#define BUSY_CLOCK_SLACK_NS 100000u

static inline void busy_ms(int ms)
{
    struct timespec t0, t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
    volatile unsigned long x = 0;
    do {
        for (int i = 0; i < 100000; i++) {
            x = x + (unsigned long)i;
        }
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
        // Whole nanoseconds: a millisecond quotient of a negative tv_nsec difference rounds
        // toward zero and ended the loop up to 1 ms early (seen under load: 19.98 ms).
    } while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < ms * 1000000LL);
}

#endif
