/* Performance variables, sessions and handles of the merged view. */
#include <stdlib.h>
#include <string.h>

#include "mpit/layer.h"
#include "mpit/names.h"

int PMPI_T_pvar_get_num(int *num_pvar)
{
    return mpit_view_num(MPIT_KIND_PVAR, num_pvar);
}
MPIT_ALIAS(pvar_get_num);

int PMPI_T_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity, int *var_class,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *readonly, int *continuous, int *atomic)
{
    mpit_side_t side;
    int native, obj;
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_lookup_obj(MPIT_KIND_PVAR, pvar_index, &side, &native, &obj);
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    if (side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.pvar_get_info(native, name, name_len, verbosity, var_class, datatype,
                                          enumtype, desc, desc_len, bind, readonly, continuous,
                                          atomic);
        goto out;
    }
    int ib_verbosity, ib_class, ib_bind;
    ibmsg_t_datatype_t ib_datatype;
    ibmsg_t_enum_t ib_enum;
    rc = mpit_map_error(ibmsg_t_pvar_get_info(native, NULL, NULL, &ib_verbosity, &ib_class,
                                              &ib_datatype, &ib_enum, NULL, NULL, &ib_bind,
                                              readonly, continuous, atomic));
    if (rc == MPI_SUCCESS) {
        rc = mpit_ib_name_out(MPIT_KIND_PVAR, native, obj, name, name_len);
    }
    if (rc == MPI_SUCCESS) {
        rc = mpit_ib_pvar_desc_out(native, obj, desc, desc_len);
    }
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    if (verbosity != NULL) {
        *verbosity = mpit_map_verbosity(ib_verbosity);
    }
    if (var_class != NULL) {
        *var_class = mpit_map_class(ib_class);
    }
    if (datatype != NULL) {
        *datatype = mpit_map_datatype(ib_datatype);
    }
    if (enumtype != NULL) {
        *enumtype = mpit_enum_wrap(ib_enum);
    }
    if (bind != NULL) {
        /* Every ibmsg variable the view shows is bound to no object (see layer_expand_pvar). */
        *bind = mpit_map_bind(ib_bind);
    }
out:
    mpit_leave();
    return rc;
}
MPIT_ALIAS(pvar_get_info);

