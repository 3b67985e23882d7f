/*
 * MPI-4 events and timestamp sources of the merged view. Event types and sources of both sides
 * share the view's stable index space (index_map.c, kinds EVENT and SOURCE); ibmsg's are named
 * ibmsg_<name> and, bound to ibmsg's own objects, shown bound to no object (a registration then
 * takes the instances of every object). Only built against an MPI-4 mpi.h.
 *
 * Registrations are entries of a handle table, as pvar handles are, holding the side's own
 * registration. The layer registers its trampolines with the side, never the tool's functions:
 * a callback, dropped handler or free callback reaches the tool with the view's registration
 * handle, the view's source index and an instance of the view. Instances live on the stack of
 * the trampoline (valid during the tool's callback, in its thread, like the sides' own), found
 * again by address, so event_read and friends know the side of an instance.
 *
 * Each registered callback is an immutable {function, user_data} record given to the side as
 * user_data: a replacement registers a new record (the side swaps it atomically) and keeps the
 * old one until the registration's free callback says no callback is under way. Trampolines take
 * no lock (a side may call them from inside a call the layer makes under its lock); freed
 * entries are pushed on a lock-free list and given back to the table under the lock later.
 */
#include <dlfcn.h>
#include <stdbool.h>
#include <stdlib.h>

#include "mpit/layer.h"

#if MPIT_HAVE_EVENTS

#define LEVELS (MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE + 1)

typedef struct mpit_event_reg mpit_event_reg_t;

/* One registered callback of the tool: what a trampoline calls. */
typedef struct mpit_event_cb {
    MPI_T_event_cb_function *fn;
    void *user_data;
    mpit_event_reg_t *reg;
    uint64_t value; /* the registration's handle value */
    struct mpit_event_cb *retired_next;
} mpit_event_cb_t;

struct mpit_event_reg {
    mpit_slot_t hdr;
    int side;
    int freeing; /* atomic: handle_free called, the entry waits for the side's free callback */
    uint64_t value;
    MPI_T_event_registration mpi;
    ibmsg_t_event_registration_t ib;
    mpit_event_cb_t *cb[LEVELS];              /* atomic: the current callback per level */
    mpit_event_cb_t *retired;                 /* replaced ones (lock) */
    MPI_T_event_dropped_cb_function *dropped; /* atomic */
    MPI_T_event_free_cb_function *free_fn;
    void *free_user_data;
    mpit_event_reg_t *dead_next; /* on mpit_layer.event_dead */
};

/* An instance under delivery in this thread, as the tool sees it. */
typedef struct mpit_instance {
    int side;
    MPI_T_event_instance mpi;
    ibmsg_t_event_instance_t ib;
    struct mpit_instance *up;
} mpit_instance_t;

static _Thread_local mpit_instance_t *instance_top;

size_t mpit_event_reg_size(void)
{
    return sizeof(mpit_event_reg_t);
}

static int level_to_ibmsg(MPI_T_cb_safety level)
{
    switch (level) {
    case MPI_T_CB_REQUIRE_NONE:
        return IBMSG_T_CB_REQUIRE_NONE;
    case MPI_T_CB_REQUIRE_MPI_RESTRICTED:
        return IBMSG_T_CB_REQUIRE_MPI_RESTRICTED;
    case MPI_T_CB_REQUIRE_THREAD_SAFE:
        return IBMSG_T_CB_REQUIRE_THREAD_SAFE;
    case MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE:
        return IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE;
    default:
        return -1;
    }
}

static MPI_T_cb_safety level_to_mpi(int level)
{
    switch (level) {
    case IBMSG_T_CB_REQUIRE_NONE:
        return MPI_T_CB_REQUIRE_NONE;
    case IBMSG_T_CB_REQUIRE_MPI_RESTRICTED:
        return MPI_T_CB_REQUIRE_MPI_RESTRICTED;
    case IBMSG_T_CB_REQUIRE_THREAD_SAFE:
        return MPI_T_CB_REQUIRE_THREAD_SAFE;
    default:
        return MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE;
    }
}

