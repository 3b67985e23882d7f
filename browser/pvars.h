/*
 * The variable browser's (ibmsg_pvars) shared state and internal functions. What the tool
 * interface describes is loaded once into a pvars_state_t (pvars_load.c), optionally read
 * (pvars_read.c), then printed as a tree, values or JSON (pvars_print.c) or watched
 * (pvars_watch.c), always through the backend in use, pvars_api (pvars_backend.c; --mpit swaps
 * in the MPI_T one, pvars_mpit_launch.c). Single-threaded: the browser is one thread.
 */
#ifndef IBMSG_PERF_PVARS_H
#define IBMSG_PERF_PVARS_H

#include <ibmsg/tool.h>

#include <stdbool.h>
#include <stddef.h>

#include "browser/pvars_api.h"

typedef struct pvars_enum_item {
    int value;
    char *name;
} pvars_enum_item_t;

typedef struct pvars_enum {
    char *name;
    int num_items;
    pvars_enum_item_t *items;
} pvars_enum_t;

/* One variable (control or performance) as the tool interface describes it. */
typedef struct pvars_var {
    int kind; /* IBMSG_T_KIND_CVAR or IBMSG_T_KIND_PVAR */
    int index;
    char *name;
    char *desc;
    int verbosity;
    int var_class; /* pvars */
    ibmsg_t_datatype_t datatype;
    pvars_enum_t *enumtype; /* NULL when the variable has none */
    int bind;
    int scope;                        /* cvars */
    int readonly, continuous, atomic; /* pvars */
    bool in_category;
    /* --read: the value, or why there is none. */
    bool read;
    int read_rc;
    int count;
    void *value;
    bool read_on_ports; /* BIND_PORT: read on the ports that have it (pvars_state_t.bound) */
} pvars_var_t;

/* --read: one variable bound to a NIC port, read on one port. */
typedef struct pvars_bound {
    pvars_var_t v; /* a copy of the variable's description with its own value */
    char port[96]; /* "rxe0/1" */
} pvars_bound_t;

typedef struct pvars_category {
    char *name;
    char *desc;
    int num_cvars, num_pvars, num_categories;
    int *cvars, *pvars, *categories;
} pvars_category_t;

typedef struct pvars_state {
    bool json;
    bool read;
    bool totals;        /* --read read each source's total (ibmsg's API), not an interval */
    const char *mpit;   /* --mpit: the MPI variant, NULL for ibmsg's own tool API */
    double watch;       /* --watch: seconds per interval, 0: no watch */
    long count;         /* --count: intervals to watch, 0: until interrupted */
    const char *filter; /* --filter: only variables whose name contains it */
    bool events;        /* --events: list the event types and timestamp sources */
    char **follow_argv; /* --follow: the command to run and follow (NULL-terminated), or NULL */
    int num_cvars, num_pvars, num_categories, num_roots;
    pvars_var_t *cvars;
    pvars_var_t *pvars;
    pvars_category_t *categories;
    int *roots;
    int num_bound;
    pvars_bound_t *bound;
} pvars_state_t;

/* ---- Backend (pvars_backend.c) ----------------------------------------------------------------
 */

/* ibmsg's tool API, the default backend. */
extern const pvars_api_t pvars_native_api;
/* The backend in use: &pvars_native_api, or the MPI_T one --mpit sets up. */
extern const pvars_api_t *pvars_api;

/* The name of a binding in the backend in use. */
const char *pvars_bind_name(int bind);

/* ---- Errors (pvars_errors.c) ------------------------------------------------------------------
 */

/* Reports a failed tool call once, where it is found; returns rc for the caller to pass up. */
int pvars_fail(int rc, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports running out of memory; returns IBMSG_ERR_NO_MEMORY. */
int pvars_no_memory(void);
/* Not accessible now / not supported: the variable's state, reported with it. */
bool pvars_unavailable(int rc);

/* ---- Names of constants (pvars_names.c) -------------------------------------------------------
 */

const char *pvars_datatype_name(ibmsg_t_datatype_t datatype);
/* The size of one element, 0 for an unknown datatype. */
size_t pvars_datatype_size(ibmsg_t_datatype_t datatype);
const char *pvars_class_name(int var_class);
const char *pvars_scope_name(int scope);
const char *pvars_verbosity_name(int verbosity);

/* ---- Loading and reading (pvars_load.c, pvars_read.c) -----------------------------------------
 */

/* Loads every variable, category and root the backend describes into st (reported on failure). */
int pvars_load(pvars_state_t *st);
/* Frees what pvars_load and the reads allocated. */
void pvars_cleanup(pvars_state_t *st);
/* --read: the values of the cvars / pvars bound to no object (pvars: one session, all started). */
int pvars_cvars_read(pvars_state_t *st);
int pvars_pvars_read(pvars_state_t *st);

/* What pvars_port_handles calls for each handle it allocated: variable index, "dev/port", the
 * handle (in the session, freed with it) and its element count; anything but IBMSG_OK stops. */
typedef int (*pvars_port_fn)(pvars_state_t *st, int index, const char *port,
                             ibmsg_t_pvar_handle_t handle, int count, void *arg);
/* Allocates in session a handle on every variable bound to a NIC port, on every port that has
 * it, and passes each to fn (native tool API only: MPI_T has no port objects). */
int pvars_port_handles(pvars_state_t *st, ibmsg_t_pvar_session_t session, pvars_port_fn fn,
                       void *arg);

/* ---- Output (pvars_print.c) -------------------------------------------------------------------
 */

/* s as a JSON string on stdout (escaped; bytes that are not valid UTF-8 become U+FFFD). */
void pvars_json_string(const char *s);
/* The category tree with every variable under each category that holds it. */
int pvars_text_tree(const pvars_state_t *st);
/* The values --read read. */
void pvars_text_values(const pvars_state_t *st);
/* The tree (and with --read the values) as one JSON document. */
int pvars_json(const pvars_state_t *st);

/* ---- --watch (pvars_watch.c) and --mpit (pvars_mpit_launch.c) ---------------------------------
 */

/* Watches the numeric pvars bound to no object (and, natively, those bound to NIC ports, on
 * every port) until interrupted or st->count intervals. */
int pvars_watch(pvars_state_t *st);
/* Re-executes under the MPI_T layer (parent) or takes the MPI_T backend (child). */
int pvars_mpit_setup(pvars_state_t *st, char **argv);

/* ---- --events (pvars_events.c) and --follow (pvars_follow.c) ----------------------------------
 */

/* Lists the timestamp sources and the event types with their elements (text or JSON). */
int pvars_events(const pvars_state_t *st);
/* Runs st->follow_argv with the agent preloaded and copies its event lines to stdout until the
 * command's tree ends; *exit_status is the command's. Error (reported) when it cannot run it. */
int pvars_follow(const pvars_state_t *st, int *exit_status);

#endif
