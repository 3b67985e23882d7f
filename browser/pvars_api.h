/*
 * The tool calls of the variable browser (ibmsg_pvars) as a table, so one browser walks either
 * ibmsg's tool API (include/ibmsg/tool.h, the default) or the standard MPI_T of a process with
 * libibmsg-mpit preloaded (--mpit: the merged view an MPI_T tool sees, perf/pvars_mpit.c). Every
 * entry has the signature and meaning of the ibmsg_t_ function it is named after; the MPI_T
 * backend translates datatypes, classes, verbosities, scopes and error codes to ibmsg's and
 * leaves bindings as the MPI's (bind_name names them).
 */
#ifndef IBMSG_PERF_PVARS_API_H
#define IBMSG_PERF_PVARS_API_H

#include <ibmsg/tool.h>

typedef struct pvars_api {
    const char *name; /* "ibmsg" or "MPI_T (<variant>)" */
    int (*init_thread)(int required, int *provided);
    int (*finalize)(void);
    int (*enum_get_info)(ibmsg_t_enum_t enumtype, int *num, char *name, int *name_len);
    int (*enum_get_item)(ibmsg_t_enum_t enumtype, int index, int *value, char *name, int *name_len);
    int (*cvar_get_num)(int *num);
    int (*cvar_get_info)(int index, char *name, int *name_len, int *verbosity,
                         ibmsg_t_datatype_t *datatype, ibmsg_t_enum_t *enumtype, char *desc,
                         int *desc_len, int *bind, int *scope);
    int (*cvar_handle_alloc)(int index, void *obj, ibmsg_t_cvar_handle_t *handle, int *count);
    int (*cvar_handle_free)(ibmsg_t_cvar_handle_t *handle);
    int (*cvar_read)(ibmsg_t_cvar_handle_t handle, void *buf);
    int (*pvar_get_num)(int *num);
    int (*pvar_get_info)(int index, char *name, int *name_len, int *verbosity, int *var_class,
                         ibmsg_t_datatype_t *datatype, ibmsg_t_enum_t *enumtype, char *desc,
                         int *desc_len, int *bind, int *readonly, int *continuous, int *atomic);
    int (*pvar_session_create)(ibmsg_t_pvar_session_t *session);
    int (*pvar_session_free)(ibmsg_t_pvar_session_t *session);
    int (*pvar_handle_alloc)(ibmsg_t_pvar_session_t session, int index, void *obj,
                             ibmsg_t_pvar_handle_t *handle, int *count);
    int (*pvar_start)(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle);
    int (*pvar_stop)(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle);
    int (*pvar_read)(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle, void *buf);
    /* ibmsg_t_pvar_read_total: the source's total; NULL where MPI_T has no such call. */
    int (*pvar_read_total)(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle, void *buf);
    int (*category_get_num)(int *num);
    int (*category_get_info)(int index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories);
    int (*category_get_cvars)(int index, int len, int indices[]);
    int (*category_get_pvars)(int index, int len, int indices[]);
    int (*category_get_categories)(int index, int len, int indices[]);
    int (*category_get_roots)(int len, int indices[], int *num);
    /* The name of a binding (NO_OBJECT is IBMSG_T_BIND_NO_OBJECT in both backends). */
    const char *(*bind_name)(int bind);
} pvars_api_t;

/*
 * The MPI_T backend of one MPI variant (compiled against that implementation's mpi.h), for a
 * process whose MPI_T_* symbols come from a preloaded libibmsg-mpit; NULL (with a message) when
 * they cannot be found.
 */
const pvars_api_t *pvars_mpit_api_mpich(void);
const pvars_api_t *pvars_mpit_api_ompi(void);

#endif
