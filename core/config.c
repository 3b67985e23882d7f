/* Context settings: control variables and info hints (see config.h). */
#include "core/config.h"
#include "core/core_events.h"

#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include "counters/builtin.h"
#include "counters/registry/registry.h"
#include "util/fork_locks.h"
#include "util/log.h"
#include "util/parse.h"
#include "verbs/device.h"
#include "verbs/reg_cache.h"

typedef struct config_int_desc {
    const char *name;
    size_t offset;
    int64_t min, max;
    const char *desc;
} config_int_desc_t;

static const config_int_desc_t config_ints[] = {
#define CORE_CONFIG_DESC(field, name, def, min, max, desc) \
    {name, offsetof(core_config_t, field), min, max, desc},
    CORE_CONFIG_INT_LIST(CORE_CONFIG_DESC)
#undef CORE_CONFIG_DESC
};

#define CONFIG_NINTS (sizeof(config_ints) / sizeof(config_ints[0]))

/* The string settings: each a char[CORE_CONFIG_DEVICE_MAX] of core_config_t, "" = choose. */
typedef struct config_str_desc {
    const char *name;
    size_t offset;
    const char *desc;
} config_str_desc_t;

static const config_str_desc_t config_strs[] = {
    {"device", offsetof(core_config_t, device),
     "RDMA device name for new contexts (empty: the first usable port, NUMA-local first)"},
    {"verbs_netdev", offsetof(core_config_t, netdev),
     "RoCE: the network interface (e.g. eth1) whose GID to use, which also selects the device "
     "and port (empty: the first RoCE v2 IPv4-mapped GID)"},
};

#define CONFIG_NSTRS (sizeof(config_strs) / sizeof(config_strs[0]))

static char *config_str(core_config_t *cfg, const config_str_desc_t *d)
{
    return (char *)cfg + d->offset;
}

/*
 * The control variables' values: the defaults of every new context. config_lock protects them
 * and config_contexts (contexts alive), so a write cannot slip in while a context is created.
 */
static core_config_t config_cvars = {.device = "",
                                     .netdev = "",
#define CORE_CONFIG_DEFAULT(field, name, def, min, max, desc) .field = def,
                                     CORE_CONFIG_INT_LIST(CORE_CONFIG_DEFAULT)
#undef CORE_CONFIG_DEFAULT
};
static pthread_mutex_t config_lock = PTHREAD_MUTEX_INITIALIZER;
UTIL_FORK_LOCK(UTIL_FORK_LOCK_CONFIG, config_lock, 0)
static int config_contexts;
static pthread_once_t config_once = PTHREAD_ONCE_INIT;

static int64_t *config_field(core_config_t *cfg, const config_int_desc_t *d)
{
    return (int64_t *)((char *)cfg + d->offset);
}

static int cvar_read_int(void *obj, void *buf, void *ctx)
{
    const config_int_desc_t *d = ctx;

    (void)obj;
    pthread_mutex_lock(&config_lock);
    *(long long *)buf = *config_field(&config_cvars, d);
    pthread_mutex_unlock(&config_lock);
    return IBMSG_OK;
}

/* Settings are fixed while a context lives: set them before, or give hints per context. */
static int cvar_write_int(void *obj, const void *buf, void *ctx)
{
    const config_int_desc_t *d = ctx;
    long long v = *(const long long *)buf;
    int ret = IBMSG_OK;

    (void)obj;
    if (v < d->min || v > d->max) {
        return IBMSG_T_ERR_INVALID;
    }
    pthread_mutex_lock(&config_lock);
    if (config_contexts > 0) {
        ret = IBMSG_T_ERR_CVAR_SET_NOT_NOW;
    } else {
        *config_field(&config_cvars, d) = v;
    }
    pthread_mutex_unlock(&config_lock);
    return ret;
}

/* The enumerations among the integer settings: read and written as INT, given by name too. */
static const cnt_enum_item_t config_wait_modes[] = {
    {CORE_WAIT_SPIN, "spin"},
    {CORE_WAIT_SLEEP, "sleep"},
    {CORE_WAIT_ADAPTIVE, "adaptive"},
};

static const cnt_enum_item_t config_reg_cache_checks[] = {
    {VERBS_RCACHE_CHECK_AUTO, "auto"},
    {VERBS_RCACHE_CHECK_FRAMES, "frames"},
    {VERBS_RCACHE_CHECK_RELEASES, "releases"},
};

