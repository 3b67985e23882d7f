/* PAPI events as a per-thread counter source: see papi_source.h. */
#include "counters/papi_source.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ibmsg/status.h>
#include "ibmsg_config.h"

#include "counters/source.h"
#include "util/compiler.h"
#include "util/log.h"

#if IBMSG_HAVE_PAPI
#include <papi.h>
#endif

/*
 * cnt_papi_lock protects setup (appending events, PAPI initialisation) and freezing. Entries are
 * filled before cnt_papi_num is published (release), so readers need no lock; after the freeze
 * cnt_papi_pos and cnt_papi_num_avail (below, with PAPI) never change.
 */
static pthread_mutex_t cnt_papi_lock = PTHREAD_MUTEX_INITIALIZER;
static cnt_papi_event_t cnt_papi_events[CNT_PAPI_MAX_EVENTS];
static _Atomic int cnt_papi_num;
static bool cnt_papi_frozen;

int cnt_papi_pvar_name(const char *event, char *buf, size_t len)
{
    size_t o = 0;
    const char *prefix = "papi_";

    if (event == NULL || buf == NULL || len == 0) {
        return IBMSG_ERR_INVALID;
    }
    if (strncmp(event, "PAPI_", 5) == 0) {
        event += 5;
    }
    for (const char *p = prefix; *p != '\0' && o + 1 < len; p++) {
        buf[o++] = *p;
    }
    for (const char *p = event; *p != '\0'; p++) {
        char c = isalnum((unsigned char)*p) ? (char)tolower((unsigned char)*p) : '_';
        if (c == '_' && o > 0 && buf[o - 1] == '_') {
            continue;
        }
        if (o + 1 >= len) {
            buf[o] = '\0';
            return IBMSG_ERR_TRUNCATED;
        }
        buf[o++] = c;
    }
    while (o > 0 && buf[o - 1] == '_') {
        o--;
    }
    buf[o] = '\0';
    return IBMSG_OK;
}

bool cnt_papi_compiled(void)
{
    return IBMSG_HAVE_PAPI != 0;
}

int cnt_papi_num_events(void)
{
    return atomic_load_explicit(&cnt_papi_num, memory_order_acquire);
}

const cnt_papi_event_t *cnt_papi_event(int i)
{
    if (i < 0 || i >= cnt_papi_num_events()) {
        return NULL;
    }
    return &cnt_papi_events[i];
}

size_t cnt_papi_unavailable(char *buf, size_t len)
{
    size_t total = 0;
    int num = cnt_papi_num_events();

    if (buf != NULL && len > 0) {
        buf[0] = '\0';
    }
    for (int i = 0; i < num; i++) {
        const cnt_papi_event_t *e = &cnt_papi_events[i];
        int w;

        if (e->available) {
            continue;
        }
        w = snprintf(buf != NULL && total < len ? buf + total : NULL,
                     buf != NULL && total < len ? len - total : 0, "%s%s: %s",
                     total > 0 ? "; " : "", e->event, e->reason);
        total += w > 0 ? (size_t)w : 0;
    }
    return total;
}

/* ---- PAPI itself ------------------------------------------------------------------------- */

#if IBMSG_HAVE_PAPI
static int cnt_papi_pos[CNT_PAPI_MAX_EVENTS]; /* event -> position in a thread's set, or -1 */
static int cnt_papi_num_avail;
static int cnt_papi_codes[CNT_PAPI_MAX_EVENTS];
static bool cnt_papi_lib_ready;
static char cnt_papi_lib_error[96];

static unsigned long cnt_papi_thread_id(void)
{
    return (unsigned long)pthread_self();
}

/* Called with cnt_papi_lock held. */
static void cnt_papi_lib_init(void)
{
    int ret;

    if (cnt_papi_lib_ready || cnt_papi_lib_error[0] != '\0') {
        return;
    }
    ret = PAPI_library_init(PAPI_VER_CURRENT);
    if (ret != PAPI_VER_CURRENT) {
        snprintf(cnt_papi_lib_error, sizeof(cnt_papi_lib_error), "PAPI_library_init failed: %s",
                 ret > 0 ? "version mismatch" : PAPI_strerror(ret));
        util_warn("papi: %s", cnt_papi_lib_error);
        return;
    }
    ret = PAPI_thread_init(cnt_papi_thread_id);
    if (ret != PAPI_OK) {
        snprintf(cnt_papi_lib_error, sizeof(cnt_papi_lib_error), "PAPI_thread_init failed: %s",
                 PAPI_strerror(ret));
        util_warn("papi: %s", cnt_papi_lib_error);
        return;
    }
    cnt_papi_lib_ready = true;
}

