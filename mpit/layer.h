/*
 * Internal state of libibmsg-mpit, shared by the files that implement the MPI_T entry points.
 *
 * Locking: mpit_layer.lock guards the index maps, the handle tables' alloc/free, the enum
 * wrappers and the MPI side's management calls; entry points that only use an existing handle
 * (pvar read/write/start/stop/reset, cvar read/write) take no lock.
 *
 * Every entry point is defined once as PMPI_T_x and exported under MPI_T_x as an alias, so a
 * tool calling either reaches the merged view; the MPI library's own functions are reached only
 * through mpit_layer.mpi.
 */
#ifndef IBMSG_MPIT_LAYER_H
#define IBMSG_MPIT_LAYER_H

#include <pthread.h>
#include <stdint.h>

#include <mpi.h>
#include <ibmsg/tool.h>

#include "mpit/index_map.h"
#include "mpit/map.h"
#include "mpit/mpi_ops.h"
#include "mpit/slots.h"
#include "util/compiler.h"

/* Export PMPI_T_name and MPI_T_name as one function. */
#define MPIT_API __attribute__((visibility("default")))
#define MPIT_ALIAS(name)                          \
    extern __typeof__(PMPI_T_##name) MPI_T_##name \
        __attribute__((alias("PMPI_T_" #name), visibility("default")))

typedef enum mpit_kind {
    MPIT_KIND_CVAR = 0,
    MPIT_KIND_PVAR,
    MPIT_KIND_CATEGORY,
    MPIT_KIND_EVENT,  /* MPI-4 event types */
    MPIT_KIND_SOURCE, /* MPI-4 timestamp sources */
    MPIT_KIND_LAST,
} mpit_kind_t;

/* Sources whose view index event callbacks can find without the lock (per side). */
#define MPIT_MAX_SOURCES 256

typedef struct mpit_pvar_handle mpit_pvar_handle_t;

typedef struct mpit_session {
    mpit_slot_t hdr;
    MPI_T_pvar_session mpi;      /* MPI_T_PVAR_SESSION_NULL without an MPI side */
    ibmsg_t_pvar_session_t ib;   /* ibmsg's session */
    mpit_pvar_handle_t *handles; /* the handles of this session, for session_free */
} mpit_session_t;

struct mpit_pvar_handle {
    mpit_slot_t hdr;
    uint64_t session;               /* value of the session it belongs to */
    int side;                       /* mpit_side_t */
    int count;                      /* elements a read fills */
    MPI_T_pvar_session mpi_session; /* the session's natives, copied for the lock-free path */
    ibmsg_t_pvar_session_t ib_session;
    MPI_T_pvar_handle mpi;           /* side MPI */
    ibmsg_t_pvar_handle_t ib;        /* side ibmsg */
    mpit_pvar_handle_t *prev, *next; /* in the session's list */
};

typedef struct mpit_cvar_handle {
    mpit_slot_t hdr;
    int side;
    int count;
    MPI_T_cvar_handle mpi;
    ibmsg_t_cvar_handle_t ib;
} mpit_cvar_handle_t;

/* ibmsg enums are shown through wrappers whose addresses are the MPI_T_enum values. */
#define MPIT_MAX_ENUMS 1024
typedef struct mpit_enum {
    ibmsg_t_enum_t ib;
} mpit_enum_t;

/* One RDMA port of ibmsg: the objects of port-bound variables, shown one variable per port. */
#define MPIT_PORT_DEV_MAX 64
typedef struct mpit_port {
    ibmsg_t_port_t port;
    char dev[MPIT_PORT_DEV_MAX]; /* device name, such as rxe0 */
    int port_num;                /* from 1 */
    int cat;                     /* native index of its category nic_<dev>_port<n>, -1: none */
} mpit_port_t;

typedef struct mpit_layer {
    pthread_mutex_t lock;
    int refcount; /* MPI_T_init_thread calls not yet finalized; atomic reads */
    int resolved; /* mpi looked up (once) */
    int have_mpi; /* an MPI library's MPI_T is the MPI side */
    mpit_mpi_ops_t mpi;
    mpit_index_map_t maps[MPIT_KIND_LAST];
    mpit_slots_t sessions;
    mpit_slots_t pvar_handles;
    mpit_slots_t cvar_handles;
    mpit_slots_t event_regs;                           /* event.c */
    struct mpit_event_reg *event_dead;                 /* atomic: freed registrations to reap */
    int source_view[MPIT_SIDE_LAST][MPIT_MAX_SOURCES]; /* atomic: view index + 1, 0 unknown */
    int ports_resolved; /* ports listed (once: ibmsg discovers them once per process) */
    int num_ports;
    mpit_port_t *ports;
    int num_enums;
    mpit_enum_t enums[MPIT_MAX_ENUMS];
} mpit_layer_t;

extern mpit_layer_t mpit_layer;

static UTIL_ALWAYS_INLINE int mpit_is_initialized(void)
{
    return __atomic_load_n(&mpit_layer.refcount, __ATOMIC_ACQUIRE) > 0;
}

/**
 * Lock the layer if it is initialized: MPI_SUCCESS (locked) or MPI_T_ERR_NOT_INITIALIZED (not).
 */
int mpit_enter(void);
void mpit_leave(void);

/** Bring the view of kind up to date with both sides (lock held). MPI error code. */
int mpit_sync(mpit_kind_t kind);

/** Side and native index of a view index, syncing once if it is beyond the view (lock held). */
int mpit_lookup(mpit_kind_t kind, int view, mpit_side_t *side, int *native);

/** As mpit_lookup, with the object of the view item too (MPIT_OBJ_SELF or a port number). */
int mpit_lookup_obj(mpit_kind_t kind, int view, mpit_side_t *side, int *native, int *obj);

/** View index of a native index, syncing once if it is new (lock held); -1 when unknown. */
int mpit_to_view(mpit_kind_t kind, mpit_side_t side, int native);

/** Map native indices of one side to view indices in place (lock held). MPI error code. */
int mpit_to_view_array(mpit_kind_t kind, mpit_side_t side, int n, int indices[]);

/** The MPI_T_enum showing an ibmsg enum (lock held); MPI_T_ENUM_NULL for none or too many. */
MPI_T_enum mpit_enum_wrap(ibmsg_t_enum_t ib);

/** The ibmsg enum behind an MPI_T_enum, or NULL when it is not one of ours. */
ibmsg_t_enum_t mpit_enum_unwrap(MPI_T_enum e);

/**
 * The view name of ibmsg item native of kind shown for obj (MPIT_OBJ_SELF, or a port number: the
 * name ibmsg_nic_<dev>_<port>_<counter>), to (name, *name_len) (lock held).
 */
int mpit_ib_name_out(mpit_kind_t kind, int native, int obj, char *name, int *name_len);

/** The description of ibmsg pvar native shown for obj, to (desc, *desc_len) (lock held). */
int mpit_ib_pvar_desc_out(int native, int obj, char *desc, int *desc_len);

/** The view index of a per-port ibmsg pvar name of class ib_class, or -1 (lock held). */
int mpit_ib_port_view(const char *view_name, int ib_class);

/**
 * The view indices of the ibmsg members of kind of ibmsg category native (lock held): a hidden
 * member is left out, one shown per port gives the port's variable in that port's category and
 * every port's elsewhere. *out (malloc'd, free it) and *num. MPI error code.
 */
int mpit_ib_category_members(int native, mpit_kind_t kind, int **out, int *num);

/** The native ibmsg index of a view name of kind, or -1 (lock held); var_class for pvars. */
int mpit_ib_index(mpit_kind_t kind, const char *view_name, int ib_class);

/** MPI_T_{cvar,pvar,category}_get_num: the number of view items of kind. MPI error code. */
int mpit_view_num(mpit_kind_t kind, int *num);

/**
 * MPI_T_{cvar,category}_get_index: the view index of name (kind MPIT_KIND_CVAR or
 * MPIT_KIND_CATEGORY), ibmsg's side first. MPI error code (MPI_T_ERR_INVALID_NAME: no such name).
 */
int mpit_view_index(mpit_kind_t kind, const char *name, int *index);

/** MPICH: make our MPI_T_PVAR_ALL_HANDLES object look like libmpich's (see all_handles.c). */
void mpit_all_handles_adopt(void);

/** Bytes of an event registration entry (event.c). */
size_t mpit_event_reg_size(void);

/** The view index of a side's source, without the lock; -1 when not synced yet. */
int mpit_source_view(mpit_side_t side, int native);

/** The last finalize: release the event registrations the tool left (lock held). */
void mpit_event_regs_cleanup(void);

#endif
