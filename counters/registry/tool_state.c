/* Life cycle of the tool interface: the registry object, its lock, init and finalize. */
#include "counters/registry/tool_internal.h"

#include <limits.h>

#include "util/fork_locks.h"

/* Tags of handle values (bits 56..63): a handle of one kind is never taken for another. */
#define TAG_SESSION 0x53
#define TAG_PHANDLE 0x50
#define TAG_CHANDLE 0x43
#define TAG_EREG    0x45

cnt_registry_t cnt_reg = {
    .lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP,
    .sessions = {.slot_size = sizeof(cnt_session_t),
                 .free_head = CNT_SLOT_NONE,
                 .tag = TAG_SESSION},
    .phandles = {.slot_size = sizeof(cnt_phandle_t),
                 .free_head = CNT_SLOT_NONE,
                 .tag = TAG_PHANDLE},
    .chandles = {.slot_size = sizeof(cnt_chandle_t),
                 .free_head = CNT_SLOT_NONE,
                 .tag = TAG_CHANDLE},
    .eregs = {.slot_size = sizeof(cnt_ereg_t), .free_head = CNT_SLOT_NONE, .tag = TAG_EREG},
};

UTIL_FORK_LOCK(UTIL_FORK_LOCK_REGISTRY, cnt_reg.lock, 1)

static pthread_once_t builtins_once = PTHREAD_ONCE_INIT;

void cnt_tool_lock(void)
{
    pthread_mutex_lock(&cnt_reg.lock);
}

void cnt_tool_unlock(void)
{
    pthread_mutex_unlock(&cnt_reg.lock);
}

void cnt_tool_ensure_builtins(void)
{
    pthread_once(&builtins_once, cnt_tool_register_builtins);
}

int cnt_registry_initialized(void)
{
    return cnt_tool_initialized();
}

void cnt_registry_set_meters(const cnt_registry_meters_t *meters)
{
    __atomic_store_n(&cnt_reg.meters, meters, __ATOMIC_RELEASE);
}

int cnt_registry_init_thread(int required, int *provided)
{
    (void)required; /* every level is provided: the interface is always thread safe */
    if (provided == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_ensure_builtins();
    cnt_tool_lock();
    if (cnt_reg.refcount == INT_MAX) {
        cnt_tool_unlock();
        return IBMSG_T_ERR_CANNOT_INIT;
    }
    __atomic_store_n(&cnt_reg.refcount, cnt_reg.refcount + 1, __ATOMIC_RELEASE);
    cnt_tool_unlock();
    *provided = IBMSG_T_THREAD_MULTIPLE;
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_finalize(void)
{
    cnt_tool_lock();
    if (cnt_reg.refcount == 0) {
        cnt_tool_unlock();
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (cnt_reg.refcount == 1) {
        /* The last finalize frees what tools left open; indices and names stay. */
        cnt_session_free_all();
        cnt_cvar_handle_free_all();
        cnt_event_free_all();
    }
    __atomic_store_n(&cnt_reg.refcount, cnt_reg.refcount - 1, __ATOMIC_RELEASE);
    cnt_tool_unlock();
    return IBMSG_T_SUCCESS;
}

void cnt_tool_test_set_category_changed(int value)
{
    cnt_tool_lock();
    __atomic_store_n(&cnt_reg.cat_changed, value, __ATOMIC_RELAXED);
    cnt_tool_unlock();
}

void cnt_tool_test_set_limits(uint32_t max_sessions, uint32_t max_handles)
{
    cnt_tool_lock();
    cnt_reg.sessions.max_live = max_sessions;
    cnt_reg.phandles.max_live = max_handles;
    cnt_tool_unlock();
}

void cnt_tool_test_set_event_limit(uint32_t max_registrations)
{
    cnt_tool_lock();
    cnt_reg.eregs.max_live = max_registrations;
    cnt_tool_unlock();
}
