/*
 * MPI-4 events and timestamp sources. ibmsg has no events, so the view's event indices are the
 * MPI library's own and these calls go straight through (category members are renumbered in
 * category.c). Without an MPI library, ibmsg's (empty) event list and its one timestamp source
 * are served. Only built against an MPI-4 mpi.h.
 */
#include <stdbool.h>

#include "mpit/layer.h"

#if MPIT_HAVE_EVENTS

/* Forward to the MPI library, or return fallback (evaluated only then) when there is none. */
#define EVENT_FORWARD(name, fallback, ...)                        \
    do {                                                          \
        if (!mpit_is_initialized()) {                             \
            return MPI_T_ERR_NOT_INITIALIZED;                     \
        }                                                         \
        if (mpit_layer.have_mpi && mpit_layer.mpi.name != NULL) { \
            return mpit_layer.mpi.name(__VA_ARGS__);              \
        }                                                         \
        return (fallback);                                        \
    } while (0)

int PMPI_T_event_get_num(int *num_events)
{
    EVENT_FORWARD(event_get_num, mpit_map_error(ibmsg_t_event_get_num(num_events)), num_events);
}
MPIT_ALIAS(event_get_num);

int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    EVENT_FORWARD(event_get_info, MPI_T_ERR_INVALID_INDEX, event_index, name, name_len, verbosity,
                  array_of_datatypes, array_of_displacements, num_elements, enumtype, info, desc,
                  desc_len, bind);
}
MPIT_ALIAS(event_get_info);

int PMPI_T_event_get_index(const char *name, int *event_index)
{
    EVENT_FORWARD(event_get_index, MPI_T_ERR_INVALID_NAME, name, event_index);
}
MPIT_ALIAS(event_get_index);

int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    EVENT_FORWARD(event_handle_alloc, MPI_T_ERR_INVALID_INDEX, event_index, obj_handle, info,
                  event_registration);
}
MPIT_ALIAS(event_handle_alloc);

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function)
{
    EVENT_FORWARD(event_handle_free, MPI_T_ERR_INVALID_HANDLE, event_registration, user_data,
                  free_cb_function);
}
MPIT_ALIAS(event_handle_free);

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    EVENT_FORWARD(event_handle_get_info, MPI_T_ERR_INVALID_HANDLE, event_registration, info_used);
}
MPIT_ALIAS(event_handle_get_info);

int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    EVENT_FORWARD(event_handle_set_info, MPI_T_ERR_INVALID_HANDLE, event_registration, info);
}
MPIT_ALIAS(event_handle_set_info);

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function event_cb_function)
{
    EVENT_FORWARD(event_register_callback, MPI_T_ERR_INVALID_HANDLE, event_registration, cb_safety,
                  info, user_data, event_cb_function);
}
MPIT_ALIAS(event_register_callback);

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    EVENT_FORWARD(event_callback_get_info, MPI_T_ERR_INVALID_HANDLE, event_registration, cb_safety,
                  info_used);
}
MPIT_ALIAS(event_callback_get_info);

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info)
{
    EVENT_FORWARD(event_callback_set_info, MPI_T_ERR_INVALID_HANDLE, event_registration, cb_safety,
                  info);
}
MPIT_ALIAS(event_callback_set_info);

int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function)
{
    EVENT_FORWARD(event_set_dropped_handler, MPI_T_ERR_INVALID_HANDLE, event_registration,
                  dropped_cb_function);
}
MPIT_ALIAS(event_set_dropped_handler);

int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    EVENT_FORWARD(event_read, MPI_T_ERR_INVALID_HANDLE, event_instance, element_index, buffer);
}
MPIT_ALIAS(event_read);

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    EVENT_FORWARD(event_copy, MPI_T_ERR_INVALID_HANDLE, event_instance, buffer);
}
MPIT_ALIAS(event_copy);

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    EVENT_FORWARD(event_get_timestamp, MPI_T_ERR_INVALID_HANDLE, event_instance, event_timestamp);
}
MPIT_ALIAS(event_get_timestamp);

int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    EVENT_FORWARD(event_get_source, MPI_T_ERR_INVALID_HANDLE, event_instance, source_index);
}
MPIT_ALIAS(event_get_source);

int PMPI_T_source_get_num(int *num_sources)
{
    EVENT_FORWARD(source_get_num, mpit_map_error(ibmsg_t_source_get_num(num_sources)), num_sources);
}
MPIT_ALIAS(source_get_num);

int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                           MPI_Count *max_ticks, MPI_Info *info)
{
    if (!mpit_is_initialized()) {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    if (mpit_layer.have_mpi && mpit_layer.mpi.source_get_info != NULL) {
        return mpit_layer.mpi.source_get_info(source_index, name, name_len, desc, desc_len,
                                              ordering, ticks_per_second, max_ticks, info);
    }
    ibmsg_t_source_order_t ib_order;
    long long ticks, max;
    int rc = ibmsg_t_source_get_info(source_index, name, name_len, desc, desc_len, &ib_order,
                                     &ticks, &max, NULL);
    if (rc != IBMSG_OK) {
        return mpit_map_error(rc);
    }
    if (ordering != NULL) {
        *ordering =
            ib_order == IBMSG_T_SOURCE_ORDERED ? MPI_T_SOURCE_ORDERED : MPI_T_SOURCE_UNORDERED;
    }
    if (ticks_per_second != NULL) {
        *ticks_per_second = ticks;
    }
    if (max_ticks != NULL) {
        *max_ticks = max;
    }
    if (info != NULL) {
        *info = MPI_INFO_NULL;
    }
    return MPI_SUCCESS;
}
MPIT_ALIAS(source_get_info);

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    if (!mpit_is_initialized()) {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    if (mpit_layer.have_mpi && mpit_layer.mpi.source_get_timestamp != NULL) {
        return mpit_layer.mpi.source_get_timestamp(source_index, timestamp);
    }
    long long ts;
    int rc = ibmsg_t_source_get_timestamp(source_index, &ts);
    if (rc == IBMSG_OK && timestamp != NULL) {
        *timestamp = ts;
    }
    return mpit_map_error(rc);
}
MPIT_ALIAS(source_get_timestamp);

/*
 * Members of kind event: event indices are the MPI library's, so only the category is mapped.
 * count: their number to *out (get_num_events); else up to len of their indices (get_events).
 */
static int category_events(int cat_index, bool count, int len, int *out)
{
    mpit_side_t side;
    int native;
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_lookup(MPIT_KIND_CATEGORY, cat_index, &side, &native);
    if (rc == MPI_SUCCESS && side == MPIT_SIDE_MPI) {
        if (count) {
            rc = mpit_layer.mpi.category_get_num_events != NULL
                     ? mpit_layer.mpi.category_get_num_events(native, out)
                     : MPI_T_ERR_INVALID_INDEX;
        } else {
            rc = mpit_layer.mpi.category_get_events != NULL
                     ? mpit_layer.mpi.category_get_events(native, len, out)
                     : MPI_T_ERR_INVALID_INDEX;
        }
    } else if (rc == MPI_SUCCESS) {
        rc = mpit_map_error(count ? ibmsg_t_category_get_num_events(native, out)
                                  : ibmsg_t_category_get_events(native, len, out));
    }
    mpit_leave();
    return rc;
}

int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    return category_events(cat_index, true, 0, num_events);
}
MPIT_ALIAS(category_get_num_events);

int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    return category_events(cat_index, false, len, indices);
}
MPIT_ALIAS(category_get_events);

#endif
