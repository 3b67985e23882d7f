/* Choice of the NIC counter backend: see nic_backend.h. */
#include "counters/nic/nic_backend.h"

#include <stdbool.h>
#include <string.h>

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include "counters/registry/registry.h"
#include "util/log.h"

/* The enumeration nic_backends: item i is cnt_nic_backend_t i (tools list the values). */
static const char *const cnt_nic_backend_names[CNT_NIC_BACKEND_LAST] = {"auto", "sysfs", "netlink"};

/* Written by the cvar before discovery, then frozen (discovery runs once, under the NIC lock). */
static int cnt_nic_backend = CNT_NIC_BACKEND_AUTO;
static bool cnt_nic_backend_frozen;

int cnt_nic_backend_parse(const char *name, cnt_nic_backend_t *backend)
{
    for (int i = 0; i < CNT_NIC_BACKEND_LAST; i++) {
        if (strcmp(name, cnt_nic_backend_names[i]) == 0) {
            *backend = (cnt_nic_backend_t)i;
            return IBMSG_OK;
        }
    }
    return IBMSG_ERR_INVALID;
}

cnt_nic_backend_t cnt_nic_backend_wanted(void)
{
    return (cnt_nic_backend_t)__atomic_load_n(&cnt_nic_backend, __ATOMIC_RELAXED);
}

/* A value outside the enumeration is refused before the freeze is looked at. */
static int cnt_nic_backend_write_cb(void *obj, const void *buf, void *ctx)
{
    int b = *(const int *)buf;

    (void)obj;
    (void)ctx;
    if (b < 0 || b >= CNT_NIC_BACKEND_LAST) {
        return IBMSG_T_ERR_INVALID;
    }
    if (__atomic_load_n(&cnt_nic_backend_frozen, __ATOMIC_ACQUIRE)) {
        return IBMSG_T_ERR_CVAR_SET_NOT_NOW;
    }
    __atomic_store_n(&cnt_nic_backend, b, __ATOMIC_RELAXED);
    return IBMSG_OK;
}

int cnt_nic_backend_register(void)
{
    cnt_enum_item_t items[CNT_NIC_BACKEND_LAST];
    ibmsg_t_enum_t backends = IBMSG_T_ENUM_NULL;
    int index;

    for (int i = 0; i < CNT_NIC_BACKEND_LAST; i++) {
        items[i].value = i;
        items[i].name = cnt_nic_backend_names[i];
    }
    int ret = cnt_enum_register("nic_backends", CNT_NIC_BACKEND_LAST, items, &backends);
    if (ret != IBMSG_OK) {
        return ret;
    }
    cnt_cvar_desc_t d = {
        .name = "nic_backend",
        .datatype = IBMSG_T_INT,
        .enumtype = backends,
        .verbosity = IBMSG_T_VERBOSITY_TUNER_DETAIL,
        .bind = IBMSG_T_BIND_NO_OBJECT,
        .scope = IBMSG_T_SCOPE_LOCAL,
        .count = 1,
        .category = "nic",
        .desc = "How NIC port counters are read: auto (default: RDMA netlink, one message per "
                "port, where the kernel supports it for the real /sys/class/infiniband, else "
                "sysfs), sysfs (one pread per counter file) or netlink (hw_counters by RDMA "
                "netlink, PMA counters/ still by pread). Read once, when the tool interface is "
                "first initialised: set IBMSG_NIC_BACKEND before that.",
        .write = cnt_nic_backend_write_cb,
        .ctx = &cnt_nic_backend,
    };

    return cnt_cvar_register(&d, &index);
}

/* Whether root names the kernel's own devices (netlink can only read those). */
static bool cnt_nic_root_is_real(const char *root)
{
    size_t n = strlen(CNT_NIC_DEFAULT_ROOT);

    return root == NULL || (strncmp(root, CNT_NIC_DEFAULT_ROOT, n) == 0 &&
                            (root[n] == '\0' || strcmp(root + n, "/") == 0));
}

int cnt_nic_backend_apply(cnt_nic_t *nic, const char *root)
{
    cnt_nic_backend_t want = cnt_nic_backend_wanted();
    bool real = cnt_nic_root_is_real(root);

    __atomic_store_n(&cnt_nic_backend_frozen, true, __ATOMIC_RELEASE);
    if (want == CNT_NIC_BACKEND_SYSFS) {
        return IBMSG_OK;
    }
    for (int i = 0; i < nic->num_ports; i++) {
        ibmsg_t_port_t port = nic->ports[i];
        int ret;

        if (!port->has_hw_counters) {
            continue; /* nothing netlink could read for it */
        }
        if (!real) {
            if (want == CNT_NIC_BACKEND_NETLINK) {
                util_info("nic %s/%d: nic_backend=netlink needs the real %s (root is %s): sysfs",
                          port->dev_name, port->port_num, CNT_NIC_DEFAULT_ROOT, root);
            }
            continue;
        }
        ret = cnt_nic_netlink_attach(port);
        if (ret == IBMSG_ERR_NO_MEMORY) {
            return ret;
        }
        if (ret != IBMSG_OK) {
            if (want == CNT_NIC_BACKEND_NETLINK) {
                util_info("nic %s/%d: RDMA netlink cannot read it (%s): sysfs", port->dev_name,
                          port->port_num, ibmsg_status_string(ret));
            }
            continue;
        }
        util_debug("nic %s/%d: read by %s", port->dev_name, port->port_num, port->source.ops->name);
    }
    return IBMSG_OK;
}
