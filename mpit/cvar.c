/* Control variables of the merged view. */
#include <stdlib.h>
#include <string.h>

#include "mpit/layer.h"

int PMPI_T_cvar_get_num(int *num_cvar)
{
    return mpit_view_num(MPIT_KIND_CVAR, num_cvar);
}
MPIT_ALIAS(cvar_get_num);

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    mpit_side_t side;
    int native;
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_lookup(MPIT_KIND_CVAR, cvar_index, &side, &native);
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    if (side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.cvar_get_info(native, name, name_len, verbosity, datatype, enumtype,
                                          desc, desc_len, bind, scope);
        goto out;
    }
    int ib_verbosity, ib_bind, ib_scope;
    ibmsg_t_datatype_t ib_datatype;
    ibmsg_t_enum_t ib_enum;
    rc = mpit_map_error(ibmsg_t_cvar_get_info(native, NULL, NULL, &ib_verbosity, &ib_datatype,
                                              &ib_enum, desc, desc_len, &ib_bind, &ib_scope));
    if (rc == MPI_SUCCESS) {
        rc = mpit_ib_name_out(MPIT_KIND_CVAR, native, MPIT_OBJ_SELF, name, name_len);
    }
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    if (verbosity != NULL) {
        *verbosity = mpit_map_verbosity(ib_verbosity);
    }
    if (datatype != NULL) {
        *datatype = mpit_map_datatype(ib_datatype);
    }
    if (enumtype != NULL) {
        *enumtype = mpit_enum_wrap(ib_enum);
    }
    if (bind != NULL) {
        *bind = mpit_map_bind(ib_bind);
    }
    if (scope != NULL) {
        *scope = mpit_map_scope(ib_scope);
    }
out:
    mpit_leave();
    return rc;
}
MPIT_ALIAS(cvar_get_info);

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    return mpit_view_index(MPIT_KIND_CVAR, name, cvar_index);
}
MPIT_ALIAS(cvar_get_index);

/* Free the natives of a handle entry (lock held). */
static void cvar_handle_release(mpit_cvar_handle_t *h)
{
    if (h->side == MPIT_SIDE_MPI) {
        mpit_layer.mpi.cvar_handle_free(&h->mpi);
    } else {
        ibmsg_t_cvar_handle_free(&h->ib);
    }
}

/* ibmsg side of cvar_handle_alloc: only cvars bound to no object are in the view. */
static int cvar_alloc_ib(mpit_cvar_handle_t *h, int native, int *count)
{
    return mpit_map_error(ibmsg_t_cvar_handle_alloc(native, NULL, &h->ib, count));
}

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    mpit_side_t side;
    int native;
    int n = 0;
    uint64_t value;
    mpit_cvar_handle_t *h;

    if (handle == NULL || count == NULL) {
        return mpit_is_initialized() ? MPI_T_ERR_INVALID : MPI_T_ERR_NOT_INITIALIZED;
    }
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_lookup(MPIT_KIND_CVAR, cvar_index, &side, &native);
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    rc = mpit_map_error(mpit_slots_alloc(&mpit_layer.cvar_handles, (void **)&h, &value));
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    h->side = side;
    if (side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.cvar_handle_alloc(native, obj_handle, &h->mpi, &n);
    } else {
        rc = cvar_alloc_ib(h, native, &n);
    }
    if (rc != MPI_SUCCESS) {
        mpit_slots_free(&mpit_layer.cvar_handles, h);
        goto out;
    }
    h->count = n;
    *handle = (MPI_T_cvar_handle)(uintptr_t)value;
    *count = n;
out:
    mpit_leave();
    return rc;
}
MPIT_ALIAS(cvar_handle_alloc);

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    if (handle == NULL) {
        return mpit_is_initialized() ? MPI_T_ERR_INVALID_HANDLE : MPI_T_ERR_NOT_INITIALIZED;
    }
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    mpit_cvar_handle_t *h = mpit_slots_get(&mpit_layer.cvar_handles, (uintptr_t)*handle);
    if (h == NULL) {
        rc = MPI_T_ERR_INVALID_HANDLE;
    } else {
        cvar_handle_release(h);
        mpit_slots_free(&mpit_layer.cvar_handles, h);
        *handle = MPI_T_CVAR_HANDLE_NULL;
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(cvar_handle_free);

/*
 * The entry of a handle for read and write, the hot path: no lock. MPI_SUCCESS with *out, or
 * the error of the call.
 */
static UTIL_ALWAYS_INLINE int cvar_handle_get(MPI_T_cvar_handle handle, mpit_cvar_handle_t **out)
{
    if (util_unlikely(!mpit_is_initialized())) {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    *out = mpit_slots_get(&mpit_layer.cvar_handles, (uintptr_t)handle);
    return util_likely(*out != NULL) ? MPI_SUCCESS : MPI_T_ERR_INVALID_HANDLE;
}

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    mpit_cvar_handle_t *h;
    int rc = cvar_handle_get(handle, &h);
    if (util_unlikely(rc != MPI_SUCCESS)) {
        return rc;
    }
    if (h->side == MPIT_SIDE_MPI) {
        return mpit_layer.mpi.cvar_read(h->mpi, buf);
    }
    return mpit_map_error(ibmsg_t_cvar_read(h->ib, buf));
}
MPIT_ALIAS(cvar_read);

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    mpit_cvar_handle_t *h;
    int rc = cvar_handle_get(handle, &h);
    if (util_unlikely(rc != MPI_SUCCESS)) {
        return rc;
    }
    if (h->side == MPIT_SIDE_MPI) {
        return mpit_layer.mpi.cvar_write(h->mpi, buf);
    }
    return mpit_map_error(ibmsg_t_cvar_write(h->ib, buf));
}
MPIT_ALIAS(cvar_write);
