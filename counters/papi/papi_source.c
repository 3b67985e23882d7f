/* PAPI events as a per-thread counter source: see papi_source.h. */
#include "counters/papi/papi_source.h"

#include <ctype.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <ibmsg/status.h>
#include "ibmsg_config.h"

#include "util/compiler.h"
#include "util/fork_locks.h"
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
UTIL_FORK_LOCK(UTIL_FORK_LOCK_PAPI, cnt_papi_lock, 0)
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
/*
 * Whether sets can be attached to other threads. PAPI's perf_event component checks an attach by
 * opening a hardware event on the target, so on a machine without a hardware PMU (this project's
 * emulated guest) every PAPI_attach fails, software events included. Then each thread creates
 * its own set, the first time it uses ibmsg once PAPI events are set up
 * (cnt_papi_thread_begins), and other threads read it under the lock: PAPI reads a set through
 * its owner's context, and perf reports a task's software counts to any reader; hardware events,
 * whose fast reads (rdpmc) are only right on the owner's CPU, cannot be counted on such a
 * machine anyway.
 */
static bool cnt_papi_attach_ok, cnt_papi_attach_probed;
static _Atomic bool cnt_papi_own_sets;

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
    /* An application that initialised PAPI itself keeps its library; thread support is what
       attached sets need (one running set per thread), so it is added when missing. */
    if (PAPI_is_initialized() & PAPI_THREAD_LEVEL_INITED) {
        cnt_papi_lib_ready = true;
        return;
    }
    ret = PAPI_is_initialized() != PAPI_NOT_INITED ? (int)PAPI_VER_CURRENT
                                                   : PAPI_library_init(PAPI_VER_CURRENT);
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

/* Stop (if running), empty and destroy an event set; PAPI_NULL is ignored and stays. */
static void cnt_papi_set_free(int *set)
{
    long long values[CNT_PAPI_MAX_EVENTS];

    if (*set == PAPI_NULL) {
        return;
    }
    PAPI_stop(*set, values); /* PAPI_ENOTRUN for a set never started: nothing to do */
    PAPI_cleanup_eventset(*set);
    PAPI_destroy_eventset(set);
    *set = PAPI_NULL;
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
        cnt_papi_set_free(&set);
    }
    if (ret != PAPI_OK) {
        snprintf(e->reason, sizeof(e->reason), "cannot be counted here (%s)", PAPI_strerror(ret));
        return;
    }
    e->available = true;
}

/* Whether a set holding event code can be attached to a thread (ourselves). Locked. */
static void cnt_papi_probe_attach(int code)
{
    int set = PAPI_NULL, ret = PAPI_create_eventset(&set);

    if (ret == PAPI_OK) {
        ret = PAPI_assign_eventset_component(set, PAPI_get_event_component(code));
    }
    if (ret == PAPI_OK) {
        ret = PAPI_attach(set, (unsigned long)syscall(SYS_gettid));
    }
    cnt_papi_set_free(&set);
    cnt_papi_attach_ok = ret == PAPI_OK;
    atomic_store(&cnt_papi_own_sets, !cnt_papi_attach_ok);
    if (!cnt_papi_attach_ok) {
        util_info("papi: event sets cannot be attached to threads here (%s; no hardware PMU?): "
                  "each thread counts itself from its first use of ibmsg",
                  PAPI_strerror(ret));
    }
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
#if IBMSG_HAVE_PAPI
        if (e->available && !cnt_papi_attach_probed) {
            cnt_papi_probe_attach(cnt_papi_codes[have]);
            cnt_papi_attach_probed = true;
        }
#endif
        have++;
        atomic_store_explicit(&cnt_papi_num, have, memory_order_release);
    }
out_unlock:
    pthread_mutex_unlock(&cnt_papi_lock);
out_free:
    free(copy);
    return ret;
}

/* ---- per-thread counting: event sets attached to threads ------------------------------- */

#if IBMSG_HAVE_PAPI
/*
 * One event set per counted thread, attached to its kernel tid (PAPI_attach: perf_event_open
 * with pid = tid), so any thread may read it. PAPI's per-thread state is not safe for concurrent
 * calls, so every PAPI call below runs under cnt_papi_lock. Sets are never removed from the list:
 * a thread that exits keeps its last values (read once more after the exit: perf keeps the
 * count of a dead task), its set is destroyed (file descriptors closed), and the sum over threads
 * never goes backwards.
 */
typedef struct cnt_papi_tset {
    const void *owner; /* the thread's identity (its shard) */
    long tid;
    int eventset; /* PAPI_NULL once retired */
    bool own;     /* created by the thread itself, not attached (see cnt_papi_attach_ok) */
    uint64_t last[CNT_PAPI_MAX_EVENTS];
    struct cnt_papi_tset *next;
} cnt_papi_tset_t;

static cnt_papi_tset_t *cnt_papi_tsets;

