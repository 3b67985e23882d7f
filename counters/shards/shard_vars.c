/*
 * The counters of counters/shards/counter_table.h as performance variables. Each table entry gives,
 * for NO_OBJECT (the sum over every shard, named as in the table) and for its owner binding (one
 * thread's shard or one object's block, named with the suffix _thread, _ep or _ctx; an ENDPOINT
 * counter is also bound to CONTEXT, reading the context's block with its endpoints' blocks):
 *   COUNTER   a COUNTER   (unsigned long long; resettable, atomic readreset)
 *   TIMER     a TIMER     (unsigned long long nanoseconds; resettable, atomic readreset)
 *   LEVEL     a LEVEL     (long long; read-only, continuous)
 *   LEVEL_WM  a LEVEL, plus <name>_hwm HIGHWATERMARK and <name>_lwm LOWWATERMARK (long long;
 *             read-only: a reset could not lower the shards' own marks). Their meaning, and why
 *             the NO_OBJECT ones are bounds, is in counters/shards/shard.h.
 * The read callbacks return raw totals (the registry does the session arithmetic), so resetting
 * a handle never writes a writer's shard. START/STOP notifications switch timers on (see
 * cnt_timer_start()) and restart watermarks (cnt_wm_start()).
 */
#include "counters/shards/shard_vars.h"

#include <stdio.h>
#include <string.h>

#include "counters/shards/shard.h"
#include "counters/registry/registry.h"
#include "util/log.h"

/* What one registered pvar reads. */
typedef struct cnt_shard_var {
    cnt_id_t id;
    cnt_read_what_t what;
    int bind;
    int kind;
} cnt_shard_var_t;

/* At most 3 bindings x 3 classes per entry; registered once, referenced as ctx forever. */
static cnt_shard_var_t cnt_shard_vars[CNT_COUNTER_COUNT * 9];
static int cnt_shard_var_num;

static int cnt_shard_var_read(void *obj, int count, void *buf, void *ctx)
{
    const cnt_shard_var_t *var = ctx;
    const cnt_shard_t *shard = NULL;
    uint64_t value;

    (void)count;
    if (var->bind == IBMSG_T_BIND_THREAD) {
        shard = obj; /* validated and kept by the BIND notification */
    } else if (var->bind != IBMSG_T_BIND_NO_OBJECT) {
        shard = cnt_shard_lookup(var->bind, obj, 0);
        if (shard == NULL) {
            return IBMSG_T_ERR_INVALID_HANDLE;
        }
    }
    value = cnt_read(shard, var->id, var->what);
    memcpy(buf, &value, sizeof(value)); /* unsigned long long or long long */
    return IBMSG_OK;
}

static int cnt_shard_var_notify(cnt_notify_event_t event, void *obj, int *count, void *ctx)
{
    const cnt_shard_var_t *var = ctx;
    cnt_shard_t *shard;

    switch (event) {
    case CNT_NOTIFY_BIND:
        if (var->bind != IBMSG_T_BIND_NO_OBJECT && cnt_shard_lookup(var->bind, obj, 1) == NULL) {
            return IBMSG_T_ERR_INVALID_HANDLE;
        }
        *count = 1;
        return IBMSG_OK;
    case CNT_NOTIFY_FREE:
        if (var->bind != IBMSG_T_BIND_NO_OBJECT) {
            shard = cnt_shard_lookup(var->bind, obj, 0);
            if (shard != NULL) {
                cnt_shard_unref(shard);
            }
        }
        return IBMSG_OK;
    case CNT_NOTIFY_START:
    case CNT_NOTIFY_STOP:
        if (var->kind == CNT_KIND_TIMER) {
            (event == CNT_NOTIFY_START ? cnt_timer_gate_start : cnt_timer_gate_stop)(var->id);
        } else if (var->what != CNT_READ_VALUE) {
            (event == CNT_NOTIFY_START ? cnt_wm_start : cnt_wm_stop)(var->id);
        }
        return IBMSG_OK;
    }
    return IBMSG_T_ERR_INVALID;
}

static const char *cnt_bind_suffix(int bind)
{
    switch (bind) {
    case IBMSG_T_BIND_THREAD:
        return "_thread";
    case IBMSG_T_BIND_ENDPOINT:
        return "_ep";
    case IBMSG_T_BIND_CONTEXT:
        return "_ctx";
    default:
        return "";
    }
}

