/*
 * --watch: every interval, what the started counters, aggregates and timers counted in it and the
 * current value of the other numeric pvars bound to no object, and with ibmsg's own tool API of
 * those bound to NIC ports on every port, until SIGINT / SIGTERM or --count.
 */
#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "browser/pvars.h"

static volatile sig_atomic_t pvars_interrupted;

static void pvars_on_signal(int sig)
{
    (void)sig;
    pvars_interrupted = 1;
}

/* One watched variable: its handle and its last two readings (8 bytes: the widest type). */
typedef struct pvars_watched {
    pvars_var_t *v;
    char port[96]; /* "dev/port" for a variable bound to a NIC port, else "" */
    ibmsg_t_pvar_handle_t handle;
    bool delta; /* COUNTER, AGGREGATE, TIMER: what it counted in the interval */
    int read_rc;
    unsigned char prev[8], cur[8];
} pvars_watched_t;

/* A numeric variable --filter lets through (its binding is the caller's business). */
static bool pvars_watchable(const pvars_state_t *st, const pvars_var_t *v)
{
    return v->datatype != IBMSG_T_CHAR && pvars_datatype_size(v->datatype) != 0 &&
           (st->filter == NULL || strstr(v->name, st->filter) != NULL);
}

/* The watched variables so far (grown as ports add theirs). */
typedef struct pvars_watch_list {
    pvars_watched_t *ws;
    int num, capacity;
} pvars_watch_list_t;

/*
 * Watches handle (of count elements) on st->pvars[index], on port or "" for no object: as a
 * pvars_port_fn too. Arrays are not watched (the session frees their handle).
 */
static int pvars_watch_add(pvars_state_t *st, int index, const char *port,
                           ibmsg_t_pvar_handle_t handle, int count, void *arg)
{
    pvars_watch_list_t *list = arg;
    pvars_var_t *v = &st->pvars[index];

    if (count != 1 || !pvars_watchable(st, v)) {
        return IBMSG_OK;
    }
    if (list->num == list->capacity) {
        int capacity = list->capacity > 0 ? 2 * list->capacity : 64;
        pvars_watched_t *ws = realloc(list->ws, (size_t)capacity * sizeof(*ws));
        if (ws == NULL) {
            return pvars_no_memory();
        }
        list->ws = ws;
        list->capacity = capacity;
    }
    pvars_watched_t *w = &list->ws[list->num++];
    memset(w, 0, sizeof(*w));
    w->v = v;
    snprintf(w->port, sizeof(w->port), "%s", port);
    w->handle = handle;
    w->delta = v->var_class == IBMSG_T_PVAR_CLASS_COUNTER ||
               v->var_class == IBMSG_T_PVAR_CLASS_AGGREGATE ||
               v->var_class == IBMSG_T_PVAR_CLASS_TIMER;
    return IBMSG_OK;
}

/* The interval's number of a watched variable, as text that is also a JSON number. */
static void pvars_watch_number(const pvars_watched_t *w, char *buf, size_t len)
{
    switch (w->v->datatype) {
    case IBMSG_T_DOUBLE: {
        double c, p;
        memcpy(&c, w->cur, sizeof(c));
        memcpy(&p, w->prev, sizeof(p));
        snprintf(buf, len, "%.9g", w->delta ? c - p : c);
        return;
    }
    case IBMSG_T_INT: {
        int c, p;
        memcpy(&c, w->cur, sizeof(c));
        memcpy(&p, w->prev, sizeof(p));
        snprintf(buf, len, "%lld", w->delta ? (long long)c - p : (long long)c);
        return;
    }
    case IBMSG_T_UNSIGNED: {
        unsigned c, p;
        memcpy(&c, w->cur, sizeof(c));
        memcpy(&p, w->prev, sizeof(p));
        snprintf(buf, len, "%u", w->delta ? c - p : c); /* wraps exactly */
        return;
    }
    case IBMSG_T_COUNT: {
        long long c, p;
        memcpy(&c, w->cur, sizeof(c));
        memcpy(&p, w->prev, sizeof(p));
        snprintf(buf, len, "%lld", w->delta ? c - p : c);
        return;
    }
    default: { /* UNSIGNED_LONG, UNSIGNED_LONG_LONG: 8 bytes on LP64 */
        unsigned long long c, p;
        memcpy(&c, w->cur, sizeof(c));
        memcpy(&p, w->prev, sizeof(p));
        snprintf(buf, len, "%llu", w->delta ? c - p : c);
        return;
    }
    }
}

