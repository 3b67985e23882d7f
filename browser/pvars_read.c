/*
 * --read: the current values of the variables bound to no object (control variables one handle
 * each; performance variables in one session, all handles started at once, then read).
 */
#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include <stdio.h>
#include <stdlib.h>

#include "browser/pvars.h"

/* A value buffer of count elements, one byte more so a CHAR value is always NUL-terminated. */
static int pvars_value_alloc(pvars_var_t *v, int count)
{
    size_t size = pvars_datatype_size(v->datatype);

    if (size == 0 || count < 0) {
        return pvars_fail(IBMSG_T_ERR_INVALID, "%s: datatype %d, count %d", v->name,
                          (int)v->datatype, count);
    }
    v->count = count;
    v->value = calloc((size_t)count * size + 1, 1);
    return v->value != NULL ? IBMSG_OK : pvars_no_memory();
}

int pvars_cvars_read(pvars_state_t *st)
{
    for (int i = 0; i < st->num_cvars; i++) {
        pvars_var_t *v = &st->cvars[i];
        ibmsg_t_cvar_handle_t handle = IBMSG_T_CVAR_HANDLE_NULL;
        int count = 0, rc;

        if (v->bind != IBMSG_T_BIND_NO_OBJECT) {
            continue;
        }
        v->read = true;
        if (pvars_datatype_size(v->datatype) == 0) {
            v->read_rc = IBMSG_T_ERR_NOT_SUPPORTED; /* an MPI datatype MPI_T tools do not use */
            continue;
        }
        rc = pvars_api->cvar_handle_alloc(i, NULL, &handle, &count);
        if (rc == IBMSG_OK) {
            rc = pvars_value_alloc(v, count);
            if (rc == IBMSG_OK) {
                rc = pvars_api->cvar_read(handle, v->value);
                if (rc != IBMSG_OK && !pvars_unavailable(rc)) {
                    pvars_fail(rc, "ibmsg_t_cvar_read(%s)", v->name);
                }
            }
            int free_rc = pvars_api->cvar_handle_free(&handle);
            if (free_rc != IBMSG_OK) {
                return pvars_fail(free_rc, "ibmsg_t_cvar_handle_free(%s)", v->name);
            }
        } else if (!pvars_unavailable(rc)) {
            pvars_fail(rc, "ibmsg_t_cvar_handle_alloc(%s)", v->name);
        }
        v->read_rc = rc;
        if (rc != IBMSG_OK && !pvars_unavailable(rc)) {
            return rc;
        }
    }
    return IBMSG_OK;
}

/* The handles of st->bound, in its order. */
typedef struct pvars_bound_handles {
    ibmsg_t_pvar_handle_t *handles;
    int capacity;
} pvars_bound_handles_t;

/* --read's pvars_port_fn: the handle and a copy of the variable with a value buffer of its own. */
static int pvars_bound_add(pvars_state_t *st, int index, const char *port,
                           ibmsg_t_pvar_handle_t handle, int count, void *arg)
{
    pvars_bound_handles_t *bh = arg;
    pvars_var_t *v = &st->pvars[index];

    if (st->num_bound == bh->capacity) {
        int capacity = bh->capacity > 0 ? 2 * bh->capacity : 16;
        pvars_bound_t *bound = realloc(st->bound, (size_t)capacity * sizeof(*bound));
        ibmsg_t_pvar_handle_t *handles =
            bound != NULL ? realloc(bh->handles, (size_t)capacity * sizeof(*handles)) : NULL;
        if (bound != NULL) {
            st->bound = bound;
        }
        if (handles == NULL) {
            return pvars_no_memory();
        }
        bh->handles = handles;
        bh->capacity = capacity;
    }
    pvars_bound_t *b = &st->bound[st->num_bound];
    b->v = *v;
    b->v.value = NULL;
    snprintf(b->port, sizeof(b->port), "%s", port);
    int rc = pvars_value_alloc(&b->v, count);
    if (rc != IBMSG_OK) {
        return rc;
    }
    bh->handles[st->num_bound++] = handle;
    v->read_on_ports = true;
    return IBMSG_OK;
}

