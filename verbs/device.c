/* Device, port and GID selection, and the protection domain. */
#include "verbs/device.h"

#include <errno.h>
#include <fcntl.h>
#include <net/if.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ibmsg/status.h>

#include "util/log.h"
#include "verbs/addr.h"
#include "verbs/dev_rank.h"
#include "verbs/hca.h"
#include "verbs/mw.h"
#include "verbs/verbs_priv.h"

int verbs_errno_status(int err)
{
    switch (err) {
    case 0:
        return IBMSG_OK;
    case ENOMEM:
        return IBMSG_ERR_NO_MEMORY;
    case EINVAL:
        return IBMSG_ERR_INVALID;
    case EOPNOTSUPP:
        return IBMSG_ERR_NOT_SUPPORTED;
    case EAGAIN:
    case ENOSPC:
        return IBMSG_ERR_NO_RESOURCE;
    case EBUSY:
        return IBMSG_ERR_BUSY;
    case ENODEV:
        return IBMSG_ERR_NO_DEVICE;
    case ETIMEDOUT:
        return IBMSG_ERR_TIMEOUT;
    default:
        return IBMSG_ERR_IO;
    }
}

static int gid_is_ipv4_mapped(const union ibv_gid *gid)
{
    static const uint8_t prefix[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff};
    return memcmp(gid->raw, prefix, sizeof(prefix)) == 0;
}

/*
 * The default RoCE GID: RoCE v2 and IPv4-mapped first, then any RoCE v2, else -1; only GIDs of
 * the network interface ifindex when it is not 0.
 */
static int roce_default_gid(struct ibv_context *ctx, uint8_t port, int tbl_len, unsigned ifindex)
{
    int any_v2 = -1;

    for (int i = 0; i < tbl_len; i++) {
        struct ibv_gid_entry entry;
        if (ibv_query_gid_ex(ctx, port, (uint32_t)i, &entry, 0) != 0) {
            continue; /* unused entries fail with ENODATA */
        }
        if (entry.gid_type != IBV_GID_TYPE_ROCE_V2 || verbs_gid_is_zero(entry.gid.raw) ||
            (ifindex != 0 && entry.ndev_ifindex != ifindex)) {
            continue;
        }
        if (gid_is_ipv4_mapped(&entry.gid)) {
            return i;
        }
        if (any_v2 < 0) {
            any_v2 = i;
        }
    }
    return any_v2;
}

/* A bounded text of what was found, for the error message when nothing fits. */
typedef struct found_text {
    char buf[512];
    size_t len;
} found_text_t;

static void found_add(found_text_t *f, const char *fmt, ...) UTIL_PRINTF(2, 3);

static void found_add(found_text_t *f, const char *fmt, ...)
{
    va_list ap;
    int n;

    if (f->len >= sizeof(f->buf) - 1) {
        return;
    }
    va_start(ap, fmt);
    n = vsnprintf(f->buf + f->len, sizeof(f->buf) - f->len, fmt, ap);
    va_end(ap);
    if (n > 0) {
        f->len = UTIL_MIN(f->len + (size_t)n, sizeof(f->buf) - 1);
    }
}

/* Fill info for (ctx, port) with the chosen GID (-1: IB, LID routing). Returns a status, logging
   why it failed. */