/* Whether PAPI can count the event here: add it to a scratch set (nothing is started). */
static void cnt_papi_check(cnt_papi_event_t *e, int *code)
{
    int set = PAPI_NULL, ret;

    if (!cnt_papi_lib_ready) {
        snprintf(e->reason, sizeof(e->reason), "%s", cnt_papi_lib_error);
        return;
    }
    ret = PAPI_event_name_to_code(e->event, code);
    if (ret != PAPI_OK) {
        snprintf(e->reason, sizeof(e->reason), "no such event here (%s)", PAPI_strerror(ret));
        return;
    }
    ret = PAPI_create_eventset(&set);
    if (ret == PAPI_OK) {
        ret = PAPI_add_event(set, *code);
        PAPI_cleanup_eventset(set);
        PAPI_destroy_eventset(&set);
    }
    if (ret != PAPI_OK) {
        snprintf(e->reason, sizeof(e->reason), "cannot be counted here (%s)", PAPI_strerror(ret));
        return;
    }
    e->available = true;
}
#endif

/* Split the list; on success names[0..*num) point into copy (which is modified). */
static int cnt_papi_split(char *copy, char *names[], int *num)
{
    int n = 0;

    if (copy[strspn(copy, " \t")] == '\0') {
        *num = 0;
        return IBMSG_OK;
    }
    for (char *save = NULL, *tok = strtok_r(copy, ",", &save);; tok = strtok_r(NULL, ",", &save)) {
        char *end;

        if (tok == NULL) {
            break;
        }
        while (*tok == ' ' || *tok == '\t') {
            tok++;
        }
        end = tok + strlen(tok);
        while (end > tok && (end[-1] == ' ' || end[-1] == '\t')) {
            *--end = '\0';
        }
        if (*tok == '\0' || strlen(tok) >= CNT_PAPI_NAME_MAX || n == CNT_PAPI_MAX_EVENTS) {
            return IBMSG_ERR_INVALID;
        }
        names[n++] = tok;
    }
    /* strtok_r skips empty fields ("a,,b"): refuse them, they are typos. */
    *num = n;
    return IBMSG_OK;
}

