/*
 * Counter sources: where the raw values behind performance variables come from (NIC port
 * counters, PAPI events; software shards can use the same table). Every source exposes the same
 * two operations through an ops table chosen when the source is set up, so the session logic
 * (value = accumulated + current - value at start, in counters/registry) is written once and the
 * backend (pread of sysfs files, one RDMA netlink message, PAPI_read) is a setup-time choice,
 * never a branch on a hot path.
 *
 * Sources are only read when a tool handle starts, stops or is read: never by the messaging hot
 * path.
 */
#ifndef IBMSG_COUNTERS_SOURCE_H
#define IBMSG_COUNTERS_SOURCE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cnt_source cnt_source_t;

typedef struct cnt_source_ops {
    const char *name; /* backend name for logs and tests, e.g. "sysfs-pread" */
    /*
     * Read the current raw values of the counters idx[0..n) of src into raw[0..n), as cheaply as
     * the backend allows (the pread backend reads only those files). Returns IBMSG_OK or an
     * error; raw is unspecified on error.
     */
    int (*read)(cnt_source_t *src, int n, const int idx[], uint64_t raw[]);
    /*
     * Read every counter of src (raw[0..src->num_counters)) in one pass, as close to one instant
     * as the backend can (one netlink message, one PAPI_read, or back-to-back preads).
     */
    int (*snapshot)(cnt_source_t *src, uint64_t raw[]);
    /* Release what the backend holds (file descriptors, sockets). May be NULL. */
    void (*cleanup)(cnt_source_t *src);
} cnt_source_ops_t;

/* Embedded in each concrete source (container_of gets back to it). */
struct cnt_source {
    const cnt_source_ops_t *ops;
    int num_counters;
};

static inline int cnt_source_read(cnt_source_t *src, int n, const int idx[], uint64_t raw[])
{
    return src->ops->read(src, n, idx, raw);
}

static inline int cnt_source_snapshot(cnt_source_t *src, uint64_t raw[])
{
    return src->ops->snapshot(src, raw);
}

#ifdef __cplusplus
}
#endif

#endif
