/*
 * The MPI library's own MPI_T, reached past this layer: every function is looked up once with
 * dlsym(RTLD_NEXT, "PMPI_T_x") (falling back to "MPI_T_x"), so calls go to the next library in
 * the lookup order, not back to us. The pointer types come from the prototypes of the mpi.h this
 * variant is compiled against.
 */
#ifndef IBMSG_MPIT_MPI_OPS_H
#define IBMSG_MPIT_MPI_OPS_H

#include <mpi.h>

/* The MPI-3.1 functions: all of them must be found for the MPI side to be used. */
#define MPIT_MPI_OPS_31(X)     \
    X(init_thread)             \
    X(finalize)                \
    X(enum_get_info)           \
    X(enum_get_item)           \
    X(cvar_get_num)            \
    X(cvar_get_info)           \
    X(cvar_get_index)          \
    X(cvar_handle_alloc)       \
    X(cvar_handle_free)        \
    X(cvar_read)               \
    X(cvar_write)              \
    X(pvar_get_num)            \
    X(pvar_get_info)           \
    X(pvar_get_index)          \
    X(pvar_session_create)     \
    X(pvar_session_free)       \
    X(pvar_handle_alloc)       \
    X(pvar_handle_free)        \
    X(pvar_start)              \
    X(pvar_stop)               \
    X(pvar_read)               \
    X(pvar_write)              \
    X(pvar_reset)              \
    X(pvar_readreset)          \
    X(category_get_num)        \
    X(category_get_info)       \
    X(category_get_index)      \
    X(category_get_cvars)      \
    X(category_get_pvars)      \
    X(category_get_categories) \
    X(category_changed)

/* MPI-4.0 events and sources (MPICH 4 has them, Open MPI 4.1 does not). Optional. */
#if MPI_VERSION >= 4
#define MPIT_HAVE_EVENTS 1
#define MPIT_MPI_OPS_40(X)       \
    X(category_get_num_events)   \
    X(category_get_events)       \
    X(event_get_num)             \
    X(event_get_info)            \
    X(event_get_index)           \
    X(event_handle_alloc)        \
    X(event_handle_free)         \
    X(event_handle_get_info)     \
    X(event_handle_set_info)     \
    X(event_register_callback)   \
    X(event_callback_get_info)   \
    X(event_callback_set_info)   \
    X(event_set_dropped_handler) \
    X(event_read)                \
    X(event_copy)                \
    X(event_get_timestamp)       \
    X(event_get_source)          \
    X(source_get_num)            \
    X(source_get_info)           \
    X(source_get_timestamp)
#else
#define MPIT_HAVE_EVENTS 0
#define MPIT_MPI_OPS_40(X)
#endif

typedef struct mpit_mpi_ops {
#define MPIT_MPI_OP_FIELD(name) __typeof__(PMPI_T_##name) *name;
    MPIT_MPI_OPS_31(MPIT_MPI_OP_FIELD)
    MPIT_MPI_OPS_40(MPIT_MPI_OP_FIELD)
#undef MPIT_MPI_OP_FIELD
} mpit_mpi_ops_t;

/**
 * Look up the next library's MPI_T. Returns 1 and fills *ops when every MPI-3.1 function was
 * found (MPI-4.0 ones may stay NULL), else 0 with *ops zeroed: no MPI library is loaded.
 */
int mpit_mpi_ops_resolve(mpit_mpi_ops_t *ops);

#endif
