#include "mpit/layer.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpit/names.h"
#include "util/fork_locks.h"
#include "util/string_out.h"
#include "util/log.h"

mpit_layer_t mpit_layer = {.lock = PTHREAD_MUTEX_INITIALIZER};
UTIL_FORK_LOCK(UTIL_FORK_LOCK_MPIT_LAYER, mpit_layer.lock, 0)

/* Set up the tables and find the MPI side, once per process (lock held). */
static void layer_resolve(void)
{
    if (mpit_layer.resolved) {
        return;
    }
    for (int k = 0; k < MPIT_KIND_LAST; k++) {
        mpit_index_map_init(&mpit_layer.maps[k]);
    }
    mpit_slots_init(&mpit_layer.sessions, sizeof(mpit_session_t));
    mpit_slots_init(&mpit_layer.pvar_handles, sizeof(mpit_pvar_handle_t));
    mpit_slots_init(&mpit_layer.cvar_handles, sizeof(mpit_cvar_handle_t));
    mpit_slots_init(&mpit_layer.event_regs, mpit_event_reg_size());
    mpit_layer.have_mpi = mpit_mpi_ops_resolve(&mpit_layer.mpi);
    util_debug("mpit: %s", mpit_layer.have_mpi ? "merging with the MPI library's MPI_T"
                                               : "no MPI library: serving ibmsg's variables alone");
    mpit_layer.resolved = 1;
}

int PMPI_T_init_thread(int required, int *provided)
{
    int mpi_provided = MPI_THREAD_MULTIPLE;
    int ib_provided = IBMSG_T_THREAD_MULTIPLE;
    int rc = MPI_SUCCESS;

    pthread_mutex_lock(&mpit_layer.lock);
    layer_resolve();
    if (mpit_layer.have_mpi) {
        rc = mpit_layer.mpi.init_thread(required, &mpi_provided);
        if (rc != MPI_SUCCESS) {
            goto out_unlock; /* the MPI's error, unchanged */
        }
        mpit_all_handles_adopt(); /* after the MPI's init, which may set up its object */
    }
    int ib_rc = ibmsg_t_init_thread(mpit_map_thread_level_to_ibmsg(required), &ib_provided);
    if (ib_rc != IBMSG_OK) {
        rc = mpit_map_error(ib_rc);
        goto err_finalize_mpi;
    }
    /* Both sides serve the merged view: it offers the lower of their levels. */
    int level = mpit_map_thread_level(ib_provided);
    if (mpi_provided < level) {
        level = mpi_provided;
    }
    __atomic_add_fetch(&mpit_layer.refcount, 1, __ATOMIC_RELEASE);
    if (provided != NULL) {
        *provided = level;
    }
    goto out_unlock;

err_finalize_mpi:
    if (mpit_layer.have_mpi) {
        mpit_layer.mpi.finalize();
    }
out_unlock:
    pthread_mutex_unlock(&mpit_layer.lock);
    return rc;
}
MPIT_ALIAS(init_thread);

