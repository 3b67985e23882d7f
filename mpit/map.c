#include "mpit/map.h"

#include "mpit/mpi_weak.h"

MPI_Datatype mpit_map_datatype(ibmsg_t_datatype_t datatype)
{
    switch (datatype) {
    case IBMSG_T_INT:
        return MPI_INT;
    case IBMSG_T_UNSIGNED:
        return MPI_UNSIGNED;
    case IBMSG_T_UNSIGNED_LONG:
        return MPI_UNSIGNED_LONG;
    case IBMSG_T_UNSIGNED_LONG_LONG:
        return MPI_UNSIGNED_LONG_LONG;
    case IBMSG_T_COUNT:
        return MPI_COUNT;
    case IBMSG_T_CHAR:
        return MPI_CHAR;
    case IBMSG_T_DOUBLE:
        return MPI_DOUBLE;
    case IBMSG_T_DATATYPE_NULL:
        break;
    }
    return MPI_DATATYPE_NULL;
}

int mpit_map_datatype_size(ibmsg_t_datatype_t datatype)
{
    switch (datatype) {
    case IBMSG_T_INT:
        return (int)sizeof(int);
    case IBMSG_T_UNSIGNED:
        return (int)sizeof(unsigned);
    case IBMSG_T_UNSIGNED_LONG:
        return (int)sizeof(unsigned long);
    case IBMSG_T_UNSIGNED_LONG_LONG:
        return (int)sizeof(unsigned long long);
    case IBMSG_T_COUNT:
        return (int)sizeof(MPI_Count);
    case IBMSG_T_CHAR:
        return 1;
    case IBMSG_T_DOUBLE:
        return (int)sizeof(double);
    case IBMSG_T_DATATYPE_NULL:
        break;
    }
    return 0;
}

int mpit_map_verbosity(int verbosity)
{
    switch (verbosity) {
    case IBMSG_T_VERBOSITY_USER_BASIC:
        return MPI_T_VERBOSITY_USER_BASIC;
    case IBMSG_T_VERBOSITY_USER_DETAIL:
        return MPI_T_VERBOSITY_USER_DETAIL;
    case IBMSG_T_VERBOSITY_USER_ALL:
        return MPI_T_VERBOSITY_USER_ALL;
    case IBMSG_T_VERBOSITY_TUNER_BASIC:
        return MPI_T_VERBOSITY_TUNER_BASIC;
    case IBMSG_T_VERBOSITY_TUNER_DETAIL:
        return MPI_T_VERBOSITY_TUNER_DETAIL;
    case IBMSG_T_VERBOSITY_TUNER_ALL:
        return MPI_T_VERBOSITY_TUNER_ALL;
    case IBMSG_T_VERBOSITY_MPIDEV_BASIC:
        return MPI_T_VERBOSITY_MPIDEV_BASIC;
    case IBMSG_T_VERBOSITY_MPIDEV_DETAIL:
        return MPI_T_VERBOSITY_MPIDEV_DETAIL;
    default:
        return MPI_T_VERBOSITY_MPIDEV_ALL;
    }
}

/* Index i of both tables is the same class. */
static const int map_ibmsg_classes[] = {
    IBMSG_T_PVAR_CLASS_STATE,         IBMSG_T_PVAR_CLASS_LEVEL,
    IBMSG_T_PVAR_CLASS_SIZE,          IBMSG_T_PVAR_CLASS_PERCENTAGE,
    IBMSG_T_PVAR_CLASS_HIGHWATERMARK, IBMSG_T_PVAR_CLASS_LOWWATERMARK,
    IBMSG_T_PVAR_CLASS_COUNTER,       IBMSG_T_PVAR_CLASS_AGGREGATE,
    IBMSG_T_PVAR_CLASS_TIMER,         IBMSG_T_PVAR_CLASS_GENERIC,
};
static const int map_mpi_classes[] = {
    MPI_T_PVAR_CLASS_STATE,      MPI_T_PVAR_CLASS_LEVEL,         MPI_T_PVAR_CLASS_SIZE,
    MPI_T_PVAR_CLASS_PERCENTAGE, MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_PVAR_CLASS_LOWWATERMARK,
    MPI_T_PVAR_CLASS_COUNTER,    MPI_T_PVAR_CLASS_AGGREGATE,     MPI_T_PVAR_CLASS_TIMER,
    MPI_T_PVAR_CLASS_GENERIC,
};

int mpit_map_class(int var_class)
{
    for (unsigned i = 0; i < sizeof(map_ibmsg_classes) / sizeof(map_ibmsg_classes[0]); i++) {
        if (map_ibmsg_classes[i] == var_class) {
            return map_mpi_classes[i];
        }
    }
    return MPI_T_PVAR_CLASS_GENERIC;
}

int mpit_map_class_to_ibmsg(int mpi_class)
{
    for (unsigned i = 0; i < sizeof(map_mpi_classes) / sizeof(map_mpi_classes[0]); i++) {
        if (map_mpi_classes[i] == mpi_class) {
            return map_ibmsg_classes[i];
        }
    }
    return -1;
}

