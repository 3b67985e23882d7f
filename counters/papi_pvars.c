/*
 * PAPI events as performance variables (category ibmsg -> cpu -> papi), plus the papi_events
 * control variable and papi_unavailable_events.
 *
 * Each available event of papi_events is one COUNTER variable, papi_<event in lower_snake>
 * (papi_perf_task_clock, papi_tot_ins), bound to no object, counting the CALLING thread
 * (papi_source.h): start, read and stop its handles on the thread you want counted.
 *
 * When PAPI starts: which events exist can only be learned from PAPI itself, and only events
 * that exist are registered, so PAPI_library_init (about 2 to 4 ms here) runs when these
 * variables are registered, which is the tool interface's first init (never at library load, and
 * never for a program that does not use the tool interface). No counter runs until a handle on a
 * PAPI variable starts or is read: then the calling thread's event set is created and started
 * (and the event list frozen).
 *
 * Events PAPI cannot count here are not registered; papi_unavailable_events says which and why.
 * Without PAPI at build time, papi_events says so and every listed event is unavailable with the
 * reason "PAPI support is not compiled in".
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include "counters/papi_pvars.h"
#include "counters/papi_source.h"
#include "counters/registry.h"
#include "util/log.h"

#define CNT_PAPI_LIST_MAX    1024
#define CNT_PAPI_UNAVAIL_MAX 4096

/* cnt_papi_reg_lock protects cnt_papi_list, cnt_papi_registered_num and registration. */
static pthread_mutex_t cnt_papi_reg_lock = PTHREAD_MUTEX_INITIALIZER;
static char cnt_papi_list[CNT_PAPI_LIST_MAX] = CNT_PAPI_DEFAULT_EVENTS;
static int cnt_papi_registered_num; /* events of papi_source already looked at */
static bool cnt_papi_registered;

static int cnt_papi_var_read_cb(void *obj, int count, void *buf, void *ctx)
{
    int idx = (int)(intptr_t)ctx;
    uint64_t total;
    int ret;

    (void)obj;
    if (count < 1) {
        return IBMSG_T_ERR_INVALID;
    }
    ret = cnt_papi_thread_read(1, &idx, &total);
    if (ret != IBMSG_OK) {
        return IBMSG_T_ERR_NOT_ACCESSIBLE;
    }
    *(unsigned long long *)buf = total;
    return IBMSG_OK;
}

static int cnt_papi_var_notify_cb(cnt_notify_event_t event, void *obj, int *count, void *ctx)
{
    int idx = (int)(intptr_t)ctx;
    uint64_t total;

    (void)obj;
    if (event == CNT_NOTIFY_BIND) {
        *count = 1;
    } else if (event == CNT_NOTIFY_START) {
        /* Make sure this thread counts before the registry takes the start value. */
        if (cnt_papi_thread_read(1, &idx, &total) != IBMSG_OK) {
            return IBMSG_T_ERR_NOT_ACCESSIBLE;
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
        char desc[CNT_PAPI_NAME_MAX + 256];
        int index;
        cnt_pvar_desc_t d = {
            .name = e->pvar_name,
            .var_class = IBMSG_T_PVAR_CLASS_COUNTER,
            .datatype = IBMSG_T_UNSIGNED_LONG_LONG,
            .enumtype = IBMSG_T_ENUM_NULL,
            .verbosity = IBMSG_T_VERBOSITY_TUNER_DETAIL,
            .bind = IBMSG_T_BIND_NO_OBJECT,
            .flags = 0,
            .category = "papi",
            .desc = desc,
            .read = cnt_papi_var_read_cb,
            .notify = cnt_papi_var_notify_cb,
            .ctx = (void *)(intptr_t)i,
        };

        if (!e->available) {
            continue;
        }
        snprintf(desc, sizeof(desc),
                 "PAPI event %s counted for the calling thread: a handle counts the thread that "
                 "starts, reads and stops it (use it from that thread only).",
                 e->event);
        ret = cnt_pvar_register(&d, &index);
        if (ret != IBMSG_OK) {
            util_error("papi: cannot register %s: %s", e->pvar_name, ibmsg_status_string(ret));
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
            "papi", "PAPI events (per thread: each counts the calling thread)", "cpu", &cat);
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
