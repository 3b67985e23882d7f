/*
 * The variable browser's backends: ibmsg's own tool API as a pvars_api_t (the default) and the
 * pointer to the one in use (perf/pvars_mpit_launch.c sets the MPI_T one for --mpit).
 */
#include <ibmsg/tool.h>

#include "browser/pvars.h"

static const char *pvars_native_bind_name(int bind)
{
    static const char *const names[] = {"NO_OBJECT", "CONTEXT", "ENDPOINT", "PORT",
                                        "THREAD",    "REQUEST", "MEMORY",   "INFO"};

    return (bind >= 0 && bind < (int)(sizeof(names) / sizeof(names[0]))) ? names[bind] : "UNKNOWN";
}

/* ibmsg's tool API, the default backend. */
const pvars_api_t pvars_native_api = {
    .name = "ibmsg",
    .init_thread = ibmsg_t_init_thread,
    .finalize = ibmsg_t_finalize,
    .enum_get_info = ibmsg_t_enum_get_info,
    .enum_get_item = ibmsg_t_enum_get_item,
    .cvar_get_num = ibmsg_t_cvar_get_num,
    .cvar_get_info = ibmsg_t_cvar_get_info,
    .cvar_handle_alloc = ibmsg_t_cvar_handle_alloc,
    .cvar_handle_free = ibmsg_t_cvar_handle_free,
    .cvar_read = ibmsg_t_cvar_read,
    .pvar_get_num = ibmsg_t_pvar_get_num,
    .pvar_get_info = ibmsg_t_pvar_get_info,
    .pvar_session_create = ibmsg_t_pvar_session_create,
    .pvar_session_free = ibmsg_t_pvar_session_free,
    .pvar_handle_alloc = ibmsg_t_pvar_handle_alloc,
    .pvar_start = ibmsg_t_pvar_start,
    .pvar_stop = ibmsg_t_pvar_stop,
    .pvar_read = ibmsg_t_pvar_read,
    .pvar_read_total = ibmsg_t_pvar_read_total,
    .category_get_num = ibmsg_t_category_get_num,
    .category_get_info = ibmsg_t_category_get_info,
    .category_get_cvars = ibmsg_t_category_get_cvars,
    .category_get_pvars = ibmsg_t_category_get_pvars,
    .category_get_categories = ibmsg_t_category_get_categories,
    .category_get_roots = ibmsg_t_category_get_roots,
    .bind_name = pvars_native_bind_name,
};

/* The backend in use: pvars_native_api, or the MPI_T one of --mpit. */
const pvars_api_t *pvars_api = &pvars_native_api;

const char *pvars_bind_name(int bind)
{
    return pvars_api->bind_name(bind);
}
