/*
 * ibmsg tool information interface: the MPI-4.1 tool information interface (MPI_T), renamed.
 *
 * MPI_T_x becomes ibmsg_t_x, MPI_T_Y becomes IBMSG_T_Y, MPI_SUCCESS becomes IBMSG_T_SUCCESS and
 * MPI_Datatype becomes ibmsg_t_datatype_t. Argument order and meaning are the standard's; see the
 * MPI-4.1 standard, chapter 15, for the full text. What ibmsg adds beyond MPI-4.1 is at the end
 * of this file and marked as such.
 *
 * Thread safety: every function may be called from any thread once the interface is initialized
 * (ibmsg_t_init_thread always provides IBMSG_T_THREAD_MULTIPLE). Reading a handle takes no lock,
 * except a cvar of more than one element (a string, an array): it is read under the lock writes
 * hold, so a read never mixes two writes.
 * A handle must not be freed by one thread while another uses it; doing so gives an error, not a
 * crash, because handles are validated by generation number.
 *
 * Strings: every (name, name_len) and (desc, desc_len) pair follows MPI: with a NULL buffer or
 * *len == 0 nothing is written and *len becomes the full length including the terminating NUL;
 * otherwise at most *len bytes are written, always NUL-terminated, and *len becomes the number of
 * bytes written including the NUL. An absent description is the empty string (*len == 1).
 * Any other OUT pointer that is NULL is ignored.
 */
#ifndef IBMSG_TOOL_H
#define IBMSG_TOOL_H

#include <ibmsg/export.h>
#include <ibmsg/info.h>
#include <ibmsg/status.h>

