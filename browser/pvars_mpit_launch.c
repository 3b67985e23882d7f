/*
 * --mpit: the browser re-executes itself with LD_PRELOAD=<libibmsg-mpit-VARIANT>:<its libmpi>, as
 * a user runs an MPI_T tool, and in that child walks the MPI_T backend (perf/pvars_mpit.c).
 */
#include <ibmsg/status.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "browser/pvars.h"

/* The MPI variants built in: the backend, where the layer is and which libmpi goes with it. */
typedef struct pvars_variant {
    const char *name;
    const pvars_api_t *(*api)(void);
    const char *layer_build;
    const char *layer_install; /* relative to the browser's directory, or absolute */
    const char *mpi_lib;
} pvars_variant_t;

static const pvars_variant_t pvars_variants[] = {
#ifdef PVARS_HAVE_MPIT_MPICH
    {"mpich", pvars_mpit_api_mpich, PVARS_MPIT_LAYER_BUILD_MPICH, PVARS_MPIT_LAYER_INSTALL_MPICH,
     PVARS_MPIT_MPI_MPICH},
#endif
#ifdef PVARS_HAVE_MPIT_OMPI
    {"ompi", pvars_mpit_api_ompi, PVARS_MPIT_LAYER_BUILD_OMPI, PVARS_MPIT_LAYER_INSTALL_OMPI,
     PVARS_MPIT_MPI_OMPI},
#endif
    {NULL, NULL, NULL, NULL, NULL},
};

#define PVARS_MPIT_CHILD_ENV "IBMSG_PVARS_MPIT_CHILD"

static const pvars_variant_t *pvars_variant_find(const char *name)
{
    for (const pvars_variant_t *v = pvars_variants; v->name != NULL; v++) {
        if (name[0] == '\0' || strcmp(name, v->name) == 0) {
            return v;
        }
    }
    return NULL;
}

/*
 * The layer an installed browser goes with: layer_install beside the running executable, so a
 * tree installed under any prefix (or moved) finds its own layer. Fills buf; 0 if it is readable.
 */
static int pvars_layer_installed(const pvars_variant_t *var, char *buf, size_t size)
{
    if (var->layer_install[0] == '/') {
        snprintf(buf, size, "%s", var->layer_install);
        return access(buf, R_OK);
    }
    char exe[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
    if (n <= 0) {
        snprintf(buf, size, "%s", var->layer_install);
        return -1;
    }
    exe[n] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash != NULL) {
        *slash = '\0';
    }
    int len = snprintf(buf, size, "%s/%s", exe, var->layer_install);
    return len > 0 && (size_t)len < size ? access(buf, R_OK) : -1;
}

/*
 * --mpit: in the parent, re-execute under LD_PRELOAD of the layer and the variant's libmpi (as a
 * user runs an MPI_T tool); in that child, take the MPI_T backend. Returns IBMSG_OK in the child,
 * an error (reported) when the exec or the backend fails; the parent never returns on success.
 */
int pvars_mpit_setup(pvars_state_t *st, char **argv)
{
    const pvars_variant_t *var = pvars_variant_find(st->mpit);

    if (var == NULL) {
        fprintf(stderr, "ibmsg_pvars: --mpit: no MPI variant '%s' built in (%s)\n", st->mpit,
                pvars_variants[0].name != NULL ? "have: mpich and/or ompi" : "none was found");
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    if (getenv(PVARS_MPIT_CHILD_ENV) != NULL) {
        pvars_api = var->api();
        return pvars_api != NULL ? IBMSG_OK : IBMSG_ERR_NOT_FOUND;
    }
    /* Chosen: the environment's, the installed one beside this executable, the build tree's. */
    char installed[PATH_MAX];
    const char *layer = getenv("IBMSG_PVARS_MPIT_LAYER");
    if (layer == NULL || layer[0] == '\0') {
        int have_installed = pvars_layer_installed(var, installed, sizeof(installed)) == 0;
        layer =
            have_installed || access(var->layer_build, R_OK) != 0 ? installed : var->layer_build;
    }
    const char *old = getenv("LD_PRELOAD");
    size_t len = strlen(layer) + strlen(var->mpi_lib) + (old != NULL ? strlen(old) : 0) + 3;
    char *preload = malloc(len);
    if (preload == NULL) {
        return pvars_no_memory();
    }
    snprintf(preload, len, "%s:%s%s%s", layer, var->mpi_lib, old != NULL && old[0] ? ":" : "",
             old != NULL ? old : "");
    setenv("LD_PRELOAD", preload, 1);
    setenv(PVARS_MPIT_CHILD_ENV, var->name, 1);
    free(preload);
    fflush(NULL);
    execv("/proc/self/exe", argv);
    fprintf(stderr, "ibmsg_pvars: --mpit: cannot re-execute under LD_PRELOAD=%s: %s\n", layer,
            strerror(errno));
    return IBMSG_ERR_IO;
}
