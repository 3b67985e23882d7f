/*
 * PMIx bootstrap on OpenPMIx (see bootstrap_pmix.h). Only this file includes <pmix.h>.
 */
#include "core/bootstrap_pmix.h"

#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>
#include <ibmsg_config.h>

#include "util/log.h"

int core_pmix_launched(void)
{
    /* Every PMIx launcher exports these to its clients (PMIx standard, "client environment"). */
    return IBMSG_HAVE_PMIX && getenv("PMIX_RANK") != NULL && getenv("PMIX_NAMESPACE") != NULL;
}

#if IBMSG_HAVE_PMIX

#include <pmix.h>

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

/* A job-level value of type uint32 or uint16 (launchers differ in the width they store). */
static int pmix_job_u32(const char *key, uint32_t *out)
{
    pmix_proc_t job;
    pmix_value_t *val = NULL;
    int status;

    PMIX_LOAD_PROCID(&job, pmix_me.nspace, PMIX_RANK_WILDCARD);
    status = pmix_status(key, PMIx_Get(&job, key, NULL, 0, &val));
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

int core_pmix_init(uint32_t *rank, uint32_t *size, uint32_t *local_rank)
{
    pmix_value_t *val = NULL;
    int status;

    status = pmix_status("PMIx_Init", PMIx_Init(&pmix_me, NULL, 0));
    if (status != IBMSG_OK) {
        return status;
    }
    status = pmix_job_u32(PMIX_JOB_SIZE, size);
    if (status == IBMSG_OK) {
        /* The local rank is a property of this process, not of the job. */
        status = pmix_status(PMIX_LOCAL_RANK, PMIx_Get(&pmix_me, PMIX_LOCAL_RANK, NULL, 0, &val));
        if (status == IBMSG_OK) {
            *local_rank = val->type == PMIX_UINT16 ? val->data.uint16 : 0;
            PMIX_VALUE_RELEASE(val);
        }
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

int core_pmix_put(const char *key, const void *blob, size_t len)
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

int core_pmix_fence(int collect, int timeout_s)
{
    pmix_proc_t all;
    pmix_info_t info[2];
    size_t ninfo = 0;
    bool flag = collect != 0;
    int status;

    PMIX_LOAD_PROCID(&all, pmix_me.nspace, PMIX_RANK_WILDCARD);
    PMIX_INFO_CONSTRUCT(&info[0]);
    PMIX_INFO_CONSTRUCT(&info[1]);
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

int core_pmix_get(uint32_t rank, const char *key, void *buf, size_t *len)
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

int core_pmix_finalize(void)
{
    return pmix_status("PMIx_Finalize", PMIx_Finalize(NULL, 0));
}

#else /* !IBMSG_HAVE_PMIX */

int core_pmix_init(uint32_t *rank, uint32_t *size, uint32_t *local_rank)
{
    (void)rank;
    (void)size;
    (void)local_rank;
    return IBMSG_ERR_NOT_SUPPORTED;
}

int core_pmix_put(const char *key, const void *blob, size_t len)
{
    (void)key;
    (void)blob;
    (void)len;
    return IBMSG_ERR_NOT_SUPPORTED;
}

int core_pmix_fence(int collect, int timeout_s)
{
    (void)collect;
    (void)timeout_s;
    return IBMSG_ERR_NOT_SUPPORTED;
}

int core_pmix_get(uint32_t rank, const char *key, void *buf, size_t *len)
{
    (void)rank;
    (void)key;
    (void)buf;
    (void)len;
    return IBMSG_ERR_NOT_SUPPORTED;
}

int core_pmix_finalize(void)
{
    return IBMSG_ERR_NOT_SUPPORTED;
}

#endif
