/* Memory regions for one-sided access. */
#include "verbs/mem.h"

#include <errno.h>
#include <string.h>

#include <ibmsg/status.h>

#include "util/log.h"
#include "verbs/verbs_priv.h"

int verbs_mem_reg(verbs_dev_t *dev, void *addr, size_t len, unsigned access, verbs_mem_t *mem)
{
    int flags = IBV_ACCESS_LOCAL_WRITE;
    struct ibv_mr *mr;

    if (dev == NULL || addr == NULL || len == 0 || mem == NULL ||
        (access & ~(unsigned)(VERBS_MEM_REMOTE_READ | VERBS_MEM_REMOTE_WRITE |
                              VERBS_MEM_REMOTE_ATOMIC)) != 0) {
        return IBMSG_ERR_INVALID;
    }
    if (access & VERBS_MEM_REMOTE_READ) {
        flags |= IBV_ACCESS_REMOTE_READ;
    }
    if (access & VERBS_MEM_REMOTE_WRITE) {
        flags |= IBV_ACCESS_REMOTE_WRITE;
    }
    if (access & VERBS_MEM_REMOTE_ATOMIC) {
        flags |= IBV_ACCESS_REMOTE_ATOMIC;
    }
    mr = verbs_register(dev, addr, len, (unsigned)flags);
    if (mr == NULL) {
        int err = errno;
        char hint[256];
        util_error("%s: ibv_reg_mr(%p, %zu bytes) failed: %s%s", dev->info.name, addr, len,
                   strerror(err), verbs_memlock_hint(err, hint, sizeof(hint)));
        return err == ENOMEM || err == EAGAIN ? IBMSG_ERR_NO_RESOURCE : verbs_errno_status(err);
    }
    mem->mr = mr;
    mem->lkey = mr->lkey;
    mem->rkey = mr->rkey;
    return IBMSG_OK;
}

int verbs_mem_dereg(verbs_mem_t *mem)
{
    int ret;

    if (mem == NULL || mem->mr == NULL) {
        return IBMSG_OK;
    }
    ret = ibv_dereg_mr(mem->mr);
    if (ret != 0) {
        util_error("ibv_dereg_mr(lkey 0x%x) failed: %s", mem->lkey, strerror(ret));
        return IBMSG_ERR_BUSY;
    }
    mem->mr = NULL;
    return IBMSG_OK;
}
