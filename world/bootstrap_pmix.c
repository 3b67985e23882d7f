/*
 * PMIx bootstrap on OpenPMIx (see bootstrap_pmix.h). Only this file includes <pmix.h>.
 */
#include "world/bootstrap_pmix.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>
#include <ibmsg_config.h>

#include "util/log.h"

int world_pmix_launched(void)
{
    /* Every PMIx launcher exports these to its clients (PMIx standard, "client environment"). */
    return IBMSG_HAVE_PMIX && getenv("PMIX_RANK") != NULL && getenv("PMIX_NAMESPACE") != NULL;
}

#if IBMSG_HAVE_PMIX

#include <pmix.h>
#include <sched.h>

static pmix_proc_t pmix_me;

static int pmix_status(const char *what, pmix_status_t rc)
{
    if (rc == PMIX_SUCCESS) {
        return IBMSG_OK;
    }
    util_error("pmix: %s: %s", what, PMIx_Error_string(rc));
    if (rc == PMIX_ERR_TIMEOUT) {
        return IBMSG_ERR_TIMEOUT;
    }
    if (rc == PMIX_ERR_NOT_FOUND) {
        return IBMSG_ERR_NOT_FOUND;
    }
    return IBMSG_ERR_IO;
}

/* A value stored as uint32 or uint16. The standard gives PMIX_JOB_SIZE as uint32 and
   PMIX_LOCAL_RANK as uint16 (Open MPI 4.1's mpirun and Slurm 22.05 keep to it); a launcher that
   stored the other width is read right rather than failed or misread. */
static int pmix_u32(const pmix_proc_t *proc, const char *key, uint32_t *out)
{
    pmix_value_t *val = NULL;
    int status;

    status = pmix_status(key, PMIx_Get(proc, key, NULL, 0, &val));
    if (status != IBMSG_OK) {
        return status;
    }
    switch (val->type) {
    case PMIX_UINT32:
        *out = val->data.uint32;
        break;
    case PMIX_UINT16:
        *out = val->data.uint16;
        break;
    default:
        util_error("pmix: %s has type %d, not an unsigned integer", key, (int)val->type);
        status = IBMSG_ERR_PROTOCOL;
    }
    PMIX_VALUE_RELEASE(val);
    return status;
}

int world_pmix_init(uint32_t *rank, uint32_t *size, uint32_t *local_rank)
{
    pmix_proc_t job;
    int status;

    status = pmix_status("PMIx_Init", PMIx_Init(&pmix_me, NULL, 0));
    if (status != IBMSG_OK) {
        return status;
    }
    PMIX_LOAD_PROCID(&job, pmix_me.nspace, PMIX_RANK_WILDCARD);
    status = pmix_u32(&job, PMIX_JOB_SIZE, size);
    if (status == IBMSG_OK) {
        /* The local rank is a property of this process, not of the job. */
        status = pmix_u32(&pmix_me, PMIX_LOCAL_RANK, local_rank);
    }
    if (status == IBMSG_OK && (*size == 0 || pmix_me.rank >= *size)) {
        util_error("pmix: rank %u outside a job of %u processes", pmix_me.rank, *size);
        status = IBMSG_ERR_PROTOCOL;
    }
    if (status != IBMSG_OK) {
        PMIx_Finalize(NULL, 0);
        return status;
    }
    *rank = pmix_me.rank;
    return IBMSG_OK;
}

int world_pmix_put(const char *key, const void *blob, size_t len)
{
    pmix_value_t val;
    int status;

    if (key == NULL || (blob == NULL && len > 0)) {
        return IBMSG_ERR_INVALID;
    }
    /* PMIx_Put copies the value; the byte object only borrows blob for the call. */
    PMIX_VALUE_CONSTRUCT(&val);
    val.type = PMIX_BYTE_OBJECT;
    val.data.bo.bytes = (char *)blob;
    val.data.bo.size = len;
    status = pmix_status("PMIx_Put", PMIx_Put(PMIX_GLOBAL, key, &val));
    if (status != IBMSG_OK) {
        return status;
    }
    return pmix_status("PMIx_Commit", PMIx_Commit());
}

