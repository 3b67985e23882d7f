/*
 * MPI-4 events: timestamp sources and event types (registered by the layers that raise them,
 * registry.h), registrations with their callbacks, and the delivery of instances. tool.h
 * ("Events") states the semantics.
 *
 * Locking. Types, sources and registrations change under the registry lock. A raise takes the
 * source's mutex to stamp the instance and to claim the source (busy) or queue behind the thread
 * that has it; it then takes the registry lock to pick each registration's callback and count it
 * in flight, and again to count it back, but holds no lock while a callback runs. The two locks
 * are never held together. A registration freed while in flight keeps its slot (so the delivering
 * thread can still count it back) until the last callback returns; then its free callback runs.
 *
 * Instances live on the delivering thread's stack. Their handles are serial numbers looked up in
 * the thread's list of instances under delivery, so a saved instance, or one passed to another
 * thread, is an invalid handle rather than a dangling pointer.
 */
#include "counters/registry/tool_internal.h"

#include "util/fork_locks.h"
#include "util/log.h"
#include "util/string_out.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define TAG_INSTANCE    0x49ull
#define INSTANCE_SERIAL ((1ull << 56) - 1)
#define LEVEL_MAX       IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE
#define DELIVERY_STACK  8

/* An instance under delivery in this thread (a callback runs with it). */
typedef struct cnt_einst {
    uintptr_t handle;
    const cnt_event_type_t *type;
    const void *data;
    long long ts;
    int required; /* the level the raising context requires */
    struct cnt_einst *up;
} cnt_einst_t;

static _Thread_local cnt_einst_t *einst_top;
static uint64_t einst_serial; /* atomic */

static int level_valid(int level)
{
    return level >= IBMSG_T_CB_REQUIRE_NONE && level <= LEVEL_MAX;
}

static int info_valid(ibmsg_info_t info)
{
    int n;
    return info == IBMSG_INFO_NULL || ibmsg_info_get_nkeys(info, &n) == IBMSG_OK;
}

/* ibmsg uses no hints: every info it returns is new and empty. */
static int info_new(ibmsg_info_t *info)
{
    return ibmsg_info_create(info) == IBMSG_OK ? IBMSG_T_SUCCESS : IBMSG_T_ERR_MEMORY;
}

static int str_same(const char *a, const char *b)
{
    return strcmp(a != NULL ? a : "", b != NULL ? b : "") == 0;
}

/* ---- Sources ------------------------------------------------------------------------------- */