static int port_setup(struct ibv_context *ctx, const struct ibv_port_attr *pa, uint8_t port,
                      int gid_index, verbs_dev_info_t *info)
{
    struct ibv_device_attr da;
    const char *name = ibv_get_device_name(ctx->device);
    union ibv_gid gid;

    if (ibv_query_device(ctx, &da) != 0) {
        util_error("%s: ibv_query_device failed: %s", name, strerror(errno));
        return IBMSG_ERR_IO;
    }
    memset(info, 0, sizeof(*info));
    snprintf(info->name, sizeof(info->name), "%s", name);
    info->port = port;
    info->link_layer =
        pa->link_layer == IBV_LINK_LAYER_ETHERNET ? VERBS_LINK_ETHERNET : VERBS_LINK_IB;
    info->active_mtu = (uint8_t)pa->active_mtu;
    info->lid = pa->lid;
    info->max_qp_wr = (uint32_t)da.max_qp_wr;
    info->max_cqe = (uint32_t)da.max_cqe;
    info->max_srq = (uint32_t)da.max_srq;
    info->max_srq_wr = (uint32_t)da.max_srq_wr;
    info->max_sge = (uint32_t)da.max_sge;
    info->max_sge_rd = (uint32_t)da.max_sge_rd;
    info->max_msg_sz = pa->max_msg_sz;
    info->max_rd_atom = (uint32_t)UTIL_MIN(da.max_qp_rd_atom, 255);
    info->max_init_rd_atom = (uint32_t)UTIL_MIN(da.max_qp_init_rd_atom, 255);
    info->vendor_id = da.vendor_id;
    info->mw_type2 = (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) != 0 && da.max_mw > 0;
    info->atomic_cap = da.atomic_cap == IBV_ATOMIC_GLOB  ? VERBS_ATOMIC_GLOB
                       : da.atomic_cap == IBV_ATOMIC_HCA ? VERBS_ATOMIC_HCA
                                                         : VERBS_ATOMIC_NONE;

    /* RoCE ports come with their GID chosen (verbs_port_rank passes those without one). */
    info->gid_index = gid_index;
    if (gid_index < 0) {
        return IBMSG_OK; /* IB: LID routing */
    }
    if (gid_index >= pa->gid_tbl_len) {
        util_error("%s port %u: GID index %d out of range (table of %d entries)", name,
                   (unsigned)port, gid_index, pa->gid_tbl_len);
        return IBMSG_ERR_INVALID;
    }
    if (ibv_query_gid(ctx, port, gid_index, &gid) != 0 || verbs_gid_is_zero(gid.raw)) {
        util_error("%s port %u: GID index %d is not set", name, (unsigned)port, gid_index);
        return IBMSG_ERR_INVALID;
    }
    memcpy(info->gid, gid.raw, sizeof(info->gid));
    return IBMSG_OK;
}

/* The ports the search found (at most VERBS_SEARCH_PORTS), described for verbs_port_rank. */
#define VERBS_SEARCH_PORTS 64

typedef struct port_search {
    verbs_port_desc_t desc[VERBS_SEARCH_PORTS];
    int dev[VERBS_SEARCH_PORTS]; /* index in the device list */
    const char *state[VERBS_SEARCH_PORTS];
    size_t n;
} port_search_t;

static int transport_of(const struct ibv_device *ibdev)
{
    switch (ibdev->transport_type) {
    case IBV_TRANSPORT_IB:
        return VERBS_TRANSPORT_IB;
    case IBV_TRANSPORT_IWARP:
        return VERBS_TRANSPORT_IWARP;
    default:
        return VERBS_TRANSPORT_OTHER;
    }
}

/* The NUMA node of a device from sysfs (<ibdev_path>/device/numa_node), -1 when unknown. */
static int device_numa_node(const struct ibv_device *ibdev)
{
    char path[sizeof(ibdev->ibdev_path) + 32];
    int node = -1;
    FILE *f;

    snprintf(path, sizeof(path), "%s/device/numa_node", ibdev->ibdev_path);
    f = fopen(path, "re");
    if (f != NULL) {
        if (fscanf(f, "%d", &node) != 1) {
            node = -1;
        }
        fclose(f);
    }
    return node;
}

/* The NUMA node the calling thread runs on, -1 when unknown. */
static int cpu_numa_node(void)
{
    unsigned cpu = 0, node = 0;

    return syscall(SYS_getcpu, &cpu, &node, NULL) == 0 ? (int)node : -1;
}

/*
 * Describe the ports of one device that params admit (all, or the given one). Returns IBMSG_OK
 * (a device that cannot be opened or queried is named in found and skipped) or
 * IBMSG_ERR_INVALID for a port the device does not have.
 */
static int describe_device(struct ibv_device **list, int index, const verbs_dev_params_t *p,
                           unsigned ifindex, port_search_t *s, found_text_t *found)
{
    struct ibv_device *ibdev = list[index];
    const char *name = ibv_get_device_name(ibdev);
    struct ibv_context *ctx = ibv_open_device(ibdev);
    struct ibv_device_attr da;
    int status = IBMSG_OK, numa = device_numa_node(ibdev);

    if (ctx == NULL) {
        found_add(found, " %s (cannot open: %s)", name, strerror(errno));
        return IBMSG_OK;
    }
    if (ibv_query_device(ctx, &da) != 0) {
        found_add(found, " %s (query failed)", name);
        goto out_close;
    }
    if (p->port > da.phys_port_cnt) {
        util_error("%s has %u ports, port %d was asked for", name, (unsigned)da.phys_port_cnt,
                   p->port);
        status = IBMSG_ERR_INVALID;
        goto out_close;
    }
    for (int port = 1; port <= da.phys_port_cnt && s->n < VERBS_SEARCH_PORTS; port++) {
        struct ibv_port_attr pa;
        verbs_port_desc_t *d = &s->desc[s->n];
        if (p->port != 0 && port != p->port) {
            continue;
        }
        if (ibv_query_port(ctx, (uint8_t)port, &pa) != 0) {
            found_add(found, " %s:%d (query failed)", name, port);
            continue;
        }
        d->device = name;
        d->port = (unsigned)port;
        d->active = pa.state == IBV_PORT_ACTIVE;
        d->transport = transport_of(ibdev);
        d->ethernet = pa.link_layer == IBV_LINK_LAYER_ETHERNET;
        d->gid_index = p->gid_index;
        if (p->gid_index < 0 && d->ethernet && d->active) {
            d->gid_index = roce_default_gid(ctx, (uint8_t)port, pa.gid_tbl_len, ifindex);
        }
        d->numa_node = numa;
        s->dev[s->n] = index;
        s->state[s->n] = ibv_port_state_str(pa.state);
        s->n++;
    }
out_close:
    ibv_close_device(ctx);
    return status;
}

