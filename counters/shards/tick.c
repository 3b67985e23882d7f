/* Clock selection and TSC calibration for the software timers (see tick.h). */
#include "counters/shards/tick.h"

#include <pthread.h>
#include <time.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "util/log.h"

/* Calibrate over at least this long: clock_gettime jitter (~100 ns) then costs < 1e-5. */
#define CNT_TICK_CALIBRATION_NS 20000000u

int cnt_tick_use_tsc;

static pthread_once_t cnt_tick_setup_once = PTHREAD_ONCE_INIT;
static pthread_once_t cnt_tick_calibrate_once = PTHREAD_ONCE_INIT;

/* Written once under the pthread_once calls above, which order them before their readers. */
static uint64_t cnt_tick_ns0, cnt_tick_tsc0;
static uint64_t cnt_tick_mult; /* nanoseconds per tick, 32.32 fixed point */
static double cnt_tick_rate;

static int cnt_tick_tsc_invariant(void)
{
#if defined(__x86_64__) || defined(__i386__)
    unsigned eax, ebx, ecx, edx;

    if (__get_cpuid(0x80000000u, &eax, &ebx, &ecx, &edx) == 0 || eax < 0x80000007u) {
        return 0;
    }
    __cpuid(0x80000007u, eax, ebx, ecx, edx);
    return (edx >> 8) & 1u;
#else
    return 0;
#endif
}

/* One (monotonic ns, tsc) pair, the TSC taken at the middle of the clock read. */
static void cnt_tick_pair(uint64_t *ns, uint64_t *tsc)
{
#if defined(__x86_64__) || defined(__i386__)
    uint64_t a = __builtin_ia32_rdtsc();

    *ns = cnt_tick_monotonic_ns();
    *tsc = a + (__builtin_ia32_rdtsc() - a) / 2;
#else
    *ns = cnt_tick_monotonic_ns();
    *tsc = *ns;
#endif
}

static void cnt_tick_do_setup(void)
{
    int tsc = cnt_tick_tsc_invariant();

    cnt_tick_pair(&cnt_tick_ns0, &cnt_tick_tsc0);
    __atomic_store_n(&cnt_tick_use_tsc, tsc, __ATOMIC_RELAXED);
    util_debug("timers use %s", tsc ? "the invariant TSC" : "CLOCK_MONOTONIC");
}

void cnt_tick_setup(void)
{
    pthread_once(&cnt_tick_setup_once, cnt_tick_do_setup);
}

int cnt_tick_is_tsc(void)
{
    cnt_tick_setup();
    return __atomic_load_n(&cnt_tick_use_tsc, __ATOMIC_RELAXED);
}

static void cnt_tick_do_calibrate(void)
{
    uint64_t ns, tsc;

    if (!__atomic_load_n(&cnt_tick_use_tsc, __ATOMIC_RELAXED)) {
        cnt_tick_mult = 1ull << 32;
        cnt_tick_rate = 1e9;
        return;
    }
    cnt_tick_pair(&ns, &tsc);
    if (ns - cnt_tick_ns0 < CNT_TICK_CALIBRATION_NS) {
        uint64_t left = CNT_TICK_CALIBRATION_NS - (ns - cnt_tick_ns0);
        struct timespec ts = {.tv_sec = 0, .tv_nsec = (long)left};

        while (nanosleep(&ts, &ts) != 0) {
        }
        cnt_tick_pair(&ns, &tsc);
    }
    cnt_tick_rate = (double)(tsc - cnt_tick_tsc0) * 1e9 / (double)(ns - cnt_tick_ns0);
    cnt_tick_mult =
        (uint64_t)((double)(ns - cnt_tick_ns0) * 4294967296.0 / (double)(tsc - cnt_tick_tsc0));
    util_debug("TSC calibrated: %.0f Hz", cnt_tick_rate);
}

static void cnt_tick_calibrate(void)
{
    cnt_tick_setup();
    pthread_once(&cnt_tick_calibrate_once, cnt_tick_do_calibrate);
}

uint64_t cnt_tick_to_ns(uint64_t ticks)
{
    cnt_tick_calibrate();
    return (uint64_t)(((unsigned __int128)ticks * cnt_tick_mult) >> 32);
}

double cnt_tick_hz(void)
{
    cnt_tick_calibrate();
    return cnt_tick_rate;
}
