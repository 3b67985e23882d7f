/*
 * PAPI events as a counter source (category cpu -> papi). Optional at build time
 * (IBMSG_HAVE_PAPI in ibmsg_config.h); without PAPI every event is "unavailable: PAPI support is
 * not compiled in" and nothing else changes.
 *
 * What a value counts: PAPI counts per thread. Each counted thread gets its own event set,
 * attached to its kernel tid with PAPI_attach (third-party counting: perf_event_open on that
 * tid), so a set can be started and read from any thread, which PAPI does not allow for a set
 * that counts the thread that created it. A thread is counted from the first time ibmsg looks at
 * it (a handle bound to it, or a read of a sum) until it exits; its counts then stay at their
 * final values. All PAPI calls are made under one mutex (PAPI's per-thread tables are not safe
 * for concurrent use). PAPI is initialised once with thread support (PAPI_thread_init: attached
 * sets need one PAPI thread per counted thread); an application that initialised PAPI before us
 * keeps its library (PAPI_is_initialized), with thread support added if it had none.
 *
 * Where PAPI cannot attach (measured: PAPI 7.0.0's perf_event component checks an attach by
 * opening a hardware event on the target, which fails on a machine without a hardware PMU such
 * as the emulated guest, software events included), each thread instead creates its own set the
 * first time it uses ibmsg once the events are set up (cnt_papi_thread_begins), and any thread
 * reads it under the mutex. That is correct for software events (PAPI reads a set through its
 * owner's context; perf gives a task's counts to any reader) and only those can count on such a
 * machine (hardware events, read with rdpmc on the owner's CPU, are unavailable there). Threads
 * that began using ibmsg before the events were set up are counted from their next
 * ibmsg_t_thread_self().
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
 * The totals of events idx[0..n) (indices of cnt_papi_event) of one thread: kernel tid, named by
 * owner (the same pointer for the thread's life; the same owner with another tid is another
 * thread, and the old one is retired). alive: the thread still runs (a set is created for it on
 * first use); false: its final values (0 when it was never counted). The first call freezes the
 * event list. Returns IBMSG_OK, IBMSG_ERR_INVALID (an index out of range or of an unavailable
 * event, owner NULL) or IBMSG_ERR_NOT_SUPPORTED (no PAPI). A thread that cannot be attached to
 * (already gone) reads as 0.
 */
int cnt_papi_thread_read(const void *owner, long tid, bool alive, int n, const int idx[],
                         uint64_t totals[]);

/**
 * Thread tid (the calling thread), named by owner, begins using ibmsg: where sets cannot be
 * attached to other threads (no hardware PMU), it begins counting itself now, once PAPI
 * variables exist. Cheap otherwise (one flag). Called from the thread's first counter use.
 */
void cnt_papi_thread_begins(const void *owner, long tid);

/**
 * The totals summed over every thread counted so far: the live threads (owners[k], tids[k]),
 * k < nlive, are counted (from now on, if new) and read; counted threads not among them have
 * exited and give their final values. Never decreases. Returns as cnt_papi_thread_read.
 */
int cnt_papi_sum_read(int nlive, const void *const owners[], const long tids[], int n,
                      const int idx[], uint64_t totals[]);

/** lower_snake variable name for an event: "papi_" + the event name without a "PAPI_" prefix. */
int cnt_papi_pvar_name(const char *event, char *buf, size_t len);

#ifdef __cplusplus
}
#endif

#endif