#ifdef __cplusplus
extern "C" {
#endif

#define IBMSG_T_SUCCESS IBMSG_OK

/* The error codes are IBMSG_T_ERR_* of <ibmsg/status.h>; ibmsg_status_string() gives their text. */

/* Thread levels (MPI_THREAD_*). */
enum {
    IBMSG_T_THREAD_SINGLE = 0,
    IBMSG_T_THREAD_FUNNELED = 1,
    IBMSG_T_THREAD_SERIALIZED = 2,
    IBMSG_T_THREAD_MULTIPLE = 3,
};

/* Datatypes of variables (the MPI_Datatype values MPI_T allows). */
typedef enum ibmsg_t_datatype {
    IBMSG_T_DATATYPE_NULL = 0,
    IBMSG_T_INT,                /* int */
    IBMSG_T_UNSIGNED,           /* unsigned int */
    IBMSG_T_UNSIGNED_LONG,      /* unsigned long */
    IBMSG_T_UNSIGNED_LONG_LONG, /* unsigned long long */
    IBMSG_T_COUNT,              /* long long (MPI_Count) */
    IBMSG_T_CHAR,               /* char: a variable of count N is a string buffer of N bytes */
    IBMSG_T_DOUBLE,             /* double */
} ibmsg_t_datatype_t;

/* Verbosity levels. */
enum {
    IBMSG_T_VERBOSITY_USER_BASIC = 221,
    IBMSG_T_VERBOSITY_USER_DETAIL,
    IBMSG_T_VERBOSITY_USER_ALL,
    IBMSG_T_VERBOSITY_TUNER_BASIC,
    IBMSG_T_VERBOSITY_TUNER_DETAIL,
    IBMSG_T_VERBOSITY_TUNER_ALL,
    IBMSG_T_VERBOSITY_MPIDEV_BASIC,
    IBMSG_T_VERBOSITY_MPIDEV_DETAIL,
    IBMSG_T_VERBOSITY_MPIDEV_ALL,
};

/*
 * Objects a variable can be bound to. ibmsg has no communicators or windows; its objects are
 * these. obj_handle arguments point to a variable holding the object's handle (for example an
 * ibmsg_context_t), as MPI's point to an MPI_Comm.
 */
enum {
    IBMSG_T_BIND_NO_OBJECT = 0,
    IBMSG_T_BIND_CONTEXT,  /* ibmsg_context_t */
    IBMSG_T_BIND_ENDPOINT, /* ibmsg_ep_t */
    IBMSG_T_BIND_PORT,     /* ibmsg_t_port_t: one port of one RDMA device */
    IBMSG_T_BIND_THREAD,   /* ibmsg_t_thread_t: one thread's counters */
    IBMSG_T_BIND_REQUEST,  /* ibmsg_request_t */
    IBMSG_T_BIND_MEMORY,   /* ibmsg_mem_t: a registered memory region */
    IBMSG_T_BIND_INFO,     /* ibmsg_info_t */
    IBMSG_T_BIND_LAST,     /* one past the last valid binding */
};

/* Scopes of control variables. */
enum {
    IBMSG_T_SCOPE_CONSTANT = 60438,
    IBMSG_T_SCOPE_READONLY,
    IBMSG_T_SCOPE_LOCAL,
    IBMSG_T_SCOPE_GROUP,
    IBMSG_T_SCOPE_GROUP_EQ,
    IBMSG_T_SCOPE_ALL,
    IBMSG_T_SCOPE_ALL_EQ,
};

/* Classes of performance variables. */
enum {
    IBMSG_T_PVAR_CLASS_STATE = 240,
    IBMSG_T_PVAR_CLASS_LEVEL,
    IBMSG_T_PVAR_CLASS_SIZE,
    IBMSG_T_PVAR_CLASS_PERCENTAGE,
    IBMSG_T_PVAR_CLASS_HIGHWATERMARK,
    IBMSG_T_PVAR_CLASS_LOWWATERMARK,
    IBMSG_T_PVAR_CLASS_COUNTER,
    IBMSG_T_PVAR_CLASS_AGGREGATE,
    IBMSG_T_PVAR_CLASS_TIMER,
    IBMSG_T_PVAR_CLASS_GENERIC,
};

/* Event source ordering and callback safety (MPI-4 events). The safety levels are ordered: a
   callback of a higher level meets the requirements of every lower one. */
typedef enum ibmsg_t_source_order {
    IBMSG_T_SOURCE_ORDERED = 0,
    IBMSG_T_SOURCE_UNORDERED,
} ibmsg_t_source_order_t;

typedef enum ibmsg_t_cb_safety {
    IBMSG_T_CB_REQUIRE_NONE = 0,
    IBMSG_T_CB_REQUIRE_MPI_RESTRICTED,
    IBMSG_T_CB_REQUIRE_THREAD_SAFE,
    IBMSG_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE,
} ibmsg_t_cb_safety_t;

/* Opaque handles. Their values are validated, never dereferenced blindly. */
typedef struct ibmsg_t_enum_s *ibmsg_t_enum_t;
typedef struct ibmsg_t_cvar_handle_s *ibmsg_t_cvar_handle_t;
typedef struct ibmsg_t_pvar_session_s *ibmsg_t_pvar_session_t;
typedef struct ibmsg_t_pvar_handle_s *ibmsg_t_pvar_handle_t;
typedef struct ibmsg_t_event_registration_s *ibmsg_t_event_registration_t;
typedef struct ibmsg_t_event_instance_s *ibmsg_t_event_instance_t;

#define IBMSG_T_ENUM_NULL               ((ibmsg_t_enum_t)0)
#define IBMSG_T_CVAR_HANDLE_NULL        ((ibmsg_t_cvar_handle_t)0)
#define IBMSG_T_PVAR_SESSION_NULL       ((ibmsg_t_pvar_session_t)0)
#define IBMSG_T_PVAR_HANDLE_NULL        ((ibmsg_t_pvar_handle_t)0)
#define IBMSG_T_PVAR_ALL_HANDLES        ((ibmsg_t_pvar_handle_t)1)
#define IBMSG_T_EVENT_REGISTRATION_NULL ((ibmsg_t_event_registration_t)0)

typedef void (*ibmsg_t_event_cb_function_t)(ibmsg_t_event_instance_t event_instance,
                                            ibmsg_t_event_registration_t event_registration,
                                            ibmsg_t_cb_safety_t cb_safety, void *user_data);
typedef void (*ibmsg_t_event_free_cb_function_t)(ibmsg_t_event_registration_t event_registration,
                                                 ibmsg_t_cb_safety_t cb_safety, void *user_data);
typedef void (*ibmsg_t_event_dropped_cb_function_t)(int count,
                                                    ibmsg_t_event_registration_t event_registration,
                                                    int source_index, ibmsg_t_cb_safety_t cb_safety,
                                                    void *user_data);

/* ---- Life cycle ---------------------------------------------------------------------------- */

/** Initialize (reference counted). *provided is always IBMSG_T_THREAD_MULTIPLE. */
IBMSG_API int ibmsg_t_init_thread(int required, int *provided);
/** Undo one ibmsg_t_init_thread. Indices stay valid for a later re-init. */
IBMSG_API int ibmsg_t_finalize(void);

/* ---- Enumerations -------------------------------------------------------------------------- */

IBMSG_API int ibmsg_t_enum_get_info(ibmsg_t_enum_t enumtype, int *num, char *name, int *name_len);
IBMSG_API int ibmsg_t_enum_get_item(ibmsg_t_enum_t enumtype, int index, int *value, char *name,
                                    int *name_len);

/* ---- Control variables --------------------------------------------------------------------- */

IBMSG_API int ibmsg_t_cvar_get_num(int *num_cvar);
IBMSG_API int ibmsg_t_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                                    ibmsg_t_datatype_t *datatype, ibmsg_t_enum_t *enumtype,
                                    char *desc, int *desc_len, int *bind, int *scope);
IBMSG_API int ibmsg_t_cvar_get_index(const char *name, int *cvar_index);
IBMSG_API int ibmsg_t_cvar_handle_alloc(int cvar_index, void *obj_handle,
                                        ibmsg_t_cvar_handle_t *handle, int *count);
IBMSG_API int ibmsg_t_cvar_handle_free(ibmsg_t_cvar_handle_t *handle);
IBMSG_API int ibmsg_t_cvar_read(ibmsg_t_cvar_handle_t handle, void *buf);
IBMSG_API int ibmsg_t_cvar_write(ibmsg_t_cvar_handle_t handle, const void *buf);

/* ---- Performance variables ----------------------------------------------------------------- */