/* Freeze the list (first counted thread) and compute positions. Called with the lock held. */
static void cnt_papi_freeze_locked(void)
{
    if (!cnt_papi_frozen) {
        int num = cnt_papi_num_events();
        for (int i = 0; i < num; i++) {
            cnt_papi_pos[i] = cnt_papi_events[i].available ? cnt_papi_num_avail++ : -1;
        }
        cnt_papi_frozen = true;
    }
}

/* A set counting tid and started: attached to it, or (attach false: tid is the calling thread)
   counting the caller. IBMSG_ERR_IO when PAPI refuses (a thread that already exited cannot be
   attached to). Called with the lock held. */
static int cnt_papi_tset_create(long tid, bool attach, int *set_p)
{
    int set = PAPI_NULL, ret = PAPI_create_eventset(&set), first = -1;

    for (int i = 0; i < cnt_papi_num_events() && first < 0; i++) {
        first = cnt_papi_pos[i] >= 0 ? i : -1;
    }
    if (ret == PAPI_OK && first >= 0) {
        /* Attaching needs the set's component first: that of the events (perf_event). */
        ret = PAPI_assign_eventset_component(set, PAPI_get_event_component(cnt_papi_codes[first]));
    }
    if (ret == PAPI_OK && attach) {
        ret = PAPI_attach(set, (unsigned long)tid);
    }
    for (int i = 0; i < cnt_papi_num_events() && ret == PAPI_OK; i++) {
        if (cnt_papi_pos[i] >= 0) {
            ret = PAPI_add_event(set, cnt_papi_codes[i]);
        }
    }
    if (ret == PAPI_OK && first >= 0) {
        ret = PAPI_start(set);
    }
    if (ret != PAPI_OK) {
        /* A thread that exited meanwhile cannot be attached to: normal, hence debug. Other
           failures are said once. */
        static bool warned;
        if (warned) {
            util_debug("papi: cannot count thread %ld: %s", tid, PAPI_strerror(ret));
        } else {
            util_warn("papi: cannot count thread %ld: %s", tid, PAPI_strerror(ret));
            warned = true;
        }
        cnt_papi_set_free(&set);
        return IBMSG_ERR_IO;
    }
    *set_p = set;
    return IBMSG_OK;
}

/* Read t's set into t->last (values only grow; a failed read keeps the last ones). */
static void cnt_papi_tset_refresh(cnt_papi_tset_t *t)
{
    long long values[CNT_PAPI_MAX_EVENTS];
    int ret;

    if (t->eventset == PAPI_NULL) {
        return;
    }
    ret = PAPI_read(t->eventset, values);
    if (ret != PAPI_OK) {
        util_warn("papi: PAPI_read of thread %ld: %s", t->tid, PAPI_strerror(ret));
        return;
    }
    for (int i = 0; i < cnt_papi_num_avail; i++) {
        if ((uint64_t)values[i] > t->last[i]) {
            t->last[i] = (uint64_t)values[i];
        }
    }
}

/* The thread is gone (or its owner now names another thread): final values, set closed. */
static void cnt_papi_tset_retire(cnt_papi_tset_t *t)
{
    cnt_papi_tset_refresh(t);
    cnt_papi_set_free(&t->eventset);
}

/* The set of (owner, tid), created when alive and new; NULL when it cannot count. Locked. */
static cnt_papi_tset_t *cnt_papi_tset_get(const void *owner, long tid, bool alive)
{
    cnt_papi_tset_t *t, *found = NULL;

    for (t = cnt_papi_tsets; t != NULL; t = t->next) {
        if (t->owner == owner && t->tid == tid) {
            found = t;
        } else if (t->owner == owner && t->eventset != PAPI_NULL) {
            cnt_papi_tset_retire(t); /* the owner was recycled for a new thread */
        }
    }
    t = found;
    /* A new thread: attached to, where PAPI can; else only the thread itself can begin
       counting itself (cnt_papi_thread_begins), and until then it reads as 0. */
    bool self = tid == (long)syscall(SYS_gettid);
    if (t == NULL && alive && (self || cnt_papi_attach_ok)) {
        t = calloc(1, sizeof(*t));
        if (t == NULL) {
            return NULL;
        }
        if (cnt_papi_tset_create(tid, !self, &t->eventset) != IBMSG_OK) {
            free(t);
            return NULL;
        }
        t->owner = owner;
        t->tid = tid;
        t->own = self;
        t->next = cnt_papi_tsets;
        cnt_papi_tsets = t;
    }
    if (t != NULL) {
        if (alive) {
            cnt_papi_tset_refresh(t);
        } else {
            cnt_papi_tset_retire(t);
        }
    }
    return t;
}

