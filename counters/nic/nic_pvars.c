/*
 * NIC port counters as performance variables, and the public port objects (ibmsg_t_port_*).
 *
 * Variables: ONE variable per counter name (nic_port_xmit_data, nic_sent_pkts, ...), bound to
 * IBMSG_T_BIND_PORT, with one element per port; binding it to a port that has no such counter
 * fails. Why not one variable per device and port: a tool then finds "the transmitted data" by
 * one name on any host and binds it to whichever port it cares about, as MPI_T binds one
 * variable to many communicators; per-port names would multiply the variables by the ports and
 * make every tool parse names. Where a port has the counter is still visible by category: every
 * port has its category (ibmsg -> nic -> nic_<dev> -> nic_<dev>_port<n>) holding the variables
 * it serves.
 *
 * Names: nic_<file name, lower case> for counters/ (IB PMA) and hw_counters/ files; a
 * hw_counters/ file whose name also exists in some port's counters/ (link_downed on an HCA that
 * has both) is nic_hw_<name>. Derived: nic_port_xmit_bytes and nic_port_rcv_bytes are 4 times
 * the PMA word counters. Per port also: nic_saturated (which counters saturated; nic_value.h
 * says what a saturated counter reads) and nic_hw_counters_lifespan (ms the kernel caches
 * hw_counters values).
 *
 * The port list is discovered once, when the variables are registered (the tool interface's
 * first init), under nic_sysfs_root: set it in the environment (IBMSG_NIC_SYSFS_ROOT, or
 * IBMSG_SYSFS_ROOT) before that; writing it later is IBMSG_T_ERR_CVAR_SET_NOT_NOW.
 *
 * The NIC is read only from these callbacks (a handle starts, stops or is read), never from the
 * messaging path.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include "counters/nic/nic_backend.h"
#include "counters/nic/nic_port.h"
#include "counters/nic/nic_pvars.h"
#include "counters/registry/registry.h"
#include "util/fork_locks.h"
#include "util/log.h"
#include "util/string_out.h"

#define CNT_NIC_ROOT_MAX 4096

/* A variable's context: which file (or derivation) it reads, and where each port has it. */
typedef struct cnt_nic_var {
    char file[CNT_NIC_NAME_MAX];
    bool hw;
    bool bytes; /* 4 x a word counter */
    int *idx;   /* counter index per port, -1 where absent */
} cnt_nic_var_t;

/* Set once by cnt_nic_pvars_register under cnt_nic_reg_lock, then only read. */
static pthread_mutex_t cnt_nic_reg_lock = PTHREAD_MUTEX_INITIALIZER;
UTIL_FORK_LOCK(UTIL_FORK_LOCK_NIC_REG, cnt_nic_reg_lock, 0)
static cnt_nic_t *cnt_nic_set;
static bool cnt_nic_registered;
static char cnt_nic_root[CNT_NIC_ROOT_MAX] = CNT_NIC_DEFAULT_ROOT;

/* Whether the port list exists (from the registration on) and the tool interface is up. */
static bool cnt_nic_ready(void)
{
    return __atomic_load_n(&cnt_nic_registered, __ATOMIC_ACQUIRE) && cnt_registry_initialized();
}

/* A pointer a tool passed as a port: only ours are dereferenced. */
static ibmsg_t_port_t cnt_nic_port_check(void *obj)
{
    if (cnt_nic_set == NULL || obj == NULL) {
        return NULL;
    }
    for (int i = 0; i < cnt_nic_set->num_ports; i++) {
        if (cnt_nic_set->ports[i] == obj) {
            return cnt_nic_set->ports[i];
        }
    }
    return NULL;
}

static int cnt_nic_status_to_tool(int ret)
{
    return ret == IBMSG_OK ? IBMSG_OK : IBMSG_T_ERR_NOT_ACCESSIBLE;
}

static int cnt_nic_var_read_cb(void *obj, int count, void *buf, void *ctx)
{
    cnt_nic_var_t *var = ctx;
    ibmsg_t_port_t port = cnt_nic_port_check(obj);
    uint64_t total;
    int idx, ret;

    if (port == NULL || count < 1 || var->idx[port->index] < 0) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    idx = var->idx[port->index];
    ret = cnt_nic_port_read(port, 1, &idx, &total);
    if (ret != IBMSG_OK) {
        return cnt_nic_status_to_tool(ret);
    }
    if (var->bytes) {
        total = cnt_nic_words_to_bytes(total);
    }
    *(unsigned long long *)buf = total;
    return IBMSG_OK;
}