IBMSG_API int ibmsg_t_pvar_get_num(int *num_pvar);
IBMSG_API int ibmsg_t_pvar_get_info(int pvar_index, char *name, int *name_len, int *verbosity,
                                    int *var_class, ibmsg_t_datatype_t *datatype,
                                    ibmsg_t_enum_t *enumtype, char *desc, int *desc_len, int *bind,
                                    int *readonly, int *continuous, int *atomic);
IBMSG_API int ibmsg_t_pvar_get_index(const char *name, int var_class, int *pvar_index);

/**
 * Create a session: an independent set of handles. Returns IBMSG_T_ERR_INVALID for a NULL
 * session, IBMSG_T_ERR_OUT_OF_SESSIONS when the cap (about 1M live sessions) is reached.
 * Sessions and handles are not pointers: their values encode a slot and a generation, so a stale
 * or forged value is IBMSG_T_ERR_INVALID_SESSION / _HANDLE, never a crash.
 */
IBMSG_API int ibmsg_t_pvar_session_create(ibmsg_t_pvar_session_t *session);
/** Free a session and every handle in it (stopping started ones); sets *session to NULL. */
IBMSG_API int ibmsg_t_pvar_session_free(ibmsg_t_pvar_session_t *session);

/**
 * Allocate a handle on pvar_index in session. For a variable bound to an object, obj_handle
 * points to the object's handle (it is dereferenced: a NULL obj_handle or a NULL object is
 * IBMSG_T_ERR_INVALID_HANDLE); it is ignored for IBMSG_T_BIND_NO_OBJECT. *count is the number of
 * elements a read fills for this object (0 is possible). Continuous variables start here.
 * IBMSG_T_ERR_OUT_OF_HANDLES when the cap (about 1M live handles) is reached.
 */
IBMSG_API int ibmsg_t_pvar_handle_alloc(ibmsg_t_pvar_session_t session, int pvar_index,
                                        void *obj_handle, ibmsg_t_pvar_handle_t *handle,
                                        int *count);
/** Free a handle of session (stopping it if started); sets *handle to NULL. */
IBMSG_API int ibmsg_t_pvar_handle_free(ibmsg_t_pvar_session_t session,
                                       ibmsg_t_pvar_handle_t *handle);
/**
 * Start or stop one handle, or with IBMSG_T_PVAR_ALL_HANDLES every handle of the session that is
 * not continuous (continuous ones are skipped, no error). Starting a started handle or stopping
 * a stopped one does nothing. A continuous handle is IBMSG_T_ERR_PVAR_NO_STARTSTOP.
 */
IBMSG_API int ibmsg_t_pvar_start(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle);
IBMSG_API int ibmsg_t_pvar_stop(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle);
/**
 * Read a handle into buf (count elements). Takes no lock. Values by class:
 * - COUNTER, AGGREGATE, TIMER: what accumulated while started: acc + (started ? current - value
 *   at the last start : 0); integers wrap modulo their width, so deltas stay exact.
 * - LEVEL, SIZE, STATE, PERCENTAGE, GENERIC: the current value while started (continuous
 *   handles always are); while stopped, the value at the stop, or at allocation or reset when
 *   it has not been started since.
 * - HIGHWATERMARK / LOWWATERMARK: the max / min of the values the variable's source returned at
 *   the first start (which begins from the current level), at every read while started, at every
 *   later start and at stop. A source that returns its level gives a watermark sampled at those
 *   instants; a source that keeps its own watermark and returns it makes it exact. Before the
 *   first start: the value at allocation. Reset begins again from the current level.
 * IBMSG_T_PVAR_ALL_HANDLES is IBMSG_T_ERR_INVALID_HANDLE, as is a handle of another session.
 */
IBMSG_API int ibmsg_t_pvar_read(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle,
                                void *buf);
/**
 * ibmsg extension, not in MPI_T: read what a started handle's source itself reports, as
 * `rdma statistic show` or `ethtool -S` print it, leaving the handle's MPI_T state (start, stop,
 * reset, write) out. For COUNTER, AGGREGATE and TIMER that is the total since the source began:
 * - NIC port counters: the port's counter as the kernel reports it (scaled to the variable's
 *   unit, and kept monotonic across a device reset, which adds the count before it);
 * - ibmsg's software counters: the total since the process started;
 * - PAPI events: the count since the thread (or, bound to no object, each of ibmsg's threads)
 *   began counting them.
 * For the other classes it is the source's current value (a watermark's source may report its
 * current level, or a watermark it keeps since the process started). A variable browser's
 * "--read" wants this; a tool that measures an interval wants ibmsg_t_pvar_read. A handle that is
 * not started gives IBMSG_T_ERR_NOT_ACCESSIBLE (a source may count only while a handle of it
 * runs); other errors as ibmsg_t_pvar_read. Takes the registry's lock.
 */
IBMSG_API int ibmsg_t_pvar_read_total(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle,
                                      void *buf);
/**
 * Write a handle: counters take the value as what they accumulated (the next read adds what
 * counts from now on); watermarks take it as their extreme; other classes write the source
 * (its write callback, or its context pointer) when it has one, else the handle's stopped value.
 * Read-only variables: IBMSG_T_ERR_PVAR_NO_WRITE.
 */
