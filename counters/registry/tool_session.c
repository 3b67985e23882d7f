/*
 * Sessions and pvar handles: allocation, binding, start/stop/read/write/reset/readreset, and
 * the list forms (ALL_HANDLES and ibmsg_t_pvar_*_list).
 *
 * Session arithmetic (MPICH's model): for COUNTER, AGGREGATE and TIMER a handle keeps acc (what
 * it accumulated while started before) and base (the source's value when it last started); it
 * reads acc + (started ? current - base : 0). Stop folds current - base into acc; reset sets
 * acc = 0 and base = current; write sets acc = value and base = current. LEVEL, SIZE, STATE,
 * PERCENTAGE and GENERIC read the source while started and acc, the value frozen at stop (or at
 * allocation, or reset), while stopped. Watermarks keep in acc the max (min) of the values the
 * source returned at start, at every read and at stop; see ibmsg_t_pvar_read in tool.h.
 *
 * Every state change happens under the registry lock and inside the handle's seqlock, so
 * ibmsg_t_pvar_read, which takes no lock, sees either the state before or after a change.
 */
#include "counters/registry/tool_internal.h"

#include <stdlib.h>
#include <string.h>

enum { VK_CUMULATIVE, VK_WATERMARK, VK_LEVEL };

/* Sessions and handles are counted by whoever installed the meters (registry.h). */
static void meter_sessions(int delta)
{
    const cnt_registry_meters_t *m = cnt_tool_meters();

    if (m != NULL) {
        m->sessions(delta);
    }
}

static void meter_handles(int delta)
{
    const cnt_registry_meters_t *m = cnt_tool_meters();

    if (m != NULL) {
        m->handles(delta);
    }
}

static int value_kind(const cnt_pvar_t *pv)
{
    switch (pv->d.var_class) {
    case IBMSG_T_PVAR_CLASS_COUNTER:
    case IBMSG_T_PVAR_CLASS_AGGREGATE:
    case IBMSG_T_PVAR_CLASS_TIMER:
        return VK_CUMULATIVE;
    case IBMSG_T_PVAR_CLASS_HIGHWATERMARK:
    case IBMSG_T_PVAR_CLASS_LOWWATERMARK:
        return VK_WATERMARK;
    default:
        return VK_LEVEL;
    }
}

static int is_high(const cnt_pvar_t *pv)
{
    return pv->d.var_class == IBMSG_T_PVAR_CLASS_HIGHWATERMARK;
}

static int is_continuous(const cnt_phandle_t *h)
{
    return (h->pvar->d.flags & CNT_PVAR_CONTINUOUS) != 0;
}

static int is_readonly(const cnt_phandle_t *h)
{
    return (h->pvar->d.flags & CNT_PVAR_READONLY) != 0;
}

static size_t value_bytes(const cnt_phandle_t *h)
{
    return (size_t)h->count * h->pvar->elsize;
}

/* Values are kept 8-byte aligned so doubles and long longs line up. */
static size_t round8(size_t n)
{
    return (n + 7) & ~(size_t)7;
}

static int source_read_of(const cnt_pvar_t *pv, void *obj, int count, void *buf)
{
    if (pv->d.read != NULL) {
        return pv->d.read(obj, count, buf, pv->d.ctx);
    }
    cnt_value_load(pv->d.datatype, count, pv->d.ctx, buf);
    return IBMSG_OK;
}

static int source_read(const cnt_phandle_t *h, void *buf)
{
    return source_read_of(h->pvar, h->obj, h->count, buf);
}

static int notify(const cnt_phandle_t *h, cnt_notify_event_t event)
{
    int count = h->count;
    if (h->pvar->d.notify == NULL) {
        return IBMSG_OK;
    }
    return h->pvar->d.notify(event, h->obj, &count, h->pvar->d.ctx);
}

