/*
 * Open MPI's predefined datatypes are addresses of data symbols of libmpi (MPI_INT is
 * &ompi_mpi_int). The layer must load without libmpi (standalone mode), so it refers to them
 * weakly: with libmpi loaded they resolve to its objects, which is what the tool compares with;
 * without it they are NULL (only a tool that does not link libmpi can run then, and such a tool
 * has no Open MPI datatype constants either). MPICH's constants are plain integers.
 */
#ifndef IBMSG_MPIT_MPI_WEAK_H
#define IBMSG_MPIT_MPI_WEAK_H

#include <mpi.h>

#ifdef OPEN_MPI
#pragma weak ompi_mpi_datatype_null
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_unsigned
#pragma weak ompi_mpi_unsigned_long
#pragma weak ompi_mpi_unsigned_long_long
#pragma weak ompi_mpi_count
#pragma weak ompi_mpi_char
#pragma weak ompi_mpi_double
#endif

#endif
