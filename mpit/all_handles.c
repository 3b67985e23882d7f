/*
 * MPICH's mpi.h makes MPI_T_PVAR_ALL_HANDLES a data symbol of libmpich, not a constant. The
 * layer defines it too, so a tool linked against the layer alone (no libmpich) resolves it.
 * When libmpich is loaded as well, the first definition in lookup order (ours, preloaded) is the
 * one every module uses: libmpich reads it through its GOT, and so does this layer, so the value
 * the tool passes, the one we forward and the one MPICH compares with are the same pointer.
 * MPICH also checks the object it points to (its handle tag), so once libmpich is found its own
 * object's contents are copied into ours after its MPI_T_init_thread (mpit_all_handles_adopt).
 */
#include "mpit/layer.h"

#include <dlfcn.h>
#include <string.h>

#if defined(MPICH)
#define ALL_HANDLES_OBJ_SIZE 512 /* more than MPICH's struct MPIR_T_pvar_handle_s */

static struct {
    _Alignas(16) char bytes[ALL_HANDLES_OBJ_SIZE];
} all_handles_obj;

__attribute__((visibility("default"))) struct MPIR_T_pvar_handle_s *const MPI_T_PVAR_ALL_HANDLES =
    (struct MPIR_T_pvar_handle_s *)(void *)&all_handles_obj;

void mpit_all_handles_adopt(void)
{
    void *const *theirs = dlsym(RTLD_NEXT, "MPI_T_PVAR_ALL_HANDLES");
    if (theirs == NULL || *theirs == NULL || *theirs == (void *)&all_handles_obj) {
        return;
    }
    /* Copy only from memory libmpich maps: both ends inside the same object file. */
    Dl_info first, last;
    const char *src = *theirs;
    if (dladdr(src, &first) == 0 || dladdr(src + ALL_HANDLES_OBJ_SIZE - 1, &last) == 0 ||
        first.dli_fbase != last.dli_fbase) {
        return;
    }
    memcpy(&all_handles_obj, src, ALL_HANDLES_OBJ_SIZE);
}
#else
void mpit_all_handles_adopt(void)
{
}
#endif
