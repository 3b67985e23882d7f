/* Per-iteration timestamps anchored to CLOCK_MONOTONIC (see stamp.h). */
#include "perf/tools/lib/stamp.h"

#include <stdlib.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

uint64_t perf_stamp_monotonic_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int perf_stamp_have_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax, ebx, ecx, edx;

    return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && ((edx >> 4) & 1u) != 0;
#else
    return 0;
#endif
}

int perf_stamp_init(perf_stamp_clock_t *c, long max_stamps)
{
    c->tsc = perf_stamp_have_tsc();
    c->n = 0;
    c->cap = max_stamps / PERF_STAMP_ANCHOR_EVERY + 2;
    c->anchor = malloc(sizeof(*c->anchor) * (size_t)c->cap);
    return c->anchor != NULL ? 0 : -1;
}

void perf_stamp_fini(perf_stamp_clock_t *c)
{
    free(c->anchor);
    c->anchor = NULL;
    c->n = c->cap = 0;
}

uint64_t perf_stamp_anchor(perf_stamp_clock_t *c, long index, uint64_t tick)
{
    uint64_t ns = c->tsc ? perf_stamp_monotonic_ns() : tick;

    if (c->n < c->cap && (c->n == 0 || c->anchor[c->n - 1].index < index)) {
        c->anchor[c->n++] = (perf_stamp_anchor_t){.index = index, .tick = tick, .ns = ns};
    }
    return ns;
}

long perf_stamp_to_ns(const perf_stamp_clock_t *c, uint64_t *stamps, long n)
{
    long backwards = 0;

    for (long k = 1; k < n; k++) {
        backwards += stamps[k] < stamps[k - 1];
    }
    if (!c->tsc) {
        return backwards;
    }
    for (long a = 0; a + 1 < c->n; a++) {
        const perf_stamp_anchor_t *lo = &c->anchor[a], *hi = &c->anchor[a + 1];
        /* ns per tick over this stretch; a TSC that did not advance maps it all to lo */
        double rate =
            hi->tick > lo->tick ? (double)(hi->ns - lo->ns) / (double)(hi->tick - lo->tick) : 0.0;
        long end = a + 2 < c->n ? hi->index : hi->index + 1; /* the last anchor's stamp too */

        for (long k = lo->index; k < end && k < n; k++) {
            double d = (double)(int64_t)(stamps[k] - lo->tick) * rate;

            stamps[k] = lo->ns + (uint64_t)(int64_t)(d < 0 ? d - 0.5 : d + 0.5);
        }
    }
    return backwards;
}
