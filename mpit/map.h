/*
 * ibmsg's tool-interface constants in the terms of the mpi.h this variant is compiled against:
 * datatypes, classes, verbosities, bindings, scopes, thread levels and error codes. The MPI
 * libraries number these differently (MPICH's MPI_T_ERR_INVALID is 74, Open MPI's 72; Open MPI's
 * MPI_Datatype is the address of a symbol of libmpi), so every value crosses one of these tables.
 */
#ifndef IBMSG_MPIT_MAP_H
#define IBMSG_MPIT_MAP_H

#include <mpi.h>
#include <ibmsg/tool.h>

/** The MPI_Datatype of an ibmsg datatype; MPI_DATATYPE_NULL for an unknown one. */
MPI_Datatype mpit_map_datatype(ibmsg_t_datatype_t datatype);

/** Bytes of one element of an ibmsg datatype, 0 for an unknown one. */
int mpit_map_datatype_size(ibmsg_t_datatype_t datatype);

/** MPI_T_VERBOSITY_* of an IBMSG_T_VERBOSITY_* (unknown: the most detailed, MPIDEV_ALL). */
int mpit_map_verbosity(int verbosity);

/** MPI_T_PVAR_CLASS_* of an IBMSG_T_PVAR_CLASS_* (unknown: GENERIC). */
int mpit_map_class(int var_class);

/** IBMSG_T_PVAR_CLASS_* of an MPI_T_PVAR_CLASS_*, or -1 when it has none. */
int mpit_map_class_to_ibmsg(int mpi_class);

/** MPI_T_SCOPE_* of an IBMSG_T_SCOPE_* (unknown: READONLY). */
int mpit_map_scope(int scope);

/**
 * MPI_T_BIND_* of an IBMSG_T_BIND_*: NO_OBJECT for everything, because MPI has no binding for
 * ibmsg's objects; such variables are shown as arrays over their objects (see mpit/README.md).
 */
int mpit_map_bind(int bind);

/** MPI_THREAD_* of an IBMSG_T_THREAD_* and back (both use 0..3 in order; kept explicit). */
int mpit_map_thread_level(int ibmsg_level);
int mpit_map_thread_level_to_ibmsg(int mpi_level);

/**
 * The MPI error code of an ibmsg status: IBMSG_OK -> MPI_SUCCESS, IBMSG_T_ERR_X -> MPI_T_ERR_X,
 * IBMSG_ERR_NO_MEMORY -> MPI_T_ERR_MEMORY, IBMSG_ERR_INVALID -> MPI_T_ERR_INVALID, anything
 * else -> MPI_ERR_OTHER.
 */
int mpit_map_error(int status);

#endif
