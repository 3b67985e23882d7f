/*
 * PAPI events as performance variables (category ibmsg -> cpu -> papi), plus the papi_events
 * control variable and papi_unavailable_events.
 *
 * Each available event of papi_events is two COUNTER variables (papi_source.h says how threads
 * are counted): papi_<event in lower_snake> (papi_perf_task_clock, papi_tot_ins), bound to no
 * object, the sum over ibmsg's threads; and papi_thread_<event>, bound to a thread
 * (IBMSG_T_BIND_THREAD, an ibmsg_t_thread_t), that thread's counts. Both may be started, read
 * and stopped from any thread.
 *
 * When PAPI starts: which events exist can only be learned from PAPI itself, and only events
 * that exist are registered, so PAPI_library_init (about 2 to 4 ms here) runs when these
 * variables are registered, which is the tool interface's first init (never at library load, and
 * never for a program that does not use the tool interface). No counter runs until a handle on a
 * PAPI variable is bound or read: then event sets are attached to the threads it covers (and
 * the event list frozen).
 *
 * Events PAPI cannot count here are not registered; papi_unavailable_events says which and why.
 * Without PAPI at build time, papi_events says so and every listed event is unavailable with the
 * reason "PAPI support is not compiled in".
 */
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include "counters/papi/papi_pvars.h"
#include "counters/papi/papi_source.h"
#include "counters/registry/registry.h"
#include "counters/shards/shard.h"
#include "util/fork_locks.h"
#include "util/log.h"

#define CNT_PAPI_LIST_MAX    1024
#define CNT_PAPI_UNAVAIL_MAX 4096

/* cnt_papi_reg_lock protects cnt_papi_list, cnt_papi_registered_num and registration. */
static pthread_mutex_t cnt_papi_reg_lock = PTHREAD_MUTEX_INITIALIZER;
UTIL_FORK_LOCK(UTIL_FORK_LOCK_PAPI_REG, cnt_papi_reg_lock, 0)
static char cnt_papi_list[CNT_PAPI_LIST_MAX] = CNT_PAPI_DEFAULT_EVENTS;
static int cnt_papi_registered_num; /* events of papi_source already looked at */
static bool cnt_papi_registered;

/* The sum over ibmsg's threads (those with a counter shard): the live ones, and the final
   values of those counted before they exited. */
static int cnt_papi_sum_cb(int idx, uint64_t *total)
{
    cnt_shard_t *stack[64], **shards = stack;
    const void *ostack[64], **owners = ostack;
    long tstack[64], *tids = tstack;
    int num = 0, ret;

    cnt_thread_list(64, shards, &num);
    if (num > 64) { /* many threads: a second, exact listing */
        int want = num + 16;
        shards = malloc((size_t)want * sizeof(*shards));
        owners = malloc((size_t)want * sizeof(*owners));
        tids = malloc((size_t)want * sizeof(*tids));
        if (shards == NULL || owners == NULL || tids == NULL) {
            ret = IBMSG_ERR_NO_MEMORY;
            goto out;
        }
        cnt_thread_list(want, shards, &num);
        num = num < want ? num : want;
    }
    for (int k = 0; k < num; k++) {
        owners[k] = shards[k];
        tids[k] = __atomic_load_n(&shards[k]->meta.tid, __ATOMIC_RELAXED);
    }
    ret = cnt_papi_sum_read(num, owners, tids, 1, &idx, total);
out:
    if (shards != stack) {
        free(shards);
        free(owners);
        free(tids);
    }
    return ret;
}

/* A variable's ctx: event index * 2, + 1 for the thread-bound one. */
#define CNT_PAPI_CTX(idx, per_thread) ((void *)(intptr_t)((idx)*2 + (per_thread)))

static int cnt_papi_var_read_cb(void *obj, int count, void *buf, void *ctx)
{
    int idx = (int)((intptr_t)ctx / 2);
    uint64_t total;

    if (count < 1) {
        return IBMSG_T_ERR_INVALID;
    }
    if (((intptr_t)ctx & 1) == 0) {
        if (cnt_papi_sum_cb(idx, &total) != IBMSG_OK) {
            return IBMSG_T_ERR_NOT_ACCESSIBLE;
        }
    } else {
        cnt_shard_t *shard = obj; /* validated and kept by the BIND notification */
        long tid = __atomic_load_n(&shard->meta.tid, __ATOMIC_RELAXED);
        bool alive = __atomic_load_n(&shard->meta.state, __ATOMIC_ACQUIRE) == CNT_SHARD_ACTIVE;
        if (cnt_papi_thread_read(shard, tid, alive, 1, &idx, &total) != IBMSG_OK) {
            return IBMSG_T_ERR_NOT_ACCESSIBLE;
        }
    }
    *(unsigned long long *)buf = total;
    return IBMSG_OK;
}