IBMSG_API int ibmsg_t_pvar_write(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle,
                                 const void *buf);
/**
 * Back to the starting value: counters to 0 (counting on from now if started), the other classes
 * to the current value. IBMSG_T_PVAR_ALL_HANDLES resets every writable handle of the session;
 * one read-only handle is IBMSG_T_ERR_PVAR_NO_WRITE.
 */
IBMSG_API int ibmsg_t_pvar_reset(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle);
/**
 * Read and reset from one snapshot of the source, so no event is lost in between. Only for
 * atomic variables (else IBMSG_T_ERR_PVAR_NO_ATOMIC); read-only ones give
 * IBMSG_T_ERR_PVAR_NO_WRITE.
 */
IBMSG_API int ibmsg_t_pvar_readreset(ibmsg_t_pvar_session_t session, ibmsg_t_pvar_handle_t handle,
                                     void *buf);

/* ---- Events (MPI-4) ------------------------------------------------------------------------ */

/*
 * Event types are listed like variables: indices 0..num-1 that never change, entries never
 * removed, names unique. A registration (handle_alloc) is bound to one object of the type's
 * binding (obj_handle points to its handle, as for pvars); ibmsg extension: for a bound type an
 * obj_handle that is NULL or points to NULL registers for the instances of every object of that
 * kind. Objects are compared, never dereferenced: free a registration bound to an endpoint before
 * destroying the endpoint. Event and registration handles are validated (a stale or forged one is
 * IBMSG_T_ERR_INVALID_HANDLE, never a crash); so are cb_safety values (IBMSG_T_ERR_INVALID) and
 * info objects (IBMSG_INFO_NULL is allowed, garbage is IBMSG_T_ERR_INVALID).
 *
 * Callbacks: a registration has at most one callback per safety level. Registering again at a
 * level replaces that level's callback and user_data; a NULL function removes it. When an
 * instance is raised in a context that requires level R, the registration's callback of the
 * lowest level >= R is called with that level and its user_data; when it has none the instance
 * is dropped for that registration and counted. The dropped handler (set_dropped_handler; NULL
 * removes it; setting it restarts the counts) is called, before the next instance of the same
 * source is delivered to that registration, with the number of instances of that source dropped
 * since the handler was set or last called (saturating at INT_MAX), the source's index, and the
 * level and user_data of the callback about to be called.
 *
 * An instance (ibmsg_t_event_instance_t) is valid only during the callback it is passed to and
 * only in that callback's thread: read, copy, get_timestamp and get_source on it then, anything
 * else (a saved instance, another thread) is IBMSG_T_ERR_INVALID_HANDLE. The timestamp is taken
 * once, when the event was observed, from the type's source.
 *
 * ibmsg_t_event_handle_free may be called from any thread, inside a callback too (of this
 * registration or another). No callback of the registration starts after it returns; callbacks
 * already under way in other threads finish, and free_cb_function (if not NULL) runs once none is
 * left: in the call itself when none is under way, else in the thread whose callback ends last,
 * after it returns. The get_info calls return a new info object the caller frees; ibmsg uses no
 * hints, so it is empty.
 *
 * Delivery (what raises ibmsg's own events; the list of types is below): an event of the
 * messaging core or of the job layer is raised by the thread making progress on the context it
 * concerns, inside the ibmsg call that made the progress (the job layer's request sent: inside
 * ibmsg_world_ep), at IBMSG_T_CB_REQUIRE_MPI_RESTRICTED: a callback may call ibmsg_t_*
 * functions but no messaging function (ibmsg_*, the context's state is in flux), and must not
 * block. The device's asynchronous events (core_device_*) take the async-event path: they are
 * read from the device's event fd by that same thread, when progress finds the receive pool
 * low, at the keepalive tick, and at every wakeup of a sleep on the context's fd
 * (ibmsg_context_wait, core_wait_mode sleep or adaptive): a spinning context sees a port go down
 * at its next keepalive tick, a sleeping one at once; the timestamp is when the event was read,
 * not when the device saw it. Instances of one source are delivered one at a time, in timestamp
 * order (the sources are ORDERED): while one thread delivers, instances raised by other threads
 * (or by a callback) wait in the source's bounded ring (256) and the delivering thread delivers
 * them after its own; a full ring drops the instance and counts the drop. So a callback may run
 * in the thread of another context than the one the event concerns, never in two threads at
 * once for one source, and callbacks registered only at IBMSG_T_CB_REQUIRE_NONE are never called
 * (every instance is dropped and counted for them). The pvars tool_events_delivered and
 * tool_events_dropped count instances delivered and dropped (per registration).
 */

/** The number of event types. */
IBMSG_API int ibmsg_t_event_get_num(int *num_events);
/**
 * Describe an event type. num_elements is in/out: on input the length of array_of_datatypes
 * and array_of_displacements (NULL arrays are not written), on output the type's number of
 * elements; at most the input length is written. Displacements ascend from 0 (the buffer of
 * ibmsg_t_event_copy is laid out as a C struct of the elements in order). *info (if info is not
 * NULL) is a new, empty info object. A negative *num_elements is IBMSG_T_ERR_INVALID.
 */
