/*
 * The counter sources that register variables of their own (NIC port counters, PAPI events).
 * The tool interface calls this at every ibmsg_t_init_thread; the first call registers, later
 * ones return at once.
 */
#ifndef IBMSG_COUNTERS_SOURCES_H
#define IBMSG_COUNTERS_SOURCES_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Register the variables of every counter source. A source that fails is logged and left out
 * (the tool interface works without it). Thread safe. Must not be called with the registry lock
 * held by another thread's pending call (it registers through the public registration calls).
 */
void cnt_sources_register(void);

#ifdef __cplusplus
}
#endif

#endif