/* Positions of events idx[0..n) in a set, or IBMSG_ERR_INVALID. */
static int cnt_papi_positions(int n, const int idx[], int pos[])
{
    if (n < 0 || n > CNT_PAPI_MAX_EVENTS || (n > 0 && idx == NULL)) {
        return IBMSG_ERR_INVALID;
    }
    for (int i = 0; i < n; i++) {
        if (idx[i] < 0 || idx[i] >= cnt_papi_num_events() || cnt_papi_pos[idx[i]] < 0) {
            return IBMSG_ERR_INVALID;
        }
        pos[i] = cnt_papi_pos[idx[i]];
    }
    return IBMSG_OK;
}

int cnt_papi_thread_read(const void *owner, long tid, bool alive, int n, const int idx[],
                         uint64_t totals[])
{
    int pos[CNT_PAPI_MAX_EVENTS], ret;
    cnt_papi_tset_t *t;

    if (owner == NULL || (n > 0 && totals == NULL)) {
        return IBMSG_ERR_INVALID;
    }
    pthread_mutex_lock(&cnt_papi_lock);
    cnt_papi_freeze_locked();
    ret = cnt_papi_positions(n, idx, pos);
    if (ret == IBMSG_OK) {
        t = cnt_papi_tset_get(owner, tid, alive);
        for (int i = 0; i < n; i++) {
            totals[i] = t != NULL ? t->last[pos[i]] : 0; /* never counted: nothing to show */
        }
    }
    pthread_mutex_unlock(&cnt_papi_lock);
    return ret;
}

/* A thread with its own set exits: final values, set closed, PAPI's record of it freed. */
static pthread_key_t cnt_papi_key;
static pthread_once_t cnt_papi_key_once = PTHREAD_ONCE_INIT;

static void cnt_papi_thread_exit_cb(void *arg)
{
    pthread_mutex_lock(&cnt_papi_lock);
    cnt_papi_tset_retire(arg); /* sets are never freed: arg is still in the list */
    PAPI_unregister_thread();
    pthread_mutex_unlock(&cnt_papi_lock);
}

static void cnt_papi_key_create(void)
{
    pthread_key_create(&cnt_papi_key, cnt_papi_thread_exit_cb);
}

void cnt_papi_thread_begins(const void *owner, long tid)
{
    cnt_papi_tset_t *t;

    if (!atomic_load_explicit(&cnt_papi_own_sets, memory_order_relaxed) || owner == NULL) {
        return;
    }
    pthread_once(&cnt_papi_key_once, cnt_papi_key_create);
    pthread_mutex_lock(&cnt_papi_lock);
    cnt_papi_freeze_locked();
    t = cnt_papi_tset_get(owner, tid, true);
    pthread_mutex_unlock(&cnt_papi_lock);
    if (t != NULL && t->own) {
        pthread_setspecific(cnt_papi_key, t);
    }
}

int cnt_papi_sum_read(int nlive, const void *const owners[], const long tids[], int n,
                      const int idx[], uint64_t totals[])
{
    int pos[CNT_PAPI_MAX_EVENTS], ret;

    if (nlive < 0 || (nlive > 0 && (owners == NULL || tids == NULL)) || (n > 0 && totals == NULL)) {
        return IBMSG_ERR_INVALID;
    }
    pthread_mutex_lock(&cnt_papi_lock);
    cnt_papi_freeze_locked();
    ret = cnt_papi_positions(n, idx, pos);
    if (ret == IBMSG_OK) {
        for (int k = 0; k < nlive; k++) {
            cnt_papi_tset_get(owners[k], tids[k], true);
        }
        /* Counted threads no longer live: their final values. */
        for (cnt_papi_tset_t *t = cnt_papi_tsets; t != NULL; t = t->next) {
            bool live = false;
            for (int k = 0; k < nlive && !live && t->eventset != PAPI_NULL; k++) {
                live = owners[k] == t->owner && tids[k] == t->tid;
            }
            if (!live) {
                cnt_papi_tset_retire(t); /* nothing for one retired already */
            }
        }
        for (int i = 0; i < n; i++) {
            totals[i] = 0;
            for (cnt_papi_tset_t *t = cnt_papi_tsets; t != NULL; t = t->next) {
                totals[i] += t->last[pos[i]];
            }
        }
    }
    pthread_mutex_unlock(&cnt_papi_lock);
    return ret;
}
#else
void cnt_papi_thread_begins(const void *owner, long tid)
{
    (void)owner;
    (void)tid;
}

int cnt_papi_thread_read(const void *owner, long tid, bool alive, int n, const int idx[],
                         uint64_t totals[])
{
    (void)owner;
    (void)tid;
    (void)alive;
    (void)n;
    (void)idx;
    (void)totals;
    return IBMSG_ERR_NOT_SUPPORTED;
}

int cnt_papi_sum_read(int nlive, const void *const owners[], const long tids[], int n,
                      const int idx[], uint64_t totals[])
{
    (void)nlive;
    (void)owners;
    (void)tids;
    (void)n;
    (void)idx;
    (void)totals;
    return IBMSG_ERR_NOT_SUPPORTED;
}
#endif