IBMSG_API int ibmsg_t_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                                     ibmsg_t_datatype_t array_of_datatypes[],
                                     long array_of_displacements[], int *num_elements,
                                     ibmsg_t_enum_t *enumtype, ibmsg_info_t *info, char *desc,
                                     int *desc_len, int *bind);
/** IBMSG_T_ERR_INVALID_NAME when no event type has that name. */
IBMSG_API int ibmsg_t_event_get_index(const char *name, int *event_index);
/** IBMSG_T_ERR_OUT_OF_HANDLES when the cap (about 1M live registrations) is reached. */
IBMSG_API int ibmsg_t_event_handle_alloc(int event_index, void *obj_handle, ibmsg_info_t info,
                                         ibmsg_t_event_registration_t *event_registration);
IBMSG_API int ibmsg_t_event_handle_set_info(ibmsg_t_event_registration_t event_registration,
                                            ibmsg_info_t info);
IBMSG_API int ibmsg_t_event_handle_get_info(ibmsg_t_event_registration_t event_registration,
                                            ibmsg_info_t *info_used);
IBMSG_API int ibmsg_t_event_register_callback(ibmsg_t_event_registration_t event_registration,
                                              ibmsg_t_cb_safety_t cb_safety, ibmsg_info_t info,
                                              void *user_data,
                                              ibmsg_t_event_cb_function_t event_cb_function);
IBMSG_API int ibmsg_t_event_callback_set_info(ibmsg_t_event_registration_t event_registration,
                                              ibmsg_t_cb_safety_t cb_safety, ibmsg_info_t info);
IBMSG_API int ibmsg_t_event_callback_get_info(ibmsg_t_event_registration_t event_registration,
                                              ibmsg_t_cb_safety_t cb_safety,
                                              ibmsg_info_t *info_used);
IBMSG_API int ibmsg_t_event_handle_free(ibmsg_t_event_registration_t event_registration,
                                        void *user_data,
                                        ibmsg_t_event_free_cb_function_t free_cb_function);
IBMSG_API int
ibmsg_t_event_set_dropped_handler(ibmsg_t_event_registration_t event_registration,
                                  ibmsg_t_event_dropped_cb_function_t dropped_cb_function);
/** Copy element element_index (IBMSG_T_ERR_INVALID_INDEX when out of range) to buffer. */
IBMSG_API int ibmsg_t_event_read(ibmsg_t_event_instance_t event_instance, int element_index,
                                 void *buffer);
/** Copy every element, laid out by the displacements of ibmsg_t_event_get_info, to buffer. */
IBMSG_API int ibmsg_t_event_copy(ibmsg_t_event_instance_t event_instance, void *buffer);
/** The time the event was observed, in ticks of its source. */
IBMSG_API int ibmsg_t_event_get_timestamp(ibmsg_t_event_instance_t event_instance,
                                          long long *event_timestamp);
IBMSG_API int ibmsg_t_event_get_source(ibmsg_t_event_instance_t event_instance, int *source_index);

