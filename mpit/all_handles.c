/*
 * MPICH's mpi.h makes MPI_T_PVAR_ALL_HANDLES a data symbol of libmpich, not a constant. The
 * layer defines it too, so a tool linked against the layer alone (no libmpich) resolves it.
 * When libmpich is loaded as well, the first definition in lookup order (ours, preloaded) is the
 * one every module uses: libmpich reads it through its GOT, and so does this layer, so the value
 * the tool passes, the one we forward and the one MPICH compares with are the same. It points to
 * a zeroed object as MPICH's does, in case MPICH looks at it.
 */
#include <mpi.h>

#if defined(MPICH)
static struct {
    char bytes[256];
} all_handles_obj;

__attribute__((visibility("default"))) struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES =
    (struct MPIR_T_pvar_handle_s *)(void *)&all_handles_obj;
#endif
