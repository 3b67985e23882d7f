/*
 * The browser's MPI_T backend (see pvars_api.h), compiled once per MPI variant against that
 * implementation's mpi.h with PVARS_MPIT_VARIANT set (mpich, ompi). It does not link libmpi: the
 * MPI_T_* functions are looked up in the running process (dlsym), where the preloaded
 * libibmsg-mpit provides them; ibmsg_pvars --mpit re-executes itself under that preload.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <mpi.h>

#include "browser/pvars_api.h"

/* Open MPI's datatype constants and MPICH's MPI_T_PVAR_ALL_HANDLES are data symbols of libmpi
 * (or of the layer): referred to weakly, found in the process at run time. */
#ifdef OPEN_MPI
#pragma weak ompi_mpi_int
#pragma weak ompi_mpi_unsigned
#pragma weak ompi_mpi_unsigned_long
#pragma weak ompi_mpi_unsigned_long_long
#pragma weak ompi_mpi_long
#pragma weak ompi_mpi_long_long_int
#pragma weak ompi_mpi_count
#pragma weak ompi_mpi_char
#pragma weak ompi_mpi_double
#else
#pragma weak MPI_T_PVAR_ALL_HANDLES
#endif

#define PVARS_CAT2(a, b) a##b
#define PVARS_CAT(a, b)  PVARS_CAT2(a, b)
#define PVARS_STR2(a)    #a
#define PVARS_STR(a)     PVARS_STR2(a)
#define PVARS_MPIT_API   PVARS_CAT(pvars_mpit_api_, PVARS_MPIT_VARIANT)

/* The MPI_T functions of the process, typed by this mpi.h. */
#define PVARS_MPIT_FUNCS(X) \
    X(init_thread)          \
    X(finalize)             \
    X(enum_get_info)        \
    X(enum_get_item)        \
    X(cvar_get_num)         \
    X(cvar_get_info)        \
    X(cvar_handle_alloc)    \
    X(cvar_handle_free)     \
    X(cvar_read)            \
    X(pvar_get_num)         \
    X(pvar_get_info)        \
    X(pvar_session_create)  \
    X(pvar_session_free)    \
    X(pvar_handle_alloc)    \
    X(pvar_start)           \
    X(pvar_stop)            \
    X(pvar_read)            \
    X(category_get_num)     \
    X(category_get_info)    \
    X(category_get_cvars)   \
    X(category_get_pvars)   \
    X(category_get_categories)

static struct {
#define PVARS_MPIT_FIELD(f) __typeof__(MPI_T_##f) *f;
    PVARS_MPIT_FUNCS(PVARS_MPIT_FIELD)
#undef PVARS_MPIT_FIELD
} mpit;

/* ---- Constants to ibmsg's -------------------------------------------------------------------- */

static int pvars_mpit_error(int rc)
{
    switch (rc) {
    case MPI_SUCCESS:
        return IBMSG_OK;
    case MPI_T_ERR_MEMORY:
        return IBMSG_T_ERR_MEMORY;
    case MPI_T_ERR_NOT_INITIALIZED:
        return IBMSG_T_ERR_NOT_INITIALIZED;
    case MPI_T_ERR_CANNOT_INIT:
        return IBMSG_T_ERR_CANNOT_INIT;
    case MPI_T_ERR_INVALID_INDEX:
        return IBMSG_T_ERR_INVALID_INDEX;
    case MPI_T_ERR_INVALID_ITEM:
        return IBMSG_T_ERR_INVALID_ITEM;
    case MPI_T_ERR_INVALID_HANDLE:
        return IBMSG_T_ERR_INVALID_HANDLE;
    case MPI_T_ERR_OUT_OF_HANDLES:
        return IBMSG_T_ERR_OUT_OF_HANDLES;
    case MPI_T_ERR_OUT_OF_SESSIONS:
        return IBMSG_T_ERR_OUT_OF_SESSIONS;
    case MPI_T_ERR_INVALID_SESSION:
        return IBMSG_T_ERR_INVALID_SESSION;
    case MPI_T_ERR_CVAR_SET_NOT_NOW:
        return IBMSG_T_ERR_CVAR_SET_NOT_NOW;
    case MPI_T_ERR_CVAR_SET_NEVER:
        return IBMSG_T_ERR_CVAR_SET_NEVER;
    case MPI_T_ERR_PVAR_NO_STARTSTOP:
        return IBMSG_T_ERR_PVAR_NO_STARTSTOP;
    case MPI_T_ERR_PVAR_NO_WRITE:
        return IBMSG_T_ERR_PVAR_NO_WRITE;
    case MPI_T_ERR_PVAR_NO_ATOMIC:
        return IBMSG_T_ERR_PVAR_NO_ATOMIC;
    case MPI_T_ERR_INVALID_NAME:
        return IBMSG_T_ERR_INVALID_NAME;
    case MPI_T_ERR_INVALID:
        return IBMSG_T_ERR_INVALID;
#ifdef MPI_T_ERR_NOT_ACCESSIBLE /* MPI 4.0 */
    case MPI_T_ERR_NOT_ACCESSIBLE:
        return IBMSG_T_ERR_NOT_ACCESSIBLE;
#endif
#ifdef MPI_T_ERR_NOT_SUPPORTED
    case MPI_T_ERR_NOT_SUPPORTED:
        return IBMSG_T_ERR_NOT_SUPPORTED;
#endif
    default:
        /* Another MPI error class: shown as not accessible, the variable's state. */
        return IBMSG_T_ERR_NOT_ACCESSIBLE;
    }
}

