/*
 * MPI-4 events and timestamp sources. ibmsg exports no events, so every event index is out of
 * range and no event registration handle is ever valid; it has one source, CLOCK_MONOTONIC.
 */
#include "counters/registry/tool_internal.h"

#include "util/string_out.h"

#include <limits.h>
#include <time.h>

#define SOURCE_NAME "ibmsg_monotonic"
#define SOURCE_DESC "CLOCK_MONOTONIC in nanoseconds"

int ibmsg_t_event_get_num(int *num_events)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (num_events == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *num_events = 0;
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                           ibmsg_t_datatype_t array_of_datatypes[], long array_of_displacements[],
                           int *num_elements, ibmsg_t_enum_t *enumtype, ibmsg_info_t *info,
                           char *desc, int *desc_len, int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
    (void)desc_len, (void)bind;
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    return IBMSG_T_ERR_INVALID_INDEX;
}

int ibmsg_t_event_get_index(const char *name, int *event_index)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (name == NULL || event_index == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    return IBMSG_T_ERR_INVALID_NAME;
}

int ibmsg_t_event_handle_alloc(int event_index, void *obj_handle, ibmsg_info_t info,
                               ibmsg_t_event_registration_t *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    return IBMSG_T_ERR_INVALID_INDEX;
}

int ibmsg_t_event_handle_free(ibmsg_t_event_registration_t event_registration, void *user_data,
                              ibmsg_t_event_free_cb_function_t free_cb_function)
{
    (void)event_registration, (void)user_data, (void)free_cb_function;
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    return IBMSG_T_ERR_INVALID_HANDLE;
}

int ibmsg_t_event_register_callback(ibmsg_t_event_registration_t event_registration,
                                    ibmsg_t_cb_safety_t cb_safety, ibmsg_info_t info,
                                    void *user_data, ibmsg_t_event_cb_function_t event_cb_function)
{
    (void)event_registration, (void)cb_safety, (void)info, (void)user_data;
    (void)event_cb_function;
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    return IBMSG_T_ERR_INVALID_HANDLE;
}

int ibmsg_t_event_set_dropped_handler(ibmsg_t_event_registration_t event_registration,
                                      ibmsg_t_event_dropped_cb_function_t dropped_cb_function)
{
    (void)event_registration, (void)dropped_cb_function;
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    return IBMSG_T_ERR_INVALID_HANDLE;
}

int ibmsg_t_source_get_num(int *num_sources)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (num_sources == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    *num_sources = 1;
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                            ibmsg_t_source_order_t *ordering, long long *ticks_per_second,
                            long long *max_ticks, ibmsg_info_t *info)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (source_index != 0) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    if (info != NULL) {
        /* MPI hands the tool a new (here empty) info object that the tool frees. */
        int ret = ibmsg_info_create(info);
        if (ret != IBMSG_OK) {
            return IBMSG_T_ERR_MEMORY;
        }
    }
    util_string_out(SOURCE_NAME, name, name_len);
    util_string_out(SOURCE_DESC, desc, desc_len);
    if (ordering != NULL) {
        *ordering = IBMSG_T_SOURCE_ORDERED;
    }
    if (ticks_per_second != NULL) {
        *ticks_per_second = 1000000000LL;
    }
    if (max_ticks != NULL) {
        *max_ticks = LLONG_MAX;
    }
    return IBMSG_T_SUCCESS;
}

int ibmsg_t_source_get_timestamp(int source_index, long long *timestamp)
{
    struct timespec ts;

    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (source_index != 0) {
        return IBMSG_T_ERR_INVALID_INDEX;
    }
    if (timestamp == NULL) {
        return IBMSG_T_ERR_INVALID;
    }
    clock_gettime(CLOCK_MONOTONIC, &ts);
    *timestamp = (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
    return IBMSG_T_SUCCESS;
}