static int cnt_nic_var_notify_cb(cnt_notify_event_t event, void *obj, int *count, void *ctx)
{
    cnt_nic_var_t *var = ctx;
    ibmsg_t_port_t port;

    if (event != CNT_NOTIFY_BIND) {
        return IBMSG_OK;
    }
    port = cnt_nic_port_check(obj);
    if (port == NULL || var->idx[port->index] < 0) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    *count = 1;
    return IBMSG_OK;
}

/* ---- nic_saturated and nic_hw_counters_lifespan -------------------------------------------- */

/* The longest list nic_saturated can give for a port, with its NUL. */
static int cnt_nic_saturated_size(ibmsg_t_port_t port)
{
    size_t n = 1;
    for (int i = 0; i < port->source.num_counters; i++) {
        n += strlen(port->counters[i].name) + 1 + (port->counters[i].hw ? 12 : 0);
    }
    return (int)n;
}

static int cnt_nic_saturated_read_cb(void *obj, int count, void *buf, void *ctx)
{
    ibmsg_t_port_t port = cnt_nic_port_check(obj);

    (void)ctx;
    if (port == NULL || count < 1) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    cnt_nic_port_saturated(port, buf, (size_t)count);
    return IBMSG_OK;
}

static int cnt_nic_saturated_notify_cb(cnt_notify_event_t event, void *obj, int *count, void *ctx)
{
    ibmsg_t_port_t port;

    (void)ctx;
    if (event != CNT_NOTIFY_BIND) {
        return IBMSG_OK;
    }
    port = cnt_nic_port_check(obj);
    if (port == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    *count = cnt_nic_saturated_size(port);
    return IBMSG_OK;
}

static int cnt_nic_lifespan_read_cb(void *obj, int count, void *buf, void *ctx)
{
    ibmsg_t_port_t port = cnt_nic_port_check(obj);
    uint64_t ms;
    int ret;

    (void)ctx;
    if (port == NULL || count < 1) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    ret = cnt_nic_port_lifespan(port, &ms);
    if (ret != IBMSG_OK) {
        return cnt_nic_status_to_tool(ret);
    }
    *(unsigned long long *)buf = ms;
    return IBMSG_OK;
}

static int cnt_nic_lifespan_notify_cb(cnt_notify_event_t event, void *obj, int *count, void *ctx)
{
    ibmsg_t_port_t port;

    (void)ctx;
    if (event != CNT_NOTIFY_BIND) {
        return IBMSG_OK;
    }
    port = cnt_nic_port_check(obj);
    if (port == NULL || !port->has_hw_counters) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    *count = 1;
    return IBMSG_OK;
}

/* ---- the root cvar ----------------------------------------------------------------------- */

static int cnt_nic_root_write_cb(void *obj, const void *buf, void *ctx)
{
    (void)obj;
    (void)ctx;
    /* Only the registration's own environment write gets here before discovery. */
    if (cnt_nic_set != NULL) {
        return IBMSG_T_ERR_CVAR_SET_NOT_NOW;
    }
    size_t n = strnlen(buf, sizeof(cnt_nic_root));
    if (n == 0 || n == sizeof(cnt_nic_root)) {
        return IBMSG_T_ERR_INVALID;
    }
    memcpy(cnt_nic_root, buf, n);
    cnt_nic_root[n] = '\0';
    return IBMSG_OK;
}

static int cnt_nic_root_read_cb(void *obj, void *buf, void *ctx)
{
    (void)obj;
    (void)ctx;
    memcpy(buf, cnt_nic_root, sizeof(cnt_nic_root));
    return IBMSG_OK;
}

/* ---- registration ------------------------------------------------------------------------ */

static void cnt_nic_var_name(const char *prefix, const char *file, char *out, size_t len)
{
    size_t o = (size_t)snprintf(out, len, "%s", prefix);
    for (const char *p = file; *p != '\0' && o + 1 < len; p++) {
        out[o++] = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_';
    }
    out[o < len ? o : len - 1] = '\0';
}

static bool cnt_nic_any_pma_named(const char *file)
{
    for (int i = 0; i < cnt_nic_set->num_ports; i++) {
        if (cnt_nic_port_find(cnt_nic_set->ports[i], false, file) >= 0) {
            return true;
        }
    }
    return false;
}

static void cnt_nic_port_category(ibmsg_t_port_t port, char *out, size_t len)
{
    snprintf(out, len, "nic_%s_port%d", port->dev_name, port->port_num);
}

static int cnt_nic_categories(int port_cat[])
{
    int ret = IBMSG_OK;

    for (int i = 0; i < cnt_nic_set->num_ports && ret == IBMSG_OK; i++) {
        ibmsg_t_port_t port = cnt_nic_set->ports[i];
        char dev_cat[CNT_NIC_NAME_MAX + 8], cat[CNT_NIC_NAME_MAX + 32], desc[CNT_NIC_NAME_MAX + 64];
        int dev_index;

        snprintf(dev_cat, sizeof(dev_cat), "nic_%s", port->dev_name);
        snprintf(desc, sizeof(desc), "RDMA device %s", port->dev_name);
        ret = cnt_category_register(dev_cat, desc, "nic", &dev_index);
        if (ret != IBMSG_OK) {
            break;
        }
        cnt_nic_port_category(port, cat, sizeof(cat));
        snprintf(desc, sizeof(desc), "Counters of port %d of %s", port->port_num, port->dev_name);
        ret = cnt_category_register(cat, desc, dev_cat, &port_cat[i]);
    }
    return ret;
}

static int cnt_nic_register_var(cnt_nic_var_t *var, const char *name, const char *desc,
                                int verbosity, const int port_cat[])
{
    cnt_pvar_desc_t d = {
        .name = name,
        .var_class = IBMSG_T_PVAR_CLASS_COUNTER,
        .datatype = IBMSG_T_UNSIGNED_LONG_LONG,
        .enumtype = IBMSG_T_ENUM_NULL,
        .verbosity = verbosity,
        .bind = IBMSG_T_BIND_PORT,
        .flags = 0,
        .category = NULL,
        .desc = desc,
        .read = cnt_nic_var_read_cb,
        .notify = cnt_nic_var_notify_cb,
        .ctx = var,
    };
    int index, ret = cnt_pvar_register(&d, &index);

    for (int i = 0; i < cnt_nic_set->num_ports && ret == IBMSG_OK; i++) {
        if (var->idx[i] >= 0) {
            ret = cnt_category_add_pvar(port_cat[i], index);
        }
    }
    if (ret != IBMSG_OK) {
        util_error("nic: cannot register %s: %s", name, ibmsg_status_string(ret));
    }
    return ret;
}

static cnt_nic_var_t *cnt_nic_var_create(const char *file, bool hw, bool bytes)
{
    cnt_nic_var_t *var = calloc(1, sizeof(*var));

    if (var == NULL) {
        return NULL;
    }
    var->idx = malloc(sizeof(int) * (size_t)(cnt_nic_set->num_ports + 1));
    if (var->idx == NULL) {
        free(var);
        return NULL;
    }
    snprintf(var->file, sizeof(var->file), "%s", file);
    var->hw = hw;
    var->bytes = bytes;
    for (int i = 0; i < cnt_nic_set->num_ports; i++) {
        var->idx[i] = cnt_nic_port_find(cnt_nic_set->ports[i], hw, file);
    }
    return var;
}

/* Whether a variable for (hw, file) was made already (by an earlier port). */
static bool cnt_nic_seen_before(int port_index, bool hw, const char *file)
{
    for (int i = 0; i < port_index; i++) {
        if (cnt_nic_port_find(cnt_nic_set->ports[i], hw, file) >= 0) {
            return true;
        }
    }
    return false;
}

static int cnt_nic_register_counter(bool hw, const char *file, const int port_cat[])
{
    char name[CNT_NIC_NAME_MAX + 16], desc[512];
    bool hw_prefix = hw && cnt_nic_any_pma_named(file);
    bool words = cnt_nic_counts_words(hw, file);
    bool basic = strstr(file, "data") != NULL || strstr(file, "pkts") != NULL ||
                 strstr(file, "packets") != NULL;
    cnt_nic_var_t *var = cnt_nic_var_create(file, hw, false);
    int ret;

    if (var == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    cnt_nic_var_name(hw_prefix ? "nic_hw_" : "nic_", file, name, sizeof(name));
    if (words) {
        snprintf(desc, sizeof(desc),
                 "IB PMA counter %s of an RDMA port (sysfs ports/N/counters/%s), in 4-byte words "
                 "(nic_%s gives bytes). Port-wide: counts the traffic of every process on the "
                 "port, not only this one. 32-bit unless the device has extended PMA width: it "
                 "then saturates, see nic_saturated.",
                 file, file,
                 strcmp(file, "port_xmit_data") == 0 ? "port_xmit_bytes" : "port_rcv_bytes");
    } else {
        snprintf(desc, sizeof(desc),
                 "%s %s of an RDMA port (sysfs ports/N/%s/%s). Port-wide: counts the traffic of "
                 "every process on the port, not only this one. %s",
                 hw ? "Driver counter" : "IB PMA counter", file, hw ? "hw_counters" : "counters",
                 file,
                 hw ? "The kernel caches hw_counters values for nic_hw_counters_lifespan ms."
                    : "Narrow PMA counters saturate at all ones: see nic_saturated.");
    }
    ret = cnt_nic_register_var(
        var, name, desc, basic ? IBMSG_T_VERBOSITY_USER_DETAIL : IBMSG_T_VERBOSITY_TUNER_DETAIL,
        port_cat);
    if (ret != IBMSG_OK || !words) {
        return ret;
    }
    var = cnt_nic_var_create(file, hw, true);
    if (var == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    snprintf(name, sizeof(name), "%s",
             strcmp(file, "port_xmit_data") == 0 ? "nic_port_xmit_bytes" : "nic_port_rcv_bytes");
    snprintf(desc, sizeof(desc),
             "Bytes %s by an RDMA port: 4 x the IB PMA word counter %s. Port-wide: counts the "
             "traffic of every process on the port. Saturates with %s (see nic_saturated).",
             strcmp(file, "port_xmit_data") == 0 ? "transmitted" : "received", file, file);
    return cnt_nic_register_var(var, name, desc, IBMSG_T_VERBOSITY_USER_DETAIL, port_cat);
}

static int cnt_nic_register_port_vars(int nic_cat, const int port_cat[])
{
    cnt_pvar_desc_t sat = {
        .name = "nic_saturated",
        .var_class = IBMSG_T_PVAR_CLASS_GENERIC,
        .datatype = IBMSG_T_CHAR,
        .enumtype = IBMSG_T_ENUM_NULL,
        .verbosity = IBMSG_T_VERBOSITY_USER_DETAIL,
        .bind = IBMSG_T_BIND_PORT,
        .flags = CNT_PVAR_READONLY | CNT_PVAR_CONTINUOUS,
        .category = "nic",
        .desc = "The counters of this port that read all ones at their width (as of their last "
                "reading), comma-separated (hw_counters ones as hw_counters/<name>). A saturated "
                "counter's total is unknown: from then on its variable reads UINT64_MAX as its "
                "total, so a handle running across the saturation reads UINT64_MAX - start "
                "(>= 2^63) and one started after it reads 0; treat any listed counter's value as "
                "unknown.",
        .read = cnt_nic_saturated_read_cb,
        .notify = cnt_nic_saturated_notify_cb,
    };
    cnt_pvar_desc_t life = {
        .name = "nic_hw_counters_lifespan",
        .var_class = IBMSG_T_PVAR_CLASS_SIZE,
        .datatype = IBMSG_T_UNSIGNED_LONG_LONG,
        .enumtype = IBMSG_T_ENUM_NULL,
        .verbosity = IBMSG_T_VERBOSITY_TUNER_DETAIL,
        .bind = IBMSG_T_BIND_PORT,
        .flags = CNT_PVAR_READONLY | CNT_PVAR_CONTINUOUS,
        .category = "nic",
        .desc = "Milliseconds for which the kernel caches this port's hw_counters values "
                "(hw_counters/lifespan): readings closer together than this see the same values.",
        .read = cnt_nic_lifespan_read_cb,
        .notify = cnt_nic_lifespan_notify_cb,
    };
    int sat_index, life_index, ret;

    (void)nic_cat;
    ret = cnt_pvar_register(&sat, &sat_index);
    if (ret == IBMSG_OK) {
        ret = cnt_pvar_register(&life, &life_index);
    }
    for (int i = 0; i < cnt_nic_set->num_ports && ret == IBMSG_OK; i++) {
        ret = cnt_category_add_pvar(port_cat[i], sat_index);
        if (ret == IBMSG_OK && cnt_nic_set->ports[i]->has_hw_counters) {
            ret = cnt_category_add_pvar(port_cat[i], life_index);
        }
    }
    return ret;
}

int cnt_nic_pvars_register(void)
{
    cnt_cvar_desc_t root = {
        .name = "nic_sysfs_root",
        .datatype = IBMSG_T_CHAR,
        .enumtype = IBMSG_T_ENUM_NULL,
        .verbosity = IBMSG_T_VERBOSITY_TUNER_BASIC,
        .bind = IBMSG_T_BIND_NO_OBJECT,
        .scope = IBMSG_T_SCOPE_LOCAL,
        .count = CNT_NIC_ROOT_MAX,
        .category = "nic",
        .desc = "Directory in /sys/class/infiniband format where NIC port counters are found "
                "(default /sys/class/infiniband). Read once, when the tool interface is first "
                "initialised: set it in the environment (IBMSG_NIC_SYSFS_ROOT, or "
                "IBMSG_SYSFS_ROOT) before that.",
        .read = cnt_nic_root_read_cb,
        .write = cnt_nic_root_write_cb,
    };
    int cat, nic_cat, *port_cat = NULL, ret = IBMSG_OK, cvar_index;
    const char *env;

    pthread_mutex_lock(&cnt_nic_reg_lock);
    if (__atomic_load_n(&cnt_nic_registered, __ATOMIC_ACQUIRE)) {
        goto out_unlock;
    }
    env = getenv("IBMSG_SYSFS_ROOT");
    if (env != NULL && env[0] != '\0') {
        snprintf(cnt_nic_root, sizeof(cnt_nic_root), "%s", env);
    }
    ret = cnt_category_register("ibmsg", "Everything ibmsg exports", NULL, &cat);
    if (ret == IBMSG_OK) {
        ret = cnt_category_register("nic",
                                    "RDMA NIC port counters (sysfs): port-wide, they count the "
                                    "traffic of every process using the port",
                                    "ibmsg", &nic_cat);
    }
    if (ret == IBMSG_OK) {
        ret = cnt_cvar_register(&root, &cvar_index);
    }
    if (ret == IBMSG_OK) {
        ret = cnt_nic_backend_register();
    }
    if (ret != IBMSG_OK) {
        goto out_unlock;
    }
    ret = cnt_nic_open(cnt_nic_root, &cnt_nic_set);
    if (ret != IBMSG_OK) {
        util_error("nic: cannot discover ports under %s: %s", cnt_nic_root,
                   ibmsg_status_string(ret));
        goto out_unlock;
    }
    ret = cnt_nic_backend_apply(cnt_nic_set, cnt_nic_root);
    if (ret != IBMSG_OK) {
        goto out_unlock;
    }
    port_cat = calloc((size_t)cnt_nic_set->num_ports + 1, sizeof(int));
    if (port_cat == NULL) {
        ret = IBMSG_ERR_NO_MEMORY;
        goto out_unlock;
    }
    ret = cnt_nic_categories(port_cat);
    for (int p = 0; p < cnt_nic_set->num_ports && ret == IBMSG_OK; p++) {
        ibmsg_t_port_t port = cnt_nic_set->ports[p];
        for (int c = 0; c < port->source.num_counters && ret == IBMSG_OK; c++) {
            if (!cnt_nic_seen_before(p, port->counters[c].hw, port->counters[c].name)) {
                ret = cnt_nic_register_counter(port->counters[c].hw, port->counters[c].name,
                                               port_cat);
            }
        }
    }
    if (ret == IBMSG_OK) {
        ret = cnt_nic_register_port_vars(nic_cat, port_cat);
    }
    if (ret == IBMSG_OK) {
        __atomic_store_n(&cnt_nic_registered, true, __ATOMIC_RELEASE);
        util_debug("nic: %d ports under %s", cnt_nic_set->num_ports, cnt_nic_root);
    }
    free(port_cat);
out_unlock:
    pthread_mutex_unlock(&cnt_nic_reg_lock);
    return ret;
}

/* ---- public port objects ----------------------------------------------------------------- */

IBMSG_API int ibmsg_t_port_get_num(int *num)
{
    if (num == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    if (!cnt_nic_ready()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    *num = cnt_nic_set->num_ports;
    return IBMSG_OK;
}

IBMSG_API int ibmsg_t_port_get(int index, ibmsg_t_port_t *port)
{
    if (port == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    if (!cnt_nic_ready()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (index < 0 || index >= cnt_nic_set->num_ports) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    *port = cnt_nic_set->ports[index];
    return IBMSG_OK;
}

IBMSG_API int ibmsg_t_port_get_info(ibmsg_t_port_t port, char *name, int *name_len, int *port_num)
{
    ibmsg_t_port_t p;

    if (!cnt_nic_ready()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    p = cnt_nic_port_check(port);
    if (p == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    util_string_out(p->dev_name, name, name_len);
    if (port_num != NULL) {
        *port_num = p->port_num;
    }
    return IBMSG_OK;
}
