#include "mpit/layer.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "mpit/names.h"
#include "util/log.h"

mpit_layer_t mpit_layer = {.lock = PTHREAD_MUTEX_INITIALIZER};

/* Set up the tables and find the MPI side, once per process (lock held). */
static void layer_resolve(void)
{
    if (mpit_layer.resolved) {
        return;
    }
    for (int k = 0; k < MPIT_KIND_LAST; k++) {
        mpit_index_map_init(&mpit_layer.maps[k]);
    }
    mpit_slots_init(&mpit_layer.sessions, sizeof(mpit_session_t));
    mpit_slots_init(&mpit_layer.pvar_handles, sizeof(mpit_pvar_handle_t));
    mpit_slots_init(&mpit_layer.cvar_handles, sizeof(mpit_cvar_handle_t));
    mpit_layer.have_mpi = mpit_mpi_ops_resolve(&mpit_layer.mpi);
    util_debug("mpit: %s", mpit_layer.have_mpi ? "merging with the MPI library's MPI_T"
                                               : "no MPI library: serving ibmsg's variables alone");
    mpit_layer.resolved = 1;
}

int PMPI_T_init_thread(int required, int *provided)
{
    int mpi_provided = MPI_THREAD_MULTIPLE;
    int ib_provided = IBMSG_T_THREAD_MULTIPLE;
    int rc = MPI_SUCCESS;

    pthread_mutex_lock(&mpit_layer.lock);
    layer_resolve();
    if (mpit_layer.have_mpi) {
        rc = mpit_layer.mpi.init_thread(required, &mpi_provided);
        if (rc != MPI_SUCCESS) {
            goto out_unlock; /* the MPI's error, unchanged */
        }
        mpit_all_handles_adopt(); /* after the MPI's init, which may set up its object */
    }
    int ib_rc = ibmsg_t_init_thread(mpit_map_thread_level_to_ibmsg(required), &ib_provided);
    if (ib_rc != IBMSG_OK) {
        rc = mpit_map_error(ib_rc);
        goto err_finalize_mpi;
    }
    /* Both sides serve the merged view: it offers the lower of their levels. */
    int level = mpit_map_thread_level(ib_provided);
    if (mpi_provided < level) {
        level = mpi_provided;
    }
    __atomic_add_fetch(&mpit_layer.refcount, 1, __ATOMIC_RELEASE);
    if (provided != NULL) {
        *provided = level;
    }
    goto out_unlock;

err_finalize_mpi:
    if (mpit_layer.have_mpi) {
        mpit_layer.mpi.finalize();
    }
out_unlock:
    pthread_mutex_unlock(&mpit_layer.lock);
    return rc;
}
MPIT_ALIAS(init_thread);