/* ibmsg's datatype of an MPI datatype; DATATYPE_NULL (not read) for one MPI_T does not use. */
static ibmsg_t_datatype_t pvars_mpit_datatype(MPI_Datatype dt)
{
    if (dt == MPI_INT) {
        return IBMSG_T_INT;
    }
    if (dt == MPI_UNSIGNED) {
        return IBMSG_T_UNSIGNED;
    }
    if (dt == MPI_UNSIGNED_LONG) {
        return IBMSG_T_UNSIGNED_LONG;
    }
    if (dt == MPI_UNSIGNED_LONG_LONG) {
        return IBMSG_T_UNSIGNED_LONG_LONG;
    }
    if (dt == MPI_COUNT || dt == MPI_LONG_LONG || dt == MPI_LONG) {
        return IBMSG_T_COUNT; /* all signed 8-byte on LP64 */
    }
    if (dt == MPI_CHAR) {
        return IBMSG_T_CHAR;
    }
    if (dt == MPI_DOUBLE) {
        return IBMSG_T_DOUBLE;
    }
    return IBMSG_T_DATATYPE_NULL;
}

static int pvars_mpit_verbosity(int v)
{
    static const int mpi[] = {
        MPI_T_VERBOSITY_USER_BASIC,   MPI_T_VERBOSITY_USER_DETAIL,   MPI_T_VERBOSITY_USER_ALL,
        MPI_T_VERBOSITY_TUNER_BASIC,  MPI_T_VERBOSITY_TUNER_DETAIL,  MPI_T_VERBOSITY_TUNER_ALL,
        MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_VERBOSITY_MPIDEV_DETAIL, MPI_T_VERBOSITY_MPIDEV_ALL};
    for (int i = 0; i < (int)(sizeof(mpi) / sizeof(mpi[0])); i++) {
        if (mpi[i] == v) {
            return IBMSG_T_VERBOSITY_USER_BASIC + i;
        }
    }
    return -1;
}

static int pvars_mpit_class(int c)
{
    static const int mpi[] = {MPI_T_PVAR_CLASS_STATE,         MPI_T_PVAR_CLASS_LEVEL,
                              MPI_T_PVAR_CLASS_SIZE,          MPI_T_PVAR_CLASS_PERCENTAGE,
                              MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_PVAR_CLASS_LOWWATERMARK,
                              MPI_T_PVAR_CLASS_COUNTER,       MPI_T_PVAR_CLASS_AGGREGATE,
                              MPI_T_PVAR_CLASS_TIMER,         MPI_T_PVAR_CLASS_GENERIC};
    for (int i = 0; i < (int)(sizeof(mpi) / sizeof(mpi[0])); i++) {
        if (mpi[i] == c) {
            return IBMSG_T_PVAR_CLASS_STATE + i;
        }
    }
    return -1;
}

