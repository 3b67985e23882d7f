#include "mpit/mpi_ops.h"

#include <dlfcn.h>
#include <string.h>

#include "util/log.h"

/* PMPI_T_x first: an MPI library's MPI_T_x may be a profiling wrapper's, PMPI_T_x is its own. */
static void *mpi_ops_lookup(const char *pmpi_name)
{
    void *fn = dlsym(RTLD_NEXT, pmpi_name);
    if (fn == NULL) {
        fn = dlsym(RTLD_NEXT, pmpi_name + 1);
    }
    return fn;
}

int mpit_mpi_ops_resolve(mpit_mpi_ops_t *ops)
{
    int missing = 0;
    memset(ops, 0, sizeof(*ops));
#define MPIT_MPI_OP_REQUIRED(name)                          \
    *(void **)&ops->name = mpi_ops_lookup("PMPI_T_" #name); \
    missing += ops->name == NULL;
#define MPIT_MPI_OP_OPTIONAL(name) *(void **)&ops->name = mpi_ops_lookup("PMPI_T_" #name);
    MPIT_MPI_OPS_31(MPIT_MPI_OP_REQUIRED)
    MPIT_MPI_OPS_40(MPIT_MPI_OP_OPTIONAL)
#undef MPIT_MPI_OP_REQUIRED
#undef MPIT_MPI_OP_OPTIONAL
    if (ops->init_thread == NULL) {
        memset(ops, 0, sizeof(*ops));
        return 0;
    }
    if (missing != 0) {
        util_warn("mpit: the MPI library lacks %d MPI_T functions; serving ibmsg's variables only",
                  missing);
        memset(ops, 0, sizeof(*ops));
        return 0;
    }
    return 1;
}