static long long monotonic_ns(void *ctx)
{
    struct timespec ts;

    (void)ctx;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static int source_same(const cnt_source_t *s, const cnt_source_desc_t *d)
{
    return str_same(s->d.desc, d->desc) && s->d.ordering == d->ordering &&
           s->d.ticks_per_second == d->ticks_per_second && s->d.max_ticks == d->max_ticks &&
           s->d.clock == d->clock && s->d.ctx == d->ctx;
}

static int source_register_locked(const cnt_source_desc_t *d, int *source_index)
{
    int index, ret;

    if (d == NULL || source_index == NULL || d->name == NULL || d->name[0] == '\0' ||
        d->clock == NULL || d->ticks_per_second <= 0 || d->max_ticks <= 0 ||
        (d->ordering != IBMSG_T_SOURCE_ORDERED && d->ordering != IBMSG_T_SOURCE_UNORDERED)) {
        return IBMSG_ERR_INVALID;
    }
    index = cnt_name_map_find(&cnt_reg.source_names, d->name, 0);
    if (index >= 0) {
        if (!source_same(cnt_table_get(&cnt_reg.sources, index), d)) {
            return IBMSG_ERR_EXISTS;
        }
        *source_index = index;
        return IBMSG_OK;
    }
    if (cnt_table_num(&cnt_reg.sources) >= CNT_EVENT_MAX_SOURCES) {
        return IBMSG_ERR_NO_RESOURCE; /* a registration counts its drops per source */
    }
    cnt_source_t *s = calloc(1, sizeof(*s));
    if (s == NULL) {
        return IBMSG_T_ERR_MEMORY;
    }
    s->d = *d;
    s->d.name = strdup(d->name);
    s->d.desc = d->desc != NULL ? strdup(d->desc) : NULL;
    s->ring = calloc(CNT_EVENT_RING, sizeof(*s->ring));
    if (s->d.name == NULL || (d->desc != NULL && s->d.desc == NULL) || s->ring == NULL) {
        ret = IBMSG_T_ERR_MEMORY;
        goto err_free_source;
    }
    pthread_mutex_init(&s->lock, NULL);
    s->index = cnt_table_num(&cnt_reg.sources);
    ret = cnt_name_map_insert(&cnt_reg.source_names, s->d.name, 0, s->index);
    if (ret != IBMSG_OK) {
        goto err_destroy_lock;
    }
    ret = cnt_table_append(&cnt_reg.sources, s, &index);
    if (ret != IBMSG_OK) {
        goto err_destroy_lock; /* unreachable below CNT_EVENT_MAX_SOURCES */
    }
    *source_index = index;
    return IBMSG_OK;

err_destroy_lock:
    pthread_mutex_destroy(&s->lock);
err_free_source:
    free(s->ring);
    free((char *)s->d.name);
    free((char *)s->d.desc);
    free(s);
    return ret;
}

int cnt_source_register(const cnt_source_desc_t *desc, int *source_index)
{
    cnt_tool_ensure_builtins();
    cnt_tool_lock();
    int ret = source_register_locked(desc, source_index);
    cnt_tool_unlock();
    return ret;
}

/*
 * The sources' locks across fork() (util/fork_locks.h), in index order: the registry's lock,
 * taken before them, keeps the table as it is. The child has no thread delivering: no source is
 * busy there, and what was queued is the parent's to deliver.
 */
static cnt_source_t *source_at(int i)
{
    return cnt_table_get(&cnt_reg.sources, i);
}

static void sources_take(void)
{
    for (int i = 0, n = cnt_table_num(&cnt_reg.sources); i < n; i++) {
        pthread_mutex_lock(&source_at(i)->lock);
    }
}

static void sources_release(void)
{
    for (int i = cnt_table_num(&cnt_reg.sources) - 1; i >= 0; i--) {
        pthread_mutex_unlock(&source_at(i)->lock);
    }
}

static void sources_renew(void)
{
    for (int i = 0, n = cnt_table_num(&cnt_reg.sources); i < n; i++) {
        cnt_source_t *s = source_at(i);
        pthread_mutex_init(&s->lock, NULL);
        s->busy = 0;
        s->tail = s->head;
    }
}

static const util_fork_set_t sources_fork = {sources_take, sources_release, sources_renew};

__attribute__((constructor)) static void sources_fork_at_load(void)
{
    util_fork_set_add(UTIL_FORK_LOCK_EV_SOURCES, &sources_fork);
}

void cnt_event_register_builtins(void)
{
    static const cnt_source_desc_t monotonic = {
        .name = "ibmsg_monotonic",
        .desc = "CLOCK_MONOTONIC in nanoseconds",
        .ordering = IBMSG_T_SOURCE_ORDERED,
        .ticks_per_second = 1000000000LL,
        .max_ticks = LLONG_MAX,
        .clock = monotonic_ns,
    };
    cnt_pvar_desc_t delivered = {
        .name = "tool_events_delivered",
        .var_class = IBMSG_T_PVAR_CLASS_COUNTER,
        .datatype = IBMSG_T_UNSIGNED_LONG_LONG,
        .verbosity = IBMSG_T_VERBOSITY_TUNER_DETAIL,
        .bind = IBMSG_T_BIND_NO_OBJECT,
        .flags = CNT_PVAR_READONLY,
        .category = "tool",
        .desc = "Event instances passed to a callback (one per registration reached)",
        .ctx = &cnt_reg.events_delivered,
    };
    cnt_pvar_desc_t dropped = delivered;
    int index;

    dropped.name = "tool_events_dropped";
    dropped.desc = "Event instances dropped for a registration: it had no callback valid where "
                   "the event was raised, or the source's ring was full";
    dropped.ctx = &cnt_reg.events_dropped;
    if (source_register_locked(&monotonic, &index) != IBMSG_OK ||
        cnt_pvar_register_locked(&delivered, &index) != IBMSG_OK ||
        cnt_pvar_register_locked(&dropped, &index) != IBMSG_OK) {
        util_error("tool: cannot register the event built-ins");
    }
}

int ibmsg_t_source_get_num(int *num_sources)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (num_sources == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *num_sources = cnt_table_num(&cnt_reg.sources);
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                            ibmsg_t_source_order_t *ordering, long long *ticks_per_second,
                            long long *max_ticks, ibmsg_info_t *info)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_source_t *s = cnt_table_get(&cnt_reg.sources, source_index);
    if (s == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    if (info != NULL && info_new(info) != IBMSG_T_SUCCESS) {
        return IBMSG_T_ERR_MEMORY;
    }
    util_string_out(s->d.name, name, name_len);
    util_string_out(s->d.desc, desc, desc_len);
    if (ordering != NULL) {
        *ordering = s->d.ordering;
    }
    if (ticks_per_second != NULL) {
        *ticks_per_second = s->d.ticks_per_second;
    }
    if (max_ticks != NULL) {
        *max_ticks = s->d.max_ticks;
    }
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_source_get_timestamp(int source_index, long long *timestamp)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_source_t *s = cnt_table_get(&cnt_reg.sources, source_index);
    if (s == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    if (timestamp == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *timestamp = s->d.clock(s->d.ctx);
    return IBMSG_T_SUCCESS;
}

/* ---- Event types --------------------------------------------------------------------------- */

static int event_desc_valid(const cnt_event_desc_t *d)
{
    if (d->name == NULL || d->name[0] == '\0' || d->verbosity < IBMSG_T_VERBOSITY_USER_BASIC ||
        d->verbosity > IBMSG_T_VERBOSITY_MPIDEV_ALL || d->bind < IBMSG_T_BIND_NO_OBJECT ||
        d->bind >= IBMSG_T_BIND_LAST || d->num_elements < 0 ||
        d->num_elements > CNT_EVENT_MAX_ELEMENTS ||
        (d->num_elements > 0 && (d->datatypes == NULL || d->element_names == NULL)) ||
        cnt_table_get(&cnt_reg.sources, d->source) == NULL ||
        (d->enumtype != IBMSG_T_ENUM_NULL && cnt_enum_lookup(d->enumtype) == NULL)) {
        return 0;
    }
    for (int i = 0; i < d->num_elements; i++) {
        if (cnt_datatype_size(d->datatypes[i]) == 0 || d->element_names[i] == NULL ||
            d->element_names[i][0] == '\0') {
            return 0;
        }
    }
    return 1;
}

/* The elements as a C struct: each at its natural alignment, the whole padded to the largest. */
static size_t event_layout(const cnt_event_desc_t *d, long displs[])
{
    size_t off = 0, align = 1;

    for (int i = 0; i < d->num_elements; i++) {
        size_t sz = cnt_datatype_size(d->datatypes[i]);
        off = (off + sz - 1) / sz * sz;
        displs[i] = (long)off;
        off += sz;
        align = UTIL_MAX(align, sz);
    }
    return (off + align - 1) / align * align;
}

static int event_same(const cnt_event_type_t *t, const cnt_event_desc_t *d, const cnt_event_t *ev)
{
    if (t->ev != ev || t->d.verbosity != d->verbosity || t->d.bind != d->bind ||
        t->d.num_elements != d->num_elements || t->d.enumtype != d->enumtype ||
        t->d.source != d->source || !str_same(t->d.category, d->category) ||
        !str_same(t->d.desc, d->desc)) {
        return 0;
    }
    for (int i = 0; i < d->num_elements; i++) {
        if (t->datatypes[i] != d->datatypes[i] ||
            strcmp(t->element_names[i], d->element_names[i]) != 0) {
            return 0;
        }
    }
    return 1;
}

static void event_type_free(cnt_event_type_t *t)
{
    for (int i = 0; i < CNT_EVENT_MAX_ELEMENTS; i++) {
        free(t->element_names[i]);
    }
    free((char *)t->d.name);
    free((char *)t->d.category);
    free((char *)t->d.desc);
    free(t);
}

static int event_register_locked(const cnt_event_desc_t *desc, cnt_event_t *ev)
{
    long displs[CNT_EVENT_MAX_ELEMENTS];
    int cat = -1, index, ret;

    if (desc == NULL || ev == NULL || !event_desc_valid(desc) ||
        event_layout(desc, displs) > CNT_EVENT_MAX_BYTES) {
        return IBMSG_ERR_INVALID;
    }
    if (desc->category != NULL &&
        (cat = cnt_name_map_find(&cnt_reg.cat_names, desc->category, 0)) < 0) {
        return IBMSG_T_ERR_INVALID_NAME;
    }
    index = cnt_name_map_find(&cnt_reg.event_names, desc->name, 0);
    if (index >= 0) {
        /* A second context registering the same type shares the first one's index. */
        if (!event_same(cnt_table_get(&cnt_reg.events, index), desc, ev)) {
            return IBMSG_ERR_EXISTS;
        }
        return IBMSG_OK;
    }
    if (__atomic_load_n(&ev->index, __ATOMIC_RELAXED) >= 0) {
        return IBMSG_ERR_EXISTS; /* one raise object names one type */
    }

    cnt_event_type_t *t = calloc(1, sizeof(*t));
    if (t == NULL) {
        return IBMSG_T_ERR_MEMORY;
    }
    t->d = *desc;
    t->d.name = strdup(desc->name);
    t->d.category = desc->category != NULL ? strdup(desc->category) : NULL;
    t->d.desc = desc->desc != NULL ? strdup(desc->desc) : NULL;
    t->d.datatypes = t->datatypes;
    t->d.element_names = (const char *const *)t->element_names;
    t->ev = ev;
    t->size = event_layout(desc, t->displs);
    ret = IBMSG_OK;
    for (int i = 0; i < desc->num_elements; i++) {
        t->datatypes[i] = desc->datatypes[i];
        t->element_names[i] = strdup(desc->element_names[i]);
        ret = t->element_names[i] == NULL ? IBMSG_T_ERR_MEMORY : ret;
    }
    if (ret != IBMSG_OK || t->d.name == NULL || (desc->category != NULL && t->d.category == NULL) ||
        (desc->desc != NULL && t->d.desc == NULL)) {
        ret = IBMSG_T_ERR_MEMORY;
        goto err_free_type;
    }
    t->index = cnt_table_num(&cnt_reg.events);
    ret = cnt_name_map_insert(&cnt_reg.event_names, t->d.name, 0, t->index);
    if (ret != IBMSG_OK) {
        goto err_free_type;
    }
    ret = cnt_table_append(&cnt_reg.events, t, &index);
    if (ret != IBMSG_OK) {
        goto err_free_type; /* only past 1M types; the stale name entry is then unreachable */
    }
    if (cat >= 0 && cnt_category_add_event_locked(cat, index) != IBMSG_OK) {
        util_error("event %s: cannot join category %s", t->d.name, t->d.category);
    }
    __atomic_store_n(&ev->index, index, __ATOMIC_RELEASE);
    return IBMSG_OK;

err_free_type:
    event_type_free(t);
    return ret;
}

int cnt_event_register(const cnt_event_desc_t *desc, cnt_event_t *ev)
{
    cnt_tool_ensure_builtins();
    cnt_tool_lock();
    int ret = event_register_locked(desc, ev);
    cnt_tool_unlock();
    return ret;
}

int ibmsg_t_event_get_num(int *num_events)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (num_events == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *num_events = cnt_table_num(&cnt_reg.events);
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                           ibmsg_t_datatype_t array_of_datatypes[], long array_of_displacements[],
                           int *num_elements, ibmsg_t_enum_t *enumtype, ibmsg_info_t *info,
                           char *desc, int *desc_len, int *bind)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_event_type_t *t = cnt_table_get(&cnt_reg.events, event_index);
    if (t == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    if (num_elements != NULL && *num_elements < 0) {
        return IBMSG_T_ERR_INVALID;
    }
    if (info != NULL && info_new(info) != IBMSG_T_SUCCESS) {
        return IBMSG_T_ERR_MEMORY;
    }
    util_string_out(t->d.name, name, name_len);
    util_string_out(t->d.desc, desc, desc_len);
    if (num_elements != NULL) {
        int n = UTIL_MIN(*num_elements, t->d.num_elements);
        for (int i = 0; i < n; i++) {
            if (array_of_datatypes != NULL) {
                array_of_datatypes[i] = t->datatypes[i];
            }
            if (array_of_displacements != NULL) {
                array_of_displacements[i] = t->displs[i];
            }
        }
        *num_elements = t->d.num_elements;
    }
    if (verbosity != NULL) {
        *verbosity = t->d.verbosity;
    }
    if (enumtype != NULL) {
        *enumtype = t->d.enumtype;
    }
    if (bind != NULL) {
        *bind = t->d.bind;
    }
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_event_get_element_name(int event_index, int element_index, char *name, int *name_len)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_event_type_t *t = cnt_table_get(&cnt_reg.events, event_index);
    if (t == NULL || element_index < 0 || element_index >= t->d.num_elements) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    util_string_out(t->element_names[element_index], name, name_len);
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_event_get_index(const char *name, int *event_index)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (name == NULL || event_index == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    int index = cnt_name_map_find(&cnt_reg.event_names, name, 0);
    if (index >= cnt_table_num(&cnt_reg.events)) {
        index = -1;
    }
    cnt_tool_unlock();
    if (index < 0) {
        return IBMSG_T_ERR_INVALID_NAME;
    }
    *event_index = index;
    return IBMSG_T_SUCCESS;
}

/* ---- Registrations ------------------------------------------------------------------------- */

/* The live registration a handle names, or NULL (lock held). */
static cnt_ereg_t *ereg_get(ibmsg_t_event_registration_t handle)
{
    cnt_ereg_t *r = cnt_slot_lookup(&cnt_reg.eregs, (uintptr_t)handle, NULL);
    return r != NULL && !r->freed ? r : NULL;
}

static void listeners_publish(cnt_event_type_t *t)
{
    __atomic_store_n(&t->ev->listeners, t->listeners.num, __ATOMIC_RELEASE);
}

/* Stop delivering to r: it leaves its type's listeners (lock held). */
static void ereg_unlink(cnt_ereg_t *r)
{
    cnt_idx_list_t *l = &r->type->listeners;
    uint32_t slot = (uint32_t)r->handle;

    for (int i = 0; i < l->num; i++) {
        if ((uint32_t)l->v[i] == slot) {
            memmove(&l->v[i], &l->v[i + 1], (size_t)(l->num - i - 1) * sizeof(int));
            l->num--;
            break;
        }
    }
    listeners_publish(r->type);
    __atomic_store_n(&r->freed, 1, __ATOMIC_RELAXED);
}

int ibmsg_t_event_handle_alloc(int event_index, void *obj_handle, ibmsg_info_t info,
                               ibmsg_t_event_registration_t *event_registration)
{
    uint32_t idx;
    void *slot;
    int ret;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_event_type_t *t = cnt_table_get(&cnt_reg.events, event_index);
    if (t == NULL) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    if (event_registration == NULL || !info_valid(info)) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_tool_lock();
    ret = cnt_slot_alloc(&cnt_reg.eregs, &idx, &slot);
    if (ret != IBMSG_OK) {
        cnt_tool_unlock();
        return ret == IBMSG_ERR_NO_RESOURCE ? IBMSG_T_ERR_OUT_OF_HANDLES : ret;
    }
    cnt_ereg_t *r = slot;
    memset((char *)r + sizeof(r->hdr), 0, sizeof(*r) - sizeof(r->hdr));
    r->type = t;
    /* Bound types: the object, or NULL for every object (an ibmsg extension). */
    if (t->d.bind != IBMSG_T_BIND_NO_OBJECT && obj_handle != NULL) {
        r->obj = *(void *const *)obj_handle;
    }
    if (cnt_idx_list_push(&t->listeners, (int)idx) != IBMSG_OK) {
        cnt_slot_release(&cnt_reg.eregs, idx);
        cnt_tool_unlock();
        return IBMSG_T_ERR_MEMORY;
    }
    r->handle = cnt_slot_publish(&cnt_reg.eregs, idx);
    listeners_publish(t);
    cnt_tool_unlock();
    *event_registration = (ibmsg_t_event_registration_t)r->handle;
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_event_handle_set_info(ibmsg_t_event_registration_t event_registration,
                                  ibmsg_info_t info)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    int ret = ereg_get(event_registration) == NULL ? IBMSG_T_ERR_INVALID_HANDLE
              : !info_valid(info)                  ? IBMSG_T_ERR_INVALID
                                                   : IBMSG_T_SUCCESS;
    cnt_tool_unlock();
    return ret;
}

int ibmsg_t_event_handle_get_info(ibmsg_t_event_registration_t event_registration,
                                  ibmsg_info_t *info_used)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    int ret = ereg_get(event_registration) == NULL ? IBMSG_T_ERR_INVALID_HANDLE
              : info_used == NULL                  ? IBMSG_T_ERR_INVALID
                                                   : IBMSG_T_SUCCESS;
    cnt_tool_unlock();
    return ret == IBMSG_T_SUCCESS ? info_new(info_used) : ret;
}

int ibmsg_t_event_register_callback(ibmsg_t_event_registration_t event_registration,
                                    ibmsg_t_cb_safety_t cb_safety, ibmsg_info_t info,
                                    void *user_data, ibmsg_t_event_cb_function_t event_cb_function)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    cnt_ereg_t *r = ereg_get(event_registration);
    int ret = r == NULL                                           ? IBMSG_T_ERR_INVALID_HANDLE
              : !level_valid((int)cb_safety) || !info_valid(info) ? IBMSG_T_ERR_INVALID
                                                                  : IBMSG_T_SUCCESS;
    if (ret == IBMSG_T_SUCCESS) {
        /* One callback per level: a new one replaces it, NULL removes it. */
        r->cb[cb_safety].fn = event_cb_function;
        r->cb[cb_safety].user_data = event_cb_function != NULL ? user_data : NULL;
    }
    cnt_tool_unlock();
    return ret;
}

int ibmsg_t_event_callback_set_info(ibmsg_t_event_registration_t event_registration,
                                    ibmsg_t_cb_safety_t cb_safety, ibmsg_info_t info)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    int ret = ereg_get(event_registration) == NULL                ? IBMSG_T_ERR_INVALID_HANDLE
              : !level_valid((int)cb_safety) || !info_valid(info) ? IBMSG_T_ERR_INVALID
                                                                  : IBMSG_T_SUCCESS;
    cnt_tool_unlock();
    return ret;
}

int ibmsg_t_event_callback_get_info(ibmsg_t_event_registration_t event_registration,
                                    ibmsg_t_cb_safety_t cb_safety, ibmsg_info_t *info_used)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    int ret = ereg_get(event_registration) == NULL                ? IBMSG_T_ERR_INVALID_HANDLE
              : !level_valid((int)cb_safety) || info_used == NULL ? IBMSG_T_ERR_INVALID
                                                                  : IBMSG_T_SUCCESS;
    cnt_tool_unlock();
    return ret == IBMSG_T_SUCCESS ? info_new(info_used) : ret;
}