static void pvars_watch_print(const pvars_state_t *st, const pvars_watched_t *ws, int num,
                              long interval, double seconds, double elapsed)
{
    char number[64];

    if (st->json) {
        printf("{\"interval\":%ld,\"seconds\":%.6f,\"elapsed\":%.6f,\"variables\":[", interval,
               seconds, elapsed);
    } else {
        printf("# interval %ld: %.3f s (%.3f s since start)\n", interval, seconds, elapsed);
        printf("%-56s %-14s %-5s %s\n", "variable", "class", "what", "number");
    }
    for (int i = 0; i < num; i++) {
        const pvars_watched_t *w = &ws[i];
        const char *what = w->delta ? "delta" : "value";
        char name[256];

        /* Text: one column for the variable, "name@dev/port" on a port. */
        snprintf(name, sizeof(name), "%s%s%s", w->v->name, w->port[0] != '\0' ? "@" : "", w->port);
        if (st->json) {
            printf("%s{\"name\":", i > 0 ? "," : "");
            pvars_json_string(w->v->name);
            if (w->port[0] != '\0') {
                printf(",\"port\":");
                pvars_json_string(w->port);
            }
            printf(",\"class\":\"%s\",", pvars_class_name(w->v->var_class));
            if (w->read_rc != IBMSG_OK) {
                printf("\"unavailable\":");
                pvars_json_string(ibmsg_status_string(w->read_rc));
            } else {
                pvars_watch_number(w, number, sizeof(number));
                printf("\"%s\":%s", what, number);
            }
            putchar('}');
        } else if (w->read_rc != IBMSG_OK) {
            printf("%-56s %-14s %-5s unavailable: %s\n", name, pvars_class_name(w->v->var_class),
                   "-", ibmsg_status_string(w->read_rc));
        } else {
            pvars_watch_number(w, number, sizeof(number));
            printf("%-56s %-14s %-5s %s\n", name, pvars_class_name(w->v->var_class), what, number);
        }
    }
    printf(st->json ? "]}\n" : "\n");
    fflush(stdout);
}

static double pvars_seconds(const struct timespec *a, const struct timespec *b)
{
    return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) * 1e-9;
}

/* Read every watched handle into cur (a failure is the variable's state, not the watch's). */
static int pvars_watch_read(ibmsg_t_pvar_session_t session, pvars_watched_t *ws, int num)
{
    for (int i = 0; i < num; i++) {
        ws[i].read_rc = pvars_api->pvar_read(session, ws[i].handle, ws[i].cur);
        if (ws[i].read_rc != IBMSG_OK && !pvars_unavailable(ws[i].read_rc)) {
            return pvars_fail(ws[i].read_rc, "pvar_read(%s%s%s)", ws[i].v->name,
                              ws[i].port[0] != '\0' ? "@" : "", ws[i].port);
        }
    }
    return IBMSG_OK;
}

/*
 * Every numeric pvar bound to no object (and matching --filter) gets a handle in one session,
 * with ibmsg's own tool API also every one bound to a NIC port on every port that has it; all
 * are started at one instant, then every interval all are read: counters, aggregates and
 * timers print what they counted in the interval, the other classes their value. SIGINT or
 * SIGTERM (or --count intervals) ends it with a final line.
 */
