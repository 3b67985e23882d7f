/*
 * PAPI events as a counter source (category cpu -> papi). Optional at build time
 * (IBMSG_HAVE_PAPI in ibmsg_config.h); without PAPI every event is "unavailable: PAPI support is
 * not compiled in" and nothing else changes.
 *
 * What a value counts: PAPI counts per thread, so every PAPI variable counts the events of the
 * CALLING thread. A thread's event set is created and started the first time that thread starts
 * or reads a PAPI variable, and then runs until the thread exits; a handle therefore counts the
 * thread that starts, reads and stops it, and must be used from that one thread (reading it from
 * another thread mixes two threads' totals).
 *
 * Reads from another thread: owner-thread reads. A reading always goes to the CALLING thread's
 * event set (found through thread-local storage), so a handle read from another thread returns
 * that thread's counts, never the starting thread's: it is not an error, but it mixes threads.
 * PAPI documents event sets as belonging to the thread that created them unless attached;
 * PAPI_attach (a set bound to a tid, readable from anywhere) would lift the rule and allow
 * variables bound to a thread and sums over threads. Not done yet.
 * test/counters/test_papi_pvars.cc checks that a handle counts its thread's CPU time and page
 * faults and none of another thread's.
 *
 * When the perf_event component cannot count (measured on Debian 12, PAPI 7.0.0, libpfm4 4.13):
 * - On an AMD family 0x1a host, libpfm4 4.13 knows no core PMU, and PAPI 7.0.0 then disables the
 *   whole perf_event component ("libpfm4 no default PMU found"), software events included.
 *   LIBPFM_FORCE_PMU does not help: libpfm4 then activates the forced PMU only (not its "perf"
 *   OS PMU, which provides perf::TASK-CLOCK and friends), so the library does not set it. Every
 *   event is then unavailable with PAPI's reason; ibmsg's sde:::ibmsg:: events still work.
 * - Debian kernels default to perf_event_paranoid=3, which makes PAPI disable the component; the
 *   Soft-RoCE guest (test/vm/guest/setup) sets 2, and there software events count while hardware
 *   ones (PAPI_TOT_INS, PAPI_TOT_CYC: no PMU under TCG) are reported unavailable.
 *
 * The event list (cvar papi_events) can change until the first thread starts counting; then it is
 * frozen, because every thread's event set must hold the same events.
 *
 * Thread safety: all functions may be called from any thread.
 */
#ifndef IBMSG_COUNTERS_PAPI_SOURCE_H
#define IBMSG_COUNTERS_PAPI_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CNT_PAPI_DEFAULT_EVENTS \
    "perf::TASK-CLOCK,perf::PAGE-FAULTS,perf::CONTEXT-SWITCHES,PAPI_TOT_INS,PAPI_TOT_CYC"
#define CNT_PAPI_MAX_EVENTS 32
#define CNT_PAPI_NAME_MAX   128

typedef struct cnt_papi_event {
    char event[CNT_PAPI_NAME_MAX];     /* as PAPI names it: perf::TASK-CLOCK, PAPI_TOT_INS */
    char pvar_name[CNT_PAPI_NAME_MAX]; /* papi_perf_task_clock, papi_tot_ins */
    bool available;
    char reason[160]; /* why not available ("" when available) */
} cnt_papi_event_t;

/**
 * Make PAPI know the events of a comma-separated list (spaces around names are ignored): the
 * first call initialises the PAPI library; events already known are skipped; each new event is
 * checked by adding it to a scratch event set. Returns IBMSG_OK (unavailable events are recorded,
 * not errors), IBMSG_ERR_INVALID (NULL, an empty name or one too long, more than
 * CNT_PAPI_MAX_EVENTS events) or IBMSG_ERR_BUSY when counting has begun (the list is frozen).
 */
int cnt_papi_setup(const char *events);

/** Whether PAPI support was compiled in. */
bool cnt_papi_compiled(void);

/** The number of events known so far (available or not). */
int cnt_papi_num_events(void);

/** Event i (0 .. num-1), or NULL. The entry does not change once it exists. */
const cnt_papi_event_t *cnt_papi_event(int i);

/**
 * "event: reason" for every unavailable event, separated by "; ", into buf (NUL-terminated when
 * len > 0). Returns the full length without the NUL (like snprintf).
 */
size_t cnt_papi_unavailable(char *buf, size_t len);

/**
 * The totals of events idx[0..n) (indices of cnt_papi_event) counted by the calling thread since
 * it began counting; starts counting in this thread (and freezes the list) on the first call.
 * Returns IBMSG_OK, IBMSG_ERR_INVALID (an index out of range or of an unavailable event),
 * IBMSG_ERR_NOT_SUPPORTED (no PAPI) or IBMSG_ERR_IO (PAPI failed; logged).
 */
int cnt_papi_thread_read(int n, const int idx[], uint64_t totals[]);

/** lower_snake variable name for an event: "papi_" + the event name without a "PAPI_" prefix. */
int cnt_papi_pvar_name(const char *event, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