static int cnt_papi_var_notify_cb(cnt_notify_event_t event, void *obj, int *count, void *ctx)
{
    int per_thread = (int)((intptr_t)ctx & 1);
    cnt_shard_t *shard;

    if (event == CNT_NOTIFY_BIND) {
        /* A thread-bound handle keeps the thread's shard (its identity) until freed. */
        if (per_thread && (obj == NULL || cnt_shard_lookup(IBMSG_T_BIND_THREAD, obj, 1) == NULL)) {
            return IBMSG_T_ERR_INVALID_HANDLE;
        }
        *count = 1;
    } else if (event == CNT_NOTIFY_FREE && per_thread) {
        shard = cnt_shard_lookup(IBMSG_T_BIND_THREAD, obj, 0);
        if (shard != NULL) {
            cnt_shard_unref(shard);
        }
    }
    return IBMSG_OK;
}

/*
 * Claim the events papi_source learned since the last claim: [*from, *to). Called with
 * cnt_papi_reg_lock held; the claimed range is registered after unlocking (the registry may hold
 * its own lock around our cvar write callback, so we never call it with ours held).
 */
static void cnt_papi_claim_new(int *from, int *to)
{
    *from = cnt_papi_registered_num;
    *to = cnt_papi_num_events();
    cnt_papi_registered_num = *to;
}

static int cnt_papi_register_range(int from, int to)
{
    int ret = IBMSG_OK;

    for (int i = from; i < to && ret == IBMSG_OK; i++) {
        const cnt_papi_event_t *e = cnt_papi_event(i);
        if (!e->available) {
            continue;
        }
        for (int per_thread = 0; per_thread < 2 && ret == IBMSG_OK; per_thread++) {
            char name[CNT_PAPI_NAME_MAX + 16], desc[CNT_PAPI_NAME_MAX + 256];
            int index;
            cnt_pvar_desc_t d = {
                .name = name,
                .var_class = IBMSG_T_PVAR_CLASS_COUNTER,
                .datatype = IBMSG_T_UNSIGNED_LONG_LONG,
                .enumtype = IBMSG_T_ENUM_NULL,
                .verbosity = IBMSG_T_VERBOSITY_TUNER_DETAIL,
                .bind = per_thread ? IBMSG_T_BIND_THREAD : IBMSG_T_BIND_NO_OBJECT,
                .flags = 0,
                .category = "papi",
                .desc = desc,
                .read = cnt_papi_var_read_cb,
                .notify = cnt_papi_var_notify_cb,
                .ctx = CNT_PAPI_CTX(i, per_thread),
            };
            /* papi_perf_task_clock (sum) and papi_thread_perf_task_clock (one thread) */
            snprintf(name, sizeof(name), "papi_%s%s", per_thread ? "thread_" : "",
                     e->pvar_name + strlen("papi_"));
            snprintf(desc, sizeof(desc),
                     per_thread ? "PAPI event %s of one thread (bind: ibmsg_t_thread_t), counted "
                                  "from the first time a handle is bound to it; readable from any "
                                  "thread; after the thread exits, its final value."
                                : "PAPI event %s summed over ibmsg's threads (each counted from "
                                  "the first time ibmsg looked at it; threads that exited at "
                                  "their final values): never decreases.",
                     e->event);
            ret = cnt_pvar_register(&d, &index);
            if (ret != IBMSG_OK) {
                util_error("papi: cannot register %s: %s", name, ibmsg_status_string(ret));
            }
        }
    }
    return ret;
}

static int cnt_papi_events_write_cb(void *obj, const void *buf, void *ctx)
{
    const char *list = buf;
    int ret, from = 0, to = 0;

    (void)obj;
    (void)ctx;
    if (strnlen(list, CNT_PAPI_LIST_MAX) == CNT_PAPI_LIST_MAX) {
        return IBMSG_T_ERR_INVALID;
    }
    pthread_mutex_lock(&cnt_papi_reg_lock);
    if (!cnt_papi_registered) {
        /* The environment, at registration: setup follows. */
        snprintf(cnt_papi_list, sizeof(cnt_papi_list), "%s", list);
        pthread_mutex_unlock(&cnt_papi_reg_lock);
        return IBMSG_OK;
    }
    ret = cnt_papi_setup(list);
    if (ret == IBMSG_OK) {
        snprintf(cnt_papi_list, sizeof(cnt_papi_list), "%s", list);
        cnt_papi_claim_new(&from, &to);
    }
    pthread_mutex_unlock(&cnt_papi_reg_lock);
    if (ret == IBMSG_OK) {
        ret = cnt_papi_register_range(from, to);
    }
    if (ret == IBMSG_ERR_BUSY) {
        return IBMSG_T_ERR_CVAR_SET_NOT_NOW;
    }
    return ret == IBMSG_OK ? IBMSG_OK : IBMSG_T_ERR_INVALID;
}

