/*
 * --counters: one tool-interface session with handles on the ibmsg software counters of the
 * tool's context, the NIC port counters of the port it uses and the PAPI events, all started and
 * stopped together (ibmsg_t_pvar_start_list / stop_list: one instant) around each measured
 * interval, so the deltas cover exactly the timed traffic. The core's and verbs layer's counters
 * of a context are continuous (always counting): they are read just before the start and just
 * after the stop. That is exact too, because they only move when this thread calls into the
 * context, which it does not do in between.
 */
#ifndef IBMSG_PERF_LIB_COUNTERS_H
#define IBMSG_PERF_LIB_COUNTERS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <ibmsg/ibmsg.h>
#include <ibmsg/tool.h>

#define PERF_COUNTERS_MAX 512

typedef struct perf_counter {
    char name[96];
    char category[16]; /* core, verbs, nic, papi */
    ibmsg_t_pvar_handle_t handle;
    bool continuous; /* always running: the delta is taken by reading at start and stop */
    unsigned long long base;
    unsigned long long delta;
} perf_counter_t;

typedef struct perf_counters {
    ibmsg_t_pvar_session_t session;
    int num;
    perf_counter_t c[PERF_COUNTERS_MAX];
    int num_started; /* handles[] that start and stop */
    ibmsg_t_pvar_handle_t handles[PERF_COUNTERS_MAX];
    char port_name[80];  /* "rxe0 port 1", or empty when no port matched */
    char papi_note[512]; /* why PAPI counts nothing, or empty */
} perf_counters_t;

/**
 * Open the session: handles on the COUNTER variables (with every_class, on the variables of every
 * class: --idle-session) of the categories (comma separated; empty: core, verbs, nic, papi)
 * bound to ctx, to its port, or to nothing (PAPI: the calling thread).
 * @return IBMSG_OK or the tool interface's error (printed to err).
 */
int perf_counters_open(perf_counters_t *pc, const char *categories, bool every_class,
                       ibmsg_context_t ctx, FILE *err);

/** Start (stop) every handle at one instant. */
int perf_counters_start(perf_counters_t *pc);
int perf_counters_stop(perf_counters_t *pc);

/** Read every handle's accumulated value into delta. */
int perf_counters_read(perf_counters_t *pc);

/** The delta of a counter by name, or -1 when it has no handle. */
long long perf_counters_get(const perf_counters_t *pc, const char *name);

void perf_counters_close(perf_counters_t *pc);

#endif
