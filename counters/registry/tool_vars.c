/*
 * The registry's own variables, registered once (pthread_once) at the first init or the first
 * registration: the root category ibmsg, the categories tool and util, and the log_level cvar
 * (ibmsg -> util). The counters that count sessions and handles live on the counter shards
 * (counters/builtin.c wires them in as the registry's meters).
 */
#include "counters/registry/tool_internal.h"

#include "util/log.h"

static int log_level_write(void *obj, const void *buf, void *ctx)
{
    (void)obj, (void)ctx;
    int level = *(const int *)buf;
    if (level < UTIL_LOG_NONE || level >= UTIL_LOG_LAST) {
        return IBMSG_T_ERR_INVALID;
    }
    __atomic_store_n(&util_log_level, level, __ATOMIC_RELAXED);
    return IBMSG_OK;
}

static void builtin_check(int ret, const char *what)
{
    if (ret != IBMSG_OK) {
        util_error("tool: cannot register built-in %s: %s", what, ibmsg_status_string(ret));
    }
}

void cnt_tool_register_builtins(void)
{
    cnt_enum_item_t levels[UTIL_LOG_LAST];
    ibmsg_t_enum_t level_enum = IBMSG_T_ENUM_NULL;
    int index;

    for (int i = 0; i < UTIL_LOG_LAST; i++) {
        levels[i].value = i;
        levels[i].name = util_log_level_name((util_log_level_t)i);
    }

    cnt_tool_lock();
    builtin_check(cnt_category_register_locked("ibmsg", "Everything ibmsg exports", NULL, &index),
                  "category ibmsg");
    builtin_check(
        cnt_category_register_locked(
            "tool", "The tool information interface itself: sessions and handles", "ibmsg", &index),
        "category tool");
    builtin_check(cnt_category_register_locked("util", "Base services: logging", "ibmsg", &index),
                  "category util");
    builtin_check(cnt_enum_register_locked("log_levels", UTIL_LOG_LAST, levels, &level_enum),
                  "enum log_levels");

    cnt_cvar_desc_t log_level = {
        .name = "log_level",
        .datatype = IBMSG_T_INT,
        .enumtype = level_enum,
        .verbosity = IBMSG_T_VERBOSITY_USER_BASIC,
        .bind = IBMSG_T_BIND_NO_OBJECT,
        .scope = IBMSG_T_SCOPE_LOCAL,
        .count = 1,
        .category = "util",
        .desc = "Messages up to this level are logged (none, error, warn, info, debug, trace)",
        .write = log_level_write,
        .ctx = &util_log_level,
    };
    builtin_check(cnt_cvar_register_locked(&log_level, &index), "cvar log_level");
    cnt_event_register_builtins();
    cnt_tool_unlock();
}