/*
 * All pvars bound to no object get a handle in one session, then one start of ALL_HANDLES, then
 * one read each. ibmsg's API reads each source's total (ibmsg_t_pvar_read_total: what
 * `rdma statistic` or `ethtool -S` show, where an interval just begun would read 0); the MPI_T
 * backend has no totals and reads what accumulated since the start (st->totals says which).
 * LEVEL, SIZE, STATE and the like read their current value either way.
 */
int pvars_pvars_read(pvars_state_t *st)
{
    ibmsg_t_pvar_session_t session = IBMSG_T_PVAR_SESSION_NULL;
    ibmsg_t_pvar_handle_t *handles;
    pvars_bound_handles_t bound = {NULL, 0};
    int rc, free_rc;

    int (*read)(ibmsg_t_pvar_session_t, ibmsg_t_pvar_handle_t, void *) =
        pvars_api->pvar_read_total != NULL ? pvars_api->pvar_read_total : pvars_api->pvar_read;
    st->totals = pvars_api->pvar_read_total != NULL;
    handles = calloc((size_t)st->num_pvars + 1, sizeof(*handles));
    if (handles == NULL) {
        return pvars_no_memory();
    }
    rc = pvars_api->pvar_session_create(&session);
    if (rc != IBMSG_OK) {
        free(handles);
        return pvars_fail(rc, "ibmsg_t_pvar_session_create");
    }
    for (int i = 0; i < st->num_pvars && rc == IBMSG_OK; i++) {
        pvars_var_t *v = &st->pvars[i];
        int count = 0;

        if (v->bind != IBMSG_T_BIND_NO_OBJECT) {
            continue;
        }
        v->read = true;
        if (pvars_datatype_size(v->datatype) == 0) {
            v->read_rc = IBMSG_T_ERR_NOT_SUPPORTED; /* an MPI datatype MPI_T tools do not use */
            continue;
        }
        v->read_rc = pvars_api->pvar_handle_alloc(session, i, NULL, &handles[i], &count);
        if (v->read_rc == IBMSG_OK) {
            rc = pvars_value_alloc(v, count);
        } else if (!pvars_unavailable(v->read_rc)) {
            rc = pvars_fail(v->read_rc, "ibmsg_t_pvar_handle_alloc(%s)", v->name);
        }
    }
    if (rc == IBMSG_OK && st->mpit == NULL) {
        rc = pvars_port_handles(st, session, pvars_bound_add, &bound);
    }
    if (rc == IBMSG_OK) {
        rc = pvars_api->pvar_start(session, IBMSG_T_PVAR_ALL_HANDLES);
        if (rc != IBMSG_OK) {
            pvars_fail(rc, "ibmsg_t_pvar_start(ALL_HANDLES)");
        }
    }
    for (int i = 0; i < st->num_pvars && rc == IBMSG_OK; i++) {
        pvars_var_t *v = &st->pvars[i];

        if (handles[i] == IBMSG_T_PVAR_HANDLE_NULL) {
            continue;
        }
        v->read_rc = read(session, handles[i], v->value);
        if (v->read_rc != IBMSG_OK && !pvars_unavailable(v->read_rc)) {
            rc = pvars_fail(v->read_rc, "ibmsg_t_pvar_read(%s)", v->name);
        }
    }
    for (int i = 0; i < st->num_bound && rc == IBMSG_OK; i++) {
        pvars_var_t *v = &st->bound[i].v;

        v->read_rc = read(session, bound.handles[i], v->value);
        if (v->read_rc != IBMSG_OK && !pvars_unavailable(v->read_rc)) {
            rc = pvars_fail(v->read_rc, "ibmsg_t_pvar_read(%s, %s)", v->name, st->bound[i].port);
        }
    }
    free(bound.handles);
    /* Freeing the session frees its handles. */
    free_rc = pvars_api->pvar_session_free(&session);
    if (free_rc != IBMSG_OK) {
        pvars_fail(free_rc, "ibmsg_t_pvar_session_free");
        if (rc == IBMSG_OK) {
            rc = free_rc;
        }
    }
    free(handles);
    return rc;
}
