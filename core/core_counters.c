/* Names of the core counters. */
#include "core/core_counters.h"

const char *core_counter_name(core_counter_id_t id)
{
    static const char *const names[CORE_CNT_LAST] = {
#define CORE_COUNTER_NAME(id, name, cls, desc) [CORE_CNT_##id] = #name,
        CORE_COUNTER_LIST(CORE_COUNTER_NAME)
#undef CORE_COUNTER_NAME
    };
    return (unsigned)id < CORE_CNT_LAST ? names[id] : NULL;
}