static int pvars_mpit_scope(int s)
{
    static const int mpi[] = {MPI_T_SCOPE_CONSTANT, MPI_T_SCOPE_READONLY, MPI_T_SCOPE_LOCAL,
                              MPI_T_SCOPE_GROUP,    MPI_T_SCOPE_GROUP_EQ, MPI_T_SCOPE_ALL,
                              MPI_T_SCOPE_ALL_EQ};
    for (int i = 0; i < (int)(sizeof(mpi) / sizeof(mpi[0])); i++) {
        if (mpi[i] == s) {
            return IBMSG_T_SCOPE_CONSTANT + i;
        }
    }
    return -1;
}

/* MPI's NO_OBJECT becomes ibmsg's (the browser reads those); other bindings stay the MPI's. */
static int pvars_mpit_bind(int b)
{
    return b == MPI_T_BIND_NO_OBJECT     ? IBMSG_T_BIND_NO_OBJECT
           : b == IBMSG_T_BIND_NO_OBJECT ? -1 /* an MPI binding numbered 0: keep it apart */
                                         : b;
}

static const char *pvars_mpit_bind_name(int b)
{
    switch (b) {
    case IBMSG_T_BIND_NO_OBJECT:
        return "NO_OBJECT";
    case MPI_T_BIND_MPI_COMM:
        return "MPI_COMM";
    case MPI_T_BIND_MPI_DATATYPE:
        return "MPI_DATATYPE";
    case MPI_T_BIND_MPI_ERRHANDLER:
        return "MPI_ERRHANDLER";
    case MPI_T_BIND_MPI_FILE:
        return "MPI_FILE";
    case MPI_T_BIND_MPI_GROUP:
        return "MPI_GROUP";
    case MPI_T_BIND_MPI_OP:
        return "MPI_OP";
    case MPI_T_BIND_MPI_REQUEST:
        return "MPI_REQUEST";
    case MPI_T_BIND_MPI_WIN:
        return "MPI_WIN";
    case MPI_T_BIND_MPI_MESSAGE:
        return "MPI_MESSAGE";
    case MPI_T_BIND_MPI_INFO:
        return "MPI_INFO";
    default:
        return "UNKNOWN";
    }
}

/* ---- Wrappers with ibmsg_t_ signatures ------------------------------------------------------- */

static int w_init_thread(int required, int *provided)
{
    return pvars_mpit_error(mpit.init_thread(required, provided));
}

static int w_finalize(void)
{
    return pvars_mpit_error(mpit.finalize());
}

static int w_enum_get_info(ibmsg_t_enum_t e, int *num, char *name, int *name_len)
{
    return pvars_mpit_error(mpit.enum_get_info((MPI_T_enum)(void *)e, num, name, name_len));
}

static int w_enum_get_item(ibmsg_t_enum_t e, int index, int *value, char *name, int *name_len)
{
    return pvars_mpit_error(
        mpit.enum_get_item((MPI_T_enum)(void *)e, index, value, name, name_len));
}

static int w_cvar_get_num(int *num)
{
    return pvars_mpit_error(mpit.cvar_get_num(num));
}

static int w_cvar_get_info(int index, char *name, int *name_len, int *verbosity,
                           ibmsg_t_datatype_t *datatype, ibmsg_t_enum_t *enumtype, char *desc,
                           int *desc_len, int *bind, int *scope)
{
    int v, b, s;
    MPI_Datatype dt;
    MPI_T_enum e;
    int rc = mpit.cvar_get_info(index, name, name_len, &v, &dt, &e, desc, desc_len, &b, &s);
    if (rc != MPI_SUCCESS) {
        return pvars_mpit_error(rc);
    }
    if (verbosity != NULL) {
        *verbosity = pvars_mpit_verbosity(v);
    }
    if (datatype != NULL) {
        *datatype = pvars_mpit_datatype(dt);
    }
    if (enumtype != NULL) {
        *enumtype = (ibmsg_t_enum_t)(void *)e;
    }
    if (bind != NULL) {
        *bind = pvars_mpit_bind(b);
    }
    if (scope != NULL) {
        *scope = pvars_mpit_scope(s);
    }
    return IBMSG_OK;
}

static int w_cvar_handle_alloc(int index, void *obj, ibmsg_t_cvar_handle_t *handle, int *count)
{
    MPI_T_cvar_handle h;
    int rc = mpit.cvar_handle_alloc(index, obj, &h, count);
    if (rc == MPI_SUCCESS) {
        *handle = (ibmsg_t_cvar_handle_t)(void *)h;
    }
    return pvars_mpit_error(rc);
}