/*
 * Events of the messaging core. Each is bound to the endpoint it concerns (IBMSG_T_BIND_ENDPOINT;
 * register with obj_handle NULL for every endpoint) or, for the core_srq_* ones, to the context
 * (IBMSG_T_BIND_CONTEXT), stamped by source 0, raised as "Delivery" above says, and listed with
 * its elements (name: datatype) in order:
 *
 *   core_ep_connected   (category connection) the endpoint's queue pair is ready to send:
 *                       qpn: UNSIGNED, peer_qpn: UNSIGNED, credits: UNSIGNED (the messages the
 *                       peer's posted receives allow)
 *   core_ep_failed      (category connection) the endpoint failed: its requests complete with
 *                       IBMSG_ERR_PEER_FAILED. qpn: UNSIGNED, cause: INT (IBMSG_T_EP_FAIL_*, the
 *                       enum core_ep_fail_causes). Once per endpoint; not for a destroy.
 *   core_rndv_started   (category rendezvous) a rendezvous began: the sender posted its RTS, or a
 *                       receive matched an RTS and begins to pull. tag: UNSIGNED_LONG_LONG,
 *                       bytes: UNSIGNED_LONG_LONG (the message's length), id: UNSIGNED (the
 *                       transfer's number on the endpoint), role: INT (0 sender, 1 receiver)
 *   core_rndv_completed (category rendezvous) that rendezvous ended: the sender got the FIN, or
 *                       the receiver pulled the data (or failed to) and queued its FIN; also a
 *                       transfer ended by the endpoint's failure. tag, bytes (the bytes moved: 0
 *                       when it failed), id, role as above, status: INT (the request's status)
 *   core_send_stall_begun (category flow_control) a send had to queue because the endpoint could
 *                       not take it: qpn: UNSIGNED, reason: INT (IBMSG_T_STALL_*, the enum
 *                       core_send_stall_reasons). Raised by the send that found no send queued.
 *   core_send_stall_ended (category flow_control) the queue of such sends drained.
 *                       duration_ns: UNSIGNED_LONG_LONG (since the stall began), qpn: UNSIGNED.
 *                       Only for a stall whose beginning was raised; an endpoint that fails while
 *                       stalled reports core_ep_failed instead.
 *   core_srq_low        (category receive_pool) the shared receive queue ran below its limit
 *                       (the device's one-shot limit event, read by progress): senders outran the
 *                       refills and the queue grows. posted: UNSIGNED (buffers posted and not yet
 *                       seen consumed), target: UNSIGNED (the new target, at most core_srq_max),
 *                       limit: UNSIGNED (the limit that fired)
 *   core_srq_refilled   (category receive_pool) buffers were posted to the shared receive queue:
 *                       a batch, the initial fill at context creation, or the growth after
 *                       core_srq_low. posted: UNSIGNED (now), target: UNSIGNED, added: UNSIGNED
 *                       (this refill's buffers). Once per refill: as often as core_srq_refills
 *                       counts.
 *
 * The device's asynchronous events (category device), bound to the context whose device and port
 * raised them (IBMSG_T_BIND_CONTEXT); event_type is the device's enum ibv_event_type value
 * (<infiniband/verbs.h>: IBV_EVENT_PORT_ACTIVE 9, IBV_EVENT_PORT_ERR 10, IBV_EVENT_QP_FATAL 1,
 * IBV_EVENT_QP_REQ_ERR 2, IBV_EVENT_QP_ACCESS_ERR 3, IBV_EVENT_LID_CHANGE 11,
 * IBV_EVENT_GID_CHANGE 18). qp_fatal and address_changed once per event the device reports; the
 * port's once per change of its state: port_down once per loss (Soft-RoCE reports a port error
 * for the carrier's loss and again for the link going down), port_active once per return
 * (Soft-RoCE reports a return twice):
 *
 *   core_device_port_active (the context's port became active again after a port error):
 *                       port: UNSIGNED, event_type: INT
 *   core_device_port_down (the context's port left the active state: a port error). Endpoints
 *                       with traffic in flight fail (core_ep_failed, cause port_down), idle ones
 *                       are left. port: UNSIGNED, event_type: INT, endpoints_failed: UNSIGNED
 *   core_device_qp_fatal (the device put a queue pair of the context in error). qpn: UNSIGNED,
 *                       event_type: INT, endpoints_failed: UNSIGNED (1 when it was a connected
 *                       endpoint's, which fails with cause qp_fatal; else 0)
 *   core_device_address_changed (the GID table or the LID of the context's port changed: an IP
 *                       address added to or removed from a RoCE interface, a new LID from the
 *                       subnet manager). The GID and LID new queue pairs take are queried again;
 *                       connected endpoints keep theirs. port: UNSIGNED, event_type: INT,
 *                       changed: UNSIGNED (1 when the address new queue pairs take differs now)
 *
 * Events of the job layer (category wireup, under world): the on-demand connection manager's
 * handshakes (world_wireup, the default under PMIx). Bound to the endpoint to the peer rank
 * (IBMSG_T_BIND_ENDPOINT), raised as "Delivery" says. Elements:
 *
 *   world_connect_req_sent  this process asked the peer for a connection: the first connect
 *                       request went out (once per connection asked for; resends are not
 *                       raised). peer: UNSIGNED (its rank), qpn: UNSIGNED (our endpoint's queue
 *                       pair), nonce: UNSIGNED (the handshake's number)
 *   world_connect_req_recvd a peer's connect request was taken, once per request (not for its
 *                       resends or rejected datagrams): answered, or held because our own request
 *                       crossed it and wins. peer, qpn, nonce (the requester's: the nonce of its
 *                       world_connect_req_sent) as above
 *   world_connect_race  both ranks asked each other at once (our request was pending when the
 *                       peer's arrived); once per crossing, on each side, before that side's
 *                       world_connect_req_recvd. The lower rank's request wins and makes the one
 *                       connection; the other side's pending endpoint becomes the answer.
 *                       peer: UNSIGNED, winner: UNSIGNED (the lower rank), qpn: UNSIGNED (the
 *                       endpoint either way), outcome: INT (enum world_connect_race_outcomes: 0
 * won, our request; 1 lost, the peer's)
 */
enum {
    IBMSG_T_EP_FAIL_LOCAL = 0,      /* a post to its queue pair failed */
    IBMSG_T_EP_FAIL_RETRY_EXCEEDED, /* a send or READ went unacknowledged (transport retries) */
    IBMSG_T_EP_FAIL_KEEPALIVE,      /* the keepalive probe of the silent endpoint went unanswered */
    IBMSG_T_EP_FAIL_COMPLETION_ERROR, /* another error completion (remote access, RNR retries...) */
    IBMSG_T_EP_FAIL_GOODBYE,          /* the peer left: its world finalized and said goodbye */
    IBMSG_T_EP_FAIL_LAUNCHER,         /* the launcher (PMIx) reported the peer's process gone */
    IBMSG_T_EP_FAIL_CONNECT,          /* on-demand connection timed out or was refused */
    IBMSG_T_EP_FAIL_FLUSHED,          /* its queue pair was flushed; no completion told why */
    IBMSG_T_EP_FAIL_QP_FATAL,         /* the device reported its queue pair in error (async) */
    IBMSG_T_EP_FAIL_PORT_DOWN,        /* the device's port went down with its traffic in flight */
};

