/* Private to verbs/: the structures behind the opaque handles, with their libibverbs objects. */
#ifndef IBMSG_VERBS_PRIV_H
#define IBMSG_VERBS_PRIV_H

#include <infiniband/verbs.h>

#include "verbs/device.h"

struct verbs_dev {
    struct ibv_context *ctx;
    struct ibv_pd *pd;
    verbs_dev_info_t info;
};

struct verbs_cq {
    struct ibv_cq *cq;
    int size;
};

/* Convert an errno value from libibverbs to a status, once, at this boundary. */
int verbs_errno_status(int err);

#endif