/*
 * A new, empty info object, the MPI library's (found past this layer); MPI_INFO_NULL without
 * one: the layer does not link libmpi.
 */
static void info_new(MPI_Info *info)
{
    int (*create)(MPI_Info *) = NULL;

    *info = MPI_INFO_NULL;
    if (mpit_layer.have_mpi) {
        *(void **)&create = dlsym(RTLD_NEXT, "PMPI_Info_create");
    }
    if (create != NULL && create(info) != MPI_SUCCESS) {
        *info = MPI_INFO_NULL;
    }
}

/* ---- Trampolines: the sides call these; they call the tool -------------------------------- */

static void deliver(const mpit_event_cb_t *cb, mpit_instance_t *inst, MPI_T_cb_safety level)
{
    inst->up = instance_top;
    instance_top = inst;
    cb->fn((MPI_T_event_instance)(void *)inst, (MPI_T_event_registration)(uintptr_t)cb->value,
           level, cb->user_data);
    instance_top = inst->up;
}

static void ib_event_cb(ibmsg_t_event_instance_t ib, ibmsg_t_event_registration_t reg,
                        ibmsg_t_cb_safety_t level, void *user_data)
{
    mpit_instance_t inst = {.side = MPIT_SIDE_IBMSG, .ib = ib};
    (void)reg;
    deliver(user_data, &inst, level_to_mpi(level));
}

static void mpi_event_cb(MPI_T_event_instance mpi, MPI_T_event_registration reg,
                         MPI_T_cb_safety level, void *user_data)
{
    mpit_instance_t inst = {.side = MPIT_SIDE_MPI, .mpi = mpi};
    (void)reg;
    deliver(user_data, &inst, level);
}

static void dropped(const mpit_event_cb_t *cb, MPI_Count count, int side, int source,
                    MPI_T_cb_safety level)
{
    MPI_T_event_dropped_cb_function *fn = __atomic_load_n(&cb->reg->dropped, __ATOMIC_ACQUIRE);
    if (fn != NULL) {
        fn(count, (MPI_T_event_registration)(uintptr_t)cb->value, mpit_source_view(side, source),
           level, cb->user_data);
    }
}

static void ib_dropped_cb(int count, ibmsg_t_event_registration_t reg, int source,
                          ibmsg_t_cb_safety_t level, void *user_data)
{
    (void)reg;
    dropped(user_data, count, MPIT_SIDE_IBMSG, source, level_to_mpi(level));
}

static void mpi_dropped_cb(MPI_Count count, MPI_T_event_registration reg, int source,
                           MPI_T_cb_safety level, void *user_data)
{
    (void)reg;
    dropped(user_data, count, MPIT_SIDE_MPI, source, level);
}

/* The side will call nothing more of e: tell the tool, free the records, queue the entry. */
static void freed(mpit_event_reg_t *e, MPI_T_cb_safety level)
{
    if (e->free_fn != NULL) {
        e->free_fn((MPI_T_event_registration)(uintptr_t)e->value, level, e->free_user_data);
    }
    for (int l = 0; l < LEVELS; l++) {
        free(e->cb[l]);
        e->cb[l] = NULL;
    }
    while (e->retired != NULL) {
        mpit_event_cb_t *next = e->retired->retired_next;
        free(e->retired);
        e->retired = next;
    }
    mpit_event_reg_t *head = __atomic_load_n(&mpit_layer.event_dead, __ATOMIC_RELAXED);
    do {
        e->dead_next = head;
    } while (!__atomic_compare_exchange_n(&mpit_layer.event_dead, &head, e, true, __ATOMIC_RELEASE,
                                          __ATOMIC_RELAXED));
}

static void ib_free_cb(ibmsg_t_event_registration_t reg, ibmsg_t_cb_safety_t level, void *user_data)
{
    (void)reg;
    freed(user_data, level_to_mpi(level));
}