int world_pmix_fence(int collect, int timeout_s)
{
    pmix_proc_t all;
    pmix_info_t info[2];
    size_t ninfo = 0;
    bool flag = collect != 0;
    int status;

    PMIX_LOAD_PROCID(&all, pmix_me.nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
    /* Only ever PMIX_COLLECT_DATA = true: Slurm's fence upcall collects whenever the key is
       present, whatever its value (pmixp_client_v2.c in 22.05), so "false" would still collect.
       That upcall reads no other key: Slurm's own PMIxTimeout (300 s by default) bounds it. */
    if (collect) {
        PMIX_INFO_LOAD(&info[ninfo], PMIX_COLLECT_DATA, &flag, PMIX_BOOL);
        ninfo++;
    }
    if (timeout_s > 0) {
        PMIX_INFO_LOAD(&info[ninfo], PMIX_TIMEOUT, &timeout_s, PMIX_INT);
        ninfo++;
    }
    status = pmix_status("PMIx_Fence", PMIx_Fence(&all, 1, ninfo > 0 ? info : NULL, ninfo));
    PMIX_INFO_DESTRUCT(&info[0]);
    PMIX_INFO_DESTRUCT(&info[1]);
    return status;
}

int world_pmix_get(uint32_t rank, const char *key, void *buf, size_t *len)
{
    pmix_proc_t peer;
    pmix_value_t *val = NULL;
    int status;

    if (key == NULL || buf == NULL || len == NULL) {
        return IBMSG_ERR_INVALID;
    }
    PMIX_LOAD_PROCID(&peer, pmix_me.nspace, rank);
    status = pmix_status(key, PMIx_Get(&peer, key, NULL, 0, &val));
    if (status != IBMSG_OK) {
        return status;
    }
    if (val->type != PMIX_BYTE_OBJECT || val->data.bo.size > *len) {
        util_error("pmix: %s of rank %u: type %d, %zu bytes (want a byte object of <= %zu)", key,
                   rank, (int)val->type,
                   val->type == PMIX_BYTE_OBJECT ? val->data.bo.size : (size_t)0, *len);
        status = IBMSG_ERR_PROTOCOL;
    } else {
        memcpy(buf, val->data.bo.bytes, val->data.bo.size);
        *len = val->data.bo.size;
    }
    PMIX_VALUE_RELEASE(val);
    return status;
}

/* Who fence_done wakes (one fence at a time per process). */
static void (*fence_wake)(void *);
static void *fence_wake_arg;

static void fence_done(pmix_status_t status, void *cbdata)
{
    atomic_int *done = cbdata;

    /* 1 + PMIx status, so 0 stays "not yet". */
    atomic_store_explicit(done, status == PMIX_SUCCESS ? 1 : 2, memory_order_release);
    if (fence_wake != NULL) {
        fence_wake(fence_wake_arg); /* after the store: the sleeper looks at done when woken */
    }
}

int world_pmix_fence_progress(int timeout_s, void (*progress)(void *), void *arg,
                              void (*wake)(void *), void *wake_arg)
{
    static atomic_int done; /* one fence at a time per process (one world) */
    pmix_proc_t all;
    pmix_info_t info;
    size_t ninfo = 0;
    int status, d;

    atomic_store(&done, 0);
    fence_wake = wake;
    fence_wake_arg = wake_arg;
    PMIX_LOAD_PROCID(&all, pmix_me.nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_CONSTRUCT(&info);
    if (timeout_s > 0) {
        PMIX_INFO_LOAD(&info, PMIX_TIMEOUT, &timeout_s, PMIX_INT);
        ninfo = 1;
    }
    status = pmix_status("PMIx_Fence_nb",
                         PMIx_Fence_nb(&all, 1, ninfo ? &info : NULL, ninfo, fence_done, &done));
    if (status == IBMSG_OK) {
        while ((d = atomic_load_explicit(&done, memory_order_acquire)) == 0) {
            progress(arg);
        }
        if (d != 1) {
            util_error("pmix: PMIx_Fence_nb failed");
            status = IBMSG_ERR_IO;
        }
    }
    PMIX_INFO_DESTRUCT(&info);
    return status;
}

static world_pmix_death_cb_t death_cb;
static void *death_arg;
static size_t death_handler_id;
static int death_handler_registered;

static void death_report(const pmix_proc_t *p)
{
    if (p != NULL && PMIX_CHECK_NSPACE(p->nspace, pmix_me.nspace) &&
        p->rank != PMIX_RANK_WILDCARD && p->rank != pmix_me.rank && death_cb != NULL) {
        death_cb(p->rank, death_arg);
    }
}

/* Runs on the PMIx progress thread: only hands the rank over (the callback sets a flag). */
static void death_handler(size_t id, pmix_status_t status, const pmix_proc_t *source,
                          pmix_info_t info[], size_t ninfo, pmix_info_t results[], size_t nresults,
                          pmix_event_notification_cbfunc_fn_t cbfunc, void *cbdata)
{
    int found = 0;

    (void)id;
    (void)results;
    (void)nresults;
    for (size_t i = 0; i < ninfo; i++) {
        if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROC) && info[i].value.type == PMIX_PROC) {
            death_report(info[i].value.data.proc);
            found = 1;
        } else if (PMIX_CHECK_KEY(&info[i], PMIX_EVENT_AFFECTED_PROCS) &&
                   info[i].value.type == PMIX_DATA_ARRAY && info[i].value.data.darray != NULL &&
                   info[i].value.data.darray->type == PMIX_PROC) {
            const pmix_proc_t *procs = info[i].value.data.darray->array;
            for (size_t k = 0; k < info[i].value.data.darray->size; k++) {
                death_report(&procs[k]);
            }
            found = 1;
        }
    }
    if (!found) {
        death_report(source); /* older servers name the dead process as the source */
    }
    util_debug("pmix: event %s (%d)", PMIx_Error_string(status), (int)status);
    if (cbfunc != NULL) {
        cbfunc(PMIX_SUCCESS, NULL, 0, NULL, NULL, cbdata);
    }
}

