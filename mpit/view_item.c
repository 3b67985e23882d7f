/*
 * What cvar, pvar and category calls of the merged view share: the number of items of a kind and
 * the view index of a name found on either side (ibmsg's first, as in every lookup).
 */
#include "mpit/layer.h"

int mpit_view_num(mpit_kind_t kind, int *num)
{
    if (num == NULL) {
        return mpit_is_initialized() ? MPI_T_ERR_INVALID : MPI_T_ERR_NOT_INITIALIZED;
    }
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_sync(kind);
    if (rc == MPI_SUCCESS) {
        *num = mpit_layer.maps[kind].num;
    }
    mpit_leave();
    return rc;
}

/* The MPI library's get_index of a cvar or category name (lock held, have_mpi). */
static int view_mpi_index(mpit_kind_t kind, const char *name, int *native)
{
    return kind == MPIT_KIND_CVAR ? mpit_layer.mpi.cvar_get_index(name, native)
                                  : mpit_layer.mpi.category_get_index(name, native);
}

int mpit_view_index(mpit_kind_t kind, const char *name, int *index)
{
    if (name == NULL || index == NULL) {
        return mpit_is_initialized() ? MPI_T_ERR_INVALID : MPI_T_ERR_NOT_INITIALIZED;
    }
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    int view = -1;
    int native = mpit_ib_index(kind, name, 0);
    if (native >= 0) {
        view = mpit_to_view(kind, MPIT_SIDE_IBMSG, native);
    } else if (mpit_layer.have_mpi) {
        rc = view_mpi_index(kind, name, &native);
        if (rc == MPI_SUCCESS) {
            view = mpit_to_view(kind, MPIT_SIDE_MPI, native);
        }
    }
    if (rc == MPI_SUCCESS) {
        if (view >= 0) {
            *index = view;
        } else {
            rc = MPI_T_ERR_INVALID_NAME;
        }
    }
    mpit_leave();
    return rc;
}