static void mpi_free_cb(MPI_T_event_registration reg, MPI_T_cb_safety level, void *user_data)
{
    (void)reg;
    freed(user_data, level);
}

/* Give the freed entries back to the table (lock held). */
static void reap_dead(void)
{
    mpit_event_reg_t *e = __atomic_exchange_n(&mpit_layer.event_dead, NULL, __ATOMIC_ACQUIRE);
    while (e != NULL) {
        mpit_event_reg_t *next = e->dead_next;
        mpit_slots_free(&mpit_layer.event_regs, e);
        e = next;
    }
}

/* A registration the tool may use (not being freed), or NULL. Lock-free. */
static mpit_event_reg_t *reg_get(MPI_T_event_registration reg)
{
    mpit_event_reg_t *e = mpit_slots_get(&mpit_layer.event_regs, (uintptr_t)reg);
    return e != NULL && !__atomic_load_n(&e->freeing, __ATOMIC_ACQUIRE) ? e : NULL;
}

/*
 * Take the layer's lock and find the registration the tool passed: MPI_SUCCESS with the lock held
 * and *e set, or the error with the lock not held (MPI_T_ERR_INVALID_HANDLE for an unknown one).
 */
static int reg_enter(MPI_T_event_registration reg, mpit_event_reg_t **e)
{
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    *e = reg_get(reg);
    if (*e == NULL) {
        mpit_leave();
        return MPI_T_ERR_INVALID_HANDLE;
    }
    return MPI_SUCCESS;
}

/* Start freeing e with the side (lock not needed; the side may call freed() at once). */
static int reg_free_native(mpit_event_reg_t *e)
{
    if (e->side == MPIT_SIDE_IBMSG) {
        return mpit_map_error(ibmsg_t_event_handle_free(e->ib, e, ib_free_cb));
    }
    return mpit_layer.mpi.event_handle_free(e->mpi, e, mpi_free_cb);
}

void mpit_event_regs_cleanup(void)
{
    const mpit_slots_t *t = &mpit_layer.event_regs;
    for (uint32_t s = 0; s < t->num_slots; s++) {
        mpit_event_reg_t *e = (mpit_event_reg_t *)(t->chunks[s / MPIT_SLOTS_CHUNK] +
                                                   (size_t)(s % MPIT_SLOTS_CHUNK) * t->entry_size);
        if ((e->hdr.gen & 1u) != 0 && !e->freeing) {
            e->freeing = 1;
            e->free_fn = NULL; /* the tool left it: nobody to tell */
            reg_free_native(e);
        }
    }
    reap_dead();
}

/* ---- Event types --------------------------------------------------------------------------- */

int PMPI_T_event_get_num(int *num_events)
{
    return mpit_view_num(MPIT_KIND_EVENT, num_events);
}
MPIT_ALIAS(event_get_num);

/* ibmsg's side of event_get_info, in the view's terms (lock held). */
static int ib_event_info(int native, char *name, int *name_len, int *verbosity,
                         MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                         int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                         int *desc_len, int *bind)
{
    ibmsg_t_datatype_t types[64];
    long displs[64];
    int n = 64, ib_verbosity, ib_bind;
    ibmsg_t_enum_t ib_enum;

    if (num_elements != NULL && *num_elements < 0) {
        return MPI_T_ERR_INVALID;
    }
    int rc = mpit_map_error(ibmsg_t_event_get_info(native, NULL, NULL, &ib_verbosity, types, displs,
                                                   &n, &ib_enum, NULL, desc, desc_len, &ib_bind));
    if (rc == MPI_SUCCESS) {
        rc = mpit_ib_name_out(MPIT_KIND_EVENT, native, MPIT_OBJ_SELF, name, name_len);
    }
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (num_elements != NULL) {
        for (int i = 0; i < *num_elements && i < n && i < 64; i++) {
            if (array_of_datatypes != NULL) {
                array_of_datatypes[i] = mpit_map_datatype(types[i]);
            }
            if (array_of_displacements != NULL) {
                array_of_displacements[i] = (MPI_Aint)displs[i];
            }
        }
        *num_elements = n;
    }
    if (verbosity != NULL) {
        *verbosity = mpit_map_verbosity(ib_verbosity);
    }
    if (enumtype != NULL) {
        *enumtype = mpit_enum_wrap(ib_enum);
    }
    if (bind != NULL) {
        *bind = mpit_map_bind(ib_bind); /* bound to no object in the view: every object's */
    }
    if (info != NULL) {
        info_new(info);
    }
    return MPI_SUCCESS;
}