typedef struct config_enum {
    const char *name, *enum_name;
    const cnt_enum_item_t *items;
    int nitems;
} config_enum_t;

static const config_enum_t config_enums[] = {
    {"core_wait_mode", "core_wait_modes", config_wait_modes,
     (int)(sizeof(config_wait_modes) / sizeof(config_wait_modes[0]))},
    {"verbs_reg_cache_check", "verbs_reg_cache_checks", config_reg_cache_checks,
     (int)(sizeof(config_reg_cache_checks) / sizeof(config_reg_cache_checks[0]))},
};

static const config_enum_t *config_enum_of(const char *name)
{
    for (size_t i = 0; i < sizeof(config_enums) / sizeof(config_enums[0]); i++) {
        if (strcmp(config_enums[i].name, name) == 0) {
            return &config_enums[i];
        }
    }
    return NULL;
}

static int cvar_read_enum(void *obj, void *buf, void *ctx)
{
    long long v;
    int ret = cvar_read_int(obj, &v, ctx);

    *(int *)buf = (int)v;
    return ret;
}

static int cvar_write_enum(void *obj, const void *buf, void *ctx)
{
    long long v = *(const int *)buf;

    return cvar_write_int(obj, &v, ctx);
}

static int cvar_read_str(void *obj, void *buf, void *ctx)
{
    (void)obj;
    pthread_mutex_lock(&config_lock);
    memcpy(buf, config_str(&config_cvars, ctx), CORE_CONFIG_DEVICE_MAX);
    pthread_mutex_unlock(&config_lock);
    return IBMSG_OK;
}

