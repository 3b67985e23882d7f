/*
 * Names and registration of the core counters: each one is a performance variable bound to a
 * context (IBMSG_T_BIND_CONTEXT), read from the context's counter block.
 */
#include "core/core_counters.h"

#include <pthread.h>
#include <string.h>

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include "core/core.h"
#include "counters/registry.h"
#include "util/log.h"

typedef struct counter_desc {
    const char *name;
    char cls;
    const char *desc;
} counter_desc_t;

static const counter_desc_t counter_descs[CORE_CNT_LAST] = {
#define CORE_COUNTER_DESC(id, name, cls, desc) [CORE_CNT_##id] = {#name, #cls[0], desc},
    CORE_COUNTER_LIST(CORE_COUNTER_DESC)
#undef CORE_COUNTER_DESC
};

static pthread_once_t counters_once = PTHREAD_ONCE_INIT;

const char *core_counter_name(core_counter_id_t id)
{
    return (unsigned)id < CORE_CNT_LAST ? counter_descs[id].name : NULL;
}

/* obj is the context; the single writer is its thread, so a relaxed load is a clean read. */
static int counter_read(void *obj, int count, void *buf, void *ctx)
{
    const struct ibmsg_context_s *c = obj;
    uintptr_t id = (uintptr_t)ctx;

    if (c == NULL || count != 1) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    *(unsigned long long *)buf = __atomic_load_n(&c->cnt.v[id], __ATOMIC_RELAXED);
    return IBMSG_OK;
}

static int counter_notify(cnt_notify_event_t event, void *obj, int *count, void *ctx)
{
    (void)ctx;
    if (event == CNT_NOTIFY_BIND) {
        if (obj == NULL) {
            return IBMSG_T_ERR_INVALID_HANDLE;
        }
        *count = 1;
    }
    return IBMSG_OK;
}

static void counters_register(void)
{
    for (uintptr_t id = 0; id < CORE_CNT_LAST; id++) {
        const counter_desc_t *d = &counter_descs[id];
        int index, ret;
        cnt_pvar_desc_t pv = {
            .name = d->name,
            .var_class = d->cls == 'C'   ? IBMSG_T_PVAR_CLASS_COUNTER
                         : d->cls == 'L' ? IBMSG_T_PVAR_CLASS_LEVEL
                                         : IBMSG_T_PVAR_CLASS_HIGHWATERMARK,
            .datatype = IBMSG_T_UNSIGNED_LONG_LONG,
            .enumtype = IBMSG_T_ENUM_NULL,
            .verbosity = IBMSG_T_VERBOSITY_USER_BASIC,
            .bind = IBMSG_T_BIND_CONTEXT,
            .flags = CNT_PVAR_CONTINUOUS | (d->cls == 'C' ? 0u : (unsigned)CNT_PVAR_READONLY),
            .category = strncmp(d->name, "core_", 5) == 0 ? "core" : "verbs",
            .desc = d->desc,
            .read = counter_read,
            .notify = counter_notify,
            .ctx = (void *)id,
        };
        ret = cnt_pvar_register(&pv, &index);
        if (ret != IBMSG_OK) {
            util_error("core: cannot register pvar %s: %s", d->name, ibmsg_status_string(ret));
        }
    }
}

void core_counters_init(void)
{
    pthread_once(&counters_once, counters_register);
}