int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    mpit_side_t side;
    int native;
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_lookup(MPIT_KIND_EVENT, event_index, &side, &native);
    if (rc == MPI_SUCCESS && side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.event_get_info(native, name, name_len, verbosity, array_of_datatypes,
                                           array_of_displacements, num_elements, enumtype, info,
                                           desc, desc_len, bind);
    } else if (rc == MPI_SUCCESS) {
        rc = ib_event_info(native, name, name_len, verbosity, array_of_datatypes,
                           array_of_displacements, num_elements, enumtype, info, desc, desc_len,
                           bind);
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(event_get_info);

int PMPI_T_event_get_index(const char *name, int *event_index)
{
    if (name == NULL || event_index == NULL) {
        return mpit_is_initialized() ? MPI_T_ERR_INVALID : MPI_T_ERR_NOT_INITIALIZED;
    }
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    int view = -1;
    int native = mpit_ib_index(MPIT_KIND_EVENT, name, 0);
    if (native >= 0) {
        view = mpit_to_view(MPIT_KIND_EVENT, MPIT_SIDE_IBMSG, native);
    } else if (mpit_layer.have_mpi && mpit_layer.mpi.event_get_index != NULL) {
        rc = mpit_layer.mpi.event_get_index(name, &native);
        if (rc == MPI_SUCCESS) {
            view = mpit_to_view(MPIT_KIND_EVENT, MPIT_SIDE_MPI, native);
        }
    }
    if (rc == MPI_SUCCESS) {
        if (view >= 0) {
            *event_index = view;
        } else {
            rc = MPI_T_ERR_INVALID_NAME;
        }
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(event_get_index);

/* ---- Registrations ------------------------------------------------------------------------- */

int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    mpit_side_t side;
    int native;
    void *entry;
    uint64_t value;
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    reap_dead();
    rc = mpit_lookup(MPIT_KIND_EVENT, event_index, &side, &native);
    if (rc == MPI_SUCCESS && event_registration == NULL) {
        rc = MPI_T_ERR_INVALID;
    }
    if (rc == MPI_SUCCESS) {
        rc = mpit_map_error(mpit_slots_alloc(&mpit_layer.event_regs, &entry, &value));
    }
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    mpit_event_reg_t *e = entry;
    e->side = side;
    e->value = value;
    if (side == MPIT_SIDE_IBMSG) {
        /* ibmsg uses no hints; its bound types are shown bound to no object: every object. */
        rc = mpit_map_error(ibmsg_t_event_handle_alloc(native, NULL, IBMSG_INFO_NULL, &e->ib));
    } else {
        rc = mpit_layer.mpi.event_handle_alloc(native, obj_handle, info, &e->mpi);
    }
    if (rc != MPI_SUCCESS) {
        mpit_slots_free(&mpit_layer.event_regs, e);
        goto out;
    }
    *event_registration = (MPI_T_event_registration)(uintptr_t)value;
out:
    mpit_leave();
    return rc;
}
MPIT_ALIAS(event_handle_alloc);

int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    mpit_event_reg_t *e;
    int rc = reg_enter(event_registration, &e);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (e->side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.event_handle_set_info(e->mpi, info);
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(event_handle_set_info);

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    mpit_event_reg_t *e;
    int rc = reg_enter(event_registration, &e);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (info_used == NULL) {
        rc = MPI_T_ERR_INVALID;
    } else if (e->side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.event_handle_get_info(e->mpi, info_used);
    } else {
        info_new(info_used);
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(event_handle_get_info);

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function event_cb_function)
{
    mpit_event_cb_t *cb = NULL;
    mpit_event_reg_t *e;
    int level = level_to_ibmsg(cb_safety);
    int rc = reg_enter(event_registration, &e);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (level < 0) {
        rc = MPI_T_ERR_INVALID;
        goto out;
    }
    if (event_cb_function != NULL) {
        cb = calloc(1, sizeof(*cb));
        if (cb == NULL) {
            rc = MPI_T_ERR_MEMORY;
            goto out;
        }
        *cb = (mpit_event_cb_t){event_cb_function, user_data, e, e->value, NULL};
    }
    if (e->side == MPIT_SIDE_IBMSG) {
        rc = mpit_map_error(ibmsg_t_event_register_callback(e->ib, (ibmsg_t_cb_safety_t)level,
                                                            IBMSG_INFO_NULL, cb,
                                                            cb != NULL ? ib_event_cb : NULL));
    } else {
        rc = mpit_layer.mpi.event_register_callback(e->mpi, cb_safety, info, cb,
                                                    cb != NULL ? mpi_event_cb : NULL);
    }
    if (rc != MPI_SUCCESS) {
        free(cb);
        goto out;
    }
    /* The old record may still be in a callback under way: kept until the free callback. */
    mpit_event_cb_t *old = e->cb[level];
    __atomic_store_n(&e->cb[level], cb, __ATOMIC_RELEASE);
    if (old != NULL) {
        old->retired_next = e->retired;
        e->retired = old;
    }
out:
    mpit_leave();
    return rc;
}
MPIT_ALIAS(event_register_callback);

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info)
{
    mpit_event_reg_t *e;
    int rc = reg_enter(event_registration, &e);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (level_to_ibmsg(cb_safety) < 0) {
        rc = MPI_T_ERR_INVALID;
    } else if (e->side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.event_callback_set_info(e->mpi, cb_safety, info);
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(event_callback_set_info);

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    mpit_event_reg_t *e;
    int rc = reg_enter(event_registration, &e);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (level_to_ibmsg(cb_safety) < 0 || info_used == NULL) {
        rc = MPI_T_ERR_INVALID;
    } else if (e->side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.event_callback_get_info(e->mpi, cb_safety, info_used);
    } else {
        info_new(info_used);
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(event_callback_get_info);

int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function dropped_cb_function)
{
    mpit_event_reg_t *e;
    int rc = reg_enter(event_registration, &e);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    __atomic_store_n(&e->dropped, dropped_cb_function, __ATOMIC_RELEASE);
    /* Set again with the side (which restarts its count) even when only the tool's changed. */
    if (e->side == MPIT_SIDE_IBMSG) {
        rc = mpit_map_error(ibmsg_t_event_set_dropped_handler(
            e->ib, dropped_cb_function != NULL ? ib_dropped_cb : NULL));
    } else {
        rc = mpit_layer.mpi.event_set_dropped_handler(
            e->mpi, dropped_cb_function != NULL ? mpi_dropped_cb : NULL);
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(event_set_dropped_handler);

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function free_cb_function)
{
    mpit_event_reg_t *e;
    int rc = reg_enter(event_registration, &e);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    e->free_fn = free_cb_function;
    e->free_user_data = user_data;
    __atomic_store_n(&e->freeing, 1, __ATOMIC_RELEASE);
    mpit_leave();
    /* Without the lock: the side may call the free callback at once, or from a callback that
       frees its own registration; freed() takes no lock. */
    rc = reg_free_native(e);
    if (rc != MPI_SUCCESS) {
        __atomic_store_n(&e->freeing, 0, __ATOMIC_RELEASE); /* still the side's */
    }
    return rc;
}
MPIT_ALIAS(event_handle_free);

/* ---- Instances ----------------------------------------------------------------------------- */

/*
 * The instance under delivery in this thread that the tool passed: MPI_SUCCESS and *out, or the
 * error (no lock: an instance is only valid in its callback, on this thread).
 */
static int instance_get(MPI_T_event_instance event_instance, const mpit_instance_t **out)
{
    if (!mpit_is_initialized()) {
        return MPI_T_ERR_NOT_INITIALIZED;
    }
    for (const mpit_instance_t *i = instance_top; i != NULL; i = i->up) {
        if ((const void *)i == (const void *)event_instance) {
            *out = i;
            return MPI_SUCCESS;
        }
    }
    return MPI_T_ERR_INVALID_HANDLE;
}

int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    const mpit_instance_t *i;
    int rc = instance_get(event_instance, &i);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (i->side == MPIT_SIDE_MPI) {
        return mpit_layer.mpi.event_read(i->mpi, element_index, buffer);
    }
    return mpit_map_error(ibmsg_t_event_read(i->ib, element_index, buffer));
}
MPIT_ALIAS(event_read);

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    const mpit_instance_t *i;
    int rc = instance_get(event_instance, &i);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (i->side == MPIT_SIDE_MPI) {
        return mpit_layer.mpi.event_copy(i->mpi, buffer);
    }
    return mpit_map_error(ibmsg_t_event_copy(i->ib, buffer));
}
MPIT_ALIAS(event_copy);

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    const mpit_instance_t *i;
    int rc = instance_get(event_instance, &i);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (i->side == MPIT_SIDE_MPI) {
        return mpit_layer.mpi.event_get_timestamp(i->mpi, event_timestamp);
    }
    if (event_timestamp == NULL) {
        return MPI_T_ERR_INVALID;
    }
    long long ts;
    rc = ibmsg_t_event_get_timestamp(i->ib, &ts);
    if (rc == IBMSG_OK) {
        *event_timestamp = ts;
    }
    return mpit_map_error(rc);
}
MPIT_ALIAS(event_get_timestamp);

int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    int native = -1;
    const mpit_instance_t *i;
    int rc = instance_get(event_instance, &i);
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    if (source_index == NULL) {
        return MPI_T_ERR_INVALID;
    }
    if (i->side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.event_get_source(i->mpi, &native);
    } else {
        rc = mpit_map_error(ibmsg_t_event_get_source(i->ib, &native));
    }
    if (rc == MPI_SUCCESS) {
        int view = mpit_source_view((mpit_side_t)i->side, native);
        if (view < 0) {
            /* Not synced yet (a tool that never listed the sources): sync now. The callback runs
               without the layer's lock held. */
            rc = mpit_enter();
            if (rc == MPI_SUCCESS) {
                rc = mpit_sync(MPIT_KIND_SOURCE);
                mpit_leave();
            }
            view = mpit_source_view((mpit_side_t)i->side, native);
        }
        if (rc == MPI_SUCCESS) {
            *source_index = view;
        }
    }
    return rc;
}
MPIT_ALIAS(event_get_source);

/* ---- Sources ------------------------------------------------------------------------------- */

int PMPI_T_source_get_num(int *num_sources)
{
    return mpit_view_num(MPIT_KIND_SOURCE, num_sources);
}
MPIT_ALIAS(source_get_num);

int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                           MPI_Count *max_ticks, MPI_Info *info)
{
    mpit_side_t side;
    int native;
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_lookup(MPIT_KIND_SOURCE, source_index, &side, &native);
    if (rc == MPI_SUCCESS && side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.source_get_info(native, name, name_len, desc, desc_len, ordering,
                                            ticks_per_second, max_ticks, info);
    } else if (rc == MPI_SUCCESS) {
        ibmsg_t_source_order_t ib_order;
        long long ticks, max;
        rc = mpit_map_error(ibmsg_t_source_get_info(native, NULL, NULL, desc, desc_len, &ib_order,
                                                    &ticks, &max, NULL));
        if (rc == MPI_SUCCESS) {
            rc = mpit_ib_name_out(MPIT_KIND_SOURCE, native, MPIT_OBJ_SELF, name, name_len);
        }
        if (rc == MPI_SUCCESS) {
            if (ordering != NULL) {
                *ordering = ib_order == IBMSG_T_SOURCE_ORDERED ? MPI_T_SOURCE_ORDERED
                                                               : MPI_T_SOURCE_UNORDERED;
            }
            if (ticks_per_second != NULL) {
                *ticks_per_second = ticks;
            }
            if (max_ticks != NULL) {
                *max_ticks = max;
            }
            if (info != NULL) {
                info_new(info);
            }
        }
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(source_get_info);

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    mpit_side_t side;
    int native;
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_lookup(MPIT_KIND_SOURCE, source_index, &side, &native);
    if (rc == MPI_SUCCESS && side == MPIT_SIDE_MPI) {
        rc = mpit_layer.mpi.source_get_timestamp(native, timestamp);
    } else if (rc == MPI_SUCCESS) {
        long long ts;
        rc = timestamp == NULL ? MPI_T_ERR_INVALID
                               : mpit_map_error(ibmsg_t_source_get_timestamp(native, &ts));
        if (rc == MPI_SUCCESS) {
            *timestamp = ts;
        }
    }
    mpit_leave();
    return rc;
}
MPIT_ALIAS(source_get_timestamp);

/* ---- Categories' events -------------------------------------------------------------------- */

/*
 * Members of kind event, renumbered into the view. count: their number to *out
 * (get_num_events); else up to len of their indices (get_events).
 */
static int category_events(int cat_index, bool count, int len, int *out)
{
    mpit_side_t side;
    int native, num = 0;
    int rc = mpit_enter();
    if (rc != MPI_SUCCESS) {
        return rc;
    }
    rc = mpit_lookup(MPIT_KIND_CATEGORY, cat_index, &side, &native);
    if (rc == MPI_SUCCESS && (out == NULL || (!count && len < 0))) {
        rc = (!count && len == 0) ? MPI_SUCCESS : MPI_T_ERR_INVALID;
        goto out;
    }
    if (rc != MPI_SUCCESS) {
        goto out;
    }
    if (side == MPIT_SIDE_MPI) {
        if (mpit_layer.mpi.category_get_num_events == NULL) {
            rc = MPI_SUCCESS; /* an MPI-3 library: no events */
            if (count) {
                *out = 0;
            }
            goto out;
        }
        rc = count ? mpit_layer.mpi.category_get_num_events(native, out)
                   : mpit_layer.mpi.category_get_events(native, len, out);
        if (rc == MPI_SUCCESS && !count) {
            rc = mpit_layer.mpi.category_get_num_events(native, &num);
        }
    } else {
        rc = mpit_map_error(count ? ibmsg_t_category_get_num_events(native, out)
                                  : ibmsg_t_category_get_events(native, len, out));
        if (rc == MPI_SUCCESS && !count) {
            rc = mpit_map_error(ibmsg_t_category_get_num_events(native, &num));
        }
    }
    if (rc == MPI_SUCCESS && !count) {
        rc = mpit_to_view_array(MPIT_KIND_EVENT, side, num < len ? num : len, out);
    }
out:
    mpit_leave();
    return rc;
}

int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    return category_events(cat_index, true, 0, num_events);
}
MPIT_ALIAS(category_get_num_events);

int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    return category_events(cat_index, false, len, indices);
}
MPIT_ALIAS(category_get_events);

#else /* no MPI-4 events in this mpi.h */

size_t mpit_event_reg_size(void)
{
    return sizeof(mpit_slot_t);
}

void mpit_event_regs_cleanup(void)
{
}

#endif