int cnt_papi_setup(const char *events)
{
    char *names[CNT_PAPI_MAX_EVENTS];
    char *copy;
    int num, ret, have;

    if (events == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (strstr(events, ",,") != NULL || events[0] == ',' ||
        (events[0] != '\0' && events[strlen(events) - 1] == ',')) {
        return IBMSG_ERR_INVALID;
    }
    copy = strdup(events);
    if (copy == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    ret = cnt_papi_split(copy, names, &num);
    if (ret != IBMSG_OK) {
        goto out_free;
    }
    pthread_mutex_lock(&cnt_papi_lock);
    if (cnt_papi_frozen) {
        ret = IBMSG_ERR_BUSY;
        goto out_unlock;
    }
    have = cnt_papi_num_events();
#if IBMSG_HAVE_PAPI
    if (num > 0) {
        cnt_papi_lib_init();
    }
#endif
    for (int i = 0; i < num; i++) {
        cnt_papi_event_t *e;
        bool known = false;

        for (int j = 0; j < have && !known; j++) {
            known = strcmp(cnt_papi_events[j].event, names[i]) == 0;
        }
        if (known) {
            continue;
        }
        if (have == CNT_PAPI_MAX_EVENTS) {
            ret = IBMSG_ERR_INVALID;
            break;
        }
        e = &cnt_papi_events[have];
        memset(e, 0, sizeof(*e));
        snprintf(e->event, sizeof(e->event), "%s", names[i]);
        cnt_papi_pvar_name(e->event, e->pvar_name, sizeof(e->pvar_name));
#if IBMSG_HAVE_PAPI
        cnt_papi_check(e, &cnt_papi_codes[have]);
#else
        snprintf(e->reason, sizeof(e->reason),
                 "PAPI support is not compiled in (built with IBMSG_WITH_PAPI=OFF)");
#endif
        if (!e->available) {
            /* Not an error (a machine without hardware counters is normal), but say it once. */
            util_info("papi: %s unavailable: %s", e->event, e->reason);
        }
        have++;
        atomic_store_explicit(&cnt_papi_num, have, memory_order_release);
    }
out_unlock:
    pthread_mutex_unlock(&cnt_papi_lock);
out_free:
    free(copy);
    return ret;
}

/* ---- per-thread counting ------------------------------------------------------------------ */

#if IBMSG_HAVE_PAPI
typedef struct cnt_papi_thread {
    cnt_source_t source; /* num_counters = cnt_papi_num_avail */
    int eventset;
} cnt_papi_thread_t;

static _Thread_local cnt_papi_thread_t *cnt_papi_self;
static pthread_key_t cnt_papi_key;
static pthread_once_t cnt_papi_key_once = PTHREAD_ONCE_INIT;

static int cnt_papi_thread_snapshot(cnt_source_t *src, uint64_t raw[])
{
    cnt_papi_thread_t *t = util_container_of(src, cnt_papi_thread_t, source);
    long long values[CNT_PAPI_MAX_EVENTS];
    int ret = PAPI_read(t->eventset, values);

    if (ret != PAPI_OK) {
        util_error("papi: PAPI_read: %s", PAPI_strerror(ret));
        return IBMSG_ERR_IO;
    }
    for (int i = 0; i < src->num_counters; i++) {
        raw[i] = (uint64_t)values[i];
    }
    return IBMSG_OK;
}

/* PAPI reads the whole set at once, so reading a few costs the same as all. */
static int cnt_papi_thread_source_read(cnt_source_t *src, int n, const int idx[], uint64_t raw[])
{
    uint64_t all[CNT_PAPI_MAX_EVENTS];
    int ret = cnt_papi_thread_snapshot(src, all);

    if (ret != IBMSG_OK) {
        return ret;
    }
    for (int i = 0; i < n; i++) {
        raw[i] = all[idx[i]];
    }
    return IBMSG_OK;
}

static void cnt_papi_thread_cleanup(cnt_source_t *src)
{
    cnt_papi_thread_t *t = util_container_of(src, cnt_papi_thread_t, source);
    long long values[CNT_PAPI_MAX_EVENTS];

    PAPI_stop(t->eventset, values);
    PAPI_cleanup_eventset(t->eventset);
    PAPI_destroy_eventset(&t->eventset);
}

static const cnt_source_ops_t cnt_papi_thread_ops = {
    .name = "papi",
    .read = cnt_papi_thread_source_read,
    .snapshot = cnt_papi_thread_snapshot,
    .cleanup = cnt_papi_thread_cleanup,
};

/* A thread exits: stop its set so its perf_event descriptors are closed. */
static void cnt_papi_thread_exit_cb(void *arg)
{
    cnt_papi_thread_t *t = arg;

    t->source.ops->cleanup(&t->source);
    PAPI_unregister_thread();
    free(t);
}

static void cnt_papi_key_create(void)
{
    pthread_key_create(&cnt_papi_key, cnt_papi_thread_exit_cb);
}

/* Freeze the list (first counting thread) and compute positions. */
static void cnt_papi_freeze(void)
{
    pthread_mutex_lock(&cnt_papi_lock);
    if (!cnt_papi_frozen) {
        int num = cnt_papi_num_events();
        for (int i = 0; i < num; i++) {
            cnt_papi_pos[i] = cnt_papi_events[i].available ? cnt_papi_num_avail++ : -1;
        }
        cnt_papi_frozen = true;
    }
    pthread_mutex_unlock(&cnt_papi_lock);
}

static UTIL_NOINLINE int cnt_papi_thread_start(void)
{
    cnt_papi_thread_t *t;
    int ret;

    cnt_papi_freeze();
    pthread_once(&cnt_papi_key_once, cnt_papi_key_create);
    t = calloc(1, sizeof(*t));
    if (t == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    t->eventset = PAPI_NULL;
    t->source.ops = &cnt_papi_thread_ops;
    t->source.num_counters = cnt_papi_num_avail;
    ret = PAPI_create_eventset(&t->eventset);
    if (ret != PAPI_OK) {
        goto err_free;
    }
    for (int i = 0; i < cnt_papi_num_events(); i++) {
        if (cnt_papi_pos[i] >= 0) {
            ret = PAPI_add_event(t->eventset, cnt_papi_codes[i]);
            if (ret != PAPI_OK) {
                goto err_destroy_set;
            }
        }
    }
    if (cnt_papi_num_avail > 0) {
        ret = PAPI_start(t->eventset);
        if (ret != PAPI_OK) {
            goto err_destroy_set;
        }
    }
    pthread_setspecific(cnt_papi_key, t);
    cnt_papi_self = t;
    return IBMSG_OK;

err_destroy_set:
    PAPI_cleanup_eventset(t->eventset);
    PAPI_destroy_eventset(&t->eventset);
err_free:
    util_error("papi: cannot start counting in this thread: %s", PAPI_strerror(ret));
    free(t);
    return IBMSG_ERR_IO;
}

int cnt_papi_thread_read(int n, const int idx[], uint64_t totals[])
{
    int pos[CNT_PAPI_MAX_EVENTS];
    int ret;

    if (n < 0 || n > CNT_PAPI_MAX_EVENTS || (n > 0 && (idx == NULL || totals == NULL))) {
        return IBMSG_ERR_INVALID;
    }
    if (cnt_papi_self == NULL) {
        ret = cnt_papi_thread_start();
        if (ret != IBMSG_OK) {
            return ret;
        }
    }
    for (int i = 0; i < n; i++) {
        if (idx[i] < 0 || idx[i] >= cnt_papi_num_events() || cnt_papi_pos[idx[i]] < 0) {
            return IBMSG_ERR_INVALID;
        }
        pos[i] = cnt_papi_pos[idx[i]];
    }
    if (n == 0) {
        return IBMSG_OK;
    }
    return cnt_source_read(&cnt_papi_self->source, n, pos, totals);
}
#else
int cnt_papi_thread_read(int n, const int idx[], uint64_t totals[])
{
    (void)n;
    (void)idx;
    (void)totals;
    return IBMSG_ERR_NOT_SUPPORTED;
}
#endif