static int cvar_write_str(void *obj, const void *buf, void *ctx)
{
    int ret = IBMSG_OK;

    (void)obj;
    if (memchr(buf, '\0', CORE_CONFIG_DEVICE_MAX) == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    pthread_mutex_lock(&config_lock);
    if (config_contexts > 0) {
        ret = IBMSG_T_ERR_CVAR_SET_NOT_NOW;
    } else {
        strcpy(config_str(&config_cvars, ctx), buf);
    }
    pthread_mutex_unlock(&config_lock);
    return ret;
}

static void check_reg(int ret, const char *what)
{
    if (ret != IBMSG_OK) {
        util_error("core: cannot register %s: %s", what, ibmsg_status_string(ret));
    }
}

/* How a kind of setting is typed, shown and accessed (its cvars differ only in name and desc). */
typedef struct config_cvar_kind {
    ibmsg_t_datatype_t datatype;
    int verbosity;
    int scope;
    int count;
    cnt_cvar_read_cb_t read;
    cnt_cvar_write_cb_t write;
} config_cvar_kind_t;

/* Register the control variable name of kind k, bound to no object; a failure is logged. */
static void cvar_add(const char *name, const config_cvar_kind_t *k, ibmsg_t_enum_t enumtype,
                     const char *category, const char *desc, const void *ctx)
{
    int index;
    cnt_cvar_desc_t cv = {
        .name = name,
        .datatype = k->datatype,
        .enumtype = enumtype,
        .verbosity = k->verbosity,
        .bind = IBMSG_T_BIND_NO_OBJECT,
        .scope = k->scope,
        .count = k->count,
        .category = category,
        .desc = desc,
        .read = k->read,
        .write = k->write,
        .ctx = (void *)ctx,
    };
    check_reg(cnt_cvar_register(&cv, &index), name);
}

static int cvar_read_fork(void *obj, void *buf, void *ctx)
{
    (void)obj, (void)ctx;
    *(int *)buf = verbs_fork_mode();
    return IBMSG_OK;
}

/* What makes fork() safe with registered memory: read-only, decided at the first context. */
static void config_register_fork(void)
{
    static const cnt_enum_item_t items[] = {
        {VERBS_FORK_PENDING, "pending"},
        {VERBS_FORK_UNNEEDED, "unneeded"},
        {VERBS_FORK_INIT, "ibv_fork_init"},
        {VERBS_FORK_UNPROTECTED, "unprotected"},
    };
    static const config_cvar_kind_t fork_kind = {
        .datatype = IBMSG_T_INT,
        .verbosity = IBMSG_T_VERBOSITY_USER_DETAIL,
        .scope = IBMSG_T_SCOPE_READONLY,
        .count = 1,
        .read = cvar_read_fork,
        .write = NULL,
    };
    ibmsg_t_enum_t e = IBMSG_T_ENUM_NULL;

    check_reg(cnt_enum_register("verbs_fork_modes", 4, items, &e), "enum verbs_fork_modes");
    cvar_add("verbs_fork_protection", &fork_kind, e, "verbs",
             "How registered memory survives fork(), decided when the first context opens a "
             "device: pending (not yet), unneeded (the kernel copies pinned pages, Linux >= "
             "5.13), ibv_fork_init (registered ranges are not mapped in a child), unprotected "
             "(ibv_fork_init failed: memory was registered before ibmsg opened a device)",
             NULL);
}

/* A setting's category follows its name: core_*, world_* (read by world/), the rest verbs. */
static const char *config_category_of(const char *name)
{
    if (strncmp(name, "core_", 5) == 0) {
        return "core";
    }
    return strncmp(name, "world_", 6) == 0 ? "world" : "verbs";
}

int core_config_world_category(void)
{
    int index;

    cnt_builtin_init(); /* the shard variables first, as in every process (builtin.h) */
    return cnt_category_register("world", "Job bootstrap: PMIx / TCP wireup of the world", "ibmsg",
                                 &index);
}

/* Register the categories and control variables once; the registry applies IBMSG_<NAME>. */
static void config_register(void)
{
    static const config_cvar_kind_t str_kind = {
        .datatype = IBMSG_T_CHAR,
        .verbosity = IBMSG_T_VERBOSITY_USER_BASIC,
        .scope = IBMSG_T_SCOPE_LOCAL,
        .count = CORE_CONFIG_DEVICE_MAX,
        .read = cvar_read_str,
        .write = cvar_write_str,
    };
    static const config_cvar_kind_t int_kind = {
        .datatype = IBMSG_T_COUNT,
        .verbosity = IBMSG_T_VERBOSITY_TUNER_BASIC,
        .scope = IBMSG_T_SCOPE_LOCAL,
        .count = 1,
        .read = cvar_read_int,
        .write = cvar_write_int,
    };
    static const config_cvar_kind_t enum_kind = {
        .datatype = IBMSG_T_INT,
        .verbosity = IBMSG_T_VERBOSITY_TUNER_BASIC,
        .scope = IBMSG_T_SCOPE_LOCAL,
        .count = 1,
        .read = cvar_read_enum,
        .write = cvar_write_enum,
    };
    int index;

    cnt_builtin_init(); /* the shard variables first, as in every process (builtin.h) */
    check_reg(cnt_category_register("core", "Messaging core: eager protocol, matching, credits",
                                    "ibmsg", &index),
              "category core");
    check_reg(
        cnt_category_register("verbs", "Verbs layer: device, queues, completions", "ibmsg", &index),
        "category verbs");
    check_reg(core_config_world_category(), "category world");
    for (size_t i = 0; i < CONFIG_NSTRS; i++) {
        cvar_add(config_strs[i].name, &str_kind, IBMSG_T_ENUM_NULL, "verbs", config_strs[i].desc,
                 &config_strs[i]);
    }
    config_register_fork();
    core_events_register();
    for (size_t i = 0; i < CONFIG_NINTS; i++) {
        const config_int_desc_t *d = &config_ints[i];
        const config_enum_t *en = config_enum_of(d->name);
        ibmsg_t_enum_t enumtype = IBMSG_T_ENUM_NULL;
        if (en != NULL) {
            check_reg(cnt_enum_register(en->enum_name, en->nitems, en->items, &enumtype),
                      en->enum_name);
        }
        cvar_add(d->name, en != NULL ? &enum_kind : &int_kind, enumtype,
                 config_category_of(d->name), d->desc, d);
    }
}

void core_config_init(void)
{
    pthread_once(&config_once, config_register);
}

/* ibmsg_t_init_thread registers the settings too: a tool (MPI_T's included) lists and sets them
   before the first context. Not at load: IBMSG_<NAME> is read when they register, and a program
   may setenv() before its first init or context, as MPI libraries read theirs at init. */
__attribute__((constructor)) static void config_at_load(void)
{
    cnt_builtin_set_client_register(core_config_init);
}

int core_config_check(const char *name, int64_t value)
{
    for (size_t i = 0; i < CONFIG_NINTS; i++) {
        if (strcmp(config_ints[i].name, name) == 0) {
            return value >= config_ints[i].min && value <= config_ints[i].max;
        }
    }
    return 0;
}

/* One integer hint: an integer, or a string holding one. */
static int hint_int(ibmsg_info_t info, const config_int_desc_t *d, int64_t *value)
{
    ibmsg_info_type_t type;
    int ret = ibmsg_info_get_type(info, d->name, &type);
    long long v;

    if (ret != IBMSG_OK) {
        return ret; /* IBMSG_ERR_NOT_FOUND: no hint */
    }
    if (type == IBMSG_INFO_TYPE_INT) {
        int64_t i64;
        ret = ibmsg_info_get_int(info, d->name, &i64);
        v = i64;
    } else if (type == IBMSG_INFO_TYPE_STRING) {
        char s[32];
        int len = sizeof(s);
        const config_enum_t *en = config_enum_of(d->name);
        ret = ibmsg_info_get_string(info, d->name, s, &len);
        for (int i = 0; ret == IBMSG_OK && en != NULL && i < en->nitems; i++) {
            if (strcmp(s, en->items[i].name) == 0) {
                *value = en->items[i].value;
                return IBMSG_OK;
            }
        }
        if (ret == IBMSG_OK) {
            ret = util_parse_ll(s, INT64_MIN, INT64_MAX, &v);
            ret = ret == IBMSG_ERR_INVALID ? IBMSG_ERR_WRONG_TYPE : ret;
        }
    } else {
        ret = IBMSG_ERR_WRONG_TYPE;
    }
    if (ret != IBMSG_OK) {
        util_error("hint %s: not an integer", d->name);
        return ret;
    }
    if (v < d->min || v > d->max) {
        util_error("hint %s = %lld: out of range [%lld, %lld]", d->name, v, (long long)d->min,
                   (long long)d->max);
        return IBMSG_ERR_OUT_OF_RANGE;
    }
    *value = v;
    return IBMSG_OK;
}

/* One string hint. */
static int hint_str(ibmsg_info_t info, const config_str_desc_t *d, core_config_t *cfg)
{
    ibmsg_info_type_t type;
    char value[CORE_CONFIG_DEVICE_MAX + 1];
    int len = (int)sizeof(value);
    int ret = ibmsg_info_get_type(info, d->name, &type);

    if (ret != IBMSG_OK) {
        return ret; /* IBMSG_ERR_NOT_FOUND: no hint */
    }
    if (type != IBMSG_INFO_TYPE_STRING) {
        util_error("hint %s: not a string", d->name);
        return IBMSG_ERR_WRONG_TYPE;
    }
    ret = ibmsg_info_get_string(info, d->name, value, &len);
    if (ret != IBMSG_OK || strlen(value) >= CORE_CONFIG_DEVICE_MAX) {
        util_error("hint %s: longer than %d bytes", d->name, CORE_CONFIG_DEVICE_MAX - 1);
        return IBMSG_ERR_OUT_OF_RANGE;
    }
    strcpy(config_str(cfg, d), value);
    return IBMSG_OK;
}

static int hints_apply(ibmsg_info_t info, core_config_t *cfg)
{
    int ret;

    for (size_t i = 0; i < CONFIG_NSTRS; i++) {
        ret = hint_str(info, &config_strs[i], cfg);
        if (ret != IBMSG_OK && ret != IBMSG_ERR_NOT_FOUND) {
            return ret;
        }
    }
    for (size_t i = 0; i < CONFIG_NINTS; i++) {
        int64_t v;
        ret = hint_int(info, &config_ints[i], &v);
        if (ret == IBMSG_OK) {
            *config_field(cfg, &config_ints[i]) = v;
        } else if (ret != IBMSG_ERR_NOT_FOUND) {
            return ret;
        }
    }
    return IBMSG_OK;
}

int core_config_acquire(ibmsg_info_t info, core_config_t *cfg)
{
    core_config_t c;
    int ret = IBMSG_OK;

    core_config_init();
    pthread_mutex_lock(&config_lock);
    c = config_cvars;
    pthread_mutex_unlock(&config_lock);
    if (info != IBMSG_INFO_NULL) {
        ret = hints_apply(info, &c);
    }
    if (ret != IBMSG_OK) {
        return ret;
    }
    pthread_mutex_lock(&config_lock);
    config_contexts++;
    pthread_mutex_unlock(&config_lock);
    *cfg = c;
    return IBMSG_OK;
}

void core_config_release(void)
{
    pthread_mutex_lock(&config_lock);
    config_contexts--;
    pthread_mutex_unlock(&config_lock);
}