static void death_registered(pmix_status_t status, size_t id, void *cbdata)
{
    atomic_int *done = cbdata;

    death_handler_id = id;
    atomic_store_explicit(done, status == PMIX_SUCCESS ? 1 : 2, memory_order_release);
}

int world_pmix_on_death(world_pmix_death_cb_t cb, void *arg)
{
    pmix_status_t codes[] = {PMIX_ERR_PROC_ABORTED,        PMIX_ERR_PROC_ABORTING,
                             PMIX_EVENT_PROC_TERMINATED,   PMIX_ERR_PROC_TERM_WO_SYNC,
                             PMIX_ERR_PROC_ABORTED_BY_SIG, PMIX_PROC_TERMINATED};
    atomic_int done = 0;
    pmix_status_t rc;

    death_cb = cb;
    death_arg = arg;
    rc = PMIx_Register_event_handler(codes, sizeof(codes) / sizeof(codes[0]), NULL, 0,
                                     death_handler, death_registered, &done);
    if (rc != PMIX_SUCCESS && rc != PMIX_OPERATION_SUCCEEDED) {
        return pmix_status("PMIx_Register_event_handler", rc);
    }
    if (rc == PMIX_SUCCESS) {
        while (atomic_load_explicit(&done, memory_order_acquire) == 0) {
            sched_yield();
        }
        if (atomic_load(&done) != 1) {
            util_warn("pmix: the event handler for process deaths was refused");
            return IBMSG_ERR_IO;
        }
    } else {
        death_handler_id = 0;
    }
    death_handler_registered = 1;
    return IBMSG_OK;
}

int world_pmix_finalize(void)
{
    if (death_handler_registered) {
        PMIx_Deregister_event_handler(death_handler_id, NULL, NULL);
        death_handler_registered = 0;
    }
    death_cb = NULL;
    return pmix_status("PMIx_Finalize", PMIx_Finalize(NULL, 0));
}

#else /* !IBMSG_HAVE_PMIX */

int world_pmix_init(uint32_t *rank, uint32_t *size, uint32_t *local_rank)
{
    (void)rank;
    (void)size;
    (void)local_rank;
    return IBMSG_ERR_NOT_SUPPORTED;
}

int world_pmix_put(const char *key, const void *blob, size_t len)
{
    (void)key;
    (void)blob;
    (void)len;
    return IBMSG_ERR_NOT_SUPPORTED;
}

int world_pmix_fence(int collect, int timeout_s)
{
    (void)collect;
    (void)timeout_s;
    return IBMSG_ERR_NOT_SUPPORTED;
}

int world_pmix_get(uint32_t rank, const char *key, void *buf, size_t *len)
{
    (void)rank;
    (void)key;
    (void)buf;
    (void)len;
    return IBMSG_ERR_NOT_SUPPORTED;
}

int world_pmix_fence_progress(int timeout_s, void (*progress)(void *), void *arg,
                              void (*wake)(void *), void *wake_arg)
{
    (void)timeout_s;
    (void)progress;
    (void)arg;
    (void)wake;
    (void)wake_arg;
    return IBMSG_ERR_NOT_SUPPORTED;
}

int world_pmix_on_death(world_pmix_death_cb_t cb, void *arg)
{
    (void)cb;
    (void)arg;
    return IBMSG_ERR_NOT_SUPPORTED;
}

int world_pmix_finalize(void)
{
    return IBMSG_ERR_NOT_SUPPORTED;
}

#endif