/* Open the device the search chose (or share it, verbs/hca.h) and fill info for its port.
   Returns a status, logging why it failed. */
static int open_chosen(struct ibv_device *ibdev, const verbs_dev_params_t *p,
                       const verbs_port_desc_t *d, verbs_hca_t **hca_p, verbs_dev_info_t *info)
{
    struct ibv_port_attr pa;
    verbs_hca_t *hca;
    int status = verbs_hca_acquire(ibdev, p->share, &hca);

    if (status != IBMSG_OK) {
        return status;
    }
    if (ibv_query_port(hca->ctx, (uint8_t)d->port, &pa) != 0) {
        util_error("%s port %u: query failed: %s", d->device, d->port, strerror(errno));
        verbs_hca_put(hca);
        return IBMSG_ERR_NO_DEVICE;
    }
    status = port_setup(hca->ctx, &pa, (uint8_t)d->port,
                        p->gid_index >= 0 ? p->gid_index : d->gid_index, info);
    if (status != IBMSG_OK) {
        verbs_hca_put(hca);
        return status;
    }
    *hca_p = hca;
    return IBMSG_OK;
}

/* Whether the effective capabilities hold CAP_IPC_LOCK (bit 14 of CapEff). */
static int has_ipc_lock(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    unsigned long long caps = 0;
    int found = 0;

    if (f == NULL) {
        return 0;
    }
    while (!found && fgets(line, sizeof(line), f) != NULL) {
        found = sscanf(line, "CapEff: %llx", &caps) == 1;
    }
    fclose(f);
    return found && (caps >> 14 & 1) != 0;
}

uint64_t verbs_memlock_limit(void)
{
    struct rlimit rl;

    if (getrlimit(RLIMIT_MEMLOCK, &rl) != 0 || rl.rlim_cur == RLIM_INFINITY || has_ipc_lock()) {
        return UINT64_MAX;
    }
    return (uint64_t)rl.rlim_cur;
}

const char *verbs_memlock_hint(int err, char *buf, size_t len)
{
    struct rlimit rl;

    buf[0] = '\0';
    if ((err != ENOMEM && err != EPERM && err != EAGAIN) || getrlimit(RLIMIT_MEMLOCK, &rl) != 0) {
        return buf;
    }
    if (rl.rlim_cur == RLIM_INFINITY) {
        snprintf(buf, len, " (locked memory is unlimited: the device or the system is out of it)");
    } else {
        snprintf(buf, len,
                 " (locked-memory limit RLIMIT_MEMLOCK: %llu KiB%s; raise it with ulimit -l, or a "
                 "memlock line in /etc/security/limits.conf or LimitMEMLOCK= for a service)",
                 (unsigned long long)rl.rlim_cur / 1024,
                 has_ipc_lock() ? ", lifted by CAP_IPC_LOCK" : "");
    }
    return buf;
}

static pthread_once_t fork_once = PTHREAD_ONCE_INIT;
static int fork_mode_now = VERBS_FORK_PENDING;

static void fork_setup_once(void)
{
    enum ibv_fork_status st = ibv_is_fork_initialized();
    int ret = 0, mode;

    if (st == IBV_FORK_DISABLED) {
        ret = ibv_fork_init();
        st = ibv_is_fork_initialized();
    }
    switch (st) {
    case IBV_FORK_UNNEEDED:
        mode = VERBS_FORK_UNNEEDED;
        util_info("fork: the kernel copies registered pages for a child (copy-on-fork): "
                  "ibv_fork_init not needed");
        break;
    case IBV_FORK_ENABLED:
        mode = VERBS_FORK_INIT;
        util_info("fork: ibv_fork_init in force (kernel without copy-on-fork of pinned pages): "
                  "registered memory is not mapped in a child");
        break;
    default:
        mode = VERBS_FORK_UNPROTECTED;
        util_warn("fork: ibv_fork_init failed (%s; memory registered before ibmsg opened a "
                  "device?): a child that writes to registered pages corrupts transfers",
                  strerror(ret != 0 ? ret : EINVAL));
        break;
    }
    __atomic_store_n(&fork_mode_now, mode, __ATOMIC_RELEASE);
}

