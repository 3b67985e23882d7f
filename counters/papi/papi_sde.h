/*
 * ibmsg's software counters (counters/shards/counter_table.h) exported to PAPI as software-defined
 * events, so PAPI-based tools (papi_command_line, TAU, HPCToolkit, ...) see them beside CPU
 * events: sde:::ibmsg::<counter name>, e.g. sde:::ibmsg::core_eager_msgs_sent.
 *
 * Values: merged on read. Each event has a callback (papi_sde_register_counter_cb) that sums the
 * counter over every shard and what exited threads left (cnt_read(NULL, ...)), the same value a
 * NO_OBJECT pvar reads; nothing is added to the hot path. COUNTER and TIMER (nanoseconds) entries
 * are PAPI_SDE_DELTA events (PAPI reports the growth since PAPI_start, as a started pvar handle
 * does); LEVEL entries are PAPI_SDE_INSTANT (the current value).
 *
 * Loading order: PAPI's sde component looks for the libsde API in the process when
 * PAPI_library_init runs and stays disabled for the life of the process if it is missing. libibmsg
 * links libsde (Debian libsde1), so a program linked with ibmsg has it from the start; a program
 * that dlopen()s ibmsg must do so (RTLD_GLOBAL) before PAPI_library_init, or link libsde itself.
 * The events are registered when libibmsg is loaded (a constructor: registration only fills
 * libsde's tables, it does not initialise PAPI) and again, idempotently, at the tool interface's
 * first init (for static links, where the constructor's object may be left out).
 *
 * Without libsde at build time (IBMSG_HAVE_SDE 0) cnt_papi_sde_register does nothing.
 */
#ifndef IBMSG_COUNTERS_PAPI_SDE_H
#define IBMSG_COUNTERS_PAPI_SDE_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/** Register the sde:::ibmsg:: events once. Returns IBMSG_OK or IBMSG_ERR_NOT_SUPPORTED. */
int cnt_papi_sde_register(void);

/** Whether the events are registered (false without libsde). */
bool cnt_papi_sde_registered(void);

#ifdef __cplusplus
}
#endif

#endif
