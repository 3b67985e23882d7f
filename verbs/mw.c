/* Memory windows (see mw.h). */
#include "verbs/mw.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>

#include "util/compiler.h"
#include "util/log.h"
#include "verbs/fault.h"
#include "verbs/verbs_priv.h"

struct verbs_mw {
    struct ibv_mw *mw;
    uint32_t rkey; /* of its last bind, posted or held; mw->rkey follows once it is posted */
};

/* ibv_alloc_mw, or the injected fault; NULL with errno set on failure. */
static struct ibv_mw *mw_alloc_type2(struct ibv_pd *pd)
{
    if (verbs_faults.mw_alloc_errno != 0) {
        errno = verbs_faults.mw_alloc_errno;
        return NULL;
    }
    errno = 0;
    return ibv_alloc_mw(pd, IBV_MW_TYPE_2);
}

int verbs_mw_alloc(verbs_dev_t *dev, verbs_mw_t **mw_p)
{
    verbs_mw_t *w = malloc(sizeof(*w));

    if (w == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    w->mw = mw_alloc_type2(dev->pd);
    if (w->mw == NULL) {
        int err = errno != 0 ? errno : ENOSYS;
        util_error("%s: ibv_alloc_mw(type 2) failed: %s", dev->info.name, strerror(err));
        free(w);
        return err == ENOSYS ? IBMSG_ERR_NOT_SUPPORTED : verbs_errno_status(err);
    }
    w->rkey = w->mw->rkey;
    *mw_p = w;
    return IBMSG_OK;
}

int verbs_mw_probe(verbs_dev_t *dev)
{
    struct ibv_mw *mw = mw_alloc_type2(dev->pd);
    int err;

    if (mw != NULL) {
        ibv_dealloc_mw(mw);
        return IBMSG_OK;
    }
    err = errno != 0 ? errno : ENOSYS;
    return err == ENOSYS ? IBMSG_ERR_NOT_SUPPORTED : verbs_errno_status(err);
}

void verbs_mw_free(verbs_mw_t *mw)
{
    if (mw == NULL) {
        return;
    }
    if (ibv_dealloc_mw(mw->mw) != 0) {
        util_warn("ibv_dealloc_mw failed: %s", strerror(errno));
    }
    free(mw);
}

uint32_t verbs_mw_rkey(const verbs_mw_t *mw)
{
    return mw->rkey;
}

int verbs_qp_post_bind(verbs_qp_t *qp, verbs_mw_t *mw, const verbs_reg_t *reg, uint64_t addr,
                       uint64_t len, unsigned flags, uint64_t wr_id)
{
    struct ibv_send_wr wr;
    uint32_t rkey = ibv_inc_rkey(mw->rkey);
    int status;

    if (len > VERBS_MW_BIND_MAX) {
        /* Refused here, before it is held: in a post list it would take the sends behind it
           down with it (mlx5 returns EOPNOTSUPP above 2 GiB). */
        util_debug("qp 0x%x: a window of %llu bytes is above the %llu a bind takes",
                   verbs_qp_num(qp), (unsigned long long)len,
                   (unsigned long long)VERBS_MW_BIND_MAX);
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.opcode = IBV_WR_BIND_MW;
    wr.send_flags = (flags & VERBS_SEND_SIGNALED) ? IBV_SEND_SIGNALED : 0;
    wr.bind_mw.mw = mw->mw;
    wr.bind_mw.rkey = rkey;
    wr.bind_mw.bind_info.mr = reg->handle;
    wr.bind_mw.bind_info.addr = addr;
    wr.bind_mw.bind_info.length = len;
    wr.bind_mw.bind_info.mw_access_flags = IBV_ACCESS_REMOTE_READ;
    status = verbs_qp_submit_wr(qp, &wr, flags, "BIND_MW");
    if (status == IBMSG_OK) {
        /* Ours to track for type 2: the next bind names the window by this key. The provider
           reads the key it replaces from mw->mw->rkey when the bind reaches it, so that one
           changes only then (verbs_qp_post_wr). */
        mw->rkey = rkey;
    }
    return status;
}

int verbs_qp_post_local_inv(verbs_qp_t *qp, uint32_t rkey, unsigned flags, uint64_t wr_id)
{
    struct ibv_send_wr wr;

    memset(&wr, 0, sizeof(wr));
    wr.wr_id = wr_id;
    wr.opcode = IBV_WR_LOCAL_INV;
    wr.send_flags = (flags & VERBS_SEND_SIGNALED) ? IBV_SEND_SIGNALED : 0;
    wr.invalidate_rkey = rkey;
    return verbs_qp_post_wr(qp, &wr, "LOCAL_INV");
}