int PMPI_T_finalize(void)
{
    int rc = MPI_SUCCESS;

    pthread_mutex_lock(&mpit_layer.lock);
    if (mpit_layer.refcount == 0) {
        pthread_mutex_unlock(&mpit_layer.lock);
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    if (mpit_layer.have_mpi) {
        rc = mpit_layer.mpi.finalize();
    }
    int ib_rc = ibmsg_t_finalize();
    if (rc == MPI_SUCCESS) {
        rc = mpit_map_error(ib_rc);
    }
    __atomic_sub_fetch(&mpit_layer.refcount, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mpit_layer.lock);
    return rc;
}
MPIT_ALIAS(finalize);

int mpit_enter(void)
{
    if (!mpit_is_initialized()) {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    pthread_mutex_lock(&mpit_layer.lock);
    if (mpit_layer.refcount == 0) { /* finalized meanwhile */
        pthread_mutex_unlock(&mpit_layer.lock);
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    return MPI_SUCCESS;
}

void mpit_leave(void)
{
    pthread_mutex_unlock(&mpit_layer.lock);
}

int mpit_sync(mpit_kind_t kind)
{
    int n_mpi = 0;
    int n_ib = 0;
    int rc;

    if (mpit_layer.have_mpi) {
        switch (kind) {
        case MPIT_KIND_CVAR:
            rc = mpit_layer.mpi.cvar_get_num(&n_mpi);
            break;
        case MPIT_KIND_PVAR:
            rc = mpit_layer.mpi.pvar_get_num(&n_mpi);
            break;
        default:
            rc = mpit_layer.mpi.category_get_num(&n_mpi);
            break;
        }
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    switch (kind) {
    case MPIT_KIND_CVAR:
        rc = ibmsg_t_cvar_get_num(&n_ib);
        break;
    case MPIT_KIND_PVAR:
        rc = ibmsg_t_pvar_get_num(&n_ib);
        break;
    default:
        rc = ibmsg_t_category_get_num(&n_ib);
        break;
    }
    if (rc != IBMSG_OK) {
        return mpit_map_error(rc);
    }
    /* The MPI side first: at each sync, its new items come before ibmsg's. */
    if (mpit_index_map_sync(&mpit_layer.maps[kind], MPIT_SIDE_MPI, n_mpi) != IBMSG_OK ||
        mpit_index_map_sync(&mpit_layer.maps[kind], MPIT_SIDE_IBMSG, n_ib) != IBMSG_OK) {
        return MPI_T_ERR_MEMORY;
    }
    return MPI_SUCCESS;
}

int mpit_lookup(mpit_kind_t kind, int view, mpit_side_t *side, int *native)
{
    mpit_index_map_t *map = &mpit_layer.maps[kind];
    if (view >= map->num && view >= 0) {
        int rc = mpit_sync(kind);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    if (mpit_index_map_lookup(map, view, side, native) != IBMSG_OK) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    return MPI_SUCCESS;
}

int mpit_to_view(mpit_kind_t kind, mpit_side_t side, int native)
{
    int view = mpit_index_map_to_view(&mpit_layer.maps[kind], side, native);
    if (view < 0 && mpit_sync(kind) == MPI_SUCCESS) {
        view = mpit_index_map_to_view(&mpit_layer.maps[kind], side, native);
    }
    return view;
}

int mpit_to_view_array(mpit_kind_t kind, mpit_side_t side, int n, int indices[])
{
    for (int i = 0; i < n; i++) {
        int view = mpit_to_view(kind, side, indices[i]);
        if (view < 0) {
            return MPI_T_ERR_INVALID_INDEX;
        }
        indices[i] = view;
    }
    return MPI_SUCCESS;
}

MPI_T_enum mpit_enum_wrap(ibmsg_t_enum_t ib)
{
    if (ib == IBMSG_T_ENUM_NULL) {
        return MPI_T_ENUM_NULL;
    }
    int n = mpit_layer.num_enums;
    for (int i = 0; i < n; i++) {
        if (mpit_layer.enums[i].ib == ib) {
            return (MPI_T_enum)(void *)&mpit_layer.enums[i];
        }
    }
    if (n == MPIT_MAX_ENUMS) {
        util_warn("mpit: more than %d ibmsg enums; the rest are shown without one", MPIT_MAX_ENUMS);
        return MPI_T_ENUM_NULL;
    }
    mpit_layer.enums[n].ib = ib;
    __atomic_store_n(&mpit_layer.num_enums, n + 1, __ATOMIC_RELEASE);
    return (MPI_T_enum)(void *)&mpit_layer.enums[n];
}

ibmsg_t_enum_t mpit_enum_unwrap(MPI_T_enum e)
{
    uintptr_t off = (uintptr_t)(void *)e - (uintptr_t)&mpit_layer.enums[0];
    int n = __atomic_load_n(&mpit_layer.num_enums, __ATOMIC_ACQUIRE);
    if (off >= (uintptr_t)n * sizeof(mpit_enum_t) || off % sizeof(mpit_enum_t) != 0) {
        return IBMSG_T_ENUM_NULL;
    }
    return mpit_layer.enums[off / sizeof(mpit_enum_t)].ib;
}

int mpit_bind_objects(int bind, int len, void *objs[], int *num)
{
    /*
     * ibmsg's tool API has no way yet to list the live objects of a binding (contexts, ports,
     * threads, ...), so bound variables are arrays over zero objects: listed, allocatable, count 0.
     */
    (void)bind;
    (void)len;
    (void)objs;
    *num = 0;
    return MPI_SUCCESS;
}

/* Native name of an ibmsg item to (buf, *len), MPI string semantics. */
static int layer_ib_native_name(mpit_kind_t kind, int native, char *buf, int *len)
{
    switch (kind) {
    case MPIT_KIND_CVAR:
        return ibmsg_t_cvar_get_info(native, buf, len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    case MPIT_KIND_PVAR:
        return ibmsg_t_pvar_get_info(native, buf, len, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                     NULL, NULL, NULL);
    default:
        return ibmsg_t_category_get_info(native, buf, len, NULL, NULL, NULL, NULL, NULL);
    }
}

int mpit_ib_name_out(mpit_kind_t kind, int native, char *name, int *name_len)
{
    char small[256];
    int full = 0;

    if (name_len == NULL) {
        return MPI_SUCCESS;
    }
    int rc = layer_ib_native_name(kind, native, NULL, &full);
    if (rc != IBMSG_OK) {
        return mpit_map_error(rc);
    }
    char *buf = full <= (int)sizeof(small) ? small : malloc((size_t)full);
    if (buf == NULL) {
        return MPI_T_ERR_MEMORY;
    }
    rc = layer_ib_native_name(kind, native, buf, &full);
    if (rc == IBMSG_OK) {
        mpit_name_out(buf, name, name_len);
    }
    if (buf != small) {
        free(buf);
    }
    return mpit_map_error(rc);
}

int mpit_ib_index(mpit_kind_t kind, const char *view_name, int ib_class)
{
    const char *native = mpit_name_native(view_name);
    int index = -1;
    int rc;

    if (native == NULL) {
        return -1;
    }
    switch (kind) {
    case MPIT_KIND_CVAR:
        rc = ibmsg_t_cvar_get_index(native, &index);
        break;
    case MPIT_KIND_PVAR:
        rc = ibmsg_t_pvar_get_index(native, ib_class, &index);
        break;
    default:
        rc = ibmsg_t_category_get_index(native, &index);
        break;
    }
    return rc == IBMSG_OK ? index : -1;
}