static void seq_begin(cnt_phandle_t *h)
{
    __atomic_store_n(&h->seq, h->seq + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
}

static void seq_end(cnt_phandle_t *h)
{
    __atomic_store_n(&h->seq, h->seq + 1, __ATOMIC_RELEASE);
}

/* A handle's identity (pvar, obj, count, fast_u64, acc, base) and started are written under the
   lock and inside the seqlock, and read by ibmsg_t_pvar_read without the lock, with relaxed
   atomics on both sides: a reader with a stale copy of a freed handle may be reading the slot
   while it is reused, and then sees the seqlock move and retries, and the generation refuses. */
#define H_LOAD(h, field)     __atomic_load_n(&(h)->field, __ATOMIC_RELAXED)
#define H_STORE(h, field, v) __atomic_store_n(&(h)->field, (v), __ATOMIC_RELAXED)

/* Statistics of the registry's own pvars; lock held, relaxed stores for lock-free readers. */
/* ---- Validation ---------------------------------------------------------------------------- */

static cnt_session_t *session_get(ibmsg_t_pvar_session_t session, uint32_t *idx)
{
    return cnt_slot_lookup(&cnt_reg.sessions, (uintptr_t)session, idx);
}

/* The handle if it is live and belongs to session, else NULL. */
static cnt_phandle_t *handle_get(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle,
                                 uint32_t *idx)
{
    cnt_phandle_t *h = cnt_slot_lookup(&cnt_reg.phandles, (uintptr_t)handle, idx);
    if (h == NULL || __atomic_load_n(&h->session, __ATOMIC_RELAXED) != (uintptr_t)session) {
        return NULL;
    }
    return h;
}

/* ---- Sessions ------------------------------------------------------------------------------ */

int ibmsg_t_pvar_session_create(ibmsg_t_pvar_session_t *session)
{
    uint32_t idx;
    cnt_session_t *s;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (session == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    int ret = cnt_slot_alloc(&cnt_reg.sessions, &idx, (void **)&s);
    if (ret != IBMSG_OK) {
        cnt_tool_unlock();
        return ret == IBMSG_ERR_NO_RESOURCE ? IBMSG_T_ERR_OUT_OF_SESSIONS : ret;
    }
    s->head = CNT_SLOT_NONE;
    s->num_handles = 0;
    *session = (ibmsg_t_pvar_session_t)cnt_slot_publish(&cnt_reg.sessions, idx);
    meter_sessions(1);
    cnt_tool_unlock();
    return IBMSG_T_SUCCESS;
}

static void handle_destroy(cnt_session_t *s, cnt_phandle_t *h, uint32_t idx);

static void session_destroy(cnt_session_t *s, uint32_t idx)
{
    while (s->head != CNT_SLOT_NONE) {
        uint32_t hi = s->head;
        handle_destroy(s, cnt_slot_at(&cnt_reg.phandles, hi), hi);
    }
    cnt_slot_release(&cnt_reg.sessions, idx);
    meter_sessions(-1);
}

int ibmsg_t_pvar_session_free(ibmsg_t_pvar_session_t *session)
{
    uint32_t idx;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (session == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    cnt_session_t *s = session_get(*session, &idx);
    if (s == NULL) {
        cnt_tool_unlock();
        return IBMSG_T_ERR_INVALID_SESSION;
    }
    session_destroy(s, idx);
    cnt_tool_unlock();
    *session = IBMSG_T_PVAR_SESSION_NULL;
    return IBMSG_T_SUCCESS;
}

void cnt_session_free_all(void)
{
    uint32_t n = __atomic_load_n(&cnt_reg.sessions.num, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        cnt_session_t *s = cnt_slot_at(&cnt_reg.sessions, i);
        if ((s->hdr.gen & 1u) != 0) {
            session_destroy(s, i);
        }
    }
}

/* ---- Handles ------------------------------------------------------------------------------- */

/* Makes acc and base hold count elements; a smaller old buffer is retired, never freed. */
static int handle_reserve(cnt_phandle_t *h, int count, size_t elsize)
{
    /* At least one word, so a count of 0 still has a buffer (never a NULL to memcpy). */
    size_t need = 2 * round8((size_t)count * elsize) + 8;
    if (need <= h->cap) {
        return IBMSG_OK;
    }
    void *buf = calloc(1, need);
    if (buf == NULL) {
        return IBMSG_T_ERR_MEMORY;
    }
    cnt_retire(h->acc);
    H_STORE(h, acc, buf);
    h->cap = need;
    return IBMSG_OK;
}

/* Sets the state of a new handle: allocation starts continuous ones. */
static int handle_init_state(cnt_phandle_t *h)
{
    size_t bytes = value_bytes(h);
    uint64_t small[8];
    int ret;

    H_STORE(h, base, (void *)((char *)h->acc + round8(bytes)));
    h->fresh = 1;
    cnt_value_clear(IBMSG_T_UNSIGNED_LONG_LONG, (int)(h->cap / 8), h->acc);
    if (is_continuous(h)) {
        ret = notify(h, CNT_NOTIFY_START);
        if (ret != IBMSG_OK) {
            return ret;
        }
    }
    /* Cumulative classes start at 0; the others start from the source's value. Read into a
       buffer of our own (a source writes plainly), then stored element by element. */
    void *cur = bytes <= sizeof(small) ? small : malloc(bytes);
    ret = cur != NULL ? source_read(h, cur) : IBMSG_T_ERR_MEMORY;
    if (ret == IBMSG_OK) {
        cnt_value_store(h->pvar->d.datatype, h->count,
                        value_kind(h->pvar) == VK_CUMULATIVE ? h->base : h->acc, cur);
    }
    if (cur != small) {
        free(cur);
    }
    if (ret != IBMSG_OK) {
        if (is_continuous(h)) {
            notify(h, CNT_NOTIFY_STOP);
        }
        return ret;
    }
    if (is_continuous(h)) {
        H_STORE(h, started, 1);
        h->fresh = 0;
        __atomic_add_fetch((int *)&h->pvar->started_handles, 1, __ATOMIC_RELAXED);
    }
    return IBMSG_OK;
}

int ibmsg_t_pvar_handle_alloc(ibmsg_t_pvar_session_t session, int pvar_index, void *obj_handle,
                              ibmsg_t_pvar_handle_t *handle, int *count)
{
    uint32_t sidx, idx;
    cnt_phandle_t *h;
    void *obj = NULL;
    int n = 1, ret;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (handle == NULL || count == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    cnt_session_t *s = session_get(session, &sidx);
    cnt_pvar_t *pv = cnt_table_get(&cnt_reg.pvars, pvar_index);
    if (s == NULL) {
        ret = IBMSG_T_ERR_INVALID_SESSION;
        goto err_unlock;
    }
    if (pv == NULL) {
        ret = IBMSG_T_ERR_INVALID_INDEX;
        goto err_unlock;
    }
    if (pv->d.bind != IBMSG_T_BIND_NO_OBJECT &&
        (obj_handle == NULL || (obj = *(void **)obj_handle) == NULL)) {
        ret = IBMSG_T_ERR_INVALID_HANDLE;
        goto err_unlock;
    }
    if (pv->d.notify != NULL) {
        ret = pv->d.notify(CNT_NOTIFY_BIND, obj, &n, pv->d.ctx);
        if (ret != IBMSG_OK) {
            goto err_unlock;
        }
        if (n < 0) {
            ret = IBMSG_T_ERR_INVALID;
            goto err_notify_free;
        }
    }
    ret = cnt_slot_alloc(&cnt_reg.phandles, &idx, (void **)&h);
    if (ret != IBMSG_OK) {
        ret = ret == IBMSG_ERR_NO_RESOURCE ? IBMSG_T_ERR_OUT_OF_HANDLES : ret;
        goto err_notify_free;
    }
    seq_begin(h); /* a stale reader of the slot's previous handle retries until seq_end */
    ret = handle_reserve(h, n, pv->elsize);
    if (ret == IBMSG_OK) {
        H_STORE(h, session, (uintptr_t)session);
        H_STORE(h, pvar, pv);
        H_STORE(h, obj, obj);
        H_STORE(h, count, n);
        H_STORE(h, fast_u64,
                n == 1 && value_kind(pv) == VK_CUMULATIVE &&
                    (pv->d.datatype == IBMSG_T_UNSIGNED_LONG_LONG ||
                     pv->d.datatype == IBMSG_T_UNSIGNED_LONG || pv->d.datatype == IBMSG_T_COUNT));
        H_STORE(h, started, 0);
        h->mark = 0;
        ret = handle_init_state(h);
    }
    seq_end(h);
    if (ret != IBMSG_OK) {
        goto err_release_slot;
    }
    h->prev = CNT_SLOT_NONE;
    h->next = s->head;
    if (s->head != CNT_SLOT_NONE) {
        ((cnt_phandle_t *)cnt_slot_at(&cnt_reg.phandles, s->head))->prev = idx;
    }
    s->head = idx;
    s->num_handles++;
    *handle = (ibmsg_t_pvar_handle_t)cnt_slot_publish(&cnt_reg.phandles, idx);
    meter_handles(1);
    cnt_tool_unlock();
    *count = n;
    return IBMSG_T_SUCCESS;

err_release_slot:
    cnt_slot_release(&cnt_reg.phandles, idx);
err_notify_free:
    if (pv->d.notify != NULL) {
        pv->d.notify(CNT_NOTIFY_FREE, obj, &n, pv->d.ctx);
    }
err_unlock:
    cnt_tool_unlock();
    return ret;
}

/* Lock held: stops (if needed), notifies FREE, unlinks and invalidates the handle. */
static void handle_destroy(cnt_session_t *s, cnt_phandle_t *h, uint32_t idx)
{
    if (h->started) {
        seq_begin(h);
        H_STORE(h, started, 0);
        seq_end(h);
        __atomic_sub_fetch((int *)&h->pvar->started_handles, 1, __ATOMIC_RELAXED);
        notify(h, CNT_NOTIFY_STOP);
    }
    notify(h, CNT_NOTIFY_FREE);
    if (h->prev != CNT_SLOT_NONE) {
        ((cnt_phandle_t *)cnt_slot_at(&cnt_reg.phandles, h->prev))->next = h->next;
    } else {
        s->head = h->next;
    }
    if (h->next != CNT_SLOT_NONE) {
        ((cnt_phandle_t *)cnt_slot_at(&cnt_reg.phandles, h->next))->prev = h->prev;
    }
    s->num_handles--;
    seq_begin(h);
    __atomic_store_n(&h->session, (uintptr_t)0, __ATOMIC_RELAXED);
    seq_end(h);
    cnt_slot_release(&cnt_reg.phandles, idx);
    meter_handles(-1);
}

int ibmsg_t_pvar_handle_free(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t *handle)
{
    uint32_t sidx, idx;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (handle == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    cnt_session_t *s = session_get(session, &sidx);
    cnt_phandle_t *h = s != NULL ? handle_get(session, *handle, &idx) : NULL;
    if (h == NULL) {
        cnt_tool_unlock();
        return s == NULL ? IBMSG_T_ERR_INVALID_SESSION : IBMSG_T_ERR_INVALID_HANDLE;
    }
    handle_destroy(s, h, idx);
    cnt_tool_unlock();
    *handle = IBMSG_T_PVAR_HANDLE_NULL;
    return IBMSG_T_SUCCESS;
}

/* ---- Operations on groups of handles: validate all, snapshot all, then change all ----------- */

enum { OP_START, OP_STOP, OP_RESET };

/* Snapshots of the source values of a group, one aligned block. */
typedef struct group {
    cnt_phandle_t **h;
    void **snap;
    int n;
} group_t;

static void group_free(group_t *g)
{
    for (int i = 0; i < g->n; i++) {
        g->h[i]->mark = 0;
    }
    free(g->h);
    free(g->snap);
}

/* Adds h unless the operation skips it (continuous, read-only, already in that state). */
static void group_add(group_t *g, cnt_phandle_t *h, int op)
{
    if (h->mark || (op != OP_RESET && is_continuous(h)) || (op == OP_RESET && is_readonly(h)) ||
        (op == OP_START && h->started) || (op == OP_STOP && !h->started)) {
        return;
    }
    h->mark = 1;
    g->h[g->n++] = h;
}

static int group_snapshot(group_t *g)
{
    size_t total = 0;
    for (int i = 0; i < g->n; i++) {
        total += round8(value_bytes(g->h[i]));
    }
    /* One block: the pointer array, then every handle's values. */
    g->snap = malloc((size_t)g->n * sizeof(void *) + total + 8);
    if (g->snap == NULL) {
        return IBMSG_T_ERR_MEMORY;
    }
    char *p = (char *)(g->snap + g->n);
    for (int i = 0; i < g->n; i++) {
        g->snap[i] = p;
        int ret = source_read(g->h[i], p);
        if (ret != IBMSG_OK) {
            return ret;
        }
        p += round8(value_bytes(g->h[i]));
    }
    return IBMSG_OK;
}

static void handle_apply(cnt_phandle_t *h, int op, const void *cur)
{
    const cnt_pvar_t *pv = h->pvar;
    int vk = value_kind(pv);
    ibmsg_t_datatype_t dt = pv->d.datatype;

    /* Readers copy acc and base without the lock: relaxed atomics on both sides. */
    seq_begin(h);
    switch (op) {
    case OP_START:
        if (vk == VK_CUMULATIVE) {
            cnt_value_store(dt, h->count, h->base, cur);
        } else if (vk == VK_WATERMARK) {
            if (h->fresh) {
                cnt_value_store(dt, h->count, h->acc, cur);
            } else {
                cnt_value_extreme(pv->d.datatype, h->count, h->acc, cur, is_high(pv));
            }
        }
        h->fresh = 0;
        __atomic_store_n(&h->started, 1, __ATOMIC_RELAXED);
        break;
    case OP_STOP:
        if (vk == VK_CUMULATIVE) {
            cnt_value_accumulate(pv->d.datatype, h->count, h->acc, h->acc, cur, h->base);
        } else if (vk == VK_WATERMARK) {
            cnt_value_extreme(pv->d.datatype, h->count, h->acc, cur, is_high(pv));
        } else {
            cnt_value_store(dt, h->count, h->acc, cur);
        }
        __atomic_store_n(&h->started, 0, __ATOMIC_RELAXED);
        break;
    default: /* OP_RESET */
        if (vk == VK_CUMULATIVE) {
            cnt_value_clear(dt, h->count, h->acc);
            cnt_value_store(dt, h->count, h->base, cur);
        } else {
            cnt_value_store(dt, h->count, h->acc, cur);
            h->fresh = !h->started;
        }
        break;
    }
    seq_end(h);
}

/* Runs op over the group: START notifies first so sources can switch on before the snapshot. */
static int group_run(group_t *g, int op)
{
    int notified = 0, ret = IBMSG_OK;

    if (op == OP_START) {
        for (; notified < g->n; notified++) {
            ret = notify(g->h[notified], CNT_NOTIFY_START);
            if (ret != IBMSG_OK) {
                goto err_unnotify;
            }
        }
    }
    ret = group_snapshot(g);
    if (ret != IBMSG_OK) {
        goto err_unnotify;
    }
    for (int i = 0; i < g->n; i++) {
        handle_apply(g->h[i], op, g->snap[i]);
        if (op != OP_RESET) {
            __atomic_add_fetch((int *)&g->h[i]->pvar->started_handles, op == OP_START ? 1 : -1,
                               __ATOMIC_RELAXED);
        }
    }
    if (op == OP_STOP) {
        for (int i = 0; i < g->n; i++) {
            notify(g->h[i], CNT_NOTIFY_STOP);
        }
    }
    return IBMSG_OK;

err_unnotify:
    while (notified-- > 0) {
        notify(g->h[notified], CNT_NOTIFY_STOP);
    }
    return ret;
}

/* Lock held. ALL_HANDLES: every handle of the session that op applies to. */
static int group_all(cnt_session_t *s, int op)
{
    group_t g = {0};
    int ret;

    g.h = malloc((size_t)(s->num_handles + 1) * sizeof(*g.h));
    if (g.h == NULL) {
        return IBMSG_T_ERR_MEMORY;
    }
    for (uint32_t i = s->head; i != CNT_SLOT_NONE;) {
        cnt_phandle_t *h = cnt_slot_at(&cnt_reg.phandles, i);
        group_add(&g, h, op);
        i = h->next;
    }
    ret = group_run(&g, op);
    group_free(&g);
    return ret;
}

/* One handle, or ALL_HANDLES, for start, stop and reset. */
static int handle_op(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle, int op)
{
    uint32_t sidx;
    cnt_phandle_t *h;
    group_t g = {0};
    int ret;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    cnt_session_t *s = session_get(session, &sidx);
    if (s == NULL) {
        ret = IBMSG_T_ERR_INVALID_SESSION;
        goto out_unlock;
    }
    if (handle == IBMSG_T_PVAR_ALL_HANDLES) {
        ret = group_all(s, op);
        goto out_unlock;
    }
    h = handle_get(session, handle, NULL);
    if (h == NULL) {
        ret = IBMSG_T_ERR_INVALID_HANDLE;
    } else if (op != OP_RESET && is_continuous(h)) {
        ret = IBMSG_T_ERR_PVAR_NO_STARTSTOP;
    } else if (op == OP_RESET && is_readonly(h)) {
        ret = IBMSG_T_ERR_PVAR_NO_WRITE;
    } else {
        g.h = &h;
        group_add(&g, h, op);
        ret = group_run(&g, op);
        h->mark = 0;
        free(g.snap);
    }
out_unlock:
    cnt_tool_unlock();
    return ret;
}

int ibmsg_t_pvar_start(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle)
{
    return handle_op(session, handle, OP_START);
}

int ibmsg_t_pvar_stop(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle)
{
    return handle_op(session, handle, OP_STOP);
}

int ibmsg_t_pvar_reset(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle)
{
    return handle_op(session, handle, OP_RESET);
}

static int list_op(ibmsg_t_pvar_session_t session, int num, const ibmsg_t_pvar_handle_t handles[],
                   int op)
{
    group_t g = {0};
    int ret;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (num < 0 || (num > 0 && handles == NULL)) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    if (session_get(session, NULL) == NULL) {
        ret = IBMSG_T_ERR_INVALID_SESSION;
        goto out_unlock;
    }
    for (int i = 0; i < num; i++) {
        if (handle_get(session, handles[i], NULL) == NULL) {
            ret = IBMSG_T_ERR_INVALID_HANDLE;
            goto out_unlock;
        }
    }
    g.h = malloc((size_t)(num + 1) * sizeof(*g.h));
    if (g.h == NULL) {
        ret = IBMSG_T_ERR_MEMORY;
        goto out_unlock;
    }
    for (int i = 0; i < num; i++) {
        group_add(&g, handle_get(session, handles[i], NULL), op);
    }
    ret = group_run(&g, op);
    group_free(&g);
out_unlock:
    cnt_tool_unlock();
    return ret;
}

int ibmsg_t_pvar_start_list(ibmsg_t_pvar_session_t session, int num,
                            const ibmsg_t_pvar_handle_t handles[])
{
    return list_op(session, num, handles, OP_START);
}

int ibmsg_t_pvar_stop_list(ibmsg_t_pvar_session_t session, int num,
                           const ibmsg_t_pvar_handle_t handles[])
{
    return list_op(session, num, handles, OP_STOP);
}

int ibmsg_t_pvar_reset_list(ibmsg_t_pvar_session_t session, int num,
                            const ibmsg_t_pvar_handle_t handles[])
{
    return list_op(session, num, handles, OP_RESET);
}

/* ---- Read, write, readreset ---------------------------------------------------------------- */

static int pvar_read(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle, void *buf)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (session_get(session, NULL) == NULL) {
        return IBMSG_T_ERR_INVALID_SESSION;
    }
    cnt_phandle_t *h = handle_get(session, handle, NULL);
    if (h == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    if (buf == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    for (;;) {
        uint32_t seq = __atomic_load_n(&h->seq, __ATOMIC_ACQUIRE);
        if ((seq & 1u) != 0) {
            continue; /* a writer is inside; it holds the seqlock only briefly */
        }
        /* The identity, then a check that it is one allocation's before a source sees it. */
        const cnt_pvar_t *pv = H_LOAD(h, pvar);
        void *obj = H_LOAD(h, obj);
        int count = H_LOAD(h, count);
        void *acc = H_LOAD(h, acc), *base = H_LOAD(h, base);
        int fast_u64 = H_LOAD(h, fast_u64);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&h->seq, __ATOMIC_RELAXED) != seq) {
            continue;
        }
        int vk = value_kind(pv);
        int ret = IBMSG_OK;
        if (fast_u64) {
            /* The common case (one 64-bit counter) without the per-datatype loops. */
            uint64_t value = __atomic_load_n((const uint64_t *)acc, __ATOMIC_RELAXED);
            if (H_LOAD(h, started)) {
                uint64_t cur;
                if (pv->d.read != NULL) {
                    ret = pv->d.read(obj, 1, &cur, pv->d.ctx);
                } else {
                    cur = __atomic_load_n((const uint64_t *)pv->d.ctx, __ATOMIC_RELAXED);
                }
                if (ret == IBMSG_OK) {
                    value += cur - __atomic_load_n((const uint64_t *)base, __ATOMIC_RELAXED);
                }
            }
            memcpy(buf, &value, sizeof(value));
        } else if (!H_LOAD(h, started)) {
            cnt_value_load(pv->d.datatype, count, acc, buf);
        } else {
            ret = source_read_of(pv, obj, count, buf);
            if (ret == IBMSG_OK && vk == VK_CUMULATIVE) {
                cnt_value_accumulate(pv->d.datatype, count, buf, acc, buf, base);
            } else if (ret == IBMSG_OK && vk == VK_WATERMARK) {
                cnt_value_watermark(pv->d.datatype, count, acc, buf, is_high(pv));
            }
        }
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (__atomic_load_n(&h->seq, __ATOMIC_RELAXED) == seq) {
            /* A handle freed meanwhile reads as invalid, not as stale values. */
            return cnt_slot_still(h, (uintptr_t)handle) ? ret : IBMSG_T_ERR_INVALID_HANDLE;
        }
    }
}

/* Timed by the meters (tool_pvar_read_time, counters/builtin.c). */
int ibmsg_t_pvar_read(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle, void *buf)
{
    const cnt_registry_meters_t *m = cnt_tool_meters();
    uint64_t token = m != NULL ? m->read_start() : 0;
    int ret = pvar_read(session, handle, buf);

    if (util_unlikely(token != 0)) {
        m->read_stop(token);
    }
    return ret;
}

/* The source's own value (tool.h): under the lock, so the handle cannot go meanwhile. */
int ibmsg_t_pvar_read_total(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle, void *buf)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    int ret;
    cnt_tool_lock();
    cnt_phandle_t *h = NULL;
    if (session_get(session, NULL) == NULL) {
        ret = IBMSG_T_ERR_INVALID_SESSION;
    } else if ((h = handle_get(session, handle, NULL)) == NULL) {
        ret = IBMSG_T_ERR_INVALID_HANDLE;
    } else if (buf == NULL) {
        ret = IBMSG_T_ERR_INVALID;
    } else if (!__atomic_load_n(&h->started, __ATOMIC_RELAXED)) {
        ret = IBMSG_T_ERR_NOT_ACCESSIBLE;
    } else {
        ret = source_read(h, buf);
    }
    cnt_tool_unlock();
    return ret;
}

/* Lock held: the checks common to write and readreset. */
static int handle_for_update(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle,
                             const void *buf, cnt_phandle_t **out)
{
    if (session_get(session, NULL) == NULL) {
        return IBMSG_T_ERR_INVALID_SESSION;
    }
    cnt_phandle_t *h = handle_get(session, handle, NULL);
    if (h == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    if (buf == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *out = h;
    return IBMSG_OK;
}

int ibmsg_t_pvar_write(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle,
                       const void *buf)
{
    cnt_phandle_t *h;
    group_t g = {0};

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    int ret = handle_for_update(session, handle, buf, &h);
    if (ret != IBMSG_OK) {
        goto out_unlock;
    }
    if (is_readonly(h)) {
        ret = IBMSG_T_ERR_PVAR_NO_WRITE;
        goto out_unlock;
    }
    const cnt_pvar_t *pv = h->pvar;
    int vk = value_kind(pv);
    if (vk == VK_LEVEL && pv->d.write != NULL) {
        ret = pv->d.write(h->obj, h->count, buf, pv->d.ctx); /* the source owns the value */
        goto out_unlock;
    }
    if (vk == VK_LEVEL && pv->d.read == NULL) {
        cnt_value_store(pv->d.datatype, h->count, pv->d.ctx, buf); /* through the context */
    }
    g.h = &h;
    g.n = 1;
    ret = group_snapshot(&g);
    if (ret == IBMSG_OK) {
        seq_begin(h);
        cnt_value_store(pv->d.datatype, h->count, h->acc, buf);
        if (vk == VK_CUMULATIVE) {
            cnt_value_store(pv->d.datatype, h->count, h->base, g.snap[0]);
        }
        h->fresh = 0;
        seq_end(h);
    }
    free(g.snap);
out_unlock:
    cnt_tool_unlock();
    return ret;
}

int ibmsg_t_pvar_readreset(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle, void *buf)
{
    cnt_phandle_t *h;
    group_t g = {0};

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (handle == IBMSG_T_PVAR_ALL_HANDLES) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    cnt_tool_lock();
    int ret = handle_for_update(session, handle, buf, &h);
    if (ret != IBMSG_OK) {
        goto out_unlock;
    }
    if ((h->pvar->d.flags & CNT_PVAR_ATOMIC) == 0) {
        ret = IBMSG_T_ERR_PVAR_NO_ATOMIC;
        goto out_unlock;
    }
    if (is_readonly(h)) {
        ret = IBMSG_T_ERR_PVAR_NO_WRITE;
        goto out_unlock;
    }
    /* One snapshot gives both the value read and the new base: no event falls in between. */
    g.h = &h;
    g.n = 1;
    ret = group_snapshot(&g);
    if (ret == IBMSG_OK) {
        const cnt_pvar_t *pv = h->pvar;
        int vk = value_kind(pv);
        size_t bytes = value_bytes(h);
        if (!h->started) {
            cnt_value_load(pv->d.datatype, h->count, h->acc, buf);
        } else if (vk == VK_CUMULATIVE) {
            cnt_value_accumulate(pv->d.datatype, h->count, buf, h->acc, g.snap[0], h->base);
        } else if (vk == VK_WATERMARK) {
            cnt_value_load(pv->d.datatype, h->count, h->acc, buf);
            cnt_value_extreme(pv->d.datatype, h->count, buf, g.snap[0], is_high(pv));
        } else {
            memcpy(buf, g.snap[0], bytes);
        }
        handle_apply(h, OP_RESET, g.snap[0]);
    }
    free(g.snap);
out_unlock:
    cnt_tool_unlock();
    return ret;
}