static int w_cvar_handle_free(ibmsg_t_cvar_handle_t *handle)
{
    MPI_T_cvar_handle h = (MPI_T_cvar_handle)(void *)*handle;
    int rc = mpit.cvar_handle_free(&h);
    if (rc == MPI_SUCCESS) {
        *handle = IBMSG_T_CVAR_HANDLE_NULL;
    }
    return pvars_mpit_error(rc);
}

static int w_cvar_read(ibmsg_t_cvar_handle_t handle, void *buf)
{
    return pvars_mpit_error(mpit.cvar_read((MPI_T_cvar_handle)(void *)handle, buf));
}

static int w_pvar_get_num(int *num)
{
    return pvars_mpit_error(mpit.pvar_get_num(num));
}

static int w_pvar_get_info(int index, char *name, int *name_len, int *verbosity, int *var_class,
                           ibmsg_t_datatype_t *datatype, ibmsg_t_enum_t *enumtype, char *desc,
                           int *desc_len, int *bind, int *readonly, int *continuous, int *atomic)
{
    int v, c, b;
    MPI_Datatype dt;
    MPI_T_enum e;
    int rc = mpit.pvar_get_info(index, name, name_len, &v, &c, &dt, &e, desc, desc_len, &b,
                                readonly, continuous, atomic);
    if (rc != MPI_SUCCESS) {
        return pvars_mpit_error(rc);
    }
    if (verbosity != NULL) {
        *verbosity = pvars_mpit_verbosity(v);
    }
    if (var_class != NULL) {
        *var_class = pvars_mpit_class(c);
    }
    if (datatype != NULL) {
        *datatype = pvars_mpit_datatype(dt);
    }
    if (enumtype != NULL) {
        *enumtype = (ibmsg_t_enum_t)(void *)e;
    }
    if (bind != NULL) {
        *bind = pvars_mpit_bind(b);
    }
    return IBMSG_OK;
}

static int w_pvar_session_create(ibmsg_t_pvar_session_t *session)
{
    MPI_T_pvar_session s;
    int rc = mpit.pvar_session_create(&s);
    if (rc == MPI_SUCCESS) {
        *session = (ibmsg_t_pvar_session_t)(void *)s;
    }
    return pvars_mpit_error(rc);
}

static int w_pvar_session_free(ibmsg_t_pvar_session_t *session)
{
    MPI_T_pvar_session s = (MPI_T_pvar_session)(void *)*session;
    int rc = mpit.pvar_session_free(&s);
    if (rc == MPI_SUCCESS) {
        *session = IBMSG_T_PVAR_SESSION_NULL;
    }
    return pvars_mpit_error(rc);
}

/*
 * Open MPI 4.1 crashes in its own MPI_T_pvar_handle_alloc on the pvars of the PSM2 MTL when that
 * component is loaded but not in use (no Omni-Path device): the browser does not ask, and shows
 * them as not accessible.
 */
static int pvars_mpit_handle_crashes_mpi(int index)
{
#ifdef OPEN_MPI
    char name[256];
    int len = (int)sizeof(name);
    return mpit.pvar_get_info(index, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                              NULL, NULL) == MPI_SUCCESS &&
           strncmp(name, "mtl_psm2_", 9) == 0;
#else
    (void)index;
    return 0;
#endif
}

static int w_pvar_handle_alloc(ibmsg_t_pvar_session_t session, int index, void *obj,
                               ibmsg_t_pvar_handle_t *handle, int *count)
{
    MPI_T_pvar_handle h;
    if (pvars_mpit_handle_crashes_mpi(index)) {
        return IBMSG_T_ERR_NOT_ACCESSIBLE;
    }
    int rc = mpit.pvar_handle_alloc((MPI_T_pvar_session)(void *)session, index, obj, &h, count);
    if (rc == MPI_SUCCESS) {
        *handle = (ibmsg_t_pvar_handle_t)(void *)h;
    }
    return pvars_mpit_error(rc);
}

static MPI_T_pvar_handle pvars_mpit_handle(ibmsg_t_pvar_handle_t h)
{
    return h == IBMSG_T_PVAR_ALL_HANDLES ? MPI_T_PVAR_ALL_HANDLES : (MPI_T_pvar_handle)(void *)h;
}

static int w_pvar_start(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle)
{
    return pvars_mpit_error(
        mpit.pvar_start((MPI_T_pvar_session)(void *)session, pvars_mpit_handle(handle)));
}