enum {
    IBMSG_T_STALL_CREDITS = 0, /* no credits: the peer has no receive buffer for it */
    IBMSG_T_STALL_SEND_QUEUE,  /* the send queue, or the context's send CQ budget, is full */
    IBMSG_T_STALL_RESOURCES,   /* no send buffer, or every rendezvous slot awaits its FIN */
    IBMSG_T_STALL_CONNECTING,  /* on-demand connection under way */
};

/* ---- Sources of timestamps (MPI-4) --------------------------------------------------------- */

/**
 * Sources are listed like event types (indices never change, entries never removed, names
 * unique). Index 0 is "ibmsg_monotonic": CLOCK_MONOTONIC in nanoseconds, ordered; every event
 * of ibmsg's messaging core is stamped by it. *info is a new, empty info object.
 */
IBMSG_API int ibmsg_t_source_get_num(int *num_sources);
IBMSG_API int ibmsg_t_source_get_info(int source_index, char *name, int *name_len, char *desc,
                                      int *desc_len, ibmsg_t_source_order_t *ordering,
                                      long long *ticks_per_second, long long *max_ticks,
                                      ibmsg_info_t *info);
IBMSG_API int ibmsg_t_source_get_timestamp(int source_index, long long *timestamp);

/* ---- Categories ---------------------------------------------------------------------------- */

IBMSG_API int ibmsg_t_category_get_num(int *num_cat);
IBMSG_API int ibmsg_t_category_get_info(int cat_index, char *name, int *name_len, char *desc,
                                        int *desc_len, int *num_cvars, int *num_pvars,
                                        int *num_categories);
IBMSG_API int ibmsg_t_category_get_num_events(int cat_index, int *num_events);
IBMSG_API int ibmsg_t_category_get_index(const char *name, int *cat_index);
IBMSG_API int ibmsg_t_category_get_cvars(int cat_index, int len, int indices[]);
IBMSG_API int ibmsg_t_category_get_pvars(int cat_index, int len, int indices[]);
IBMSG_API int ibmsg_t_category_get_events(int cat_index, int len, int indices[]);
IBMSG_API int ibmsg_t_category_get_categories(int cat_index, int len, int indices[]);
/** The update number: grows whenever a category is added or gains a member; saturates at INT_MAX.
 */
IBMSG_API int ibmsg_t_category_changed(int *update_number);

/* ==== ibmsg extensions beyond MPI-4.1 ======================================================== */

/* Kinds of items, for the functions below that take items of several kinds. */
enum {
    IBMSG_T_KIND_CVAR = 1,
    IBMSG_T_KIND_PVAR,
    IBMSG_T_KIND_CATEGORY,
    IBMSG_T_KIND_EVENT,
};

/** Wildcard for ibmsg_t_pvar_filter's var_class and bind. */
#define IBMSG_T_ANY (-1)

/**
 * Root categories (those no category contains), in index order. Up to len indices are written;
 * *num (if not NULL) is set to the total number of roots. (The MPI_T taxonomy proposal.)
 */
IBMSG_API int ibmsg_t_category_get_roots(int len, int indices[], int *num);

/**
 * The name of element element_index of event type event_index (the tool.h string way). An index
 * out of range is IBMSG_T_ERR_INVALID_INDEX.
 */
IBMSG_API int ibmsg_t_event_get_element_name(int event_index, int element_index, char *name,
                                             int *name_len);

/**
 * The categories that contain the item (kind, index; an event with IBMSG_T_KIND_EVENT): directly
 * when transitive is 0, else every category above it in the DAG (each once, nearest first, breadth
 * first). Up to len indices are written; *num (if not NULL) is the total. An index out of range is
 * IBMSG_T_ERR_INVALID_INDEX, an unknown kind IBMSG_T_ERR_INVALID.
 */
IBMSG_API int ibmsg_t_category_get_containing(int kind, int index, int transitive, int len,
                                              int indices[], int *num);

/**
 * Flatten a category into the variables of one kind (IBMSG_T_KIND_CVAR or IBMSG_T_KIND_PVAR) it
 * contains, directly or through subcategories: depth first (a category's own variables in the
 * order they joined, then its subcategories in the order they joined), duplicates dropped keeping
 * the first. Another kind is IBMSG_T_ERR_INVALID. Up to len indices are written; *num is the total.
 * (The container operations proposal.)
 */
IBMSG_API int ibmsg_t_category_flatten(int cat_index, int kind, int len, int indices[], int *num);

/**
 * Keep the performance variables of in[0..num_in) whose class is var_class and binding is bind
 * (IBMSG_T_ANY matches all), in input order, duplicates dropped keeping the first. Up to len
 * indices are written to out; *num_out is the total. A class or binding that does not exist is
 * IBMSG_T_ERR_INVALID; an index out of range is IBMSG_T_ERR_INVALID_INDEX.
 */
