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

/* Kinds of work request a post fault applies to. */
enum {
    VERBS_FAULT_BIND = 1u << 0,  /* BIND_MW, refused before it is held (as mlx5's size check) */
    VERBS_FAULT_WRITE = 1u << 1, /* RDMA WRITE with data (markers and probes are spared) */
    VERBS_FAULT_READ = 1u << 2,  /* RDMA READ */
};

typedef struct verbs_faults {
    int mw_alloc_errno;    /* ibv_alloc_mw fails with this errno (the probe included); 0: never */
    unsigned post_kinds;   /* VERBS_FAULT_*: refused by the device at their post... */
    uint32_t post_count;   /* ...this many more times... */
    int post_errno;        /* ...with this errno, as ibv_post_send returns it */
    uint32_t post_refused; /* posts refused so far */
    int relaxed_ordering_errno;        /* registrations asking for relaxed ordering fail so */
    uint32_t relaxed_ordering_refused; /* registrations refused so far for relaxed ordering */
    uint32_t qp_inline_max; /* ibv_create_qp fails with EINVAL asking more inline bytes; 0: never */
    uint32_t qp_refused;    /* queue pair creations refused so far */
    int wc_hide_invalidation; /* CQs created now never report IBV_WC_WITH_INV (as bnxt_re) */
} verbs_faults_t;

/* Zero: no fault. */
extern verbs_faults_t verbs_faults;

#ifdef __cplusplus
}
#endif

#endif
