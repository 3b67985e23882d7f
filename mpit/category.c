/* Categories and enumerations of the merged view. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpit/layer.h"

int PMPI_T_category_get_num(int *num_cat)
{
    return mpit_view_num(MPIT_KIND_CATEGORY, num_cat);
}
MPIT_ALIAS(category_get_num);

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    mpit_side_t side;
    int native;
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_lookup(MPIT_KIND_CATEGORY, cat_index, &side, &native);
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    if (side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.category_get_info(native, name, name_len, desc, desc_len, num_cvars,
                                              num_pvars, num_categories);
        goto out;
    }
    rc = mpit_map_error(
        ibmsg_t_category_get_info(native, NULL, NULL, desc, desc_len, NULL, NULL, num_categories));
    if (rc == MPI_SUCCESS) {
        rc = mpit_ib_name_out(MPIT_KIND_CATEGORY, native, MPIT_OBJ_SELF, name, name_len);
    }
    /* Variables as the view shows them: hidden ones left out, per-port ones counted per port. */
    int *counts[2] = {num_cvars, num_pvars};
    for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++) {
        int *members = NULL;
        int num = 0;
        if (counts[k] == NULL) {
            continue;
        }
        rc = mpit_ib_category_members(native, k == 0 ? MPIT_KIND_CVAR : MPIT_KIND_PVAR, &members,
                                      &num);
        free(members);
        if (rc == MPI_SUCCESS) {
            *counts[k] = num;
        }
    }
out:
    mpit_leave();
    return rc;
}
MPIT_ALIAS(category_get_info);

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    return mpit_view_index(MPIT_KIND_CATEGORY, name, cat_index);
}
MPIT_ALIAS(category_get_index);

/* get_cvars, get_pvars, get_categories: the side's members, renumbered into the view. */
static int category_members(int cat_index, mpit_kind_t member_kind, int len, int indices[])
{
    mpit_side_t side;
    int native;
    int num = 0;
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_lookup(MPIT_KIND_CATEGORY, cat_index, &side, &native);
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    if (len < 0 || (len > 0 && indices == NULL)) {
        rc = MPI_T_ERR_INVALID;
        goto out;
    }
    int *counts[MPIT_KIND_LAST] = {NULL, NULL, NULL};
    counts[member_kind] = &num;
    if (side == MPIT_SIDE_MPI) {
        rc =
            mpit_layer.mpi.category_get_info(native, NULL, NULL, NULL, NULL, counts[MPIT_KIND_CVAR],
                                             counts[MPIT_KIND_PVAR], counts[MPIT_KIND_CATEGORY]);
        if (rc != MPI_SUCCESS || len == 0) {
            goto out;
        }
        switch (member_kind) {
        case MPIT_KIND_CVAR:
            rc = mpit_layer.mpi.category_get_cvars(native, len, indices);
            break;
        case MPIT_KIND_PVAR:
            rc = mpit_layer.mpi.category_get_pvars(native, len, indices);
            break;
        default:
            rc = mpit_layer.mpi.category_get_categories(native, len, indices);
            break;
        }
        if (rc == MPI_SUCCESS) {
            rc = mpit_to_view_array(member_kind, side, num < len ? num : len, indices);
        }
    } else {
        int *members = NULL;
        rc = mpit_ib_category_members(native, member_kind, &members, &num);
        if (rc == MPI_SUCCESS && len > 0) {
            memcpy(indices, members, sizeof(int) * (size_t)(num < len ? num : len));
        }
        free(members);
    }
out:
    mpit_leave();
    return rc;
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return category_members(cat_index, MPIT_KIND_CVAR, len, indices);
}
MPIT_ALIAS(category_get_cvars);

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return category_members(cat_index, MPIT_KIND_PVAR, len, indices);
}
MPIT_ALIAS(category_get_pvars);

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    return category_members(cat_index, MPIT_KIND_CATEGORY, len, indices);
}
MPIT_ALIAS(category_get_categories);

/*
 * Both sides' update numbers only grow, so their sum grows whenever either side changes; it
 * saturates at INT_MAX as ibmsg's does.
 */
int PMPI_T_category_changed(int *update_number)
{
    int mpi_stamp = 0;
    int ib_stamp = 0;

    if (update_number == NULL) {
        return mpit_is_initialized() ? MPI_T_ERR_INVALID : MPI_T_ERR_NOT_INITIALIZED;
    }
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (mpit_layer.have_mpi) {
        rc = mpit_layer.mpi.category_changed(&mpi_stamp);
    }
    if (rc == MPI_SUCCESS) {
        rc = mpit_map_error(ibmsg_t_category_changed(&ib_stamp));
    }
    if (rc == MPI_SUCCESS) {
        long long sum = (long long)mpi_stamp + (long long)ib_stamp;
        *update_number = sum > INT_MAX ? INT_MAX : (int)sum;
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(category_changed);

int PMPI_T_enum_get_info(MPI_T_enum enumtype, int *num, char *name, int *name_len)
{
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    ibmsg_t_enum_t ib = mpit_enum_unwrap(enumtype);
    if (ib != IBMSG_T_ENUM_NULL) {
        rc = mpit_map_error(ibmsg_t_enum_get_info(ib, num, name, name_len));
    } else if (mpit_layer.have_mpi) {
        rc = mpit_layer.mpi.enum_get_info(enumtype, num, name, name_len);
    } else {
        rc = MPI_T_ERR_INVALID;
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(enum_get_info);

int PMPI_T_enum_get_item(MPI_T_enum enumtype, int index, int *value, char *name, int *name_len)
{
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    ibmsg_t_enum_t ib = mpit_enum_unwrap(enumtype);
    if (ib != IBMSG_T_ENUM_NULL) {
        rc = mpit_map_error(ibmsg_t_enum_get_item(ib, index, value, name, name_len));
    } else if (mpit_layer.have_mpi) {
        rc = mpit_layer.mpi.enum_get_item(enumtype, index, value, name, name_len);
    } else {
        rc = MPI_T_ERR_INVALID;
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(enum_get_item);