/* Register one pvar of an entry (registry lock held). */
static void cnt_shard_var_register(cnt_id_t id, const char *name, int kind, int bind,
                                   cnt_read_what_t what, int verbosity, const char *category,
                                   const char *desc)
{
    static const char *const what_suffix[] = {"", "_hwm", "_lwm"};
    cnt_shard_var_t *var;
    char full_name[128], full_desc[512];
    int var_class, index, ret;
    unsigned flags;

    if (cnt_shard_var_num >= (int)UTIL_ARRAY_SIZE(cnt_shard_vars)) {
        util_error("counter %s: no room for more variables", name);
        return;
    }
    var = &cnt_shard_vars[cnt_shard_var_num];
    *var = (cnt_shard_var_t){.id = id, .what = what, .bind = bind, .kind = kind};
    snprintf(full_name, sizeof(full_name), "%s%s%s", name, what_suffix[what],
             cnt_bind_suffix(bind));

    const char *scope = bind == IBMSG_T_BIND_NO_OBJECT ? "summed over all threads and objects"
                        : bind == IBMSG_T_BIND_THREAD  ? "of one thread"
                        : bind == IBMSG_T_BIND_CONTEXT && cnt_id_owner(id) == IBMSG_T_BIND_ENDPOINT
                            ? "of one context: its endpoints summed"
                            : "of one object";
    if (what == CNT_READ_VALUE) {
        snprintf(full_desc, sizeof(full_desc), "%s (%s)", desc, scope);
    } else {
        const char *mark = what == CNT_READ_HIGH ? "Highest" : "Lowest";
        snprintf(full_desc, sizeof(full_desc),
                 "%s value since its first running handle started of: %s (%s%s)", mark, desc, scope,
                 bind == IBMSG_T_BIND_NO_OBJECT
                     ? (what == CNT_READ_HIGH
                            ? "; the sum of per-shard maxima, an upper bound of the true maximum"
                            : "; the sum of per-shard minima, a lower bound of the true minimum")
                     : "; exact");
    }

    switch (kind) {
    case CNT_KIND_COUNTER:
        var_class = IBMSG_T_PVAR_CLASS_COUNTER;
        flags = CNT_PVAR_ATOMIC;
        break;
    case CNT_KIND_TIMER:
        var_class = IBMSG_T_PVAR_CLASS_TIMER;
        flags = CNT_PVAR_ATOMIC;
        break;
    default:
        var_class = what == CNT_READ_HIGH  ? IBMSG_T_PVAR_CLASS_HIGHWATERMARK
                    : what == CNT_READ_LOW ? IBMSG_T_PVAR_CLASS_LOWWATERMARK
                                           : IBMSG_T_PVAR_CLASS_LEVEL;
        flags =
            what == CNT_READ_VALUE ? CNT_PVAR_READONLY | CNT_PVAR_CONTINUOUS : CNT_PVAR_READONLY;
        break;
    }

    /* A per-object view is one step more detailed (USER_BASIC -> USER_DETAIL), never past ALL. */
    if (bind != IBMSG_T_BIND_NO_OBJECT && (verbosity - IBMSG_T_VERBOSITY_USER_BASIC) % 3 != 2) {
        verbosity++;
    }
    cnt_pvar_desc_t d = {
        .name = full_name,
        .var_class = var_class,
        .datatype = var_class == IBMSG_T_PVAR_CLASS_COUNTER || var_class == IBMSG_T_PVAR_CLASS_TIMER
                        ? IBMSG_T_UNSIGNED_LONG_LONG
                        : IBMSG_T_COUNT,
        .enumtype = IBMSG_T_ENUM_NULL,
        .verbosity = verbosity,
        .bind = bind,
        .flags = flags,
        .category = category,
        .desc = full_desc,
        .read = cnt_shard_var_read,
        .notify = cnt_shard_var_notify,
        .ctx = var,
    };
    ret = cnt_pvar_register(&d, &index);
    if (ret != IBMSG_OK) {
        util_error("counter %s: cannot register: %s", full_name, ibmsg_status_string(ret));
        return;
    }
    cnt_shard_var_num++;
}

static void cnt_shard_entry_register(cnt_id_t id, const char *name, int kind, int owner,
                                     int verbosity, const char *category, const char *desc)
{
    /* An endpoint's block is a child of its context's: the context view sums its endpoints. */
    const int binds[] = {IBMSG_T_BIND_NO_OBJECT, owner,
                         owner == IBMSG_T_BIND_ENDPOINT ? IBMSG_T_BIND_CONTEXT : -1};

    for (size_t b = 0; b < UTIL_ARRAY_SIZE(binds) && binds[b] >= 0; b++) {
        cnt_shard_var_register(id, name, kind, binds[b], CNT_READ_VALUE, verbosity, category, desc);
        if (kind == CNT_KIND_LEVEL_WM) {
            cnt_shard_var_register(id, name, kind, binds[b], CNT_READ_HIGH, verbosity, category,
                                   desc);
            cnt_shard_var_register(id, name, kind, binds[b], CNT_READ_LOW, verbosity, category,
                                   desc);
        }
    }
}

void cnt_shard_vars_register(void)
{
    int index, ret;

#define CNT_CATEGORY(name, parent, desc)                                                \
    ret = cnt_category_register(name, desc, parent, &index);                            \
    if (ret != IBMSG_OK) {                                                              \
        util_error("category %s: cannot register: %s", name, ibmsg_status_string(ret)); \
    }
    CNT_CATEGORY_TABLE(CNT_CATEGORY)
#undef CNT_CATEGORY

#define CNT_REGISTER(id, name, kind, owner, verbosity, category, desc)              \
    cnt_shard_entry_register(CNT_##id, name, CNT_KIND_##kind, IBMSG_T_BIND_##owner, \
                             IBMSG_T_VERBOSITY_##verbosity, category, desc);
    CNT_COUNTER_TABLE(CNT_REGISTER)
#undef CNT_REGISTER
}