int PMPI_T_pvar_get_index(const char *name, int var_class, int *pvar_index)
{
    if (name == NULL || pvar_index == NULL) {
        return mpit_is_initialized() ? MPI_T_ERR_INVALID : MPI_T_ERR_NOT_INITIALIZED;
    }
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    int view = -1;
    int ib_class = mpit_map_class_to_ibmsg(var_class);
    int native = ib_class < 0 ? -1 : mpit_ib_index(MPIT_KIND_PVAR, name, ib_class);
    if (native >= 0) {
        view = mpit_to_view(MPIT_KIND_PVAR, MPIT_SIDE_IBMSG, native);
    } else if (ib_class >= 0 && mpit_name_native(name) != NULL) {
        /* Not a native name: maybe one port's variable (ibmsg_nic_<dev>_<port>_<counter>). */
        rc = mpit_sync(MPIT_KIND_PVAR);
        if (rc == MPI_SUCCESS) {
            view = mpit_ib_port_view(name, ib_class);
        }
    }
    if (view < 0 && native < 0 && rc == MPI_SUCCESS) {
        if (mpit_layer.have_mpi) {
            rc = mpit_layer.mpi.pvar_get_index(name, var_class, &native);
            if (rc == MPI_SUCCESS) {
                view = mpit_to_view(MPIT_KIND_PVAR, MPIT_SIDE_MPI, native);
            }
        } else if (ib_class < 0) {
            rc = MPI_T_ERR_INVALID;
        }
    }
    if (rc == MPI_SUCCESS) {
        if (view >= 0) {
            *pvar_index = view;
        } else {
            rc = MPI_T_ERR_INVALID_NAME;
        }
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(pvar_get_index);

/* ---- Sessions ----------------------------------------------------------------------------- */

static mpit_session_t *pvar_session_get(MPI_T_pvar_session session)
{
    return mpit_slots_get(&mpit_layer.sessions, (uintptr_t)session);
}

int PMPI_T_pvar_session_create(MPI_T_pvar_session *session)
{
    mpit_session_t *s;
    uint64_t value;

    if (session == NULL) {
        return mpit_is_initialized() ? MPI_T_ERR_INVALID : MPI_T_ERR_NOT_INITIALIZED;
    }
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_slots_alloc(&mpit_layer.sessions, (void **)&s, &value);
    if (rc != IBMSG_OK) {
        rc = rc == IBMSG_T_ERR_OUT_OF_HANDLES ? MPI_T_ERR_OUT_OF_SESSIONS : mpit_map_error(rc);
        goto out;
    }
    s->mpi = MPI_T_PVAR_SESSION_NULL;
    if (mpit_layer.have_mpi) {
        rc = mpit_layer.mpi.pvar_session_create(&s->mpi);
        if (rc != MPI_SUCCESS) {
            goto err_free_slot;
        }
    }
    rc = mpit_map_error(ibmsg_t_pvar_session_create(&s->ib));
    if (rc != MPI_SUCCESS) {
        goto err_free_mpi;
    }
    *session = (MPI_T_pvar_session)(uintptr_t)value;
    goto out;

err_free_mpi:
    if (mpit_layer.have_mpi) {
        mpit_layer.mpi.pvar_session_free(&s->mpi);
    }
err_free_slot:
    mpit_slots_free(&mpit_layer.sessions, s);
out:
    mpit_leave();
    return rc;
}
MPIT_ALIAS(pvar_session_create);

/* Drop our entry of a handle whose natives are freed or about to be (lock held). */
static void pvar_handle_forget(mpit_session_t *s, mpit_pvar_handle_t *h)
{
    if (h->prev != NULL) {
        h->prev->next = h->next;
    } else {
        s->handles = h->next;
    }
    if (h->next != NULL) {
        h->next->prev = h->prev;
    }
    mpit_slots_free(&mpit_layer.pvar_handles, h);
}

int PMPI_T_pvar_session_free(MPI_T_pvar_session *session)
{
    if (session == NULL) {
        return mpit_is_initialized() ? MPI_T_ERR_INVALID_SESSION : MPI_T_ERR_NOT_INITIALIZED;
    }
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    mpit_session_t *s = pvar_session_get(*session);
    if (s == NULL) {
        rc = MPI_T_ERR_INVALID_SESSION;
        goto out;
    }
    if (mpit_layer.have_mpi) {
        rc = mpit_layer.mpi.pvar_session_free(&s->mpi);
        if (rc != MPI_SUCCESS) {
            goto out; /* nothing freed: the tool may retry */
        }
    }
    /* Freeing a session frees its handles, on both sides. */
    ibmsg_t_pvar_session_free(&s->ib);
    while (s->handles != NULL) {
        pvar_handle_forget(s, s->handles);
    }
    mpit_slots_free(&mpit_layer.sessions, s);
    *session = MPI_T_PVAR_SESSION_NULL;
out:
    mpit_leave();
    return rc;
}
MPIT_ALIAS(pvar_session_free);

/* ---- Handles ------------------------------------------------------------------------------ */

/*
 * ibmsg side of pvar_handle_alloc: a variable bound to no object, or one port's variable of a
 * port-bound one (obj is the port number). Others are never in the view.
 */
static int pvar_alloc_ib(mpit_pvar_handle_t *h, int native, int obj, int *count)
{
    void *obj_handle = obj >= 0 ? &mpit_layer.ports[obj].port : NULL;
    return mpit_map_error(
        ibmsg_t_pvar_handle_alloc(h->ib_session, native, obj_handle, &h->ib, count));
}

int PMPI_T_pvar_handle_alloc(MPI_T_pvar_session session, int pvar_index, void *obj_handle,
                             MPI_T_pvar_handle *handle, int *count)
{
    mpit_side_t side;
    int native, obj;
    int n = 0;
    uint64_t value;
    mpit_pvar_handle_t *h;

    if (handle == NULL || count == NULL) {
        return mpit_is_initialized() ? MPI_T_ERR_INVALID : MPI_T_ERR_NOT_INITIALIZED;
    }
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    mpit_session_t *s = pvar_session_get(session);
    if (s == NULL) {
        rc = MPI_T_ERR_INVALID_SESSION;
        goto out;
    }
    rc = mpit_lookup_obj(MPIT_KIND_PVAR, pvar_index, &side, &native, &obj);
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    rc = mpit_map_error(mpit_slots_alloc(&mpit_layer.pvar_handles, (void **)&h, &value));
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    h->session = (uintptr_t)session;
    h->side = side;
    h->mpi_session = s->mpi;
    h->ib_session = s->ib;
    if (side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.pvar_handle_alloc(s->mpi, native, obj_handle, &h->mpi, &n);
    } else {
        rc = pvar_alloc_ib(h, native, obj, &n);
    }
    if (rc != MPI_SUCCESS) {
        mpit_slots_free(&mpit_layer.pvar_handles, h);
        goto out;
    }
    h->count = n;
    h->next = s->handles;
    if (s->handles != NULL) {
        s->handles->prev = h;
    }
    s->handles = h;
    *handle = (MPI_T_pvar_handle)(uintptr_t)value;
    *count = n;
out:
    mpit_leave();
    return rc;
}
MPIT_ALIAS(pvar_handle_alloc);

int PMPI_T_pvar_handle_free(MPI_T_pvar_session session, MPI_T_pvar_handle *handle)
{
    if (handle == NULL) {
        return mpit_is_initialized() ? MPI_T_ERR_INVALID_HANDLE : MPI_T_ERR_NOT_INITIALIZED;
    }
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    mpit_session_t *s = pvar_session_get(session);
    mpit_pvar_handle_t *h = mpit_slots_get(&mpit_layer.pvar_handles, (uintptr_t)*handle);
    if (s == NULL) {
        rc = MPI_T_ERR_INVALID_SESSION;
    } else if (h == NULL || h->session != (uintptr_t)session) {
        rc = MPI_T_ERR_INVALID_HANDLE;
    } else {
        if (h->side == MPIT_SIDE_MPI) {
            rc = mpit_layer.mpi.pvar_handle_free(s->mpi, &h->mpi);
        } else {
            ibmsg_t_pvar_handle_free(s->ib, &h->ib);
        }
        if (rc == MPI_SUCCESS) {
            pvar_handle_forget(s, h);
            *handle = MPI_T_PVAR_HANDLE_NULL;
        }
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(pvar_handle_free);

/*
 * The hot path: find the handle entry without a lock and check it belongs to the session. A
 * handle is freed with its session, so a live handle implies a live session.
 */
static UTIL_ALWAYS_INLINE mpit_pvar_handle_t *pvar_handle_get(MPI_T_pvar_session session,
                                                              MPI_T_pvar_handle handle)
{
    mpit_pvar_handle_t *h = mpit_slots_get(&mpit_layer.pvar_handles, (uintptr_t)handle);
    if (util_unlikely(h == NULL || h->session != (uintptr_t)session)) {
        return NULL;
    }
    return h;
}

/* Error of a call on a handle that did not validate: the session's, if that is what is wrong. */
static UTIL_COLD int pvar_bad_handle(MPI_T_pvar_session session)
{
    if (!mpit_is_initialized()) {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    return pvar_session_get(session) == NULL ? MPI_T_ERR_INVALID_SESSION : MPI_T_ERR_INVALID_HANDLE;
}

typedef enum pvar_op { PVAR_START, PVAR_STOP, PVAR_RESET } pvar_op_t;

/* start/stop/reset on the MPI side (a handle, or MPI_T_PVAR_ALL_HANDLES): the MPI's code. */
static int pvar_op_mpi(MPI_T_pvar_session session, MPI_T_pvar_handle handle, pvar_op_t op)
{
    switch (op) {
    case PVAR_START:
        return mpit_layer.mpi.pvar_start(session, handle);
    case PVAR_STOP:
        return mpit_layer.mpi.pvar_stop(session, handle);
    default:
        return mpit_layer.mpi.pvar_reset(session, handle);
    }
}

/* start/stop/reset on the ibmsg side (a handle, or IBMSG_T_PVAR_ALL_HANDLES): ibmsg's code. */
static int pvar_op_ib(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle, pvar_op_t op)
{
    switch (op) {
    case PVAR_START:
        return ibmsg_t_pvar_start(session, handle);
    case PVAR_STOP:
        return ibmsg_t_pvar_stop(session, handle);
    default:
        return ibmsg_t_pvar_reset(session, handle);
    }
}

/* start/stop/reset of every handle of a session, on both sides. */
static int pvar_all_handles(MPI_T_pvar_session session, pvar_op_t op)
{
    mpit_session_t *s = pvar_session_get(session);
    int rc = MPI_SUCCESS;

    if (s == NULL) {
        return pvar_bad_handle(session);
    }
    if (mpit_layer.have_mpi) {
        rc = pvar_op_mpi(s->mpi, MPI_T_PVAR_ALL_HANDLES, op);
    }
    int ib_rc = pvar_op_ib(s->ib, IBMSG_T_PVAR_ALL_HANDLES, op);
    /* The MPI's error first, unchanged; then ours. */
    return rc != MPI_SUCCESS ? rc : mpit_map_error(ib_rc);
}

/* MPI_T_pvar_start/stop/reset: one handle, or every handle of the session. */
static int pvar_op(MPI_T_pvar_session session, MPI_T_pvar_handle handle, pvar_op_t op)
{
    if (handle == MPI_T_PVAR_ALL_HANDLES) {
        return mpit_is_initialized() ? pvar_all_handles(session, op) : MPI_T_ERR_NOT_INITIALIZED;
    }
    mpit_pvar_handle_t *h = pvar_handle_get(session, handle);
    if (util_unlikely(h == NULL || !mpit_is_initialized())) {
        return pvar_bad_handle(session);
    }
    if (h->side == MPIT_SIDE_MPI) {
        return pvar_op_mpi(h->mpi_session, h->mpi, op);
    }
    return mpit_map_error(pvar_op_ib(h->ib_session, h->ib, op));
}

int PMPI_T_pvar_start(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op(session, handle, PVAR_START);
}
MPIT_ALIAS(pvar_start);

int PMPI_T_pvar_stop(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op(session, handle, PVAR_STOP);
}
MPIT_ALIAS(pvar_stop);

int PMPI_T_pvar_reset(MPI_T_pvar_session session, MPI_T_pvar_handle handle)
{
    return pvar_op(session, handle, PVAR_RESET);
}
MPIT_ALIAS(pvar_reset);

int PMPI_T_pvar_read(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    mpit_pvar_handle_t *h = pvar_handle_get(session, handle);
    if (util_unlikely(h == NULL || !mpit_is_initialized())) {
        return pvar_bad_handle(session);
    }
    if (h->side == MPIT_SIDE_MPI) {
        return mpit_layer.mpi.pvar_read(h->mpi_session, h->mpi, buf);
    }
    int rc = ibmsg_t_pvar_read(h->ib_session, h->ib, buf);
    return util_likely(rc == IBMSG_OK) ? MPI_SUCCESS : mpit_map_error(rc);
}
MPIT_ALIAS(pvar_read);

int PMPI_T_pvar_readreset(MPI_T_pvar_session session, MPI_T_pvar_handle handle, void *buf)
{
    mpit_pvar_handle_t *h = pvar_handle_get(session, handle);
    if (util_unlikely(h == NULL || !mpit_is_initialized())) {
        return pvar_bad_handle(session);
    }
    if (h->side == MPIT_SIDE_MPI) {
        return mpit_layer.mpi.pvar_readreset(h->mpi_session, h->mpi, buf);
    }
    return mpit_map_error(ibmsg_t_pvar_readreset(h->ib_session, h->ib, buf));
}
MPIT_ALIAS(pvar_readreset);

int PMPI_T_pvar_write(MPI_T_pvar_session session, MPI_T_pvar_handle handle, const void *buf)
{
    mpit_pvar_handle_t *h = pvar_handle_get(session, handle);
    if (util_unlikely(h == NULL || !mpit_is_initialized())) {
        return pvar_bad_handle(session);
    }
    if (h->side == MPIT_SIDE_MPI) {
        return mpit_layer.mpi.pvar_write(h->mpi_session, h->mpi, buf);
    }
    return mpit_map_error(ibmsg_t_pvar_write(h->ib_session, h->ib, buf));
}
MPIT_ALIAS(pvar_write);