int pvars_watch(pvars_state_t *st)
{
    ibmsg_t_pvar_session_t session = IBMSG_T_PVAR_SESSION_NULL;
    pvars_watch_list_t list = {NULL, 0, 0};
    pvars_watched_t *ws;
    struct sigaction sa, old_int, old_term;
    struct timespec start, last, now;
    long interval = 0;
    int num, rc;

    rc = pvars_api->pvar_session_create(&session);
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "pvar_session_create");
    }
    for (int i = 0; i < st->num_pvars && rc == IBMSG_OK; i++) {
        ibmsg_t_pvar_handle_t handle = IBMSG_T_PVAR_HANDLE_NULL;
        int count = 0;

        if (st->pvars[i].bind != IBMSG_T_BIND_NO_OBJECT || !pvars_watchable(st, &st->pvars[i])) {
            continue;
        }
        int alloc_rc = pvars_api->pvar_handle_alloc(session, i, NULL, &handle, &count);
        if (alloc_rc == IBMSG_OK) {
            rc = pvars_watch_add(st, i, "", handle, count, &list);
        } else if (!pvars_unavailable(alloc_rc)) {
            rc = pvars_fail(alloc_rc, "pvar_handle_alloc(%s)", st->pvars[i].name);
        }
    }
    if (rc == IBMSG_OK && st->mpit == NULL) {
        rc = pvars_port_handles(st, session, pvars_watch_add, &list);
    }
    ws = list.ws;
    num = list.num;
    if (rc == IBMSG_OK) {
        rc = pvars_api->pvar_start(session, IBMSG_T_PVAR_ALL_HANDLES);
        if (rc != IBMSG_OK) {
            pvars_fail(rc, "pvar_start(ALL_HANDLES)");
        }
    }
    if (rc == IBMSG_OK) {
        rc = pvars_watch_read(session, ws, num);
    }
    for (int i = 0; i < num; i++) {
        memcpy(ws[i].prev, ws[i].cur, sizeof(ws[i].cur));
    }

    memset(&sa, 0, sizeof(sa));
    sa.sa_handler = pvars_on_signal; /* no SA_RESTART: the sleep returns EINTR */
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    clock_gettime(CLOCK_MONOTONIC, &start);
    last = start;
    while (rc == IBMSG_OK && !pvars_interrupted && (st->count == 0 || interval < st->count)) {
        double at = st->watch * (double)(interval + 1);
        struct timespec deadline = start;
        deadline.tv_sec += (time_t)at;
        deadline.tv_nsec += (long)((at - (double)(time_t)at) * 1e9);
        if (deadline.tv_nsec >= 1000000000L) {
            deadline.tv_sec++;
            deadline.tv_nsec -= 1000000000L;
        }
        int err = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL);
        if (err == EINTR || pvars_interrupted) {
            break;
        }
        rc = pvars_watch_read(session, ws, num);
        if (rc != IBMSG_OK) {
            break;
        }
        clock_gettime(CLOCK_MONOTONIC, &now);
        interval++;
        pvars_watch_print(st, ws, num, interval, pvars_seconds(&last, &now),
                          pvars_seconds(&start, &now));
        last = now;
        for (int i = 0; i < num; i++) {
            memcpy(ws[i].prev, ws[i].cur, sizeof(ws[i].cur));
        }
    }
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (rc == IBMSG_OK) {
        if (st->json) {
            printf("{\"end\":true,\"intervals\":%ld,\"interrupted\":%s,\"variables\":%d}\n",
                   interval, pvars_interrupted ? "true" : "false", num);
        } else {
            printf("# end: %ld intervals of %d variables%s\n", interval, num,
                   pvars_interrupted ? " (interrupted)" : "");
        }
    }
    /* Freeing the session frees (and stops) its handles. */
    int free_rc = pvars_api->pvar_session_free(&session);
    if (free_rc != IBMSG_OK && rc == IBMSG_OK) {
        rc = pvars_fail(free_rc, "pvar_session_free");
    }
    free(list.ws);
    return rc;
}