int verbs_fork_setup(void)
{
    pthread_once(&fork_once, fork_setup_once);
    return fork_mode_now;
}

int verbs_fork_mode(void)
{
    return __atomic_load_n(&fork_mode_now, __ATOMIC_ACQUIRE); /* set once, by the once */
}

int verbs_dev_open(const verbs_dev_params_t *params, verbs_dev_t **dev_p)
{
    struct ibv_device **list;
    found_text_t found = {.len = 0};
    port_search_t search = {.n = 0};
    verbs_hca_t *hca = NULL;
    verbs_dev_info_t info;
    verbs_dev_t *dev;
    int num = 0, status = IBMSG_ERR_NOT_FOUND, named = 0, fl;
    unsigned ifindex = 0;

    if (params == NULL || dev_p == NULL || params->port < 0 || params->port > 255 ||
        params->gid_index < -1) {
        return IBMSG_ERR_INVALID;
    }
    if (params->netdev != NULL && (ifindex = if_nametoindex(params->netdev)) == 0) {
        util_error("no network interface named %s (verbs_netdev)", params->netdev);
        return IBMSG_ERR_NO_DEVICE;
    }
    verbs_fork_setup(); /* before any registration of this process's */
    list = ibv_get_device_list(&num);
    if (list == NULL || num == 0) {
        util_error("no RDMA device: ibv_get_device_list found 0 devices%s",
                   list == NULL ? " (and failed)" : "");
        if (list != NULL) {
            ibv_free_device_list(list);
        }
        return IBMSG_ERR_NO_DEVICE;
    }
    found.buf[0] = '\0';
    for (int i = 0; i < num && status == IBMSG_ERR_NOT_FOUND; i++) {
        const char *name = ibv_get_device_name(list[i]);
        if (params->name != NULL && strcmp(params->name, name) != 0) {
            found_add(&found, " %s", name);
            continue;
        }
        named = 1;
        if (describe_device(list, i, params, ifindex, &search, &found) != IBMSG_OK) {
            status = IBMSG_ERR_INVALID;
        }
    }
    if (status == IBMSG_ERR_NOT_FOUND) {
        const char *why[VERBS_SEARCH_PORTS];
        int best = verbs_port_rank(search.desc, search.n, cpu_numa_node(), why);
        for (size_t i = 0; i < search.n; i++) {
            const verbs_port_desc_t *d = &search.desc[i];
            found_add(&found, " %s:%u (%s, %s%s%s)", d->device, d->port, search.state[i],
                      d->ethernet ? "RoCE" : "IB", why[i] != NULL ? ": " : "",
                      why[i] != NULL ? why[i] : "");
        }
        if (best >= 0) {
            status = open_chosen(list[search.dev[best]], params, &search.desc[best], &hca, &info);
        }
    }
    ibv_free_device_list(list);
    if (status == IBMSG_ERR_NOT_FOUND) {
        if (params->name != NULL && !named) {
            util_error("no RDMA device named %s; found:%s", params->name, found.buf);
        } else if (params->port != 0) {
            util_error("port %d is not usable; found:%s", params->port, found.buf);
        } else {
            util_error("no usable RDMA port; found:%s", found.buf);
        }
        return IBMSG_ERR_NO_DEVICE;
    }
    if (status != IBMSG_OK) {
        return status;
    }

    dev = calloc(1, sizeof(*dev));
    if (dev == NULL) {
        status = IBMSG_ERR_NO_MEMORY;
        goto err_close;
    }
    dev->hca = hca;
    dev->ctx = hca->ctx;
    dev->pd = hca->pd;
    dev->wake_fd = -1;
    dev->info = info;
    dev->info.relaxed_ordering = params->relaxed_ordering != 0;
    dev->inline_max = UINT32_MAX; /* not known until a QP creation refuses some */
    dev->gid_default = params->gid_index < 0 && info.gid_index >= 0;
    dev->gid_ifindex = ifindex;
    /* One channel for every CQ of this context (verbs/notify.h), read without blocking: the
       context sleeps on its own CQs only, however many share the device. */
    dev->chan = ibv_create_comp_channel(hca->ctx);
    if (dev->chan == NULL) {
        status = verbs_errno_status(errno);
        util_error("%s: ibv_create_comp_channel failed: %s", info.name, strerror(errno));
        goto err_free;
    }
    fl = fcntl(dev->chan->fd, F_GETFL);
    if (fl < 0 || fcntl(dev->chan->fd, F_SETFL, fl | O_NONBLOCK) != 0) {
        status = verbs_errno_status(errno);
        util_error("%s: the completion channel cannot be made non-blocking: %s", info.name,
                   strerror(errno));
        goto err_destroy_chan;
    }
    if (dev->info.mw_type2) {
        /* Advertised is not usable: bnxt_re and hns report type 2B windows, yet their
           providers cannot allocate one. The rendezvous then registers each message. */
        status = verbs_hca_mw_probe(dev);
        if (status != IBMSG_OK) {
            util_info("%s: type 2B memory windows advertised but ibv_alloc_mw fails (%s): "
                      "rendezvous keys are registrations of exactly each message",
                      info.name, ibmsg_status_string(status));
            dev->info.mw_type2 = 0;
        }
    }
    if (verbs_memlock_limit() != UINT64_MAX) {
        util_info("%s: this process may pin %llu KiB of registered memory (RLIMIT_MEMLOCK, ulimit "
                  "-l; no CAP_IPC_LOCK)",
                  info.name, (unsigned long long)verbs_memlock_limit() / 1024);
    }
    util_debug("%s port %u: %s, MTU %u, GID index %d, LID %u", info.name, (unsigned)info.port,
               info.link_layer == VERBS_LINK_ETHERNET ? "RoCE" : "IB",
               verbs_mtu_bytes(info.active_mtu), info.gid_index, (unsigned)info.lid);
    if (hca->shared) {
        util_debug("%s: shared by %u context(s) of this process (verbs_share_device)", info.name,
                   verbs_dev_sharers(dev));
    }
    verbs_hca_join(dev);
    *dev_p = dev;
    return IBMSG_OK;

err_destroy_chan:
    ibv_destroy_comp_channel(dev->chan);
err_free:
    free(dev);
err_close:
    verbs_hca_put(hca);
    return status;
}

