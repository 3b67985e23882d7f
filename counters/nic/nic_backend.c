/* Choice of the NIC counter backend: see nic_backend.h. */
#include "counters/nic/nic_backend.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include "counters/registry/registry.h"
#include "util/log.h"

#define CNT_NIC_BACKEND_MAX 16

static const char *const cnt_nic_backend_names[] = {"auto", "sysfs", "netlink"};

/* Written by the cvar before discovery, then frozen (discovery runs once, under the NIC lock). */
static cnt_nic_backend_t cnt_nic_backend = CNT_NIC_BACKEND_AUTO;
static bool cnt_nic_backend_frozen;

int cnt_nic_backend_parse(const char *name, cnt_nic_backend_t *backend)
{
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, cnt_nic_backend_names[i]) == 0) {
            *backend = (cnt_nic_backend_t)i;
            return IBMSG_OK;
        }
    }
    return IBMSG_ERR_INVALID;
}

cnt_nic_backend_t cnt_nic_backend_wanted(void)
{
    return __atomic_load_n(&cnt_nic_backend, __ATOMIC_RELAXED);
}

static int cnt_nic_backend_write_cb(void *obj, const void *buf, void *ctx)
{
    cnt_nic_backend_t b;

    (void)obj;
    (void)ctx;
    if (strnlen(buf, CNT_NIC_BACKEND_MAX) == CNT_NIC_BACKEND_MAX ||
        cnt_nic_backend_parse(buf, &b) != IBMSG_OK) {
        return IBMSG_T_ERR_INVALID;
    }
    if (__atomic_load_n(&cnt_nic_backend_frozen, __ATOMIC_ACQUIRE)) {
        return IBMSG_T_ERR_CVAR_SET_NOT_NOW;
    }
    __atomic_store_n(&cnt_nic_backend, b, __ATOMIC_RELAXED);
    return IBMSG_OK;
}

static int cnt_nic_backend_read_cb(void *obj, void *buf, void *ctx)
{
    (void)obj;
    (void)ctx;
    snprintf(buf, CNT_NIC_BACKEND_MAX, "%s", cnt_nic_backend_names[cnt_nic_backend_wanted()]);
    return IBMSG_OK;
}

int cnt_nic_backend_register(void)
{
    cnt_cvar_desc_t d = {
        .name = "nic_backend",
        .datatype = IBMSG_T_CHAR,
        .enumtype = IBMSG_T_ENUM_NULL,
        .verbosity = IBMSG_T_VERBOSITY_TUNER_DETAIL,
        .bind = IBMSG_T_BIND_NO_OBJECT,
        .scope = IBMSG_T_SCOPE_LOCAL,
        .count = CNT_NIC_BACKEND_MAX,
        .category = "nic",
        .desc = "How NIC port counters are read: auto (default: RDMA netlink, one message per "
                "port, where the kernel supports it for the real /sys/class/infiniband, else "
                "sysfs), sysfs (one pread per counter file) or netlink (hw_counters by RDMA "
                "netlink, PMA counters/ still by pread). Read once, when the tool interface is "
                "first initialised: set IBMSG_NIC_BACKEND before that.",
        .read = cnt_nic_backend_read_cb,
        .write = cnt_nic_backend_write_cb,
    };
    int index;

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