static int w_pvar_stop(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle)
{
    return pvars_mpit_error(
        mpit.pvar_stop((MPI_T_pvar_session)(void *)session, pvars_mpit_handle(handle)));
}

static int w_pvar_read(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle, void *buf)
{
    return pvars_mpit_error(
        mpit.pvar_read((MPI_T_pvar_session)(void *)session, pvars_mpit_handle(handle), buf));
}

static int w_category_get_num(int *num)
{
    return pvars_mpit_error(mpit.category_get_num(num));
}

static int w_category_get_info(int index, char *name, int *name_len, char *desc, int *desc_len,
                               int *num_cvars, int *num_pvars, int *num_categories)
{
    return pvars_mpit_error(mpit.category_get_info(index, name, name_len, desc, desc_len, num_cvars,
                                                   num_pvars, num_categories));
}

static int w_category_get_cvars(int index, int len, int indices[])
{
    return pvars_mpit_error(mpit.category_get_cvars(index, len, indices));
}

static int w_category_get_pvars(int index, int len, int indices[])
{
    return pvars_mpit_error(mpit.category_get_pvars(index, len, indices));
}

static int w_category_get_categories(int index, int len, int indices[])
{
    return pvars_mpit_error(mpit.category_get_categories(index, len, indices));
}

/* MPI_T has no roots query: the categories no category contains, in index order. */
static int w_category_get_roots(int len, int indices[], int *num)
{
    int n = 0, found = 0;
    int rc = mpit.category_get_num(&n);
    if (rc != MPI_SUCCESS) {
        return pvars_mpit_error(rc);
    }
    char *contained = calloc((size_t)n + 1, 1);
    if (contained == NULL) {
        return IBMSG_T_ERR_MEMORY;
    }
    for (int c = 0; c < n; c++) {
        int subs = 0;
        if (mpit.category_get_info(c, NULL, NULL, NULL, NULL, NULL, NULL, &subs) != MPI_SUCCESS ||
            subs == 0) {
            continue;
        }
        int *members = malloc(sizeof(int) * (size_t)subs);
        if (members != NULL && mpit.category_get_categories(c, subs, members) == MPI_SUCCESS) {
            for (int i = 0; i < subs; i++) {
                if (members[i] >= 0 && members[i] < n) {
                    contained[members[i]] = 1;
                }
            }
        }
        free(members);
    }
    for (int c = 0; c < n; c++) {
        if (!contained[c]) {
            if (found < len) {
                indices[found] = c;
            }
            found++;
        }
    }
    free(contained);
    if (num != NULL) {
        *num = found;
    }
    return IBMSG_OK;
}

const pvars_api_t *PVARS_MPIT_API(void)
{
    static pvars_api_t api = {
        .name = "MPI_T (" PVARS_STR(PVARS_MPIT_VARIANT) ")",
#define PVARS_MPIT_WRAP(f) .f = w_##f,
        PVARS_MPIT_FUNCS(PVARS_MPIT_WRAP)
#undef PVARS_MPIT_WRAP
            .category_get_roots = w_category_get_roots,
        .bind_name = pvars_mpit_bind_name,
    };
    int missing = 0;
#define PVARS_MPIT_LOOKUP(f)                                              \
    *(void **)&mpit.f = dlsym(RTLD_DEFAULT, "MPI_T_" #f);                 \
    if (mpit.f == NULL) {                                                 \
        fprintf(stderr, "ibmsg_pvars: no MPI_T_%s in the process\n", #f); \
        missing++;                                                        \
    }
    PVARS_MPIT_FUNCS(PVARS_MPIT_LOOKUP)
#undef PVARS_MPIT_LOOKUP
    if (missing != 0) {
        return NULL;
    }
    /* The view is the layer's: a libmpi alone (the layer failed to preload) would hide ibmsg. */
    Dl_info info = {0};
    if (dladdr(*(void **)&mpit.init_thread, &info) == 0 || info.dli_fname == NULL ||
        strstr(info.dli_fname, "libibmsg-mpit") == NULL) {
        fprintf(stderr, "ibmsg_pvars: MPI_T_init_thread comes from %s, not libibmsg-mpit\n",
                info.dli_fname != NULL ? info.dli_fname : "an unknown object");
        return NULL;
    }
    return &api;
}
