/* PAPI events as performance variables (see papi_pvars.c for names and semantics). */
#ifndef IBMSG_COUNTERS_PAPI_PVARS_H
#define IBMSG_COUNTERS_PAPI_PVARS_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Register the papi_events cvar, papi_unavailable_events and a variable per event PAPI can count
 * here. Called by the tool interface's init; later calls do nothing and return IBMSG_OK. Thread
 * safe.
 */
int cnt_papi_pvars_register(void);

#ifdef __cplusplus
}
#endif

#endif