int ibmsg_t_event_set_dropped_handler(ibmsg_t_event_registration_t event_registration,
                                      ibmsg_t_event_dropped_cb_function_t dropped_cb_function)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    cnt_ereg_t *r = ereg_get(event_registration);
    if (r != NULL) {
        /* The handler hears of the drops since it was set. */
        r->dropped_fn = dropped_cb_function;
        memset(r->dropped, 0, sizeof(r->dropped));
    }
    cnt_tool_unlock();
    return r != NULL ? IBMSG_T_SUCCESS : IBMSG_T_ERR_INVALID_HANDLE;
}

/* The level free callbacks run at here: the delivery's inside a callback, else none. */
static int current_level(void)
{
    return einst_top != NULL ? einst_top->required : IBMSG_T_CB_REQUIRE_NONE;
}

int ibmsg_t_event_handle_free(ibmsg_t_event_registration_t event_registration, void *user_data,
                              ibmsg_t_event_free_cb_function_t free_cb_function)
{
    int now;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    cnt_tool_lock();
    cnt_ereg_t *r = ereg_get(event_registration);
    if (r == NULL) {
        cnt_tool_unlock();
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    ereg_unlink(r);
    r->free_fn = free_cb_function;
    r->free_user_data = user_data;
    /* In flight: the thread whose callback returns last releases it and calls free_fn. */
    now = r->inflight == 0;
    if (now) {
        cnt_slot_release(&cnt_reg.eregs, (uint32_t)r->handle);
    }
    cnt_tool_unlock();
    if (now && free_cb_function != NULL) {
        free_cb_function(event_registration, (ibmsg_t_cb_safety_t)current_level(), user_data);
    }
    return IBMSG_T_SUCCESS;
}

void cnt_event_free_all(void)
{
    uint32_t n = __atomic_load_n(&cnt_reg.eregs.num, __ATOMIC_ACQUIRE);

    for (uint32_t i = 0; i < n; i++) {
        cnt_ereg_t *r = cnt_slot_at(&cnt_reg.eregs, i);
        if ((r->hdr.gen & 1u) != 0 && !r->freed) {
            ereg_unlink(r);
            r->free_fn = NULL; /* the tool left it: nobody to tell */
            if (r->inflight == 0) {
                cnt_slot_release(&cnt_reg.eregs, i);
            }
        }
    }
}

/* ---- Raising and delivering ---------------------------------------------------------------- */

static void drop_count(cnt_ereg_t *r, int source)
{
    if (r->dropped[source] < INT_MAX) {
        r->dropped[source]++;
    }
    __atomic_fetch_add(&cnt_reg.events_dropped, 1, __ATOMIC_RELAXED);
}

/* The registration's callback for a context that requires level required, or -1 (lock held). */
static int ereg_pick(const cnt_ereg_t *r, int required)
{
    for (int level = required; level <= LEVEL_MAX; level++) {
        if (r->cb[level].fn != NULL) {
            return level;
        }
    }
    return -1;
}

static int ereg_wants(const cnt_ereg_t *r, const void *obj)
{
    return r->obj == NULL || r->obj == obj;
}

/* One registration's part in the delivery of an instance. */
typedef struct delivery {
    cnt_ereg_t *reg;
    uintptr_t handle;
    ibmsg_t_event_cb_function_t fn;
    void *user_data;
    int level;
    ibmsg_t_event_dropped_cb_function_t dropped_fn;
    int dropped;
    int released; /* freed meanwhile and released here: free_fn is due */
    ibmsg_t_event_free_cb_function_t free_fn;
    void *free_user_data;
} delivery_t;

/* A queued instance that found the ring full: a drop for each registration it would reach. */
static void drop_all(const cnt_event_type_t *t, const void *obj)
{
    cnt_tool_lock();
    for (int i = 0; i < t->listeners.num; i++) {
        cnt_ereg_t *r = cnt_slot_at(&cnt_reg.eregs, (uint32_t)t->listeners.v[i]);
        if (ereg_wants(r, obj)) {
            drop_count(r, t->d.source);
        }
    }
    cnt_tool_unlock();
}

/* Pick each listening registration's callback and count it in flight (takes the lock). */
static int deliveries_take(const cnt_event_type_t *t, const void *obj, int required,
                           delivery_t *calls, int limit)
{
    int n = 0;

    for (int i = 0; i < t->listeners.num; i++) {
        cnt_ereg_t *r = cnt_slot_at(&cnt_reg.eregs, (uint32_t)t->listeners.v[i]);
        int level;

        if (!ereg_wants(r, obj)) {
            continue;
        }
        level = ereg_pick(r, required);
        if (level < 0 || n == limit) {
            drop_count(r, t->d.source);
            continue;
        }
        delivery_t *c = &calls[n++];
        memset(c, 0, sizeof(*c));
        c->reg = r;
        c->handle = r->handle;
        c->fn = r->cb[level].fn;
        c->user_data = r->cb[level].user_data;
        c->level = level;
        c->dropped_fn = r->dropped_fn;
        if (r->dropped_fn != NULL && r->dropped[t->d.source] > 0) {
            c->dropped = r->dropped[t->d.source]; /* told now, before this instance */
            r->dropped[t->d.source] = 0;
        }
        r->inflight++;
    }
    return n;
}

/* Count the callbacks back; a registration freed meanwhile is released by its last one. */
static void deliveries_return(delivery_t *calls, int n)
{
    for (int k = 0; k < n; k++) {
        cnt_ereg_t *r = calls[k].reg;
        if (--r->inflight == 0 && r->freed) {
            calls[k].released = 1;
            calls[k].free_fn = r->free_fn;
            calls[k].free_user_data = r->free_user_data;
            cnt_slot_release(&cnt_reg.eregs, (uint32_t)r->handle);
        }
    }
}

static void deliver(const cnt_event_type_t *t, const void *obj, long long ts, int required,
                    const void *data)
{
    delivery_t stack[DELIVERY_STACK], *calls = stack;
    int n, limit = DELIVERY_STACK;
    const int source = t->d.source;

    cnt_tool_lock();
    if (t->listeners.num > DELIVERY_STACK) {
        delivery_t *heap = malloc((size_t)t->listeners.num * sizeof(*heap));
        if (heap != NULL) { /* else the registrations past the first few count a drop */
            calls = heap;
            limit = t->listeners.num;
        }
    }
    n = deliveries_take(t, obj, required, calls, limit);
    cnt_tool_unlock();

    cnt_einst_t inst = {
        .handle = (uintptr_t)(TAG_INSTANCE << 56) |
                  (__atomic_add_fetch(&einst_serial, 1, __ATOMIC_RELAXED) & INSTANCE_SERIAL),
        .type = t,
        .data = data,
        .ts = ts,
        .required = required,
        .up = einst_top,
    };
    einst_top = &inst;
    for (int k = 0; k < n; k++) {
        const delivery_t *c = &calls[k];
        ibmsg_t_event_registration_t h = (ibmsg_t_event_registration_t)c->handle;

        /* Freed since the pick (by a callback, or another thread): it does not start now. */
        if (__atomic_load_n(&c->reg->freed, __ATOMIC_RELAXED)) {
            continue;
        }
        if (c->dropped > 0) {
            c->dropped_fn(c->dropped, h, source, (ibmsg_t_cb_safety_t)c->level, c->user_data);
        }
        __atomic_fetch_add(&cnt_reg.events_delivered, 1, __ATOMIC_RELAXED);
        c->fn((ibmsg_t_event_instance_t)inst.handle, h, (ibmsg_t_cb_safety_t)c->level,
              c->user_data);
    }
    einst_top = inst.up;

    cnt_tool_lock();
    deliveries_return(calls, n);
    cnt_tool_unlock();
    for (int k = 0; k < n; k++) {
        if (calls[k].released && calls[k].free_fn != NULL) {
            calls[k].free_fn((ibmsg_t_event_registration_t)calls[k].handle,
                             (ibmsg_t_cb_safety_t)required, calls[k].free_user_data);
        }
    }
    if (calls != stack) {
        free(calls);
    }
}

void cnt_event_raise(cnt_event_t *ev, const void *obj, const void *buf,
                     ibmsg_t_cb_safety_t required)
{
    const cnt_event_type_t *t =
        cnt_table_get(&cnt_reg.events, __atomic_load_n(&ev->index, __ATOMIC_ACQUIRE));
    cnt_event_queued_t q;

    if (t == NULL || t->ev != ev || !level_valid((int)required)) {
        return;
    }
    cnt_source_t *s = cnt_table_get(&cnt_reg.sources, t->d.source);
    pthread_mutex_lock(&s->lock);
    /* Stamped under the source's lock: the ring's order is the timestamps' order. */
    long long ts = s->d.clock(s->d.ctx);
    if (s->busy) {
        if (s->head - s->tail == CNT_EVENT_RING) {
            pthread_mutex_unlock(&s->lock);
            drop_all(t, obj);
            return;
        }
        cnt_event_queued_t *e = &s->ring[s->head++ % CNT_EVENT_RING];
        e->type = t;
        e->obj = obj;
        e->ts = ts;
        e->required = (int)required;
        memcpy(e->data, buf, t->size);
        pthread_mutex_unlock(&s->lock);
        return; /* the thread delivering this source delivers it after its own */
    }
    s->busy = 1;
    pthread_mutex_unlock(&s->lock);
    deliver(t, obj, ts, (int)required, buf);
    for (;;) {
        pthread_mutex_lock(&s->lock);
        if (s->head == s->tail) {
            s->busy = 0;
            pthread_mutex_unlock(&s->lock);
            return;
        }
        q = s->ring[s->tail++ % CNT_EVENT_RING];
        pthread_mutex_unlock(&s->lock);
        deliver(q.type, q.obj, q.ts, q.required, q.data);
    }
}

/* ---- Instances ----------------------------------------------------------------------------- */

static const cnt_einst_t *einst_get(ibmsg_t_event_instance_t handle)
{
    for (const cnt_einst_t *e = einst_top; e != NULL; e = e->up) {
        if (e->handle == (uintptr_t)handle) {
            return e;
        }
    }
    return NULL;
}

int ibmsg_t_event_read(ibmsg_t_event_instance_t event_instance, int element_index, void *buffer)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_einst_t *e = einst_get(event_instance);
    if (e == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    if (element_index < 0 || element_index >= e->type->d.num_elements) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    if (buffer == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    memcpy(buffer, (const char *)e->data + e->type->displs[element_index],
           cnt_datatype_size(e->type->datatypes[element_index]));
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_event_copy(ibmsg_t_event_instance_t event_instance, void *buffer)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_einst_t *e = einst_get(event_instance);
    if (e == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    if (buffer == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    memcpy(buffer, e->data, e->type->size);
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_event_get_timestamp(ibmsg_t_event_instance_t event_instance, long long *event_timestamp)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_einst_t *e = einst_get(event_instance);
    if (e == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    if (event_timestamp == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *event_timestamp = e->ts;
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_event_get_source(ibmsg_t_event_instance_t event_instance, int *source_index)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    const cnt_einst_t *e = einst_get(event_instance);
    if (e == NULL) {
        return IBMSG_T_ERR_INVALID_HANDLE;
    }
    if (source_index == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *source_index = e->type->d.source;
    return IBMSG_T_SUCCESS;
}

int cnt_event_test_set_dropped(ibmsg_t_event_registration_t reg, int source, int count)
{
    cnt_tool_lock();
    cnt_ereg_t *r = ereg_get(reg);
    if (r != NULL && source >= 0 && source < CNT_EVENT_MAX_SOURCES) {
        r->dropped[source] = count;
    }
    cnt_tool_unlock();
    return r != NULL ? IBMSG_OK : IBMSG_T_ERR_INVALID_HANDLE;
}