static int cnt_papi_events_read_cb(void *obj, void *buf, void *ctx)
{
    (void)obj;
    (void)ctx;
    pthread_mutex_lock(&cnt_papi_reg_lock);
    memcpy(buf, cnt_papi_list, sizeof(cnt_papi_list));
    pthread_mutex_unlock(&cnt_papi_reg_lock);
    return IBMSG_OK;
}

static int cnt_papi_unavail_read_cb(void *obj, int count, void *buf, void *ctx)
{
    (void)obj;
    (void)ctx;
    if (count < 1) {
        return IBMSG_T_ERR_INVALID;
    }
    cnt_papi_unavailable(buf, (size_t)count);
    return IBMSG_OK;
}

static int cnt_papi_unavail_notify_cb(cnt_notify_event_t event, void *obj, int *count, void *ctx)
{
    (void)obj;
    (void)ctx;
    if (event == CNT_NOTIFY_BIND) {
        /* Room for what is unavailable now; events added later may be cut off. */
        size_t n = cnt_papi_unavailable(NULL, 0) + 1;
        *count = (int)(n < CNT_PAPI_UNAVAIL_MAX ? n : CNT_PAPI_UNAVAIL_MAX);
    }
    return IBMSG_OK;
}

int cnt_papi_pvars_register(void)
{
    cnt_cvar_desc_t events = {
        .name = "papi_events",
        .datatype = IBMSG_T_CHAR,
        .enumtype = IBMSG_T_ENUM_NULL,
        .verbosity = IBMSG_T_VERBOSITY_TUNER_BASIC,
        .bind = IBMSG_T_BIND_NO_OBJECT,
        .scope = IBMSG_T_SCOPE_LOCAL,
        .count = CNT_PAPI_LIST_MAX,
        .category = "papi",
        .desc = cnt_papi_compiled()
                    ? "PAPI events to expose as papi_* variables, comma-separated (PAPI names: "
                      "perf::TASK-CLOCK, PAPI_TOT_INS, ...). Settable until a thread starts "
                      "counting; a write registers the newly named events that PAPI can count "
                      "(variables are never removed)."
                    : "PAPI support is not compiled in (built with IBMSG_WITH_PAPI=OFF): no papi_* "
                      "variables exist; papi_unavailable_events lists the events asked for.",
        .read = cnt_papi_events_read_cb,
        .write = cnt_papi_events_write_cb,
    };
    cnt_pvar_desc_t unavail = {
        .name = "papi_unavailable_events",
        .var_class = IBMSG_T_PVAR_CLASS_GENERIC,
        .datatype = IBMSG_T_CHAR,
        .enumtype = IBMSG_T_ENUM_NULL,
        .verbosity = IBMSG_T_VERBOSITY_TUNER_BASIC,
        .bind = IBMSG_T_BIND_NO_OBJECT,
        .flags = CNT_PVAR_READONLY | CNT_PVAR_CONTINUOUS,
        .category = "papi",
        .desc = "The events of papi_events that cannot be counted here, each as 'event: reason', "
                "separated by '; ' (empty when all can). They have no papi_* variable.",
        .read = cnt_papi_unavail_read_cb,
        .notify = cnt_papi_unavail_notify_cb,
    };
    int ret, index, cat, from = 0, to = 0;
    bool first = false;

    pthread_mutex_lock(&cnt_papi_reg_lock);
    if (cnt_papi_registered) {
        pthread_mutex_unlock(&cnt_papi_reg_lock);
        return IBMSG_OK;
    }
    pthread_mutex_unlock(&cnt_papi_reg_lock);

    ret = cnt_category_register("ibmsg", "Everything ibmsg exports", NULL, &cat);
    if (ret == IBMSG_OK) {
        ret = cnt_category_register("cpu", "CPU-side counters of this process", "ibmsg", &cat);
    }
    if (ret == IBMSG_OK) {
        ret = cnt_category_register(
            "papi", "PAPI events, summed over ibmsg's threads and per thread", "cpu", &cat);
    }
    /* The registry writes IBMSG_PAPI_EVENTS through the write callback here. */
    if (ret == IBMSG_OK) {
        ret = cnt_cvar_register(&events, &index);
    }
    if (ret == IBMSG_OK) {
        ret = cnt_pvar_register(&unavail, &index);
    }
    if (ret != IBMSG_OK) {
        return ret;
    }
    pthread_mutex_lock(&cnt_papi_reg_lock);
    if (!cnt_papi_registered) {
        ret = cnt_papi_setup(cnt_papi_list);
        if (ret != IBMSG_OK) {
            util_warn("papi: event list \"%s\" does not parse; no PAPI variables", cnt_papi_list);
            ret = IBMSG_OK;
        }
        cnt_papi_claim_new(&from, &to);
        cnt_papi_registered = true;
        first = true;
    }
    pthread_mutex_unlock(&cnt_papi_reg_lock);
    return first ? cnt_papi_register_range(from, to) : IBMSG_OK;
}