void verbs_dev_close(verbs_dev_t *dev)
{
    if (dev == NULL) {
        return;
    }
    if (ibv_destroy_comp_channel(dev->chan) != 0) {
        util_warn("%s: ibv_destroy_comp_channel failed: %s (a CQ still uses it)", dev->info.name,
                  strerror(errno));
    }
    verbs_hca_leave(dev); /* the last context of the device closes it */
    free(dev);
}

int verbs_dev_refresh_address(verbs_dev_t *dev, int *changed)
{
    verbs_dev_info_t *info = &dev->info;
    struct ibv_port_attr pa;
    union ibv_gid gid;
    int index = info->gid_index;

    *changed = 0;
    if (ibv_query_port(dev->ctx, info->port, &pa) != 0) {
        util_warn("%s port %u: query failed after an address change: %s", info->name,
                  (unsigned)info->port, strerror(errno));
        return verbs_errno_status(errno);
    }
    if (pa.lid != info->lid) {
        util_warn("%s port %u: LID %u is now %u (new queue pairs)", info->name,
                  (unsigned)info->port, (unsigned)info->lid, (unsigned)pa.lid);
        info->lid = pa.lid;
        *changed = 1;
    }
    if (info->gid_index < 0) {
        return IBMSG_OK; /* IB: LID routing */
    }
    if (dev->gid_default) {
        index = roce_default_gid(dev->ctx, info->port, pa.gid_tbl_len, dev->gid_ifindex);
    }
    if (index < 0 || ibv_query_gid(dev->ctx, info->port, index, &gid) != 0 ||
        verbs_gid_is_zero(gid.raw)) {
        util_warn("%s port %u: no usable GID after a GID table change (index %d): new queue "
                  "pairs keep GID index %d",
                  info->name, (unsigned)info->port, index, info->gid_index);
        return IBMSG_ERR_NO_DEVICE;
    }
    if (index != info->gid_index || memcmp(gid.raw, info->gid, sizeof(info->gid)) != 0) {
        util_warn("%s port %u: GID index %d is now %d (new queue pairs)", info->name,
                  (unsigned)info->port, info->gid_index, index);
        info->gid_index = index;
        memcpy(info->gid, gid.raw, sizeof(info->gid));
        *changed = 1;
    }
    return IBMSG_OK;
}

const verbs_dev_info_t *verbs_dev_info(const verbs_dev_t *dev)
{
    return &dev->info;
}