IBMSG_API int ibmsg_t_pvar_filter(int num_in, const int in[], int var_class, int bind, int len,
                                  int out[], int *num_out);

/**
 * Start, stop or reset a list of handles of one session as one operation: every handle is
 * validated first (an invalid one fails the call with nothing changed), then all current values
 * are taken, then all handles change state, so the whole list shares one instant. Start and stop
 * skip continuous handles, reset skips read-only ones, as ALL_HANDLES does.
 */
IBMSG_API int ibmsg_t_pvar_start_list(ibmsg_t_pvar_session_t session, int num,
                                      const ibmsg_t_pvar_handle_t handles[]);
IBMSG_API int ibmsg_t_pvar_stop_list(ibmsg_t_pvar_session_t session, int num,
                                     const ibmsg_t_pvar_handle_t handles[]);
IBMSG_API int ibmsg_t_pvar_reset_list(ibmsg_t_pvar_session_t session, int num,
                                      const ibmsg_t_pvar_handle_t handles[]);

/**
 * Set control variables from an info object: each key that names a cvar (with or without the
 * "IBMSG_" prefix, case-insensitive) is parsed by the cvar's datatype (enum values by item name)
 * and written. Keys that name no cvar are ignored. Returns the first error met; cvars before it
 * are set. Typed values are used as they are: an integer sets integer and double cvars (range
 * checked: IBMSG_ERR_OUT_OF_RANGE), a double sets double cvars and integer ones when it is
 * integral, a string is parsed. Writing a CONSTANT or READONLY cvar is
 * IBMSG_T_ERR_CVAR_SET_NEVER; an unparsable value IBMSG_T_ERR_INVALID.
 */
IBMSG_API int ibmsg_t_cvar_set_from_info(ibmsg_info_t info);

/*
 * Threads, the objects of IBMSG_T_BIND_THREAD: every thread that counts (sends, polls, calls the
 * tool interface) has its own counter shard, and a variable bound to a thread reads that shard.
 * A thread value is valid while its thread lives and, after the thread exits, while a handle is
 * bound to it (such a handle reads the thread's final values). Binding the value of a thread
 * that exited with no handle bound fails with IBMSG_T_ERR_INVALID_HANDLE, or (if its record was
 * reused) binds the thread that now has it. These functions may be called at any time, from any
 * thread, with or without ibmsg_t_init_thread.
 */
typedef struct ibmsg_t_thread_s *ibmsg_t_thread_t;

/**
 * The calling thread, as an object to bind variables to (pass &thread as obj_handle). Creates
 * the thread's counter shard if it has none yet. Returns IBMSG_T_ERR_INVALID if thread is NULL.
 */
IBMSG_API int ibmsg_t_thread_self(ibmsg_t_thread_t *thread);

/**
 * The live threads that have counters, oldest shard last: up to len are written to threads
 * (NULL if len is 0); *num (if not NULL) is set to how many there are. A negative len is
 * IBMSG_T_ERR_INVALID. Threads come and go: the list is a snapshot.
 */
IBMSG_API int ibmsg_t_thread_get_all(int len, ibmsg_t_thread_t threads[], int *num);

/**
 * What a thread is: its kernel thread id (gettid(), as ps -L shows it), the NUMA node its
 * counters live on (-1 when unknown) and whether it is still alive. NULL outputs are ignored.
 * A value that names no thread is IBMSG_T_ERR_INVALID_HANDLE.
 */
IBMSG_API int ibmsg_t_thread_get_info(ibmsg_t_thread_t thread, long *tid, int *numa_node,
                                      int *alive);

/* ---- NIC ports (objects of IBMSG_T_BIND_PORT variables) ------------------------------------ */

/*
 * One port of one RDMA device the process can see. Port objects exist from the first
 * ibmsg_t_init_thread for the life of the process (the list is discovered once, under the
 * nic_sysfs_root control variable) and are never freed; a context will also give its port.
 */
typedef struct ibmsg_t_port_s *ibmsg_t_port_t;

/**
 * The number of RDMA device ports (0 on a host without RDMA). Thread safe.
 * Returns IBMSG_T_ERR_NOT_INITIALIZED outside init/finalize, IBMSG_T_ERR_INVALID if num is NULL.
 */
IBMSG_API int ibmsg_t_port_get_num(int *num);

/**
 * The port at index (0 .. num-1, ordered by device name, then port number), to pass as the
 * obj_handle (&port) of ibmsg_t_pvar_handle_alloc for variables bound to IBMSG_T_BIND_PORT.
 * Thread safe. IBMSG_T_ERR_INVALID_INDEX when index is out of range.
 */
IBMSG_API int ibmsg_t_port_get(int index, ibmsg_t_port_t *port);

/**
 * The device name (such as "mlx5_0" or "rxe0", returned the tool.h string way through name and
 * name_len) and the port number (from 1) of a port. Thread safe. IBMSG_T_ERR_INVALID_HANDLE when
 * port is not a port object.
 */
IBMSG_API int ibmsg_t_port_get_info(ibmsg_t_port_t port, char *name, int *name_len, int *port_num);

#ifdef __cplusplus
}
#endif

#endif
