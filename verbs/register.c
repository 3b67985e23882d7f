/*
 * Every ibv_reg_mr of the library goes through here, to ask for relaxed ordering where the
 * device takes it (see verbs_register in verbs_priv.h).
 *
 * IBV_ACCESS_RELAXED_ORDERING lets the device's PCIe writes of one registration pass each other
 * (bandwidth on EPYC, Grace and virtual machines, where strict ordering costs the root complex).
 * It is safe here because no byte of a registration is read before its completion: a CQE is
 * written without relaxed ordering and cannot pass the writes before it. It is an optional
 * access flag: libibverbs drops it where the kernel cannot take optional flags
 * (IB_UVERBS_CORE_SUPPORT_OPTIONAL_MR_ACCESS), and drivers that do not know it ignore it. A
 * driver that refuses it all the same (EINVAL, EOPNOTSUPP) is asked once more without it, and
 * the device is not asked again.
 */
#include <errno.h>
#include <string.h>

#include "util/log.h"
#include "verbs/fault.h"
#include "verbs/verbs_priv.h"

static struct ibv_mr *reg(verbs_dev_t *dev, void *addr, size_t len, unsigned access)
{
    if ((access & IBV_ACCESS_RELAXED_ORDERING) && verbs_faults.relaxed_ordering_errno != 0) {
        verbs_faults.relaxed_ordering_refused++;
        errno = verbs_faults.relaxed_ordering_errno;
        return NULL;
    }
    return ibv_reg_mr_iova2(dev->pd, addr, len, (uintptr_t)addr, access);
}

struct ibv_mr *verbs_register(verbs_dev_t *dev, void *addr, size_t len, unsigned access)
{
    struct ibv_mr *mr;
    int err;

    if (!dev->info.relaxed_ordering) {
        return reg(dev, addr, len, access);
    }
    mr = reg(dev, addr, len, access | IBV_ACCESS_RELAXED_ORDERING);
    if (mr != NULL || (errno != EINVAL && errno != EOPNOTSUPP)) {
        return mr;
    }
    err = errno;
    mr = reg(dev, addr, len, access);
    if (mr != NULL) {
        dev->info.relaxed_ordering = 0;
        util_info("%s: registrations refuse relaxed ordering (%s): registering without it",
                  dev->info.name, strerror(err));
    }
    return mr;
}
