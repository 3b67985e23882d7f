/*
 * Fault injection for tests: make the device refuse what a real one refuses, on a host whose
 * device (Soft-RoCE) never does. Nothing in the library sets these; a test sets them, runs, and
 * clears them. Not thread safe: tests set them while no context is in use by another thread.
 */
#ifndef IBMSG_VERBS_FAULT_H
#define IBMSG_VERBS_FAULT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct verbs_faults {
    int mw_alloc_errno; /* ibv_alloc_mw fails with this errno (the probe included); 0: never */
} verbs_faults_t;

/* Zero: no fault. */
extern verbs_faults_t verbs_faults;

#ifdef __cplusplus
}
#endif

#endif