int PMPI_T_finalize(void)
{
    int rc = MPI_SUCCESS;

    pthread_mutex_lock(&mpit_layer.lock);
    if (mpit_layer.refcount == 0) {
        pthread_mutex_unlock(&mpit_layer.lock);
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    if (mpit_layer.refcount == 1) {
        mpit_event_regs_cleanup(); /* before the sides forget them */
    }
    if (mpit_layer.have_mpi) {
        rc = mpit_layer.mpi.finalize();
    }
    int ib_rc = ibmsg_t_finalize();
    if (rc == MPI_SUCCESS) {
        rc = mpit_map_error(ib_rc);
    }
    __atomic_sub_fetch(&mpit_layer.refcount, 1, __ATOMIC_RELEASE);
    pthread_mutex_unlock(&mpit_layer.lock);
    return rc;
}
MPIT_ALIAS(finalize);

int mpit_enter(void)
{
    if (!mpit_is_initialized()) {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    pthread_mutex_lock(&mpit_layer.lock);
    if (mpit_layer.refcount == 0) { /* finalized meanwhile */
        pthread_mutex_unlock(&mpit_layer.lock);
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    return MPI_SUCCESS;
}

void mpit_leave(void)
{
    pthread_mutex_unlock(&mpit_layer.lock);
}

/* ---- ibmsg objects that MPI has no binding for -------------------------------------------- */

/*
 * List ibmsg's RDMA ports once (lock held, ibmsg's tool interface initialized). ibmsg discovers
 * its ports once per process, so the list never changes afterwards.
 */
static void layer_resolve_ports(void)
{
    int num = 0;

    if (mpit_layer.ports_resolved) {
        return;
    }
    mpit_layer.ports_resolved = 1;
    if (ibmsg_t_port_get_num(&num) != IBMSG_OK || num <= 0) {
        return;
    }
    mpit_layer.ports = calloc((size_t)num, sizeof(mpit_port_t));
    if (mpit_layer.ports == NULL) {
        util_warn("mpit: out of memory listing %d RDMA ports: no per-port variables", num);
        return;
    }
    for (int i = 0; i < num; i++) {
        mpit_port_t *p = &mpit_layer.ports[mpit_layer.num_ports];
        int len = (int)sizeof(p->dev);
        char cat[MPIT_PORT_DEV_MAX + 32];
        if (ibmsg_t_port_get(i, &p->port) != IBMSG_OK ||
            ibmsg_t_port_get_info(p->port, p->dev, &len, &p->port_num) != IBMSG_OK) {
            continue;
        }
        /* The category that holds exactly the variables this port serves
         * (counters/nic/nic_pvars.c). */
        snprintf(cat, sizeof(cat), "nic_%s_port%d", p->dev, p->port_num);
        if (ibmsg_t_category_get_index(cat, &p->cat) != IBMSG_OK) {
            p->cat = -1;
        }
        mpit_layer.num_ports++;
    }
}

/* The pvars of each port's category, for one sync. */
typedef struct layer_port_members {
    int *num;
    int **pvars;
} layer_port_members_t;

static void layer_port_members_free(layer_port_members_t *m)
{
    for (int p = 0; m->pvars != NULL && p < mpit_layer.num_ports; p++) {
        free(m->pvars[p]);
    }
    free(m->pvars);
    free(m->num);
}

static int layer_port_members_load(layer_port_members_t *m)
{
    int n = mpit_layer.num_ports;
    m->num = calloc((size_t)n + 1, sizeof(int));
    m->pvars = calloc((size_t)n + 1, sizeof(int *));
    if (m->num == NULL || m->pvars == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    for (int p = 0; p < n; p++) {
        int cat = mpit_layer.ports[p].cat;
        int num = 0;
        if (cat < 0) {
            continue;
        }
        int rc = ibmsg_t_category_get_info(cat, NULL, NULL, NULL, NULL, NULL, &num, NULL);
        if (rc != IBMSG_OK) {
            return rc;
        }
        m->pvars[p] = malloc(sizeof(int) * ((size_t)num + 1));
        if (m->pvars[p] == NULL) {
            return IBMSG_ERR_NO_MEMORY;
        }
        rc = ibmsg_t_category_get_pvars(cat, num, m->pvars[p]);
        if (rc != IBMSG_OK) {
            return rc;
        }
        m->num[p] = num;
    }
    return IBMSG_OK;
}

static int layer_port_has(const layer_port_members_t *m, int p, int native)
{
    for (int i = 0; i < m->num[p]; i++) {
        if (m->pvars[p][i] == native) {
            return 1;
        }
    }
    return 0;
}

/*
 * How an ibmsg pvar is shown: one bound to no object as itself; one bound to a port as one
 * variable per port that serves it; one bound to another ibmsg object (context, endpoint,
 * thread, ...) not at all: the MPI view cannot name those objects, and each of these variables
 * has a NO_OBJECT twin that sums it over all objects (core_eager_msgs_sent for
 * core_eager_msgs_sent_ep), which the view shows.
 */
static int layer_expand_pvar(void *arg, int native, int objs[], int cap)
{
    const layer_port_members_t *m = arg;
    int bind = IBMSG_T_BIND_NO_OBJECT;
    int n = 0;
    int rc = ibmsg_t_pvar_get_info(native, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bind,
                                   NULL, NULL, NULL);
    if (rc != IBMSG_OK) {
        return rc;
    }
    if (bind == IBMSG_T_BIND_NO_OBJECT) {
        objs[0] = MPIT_OBJ_SELF;
        return 1;
    }
    if (bind != IBMSG_T_BIND_PORT) {
        return 0;
    }
    for (int p = 0; p < mpit_layer.num_ports && n < cap; p++) {
        if (layer_port_has(m, p, native)) {
            objs[n++] = p;
        }
    }
    return n;
}

/* cvars: those bound to no object as themselves; ibmsg has no bound cvars, others are hidden. */
static int layer_expand_cvar(void *arg, int native, int objs[], int cap)
{
    int bind = IBMSG_T_BIND_NO_OBJECT;
    (void)arg;
    (void)cap;
    int rc = ibmsg_t_cvar_get_info(native, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bind, NULL);
    if (rc != IBMSG_OK) {
        return rc;
    }
    objs[0] = MPIT_OBJ_SELF;
    return bind == IBMSG_T_BIND_NO_OBJECT ? 1 : 0;
}

/* Sync ibmsg's cvars or pvars into the view, each shown as the functions above say. */
static int layer_sync_ib_vars(mpit_kind_t kind, int n_ib)
{
    mpit_index_map_t *map = &mpit_layer.maps[kind];
    if (n_ib <= map->seen[MPIT_SIDE_IBMSG]) {
        return IBMSG_OK;
    }
    if (kind == MPIT_KIND_CVAR) {
        return mpit_index_map_sync_expand(map, MPIT_SIDE_IBMSG, n_ib, layer_expand_cvar, NULL, 1);
    }
    layer_resolve_ports();
    layer_port_members_t m = {NULL, NULL};
    int rc = layer_port_members_load(&m);
    if (rc == IBMSG_OK) {
        rc = mpit_index_map_sync_expand(map, MPIT_SIDE_IBMSG, n_ib, layer_expand_pvar, &m,
                                        mpit_layer.num_ports + 1);
    }
    layer_port_members_free(&m);
    return rc;
}

/* The number of items of kind on the MPI side (lock held, have_mpi). */
static int layer_mpi_num(mpit_kind_t kind, int *n)
{
    switch (kind) {
    case MPIT_KIND_CVAR:
        return mpit_layer.mpi.cvar_get_num(n);
    case MPIT_KIND_PVAR:
        return mpit_layer.mpi.pvar_get_num(n);
    case MPIT_KIND_CATEGORY:
        return mpit_layer.mpi.category_get_num(n);
#if MPIT_HAVE_EVENTS
    /* An MPI-3 library has no events: nothing on its side. */
    case MPIT_KIND_EVENT:
        return mpit_layer.mpi.event_get_num != NULL ? mpit_layer.mpi.event_get_num(n) : MPI_SUCCESS;
    case MPIT_KIND_SOURCE:
        return mpit_layer.mpi.source_get_num != NULL ? mpit_layer.mpi.source_get_num(n)
                                                     : MPI_SUCCESS;
#endif
    default:
        return MPI_SUCCESS;
    }
}

/* The number of items of kind on ibmsg's side. */
static int layer_ib_num(mpit_kind_t kind, int *n)
{
    switch (kind) {
    case MPIT_KIND_CVAR:
        return ibmsg_t_cvar_get_num(n);
    case MPIT_KIND_PVAR:
        return ibmsg_t_pvar_get_num(n);
    case MPIT_KIND_EVENT:
        return ibmsg_t_event_get_num(n);
    case MPIT_KIND_SOURCE:
        return ibmsg_t_source_get_num(n);
    default:
        return ibmsg_t_category_get_num(n);
    }
}

/* Publish the view index of every source synced so far, for the callbacks (lock held). */
static void layer_publish_sources(void)
{
    const mpit_index_map_t *map = &mpit_layer.maps[MPIT_KIND_SOURCE];
    for (int v = 0; v < map->num; v++) {
        const mpit_index_entry_t *e = &map->entries[v];
        if (e->native < MPIT_MAX_SOURCES) {
            __atomic_store_n(&mpit_layer.source_view[e->side][e->native], v + 1, __ATOMIC_RELEASE);
        }
    }
}

int mpit_source_view(mpit_side_t side, int native)
{
    if (side < 0 || side >= MPIT_SIDE_LAST || native < 0 || native >= MPIT_MAX_SOURCES) {
        return -1;
    }
    return __atomic_load_n(&mpit_layer.source_view[side][native], __ATOMIC_ACQUIRE) - 1;
}

int mpit_sync(mpit_kind_t kind)
{
    int n_mpi = 0;
    int n_ib = 0;
    int rc;

    if (mpit_layer.have_mpi) {
        rc = layer_mpi_num(kind, &n_mpi);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    rc = layer_ib_num(kind, &n_ib);
    if (rc != IBMSG_OK) {
        return mpit_map_error(rc);
    }
    /* The MPI side first: at each sync, its new items come before ibmsg's. */
    if (mpit_index_map_sync(&mpit_layer.maps[kind], MPIT_SIDE_MPI, n_mpi) != IBMSG_OK) {
        return MPI_T_ERR_MEMORY;
    }
    if (kind == MPIT_KIND_CVAR || kind == MPIT_KIND_PVAR) {
        rc = layer_sync_ib_vars(kind, n_ib);
    } else {
        /* Categories, sources and events as themselves: an ibmsg event type bound to its own
           objects is shown bound to no object, a registration then takes every object's. */
        rc = mpit_index_map_sync(&mpit_layer.maps[kind], MPIT_SIDE_IBMSG, n_ib);
    }
    if (rc == IBMSG_OK && kind == MPIT_KIND_SOURCE) {
        layer_publish_sources();
    }
    return rc == IBMSG_OK ? MPI_SUCCESS : mpit_map_error(rc);
}

int mpit_lookup_obj(mpit_kind_t kind, int view, mpit_side_t *side, int *native, int *obj)
{
    int rc = mpit_lookup(kind, view, side, native);
    if (rc == MPI_SUCCESS) {
        *obj = mpit_index_map_obj(&mpit_layer.maps[kind], view);
    }
    return rc;
}

int mpit_lookup(mpit_kind_t kind, int view, mpit_side_t *side, int *native)
{
    mpit_index_map_t *map = &mpit_layer.maps[kind];
    if (view >= map->num && view >= 0) {
        int rc = mpit_sync(kind);
        if (rc != MPI_SUCCESS) {
            return rc;
        }
    }
    if (mpit_index_map_lookup(map, view, side, native) != IBMSG_OK) {
        return MPI_T_ERR_INVALID_INDEX;
    }
    return MPI_SUCCESS;
}

int mpit_to_view(mpit_kind_t kind, mpit_side_t side, int native)
{
    int view = mpit_index_map_to_view(&mpit_layer.maps[kind], side, native);
    if (view < 0 && mpit_sync(kind) == MPI_SUCCESS) {
        view = mpit_index_map_to_view(&mpit_layer.maps[kind], side, native);
    }
    return view;
}

int mpit_to_view_array(mpit_kind_t kind, mpit_side_t side, int n, int indices[])
{
    for (int i = 0; i < n; i++) {
        int view = mpit_to_view(kind, side, indices[i]);
        if (view < 0) {
            return MPI_T_ERR_INVALID_INDEX;
        }
        indices[i] = view;
    }
    return MPI_SUCCESS;
}

MPI_T_enum mpit_enum_wrap(ibmsg_t_enum_t ib)
{
    if (ib == IBMSG_T_ENUM_NULL) {
        return MPI_T_ENUM_NULL;
    }
    int n = mpit_layer.num_enums;
    for (int i = 0; i < n; i++) {
        if (mpit_layer.enums[i].ib == ib) {
            return (MPI_T_enum)(void *)&mpit_layer.enums[i];
        }
    }
    if (n == MPIT_MAX_ENUMS) {
        util_warn("mpit: more than %d ibmsg enums; the rest are shown without one", MPIT_MAX_ENUMS);
        return MPI_T_ENUM_NULL;
    }
    mpit_layer.enums[n].ib = ib;
    __atomic_store_n(&mpit_layer.num_enums, n + 1, __ATOMIC_RELEASE);
    return (MPI_T_enum)(void *)&mpit_layer.enums[n];
}

ibmsg_t_enum_t mpit_enum_unwrap(MPI_T_enum e)
{
    uintptr_t off = (uintptr_t)(void *)e - (uintptr_t)&mpit_layer.enums[0];
    int n = __atomic_load_n(&mpit_layer.num_enums, __ATOMIC_ACQUIRE);
    if (off >= (uintptr_t)n * sizeof(mpit_enum_t) || off % sizeof(mpit_enum_t) != 0) {
        return IBMSG_T_ENUM_NULL;
    }
    return mpit_layer.enums[off / sizeof(mpit_enum_t)].ib;
}

/* Native name of an ibmsg item to (buf, *len), MPI string semantics. */
static int layer_ib_native_name(mpit_kind_t kind, int native, char *buf, int *len)
{
    switch (kind) {
    case MPIT_KIND_CVAR:
        return ibmsg_t_cvar_get_info(native, buf, len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    case MPIT_KIND_PVAR:
        return ibmsg_t_pvar_get_info(native, buf, len, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                     NULL, NULL, NULL);
    case MPIT_KIND_EVENT:
        return ibmsg_t_event_get_info(native, buf, len, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                      NULL, NULL);
    case MPIT_KIND_SOURCE:
        return ibmsg_t_source_get_info(native, buf, len, NULL, NULL, NULL, NULL, NULL, NULL);
    default:
        return ibmsg_t_category_get_info(native, buf, len, NULL, NULL, NULL, NULL, NULL);
    }
}

/* Native name of ibmsg item native, malloc'd (NULL on error, *rc set). */
static char *layer_ib_native_name_dup(mpit_kind_t kind, int native, int *rc)
{
    int full = 0;
    *rc = layer_ib_native_name(kind, native, NULL, &full);
    if (*rc != IBMSG_OK) {
        return NULL;
    }
    char *buf = malloc((size_t)full + 1);
    if (buf == NULL) {
        *rc = IBMSG_ERR_NO_MEMORY;
        return NULL;
    }
    *rc = layer_ib_native_name(kind, native, buf, &full);
    if (*rc != IBMSG_OK) {
        free(buf);
        return NULL;
    }
    return buf;
}

/*
 * The native-style name of a per-port variable: nic_<dev>_<port>_<counter> for nic_<counter>,
 * nic_<dev>_<port>_<name> for any other name. malloc'd, NULL when out of memory.
 */
static char *layer_port_name(const char *native_name, int obj)
{
    const mpit_port_t *p = &mpit_layer.ports[obj];
    const char *rest = strncmp(native_name, "nic_", 4) == 0 ? native_name + 4 : native_name;
    size_t size = strlen(p->dev) + strlen(rest) + 32;
    char *out = malloc(size);
    if (out != NULL) {
        snprintf(out, size, "nic_%s_%d_%s", p->dev, p->port_num, rest);
    }
    return out;
}

int mpit_ib_name_out(mpit_kind_t kind, int native, int obj, char *name, int *name_len)
{
    int rc;

    if (name_len == NULL) {
        return MPI_SUCCESS;
    }
    char *native_name = layer_ib_native_name_dup(kind, native, &rc);
    if (native_name == NULL) {
        return mpit_map_error(rc);
    }
    if (obj >= 0 && obj < mpit_layer.num_ports) {
        char *port_name = layer_port_name(native_name, obj);
        free(native_name);
        if (port_name == NULL) {
            return MPI_T_ERR_MEMORY;
        }
        native_name = port_name;
    }
    mpit_name_out(native_name, name, name_len);
    free(native_name);
    return MPI_SUCCESS;
}

int mpit_ib_pvar_desc_out(int native, int obj, char *desc, int *desc_len)
{
    if (desc_len == NULL) {
        return MPI_SUCCESS;
    }
    if (obj < 0 || obj >= mpit_layer.num_ports) {
        return mpit_map_error(ibmsg_t_pvar_get_info(native, NULL, NULL, NULL, NULL, NULL, NULL,
                                                    desc, desc_len, NULL, NULL, NULL, NULL));
    }
    int full = 0;
    int rc = ibmsg_t_pvar_get_info(native, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &full, NULL,
                                   NULL, NULL, NULL);
    if (rc != IBMSG_OK) {
        return mpit_map_error(rc);
    }
    const mpit_port_t *p = &mpit_layer.ports[obj];
    size_t size = (size_t)full + strlen(p->dev) + 64;
    char *buf = malloc(size);
    if (buf == NULL) {
        return MPI_T_ERR_MEMORY;
    }
    rc = ibmsg_t_pvar_get_info(native, NULL, NULL, NULL, NULL, NULL, NULL, buf, &full, NULL, NULL,
                               NULL, NULL);
    if (rc == IBMSG_OK) {
        size_t used = strlen(buf);
        snprintf(buf + used, size - used, " This variable: port %d of %s.", p->port_num, p->dev);
        util_string_out(buf, desc, desc_len);
    }
    free(buf);
    return mpit_map_error(rc);
}

int mpit_ib_port_view(const char *view_name, int ib_class)
{
    const char *wanted = mpit_name_native(view_name);
    const mpit_index_map_t *map = &mpit_layer.maps[MPIT_KIND_PVAR];

    if (wanted == NULL || strncmp(wanted, "nic_", 4) != 0 || mpit_layer.num_ports == 0) {
        return -1;
    }
    for (int v = 0; v < map->num; v++) {
        const mpit_index_entry_t *e = &map->entries[v];
        int rc, var_class = -1;
        if (e->side != MPIT_SIDE_IBMSG || e->obj < 0 ||
            ibmsg_t_pvar_get_info(e->native, NULL, NULL, NULL, &var_class, NULL, NULL, NULL, NULL,
                                  NULL, NULL, NULL, NULL) != IBMSG_OK ||
            var_class != ib_class) {
            continue;
        }
        char *native_name = layer_ib_native_name_dup(MPIT_KIND_PVAR, e->native, &rc);
        char *port_name = native_name == NULL ? NULL : layer_port_name(native_name, e->obj);
        int same = port_name != NULL && strcmp(port_name, wanted) == 0;
        free(native_name);
        free(port_name);
        if (same) {
            return v;
        }
    }
    return -1;
}

/* The port whose category native is, or -1. */
static int layer_port_of_category(int native)
{
    for (int p = 0; p < mpit_layer.num_ports; p++) {
        if (mpit_layer.ports[p].cat == native) {
            return p;
        }
    }
    return -1;
}

int mpit_ib_category_members(int native, mpit_kind_t kind, int **out, int *num)
{
    int n = 0;
    int *counts[MPIT_KIND_LAST] = {NULL, NULL, NULL};
    counts[kind] = &n;
    int rc = ibmsg_t_category_get_info(native, NULL, NULL, NULL, NULL, counts[MPIT_KIND_CVAR],
                                       counts[MPIT_KIND_PVAR], counts[MPIT_KIND_CATEGORY]);
    if (rc != IBMSG_OK) {
        return mpit_map_error(rc);
    }
    /* Make sure every member has its view indices. */
    rc = mpit_sync(kind);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    const mpit_index_map_t *map = &mpit_layer.maps[kind];
    int port = kind == MPIT_KIND_PVAR ? layer_port_of_category(native) : -1;
    size_t cap = (size_t)n * ((size_t)mpit_layer.num_ports + 1) + 1;
    int *members = malloc(sizeof(int) * ((size_t)n + 1));
    int *view = malloc(sizeof(int) * cap);
    if (members == NULL || view == NULL) {
        rc = MPI_T_ERR_MEMORY;
        goto err_free;
    }
    switch (kind) {
    case MPIT_KIND_CVAR:
        rc = ibmsg_t_category_get_cvars(native, n, members);
        break;
    case MPIT_KIND_PVAR:
        rc = ibmsg_t_category_get_pvars(native, n, members);
        break;
    default:
        rc = ibmsg_t_category_get_categories(native, n, members);
        break;
    }
    if (rc != IBMSG_OK) {
        rc = mpit_map_error(rc);
        goto err_free;
    }
    int k = 0;
    for (int i = 0; i < n; i++) {
        int first, count;
        if (mpit_index_map_range(map, MPIT_SIDE_IBMSG, members[i], &first, &count) != IBMSG_OK) {
            rc = MPI_T_ERR_INVALID_INDEX;
            goto err_free;
        }
        for (int v = first; v < first + count; v++) {
            int obj = map->entries[v].obj;
            if (obj == MPIT_OBJ_SELF || port < 0 || obj == port) {
                view[k++] = v;
            }
        }
    }
    free(members);
    *out = view;
    *num = k;
    return MPI_SUCCESS;

err_free:
    free(members);
    free(view);
    return rc;
}

int mpit_ib_index(mpit_kind_t kind, const char *view_name, int ib_class)
{
    const char *native = mpit_name_native(view_name);
    int index = -1;
    int rc;

    if (native == NULL) {
        return -1;
    }
    switch (kind) {
    case MPIT_KIND_CVAR:
        rc = ibmsg_t_cvar_get_index(native, &index);
        break;
    case MPIT_KIND_PVAR:
        rc = ibmsg_t_pvar_get_index(native, ib_class, &index);
        break;
    case MPIT_KIND_EVENT:
        rc = ibmsg_t_event_get_index(native, &index);
        break;
    default:
        rc = ibmsg_t_category_get_index(native, &index);
        break;
    }
    return rc == IBMSG_OK ? index : -1;
}