int mpit_map_scope(int scope)
{
    switch (scope) {
    case IBMSG_T_SCOPE_CONSTANT:
        return MPI_T_SCOPE_CONSTANT;
    case IBMSG_T_SCOPE_LOCAL:
        return MPI_T_SCOPE_LOCAL;
    case IBMSG_T_SCOPE_GROUP:
        return MPI_T_SCOPE_GROUP;
    case IBMSG_T_SCOPE_GROUP_EQ:
        return MPI_T_SCOPE_GROUP_EQ;
    case IBMSG_T_SCOPE_ALL:
        return MPI_T_SCOPE_ALL;
    case IBMSG_T_SCOPE_ALL_EQ:
        return MPI_T_SCOPE_ALL_EQ;
    default:
        return MPI_T_SCOPE_READONLY;
    }
}

int mpit_map_bind(int bind)
{
    (void)bind;
    return MPI_T_BIND_NO_OBJECT;
}

int mpit_map_thread_level(int ibmsg_level)
{
    switch (ibmsg_level) {
    case IBMSG_T_THREAD_SINGLE:
        return MPI_THREAD_SINGLE;
    case IBMSG_T_THREAD_FUNNELED:
        return MPI_THREAD_FUNNELED;
    case IBMSG_T_THREAD_SERIALIZED:
        return MPI_THREAD_SERIALIZED;
    default:
        return MPI_THREAD_MULTIPLE;
    }
}

int mpit_map_thread_level_to_ibmsg(int mpi_level)
{
    if (mpi_level == MPI_THREAD_SINGLE) {
        return IBMSG_T_THREAD_SINGLE;
    }
    if (mpi_level == MPI_THREAD_FUNNELED) {
        return IBMSG_T_THREAD_FUNNELED;
    }
    if (mpi_level == MPI_THREAD_SERIALIZED) {
        return IBMSG_T_THREAD_SERIALIZED;
    }
    return IBMSG_T_THREAD_MULTIPLE;
}

int mpit_map_error(int status)
{
    switch (status) {
    case IBMSG_OK:
        return MPI_SUCCESS;
    case IBMSG_T_ERR_MEMORY:
    case IBMSG_ERR_NO_MEMORY:
        return MPI_T_ERR_MEMORY;
    case IBMSG_T_ERR_NOT_INITIALIZED:
        return MPI_T_ERR_NOT_INITIALIZED;
    case IBMSG_T_ERR_CANNOT_INIT:
        return MPI_T_ERR_CANNOT_INIT;
    case IBMSG_T_ERR_NOT_SUPPORTED:
#ifdef MPI_T_ERR_NOT_SUPPORTED
        return MPI_T_ERR_NOT_SUPPORTED;
#else
        return MPI_T_ERR_INVALID; /* MPI-3.1 has no NOT_SUPPORTED */
#endif
    case IBMSG_T_ERR_NOT_ACCESSIBLE:
#ifdef MPI_T_ERR_NOT_ACCESSIBLE
        return MPI_T_ERR_NOT_ACCESSIBLE;
#else
        return MPI_T_ERR_INVALID;
#endif
    case IBMSG_T_ERR_INVALID:
    case IBMSG_ERR_INVALID:
        return MPI_T_ERR_INVALID;
    case IBMSG_T_ERR_INVALID_INDEX:
        return MPI_T_ERR_INVALID_INDEX;
    case IBMSG_T_ERR_INVALID_ITEM:
        return MPI_T_ERR_INVALID_ITEM;
    case IBMSG_T_ERR_INVALID_SESSION:
        return MPI_T_ERR_INVALID_SESSION;
    case IBMSG_T_ERR_INVALID_HANDLE:
        return MPI_T_ERR_INVALID_HANDLE;
    case IBMSG_T_ERR_INVALID_NAME:
        return MPI_T_ERR_INVALID_NAME;
    case IBMSG_T_ERR_OUT_OF_HANDLES:
        return MPI_T_ERR_OUT_OF_HANDLES;
    case IBMSG_T_ERR_OUT_OF_SESSIONS:
        return MPI_T_ERR_OUT_OF_SESSIONS;
    case IBMSG_T_ERR_CVAR_SET_NOT_NOW:
        return MPI_T_ERR_CVAR_SET_NOT_NOW;
    case IBMSG_T_ERR_CVAR_SET_NEVER:
        return MPI_T_ERR_CVAR_SET_NEVER;
    case IBMSG_T_ERR_PVAR_NO_STARTSTOP:
        return MPI_T_ERR_PVAR_NO_STARTSTOP;
    case IBMSG_T_ERR_PVAR_NO_WRITE:
        return MPI_T_ERR_PVAR_NO_WRITE;
    case IBMSG_T_ERR_PVAR_NO_ATOMIC:
        return MPI_T_ERR_PVAR_NO_ATOMIC;
    default:
        return MPI_ERR_OTHER;
    }
}
