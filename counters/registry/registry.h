/*
 * Internal registration API of the tool information interface (the MCA-level pvar interface
 * model: one description per variable, callbacks with a context pointer). Every subsystem
 * (software counters, NIC, PAPI, the tool interface itself, the logger) registers its variables
 * through these calls; include/ibmsg/tool.h is served from what they record.
 *
 * Registration may happen at any time, before or after ibmsg_t_init_thread, from any thread; it
 * takes the registry lock. Variables, categories and enums are never removed: their indices stay
 * valid for the life of the process. Registering a name that exists (same name and, for pvars,
 * same class) returns the existing index when the description matches and IBMSG_ERR_EXISTS when
 * it does not, so a subsystem that is set up twice (a second context) does not duplicate.
 */
#ifndef IBMSG_COUNTERS_REGISTRY_H
#define IBMSG_COUNTERS_REGISTRY_H

#include <stdint.h>
#include <ibmsg/tool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Flags of a performance variable. */
enum {
    CNT_PVAR_READONLY = 1u << 0,   /* cannot be written or reset */
    CNT_PVAR_CONTINUOUS = 1u << 1, /* always running: started at alloc, no start/stop */
    CNT_PVAR_ATOMIC = 1u << 2,     /* readreset is atomic (no event lost in between) */
};

/* What the registry tells a variable's notify callback. */
typedef enum cnt_notify_event {
    CNT_NOTIFY_BIND = 0, /* a handle is being bound to obj: set *count, or fail */
    CNT_NOTIFY_FREE,     /* a handle bound to obj is freed */
    CNT_NOTIFY_START,    /* a handle bound to obj starts (also at alloc of continuous ones) */
    CNT_NOTIFY_STOP,     /* a handle bound to obj stops (also at free of a started one) */
} cnt_notify_event_t;

/*
 * obj is the bound object itself (the registry dereferences the obj_handle a tool passes: all
 * ibmsg object handles are pointers), NULL for IBMSG_T_BIND_NO_OBJECT.
 *
 * read: write the current raw values of this variable for obj (count elements of the datatype)
 *       to buf. For COUNTER, AGGREGATE and TIMER they are monotonic totals since the process
 *       began; the registry does the session arithmetic (value = accumulated + current - value
 *       at start). For the other classes they are the value itself. Must not block or lock: the
 *       registry calls it without its lock from ibmsg_t_pvar_read.
 * write: set the variable for obj from buf (only for writable variables whose value is the
 *       source's own, for example a SIZE or STATE); NULL means the registry handles writes in
 *       the handle (counters) or, with a context pointer, writes through it.
 * notify: see cnt_notify_event_t. On BIND it must set *count (elements for obj) and may return
 *       IBMSG_T_ERR_INVALID_HANDLE for an object it does not serve. A source may use START and
 *       STOP to switch itself on only while some handle runs.
 * Callbacks return IBMSG_OK or an IBMSG_T_ERR_* code, which the tool call returns.
 * notify and write run with the registry lock held. The lock is recursive, so a callback may
 * register variables or categories from the same thread; it must not wait for another thread
 * that uses the tool interface. When a group starts (ALL_HANDLES, start_list), every START is
 * notified before the snapshot, so a source can switch itself on first.
 */
typedef int (*cnt_pvar_read_cb_t)(void *obj, int count, void *buf, void *ctx);
typedef int (*cnt_pvar_write_cb_t)(void *obj, int count, const void *buf, void *ctx);
typedef int (*cnt_pvar_notify_cb_t)(cnt_notify_event_t event, void *obj, int *count, void *ctx);

/*
 * A performance variable. Without read, the registry reads *ctx as count elements of datatype
 * (relaxed atomic loads); without notify, count is 1. Registration rejects (IBMSG_ERR_INVALID)
 * a COUNTER of a signed or double type, a PERCENTAGE that is not double, a CHAR watermark,
 * counter, aggregate or timer, unknown class/datatype/bind/flags, and a variable with neither
 * read nor ctx. An unknown category is IBMSG_T_ERR_INVALID_NAME.
 */
typedef struct cnt_pvar_desc {
    const char *name;            /* unique within its class, lower_snake, subsystem prefix */
    int var_class;               /* IBMSG_T_PVAR_CLASS_* */
    ibmsg_t_datatype_t datatype; /* COUNTER: unsigned types only */
    ibmsg_t_enum_t enumtype;     /* STATE: its enum; else IBMSG_T_ENUM_NULL */
    int verbosity;               /* IBMSG_T_VERBOSITY_* */
    int bind;                    /* IBMSG_T_BIND_* */
    unsigned flags;              /* CNT_PVAR_* */
    const char *category;        /* name of an existing category, or NULL for none */
    const char *desc;            /* may be NULL: reported as "" */
    cnt_pvar_read_cb_t read;
    cnt_pvar_write_cb_t write;
    cnt_pvar_notify_cb_t notify;
    void *ctx;
} cnt_pvar_desc_t;

/* A control variable. Without read/write, the registry reads/writes *ctx by datatype. */
typedef int (*cnt_cvar_read_cb_t)(void *obj, void *buf, void *ctx);
typedef int (*cnt_cvar_write_cb_t)(void *obj, const void *buf, void *ctx);

typedef struct cnt_cvar_desc {
    const char *name; /* settable from the environment as IBMSG_<NAME upper-cased> */
    ibmsg_t_datatype_t datatype;
    ibmsg_t_enum_t enumtype;
    int verbosity;
    int bind;
    int scope; /* IBMSG_T_SCOPE_*; CONSTANT and READONLY refuse writes with CVAR_SET_NEVER */
    int count; /* elements (for IBMSG_T_CHAR: the buffer size including the NUL); 0 means 1 */
    const char *category;
    const char *desc;
    cnt_cvar_read_cb_t read;
    cnt_cvar_write_cb_t write; /* may return IBMSG_T_ERR_CVAR_SET_NOT_NOW */
    void *ctx;
} cnt_cvar_desc_t;

typedef struct cnt_enum_item {
    int value;
    const char *name;
} cnt_enum_item_t;

/** Register an enumeration (name and items copied). Same name again returns the existing one. */
int cnt_enum_register(const char *name, int num_items, const cnt_enum_item_t items[],
                      ibmsg_t_enum_t *enumtype);

/**
 * Register a category under parent (a category name, or NULL for a root). Registering an
 * existing name returns its index (and adds it under parent if it is not there yet).
 */
int cnt_category_register(const char *name, const char *desc, const char *parent, int *cat_index);
/** Make child a member of parent; a cycle is IBMSG_T_ERR_INVALID and changes nothing. */
int cnt_category_add_category(int parent_index, int child_index);
/** Add an existing variable to one more category (the categories form a DAG). */
int cnt_category_add_pvar(int cat_index, int pvar_index);
int cnt_category_add_cvar(int cat_index, int cvar_index);

/** Register a performance variable. *pvar_index is set on success. */
int cnt_pvar_register(const cnt_pvar_desc_t *desc, int *pvar_index);

/**
 * Register a control variable. If IBMSG_<NAME> is set in the environment, its value is parsed
 * by datatype (enums by item name or value) and written once here; a value that does not parse
 * is logged and ignored (the default stays).
 */
int cnt_cvar_register(const cnt_cvar_desc_t *desc, int *cvar_index);

/**
 * Write a cvar from a string (the environment and info objects use this), parsed by datatype:
 * integers with range checks (IBMSG_ERR_OUT_OF_RANGE), enums by item name (case-insensitive) or
 * value, chars bounded by count. Unparsable: IBMSG_T_ERR_INVALID. CONSTANT and READONLY scopes:
 * IBMSG_T_ERR_CVAR_SET_NEVER (the environment, at registration, may set READONLY ones).
 */
int cnt_cvar_set_string(int cvar_index, const char *value);

/* ---- Events (MPI-4 events: ibmsg_t_event_* of tool.h) --------------------------------------- */

/* Elements and bytes of one event type; timestamp sources (a registration counts drops per
   source); instances a busy source queues before it drops. */
#define CNT_EVENT_MAX_ELEMENTS 8
#define CNT_EVENT_MAX_BYTES    64
#define CNT_EVENT_MAX_SOURCES  16
#define CNT_EVENT_RING         256

/*
 * An event type as its raise sites see it: a static object of the layer that raises it, given to
 * cnt_event_register. listeners is the number of registrations (ibmsg_t_event_handle_alloc) of
 * the type now; a raise site tests it inline (cnt_event_listening), so an event nobody listens to
 * costs one load and one predictable branch, and the instance is built out of line.
 */
typedef struct cnt_event {
    int listeners; /* atomic; written by the registry under its lock */
    int index;     /* the event index once registered, else -1 (CNT_EVENT_INIT) */
} cnt_event_t;

#define CNT_EVENT_INIT \
    {                  \
        0, -1          \
    }

/*
 * An event type. Its elements are laid out as a C struct of datatypes[0..num_elements) in that
 * order (each at its natural alignment; ibmsg_t_event_get_info gives the displacements), at most
 * CNT_EVENT_MAX_BYTES; the raiser passes such a struct. enumtype (or IBMSG_T_ENUM_NULL) describes
 * the elements of type IBMSG_T_INT. source is the index of the timestamp source that stamps and
 * orders its instances (0: ibmsg_monotonic). Registration rejects (IBMSG_ERR_INVALID) an empty
 * name, 0 or too many elements, an element without a name, unknown datatypes, verbosity or bind,
 * an unknown source or enum, and a buffer over CNT_EVENT_MAX_BYTES; an unknown category is
 * IBMSG_T_ERR_INVALID_NAME. A name registered again returns the existing index when the
 * description and the cnt_event_t match, else IBMSG_ERR_EXISTS.
 */
typedef struct cnt_event_desc {
    const char *name;
    int verbosity;
    int bind; /* IBMSG_T_BIND_*: the object an instance concerns */
    int num_elements;
    const ibmsg_t_datatype_t *datatypes;
    const char *const *element_names;
    ibmsg_t_enum_t enumtype;
    int source;
    const char *category;
    const char *desc;
} cnt_event_desc_t;

/** Register an event type raised through ev (which must live for the process). Sets ev->index. */
int cnt_event_register(const cnt_event_desc_t *desc, cnt_event_t *ev);

/** Whether an instance of ev would reach anybody: the raise site's one inline check. */
static inline int cnt_event_listening(const cnt_event_t *ev)
{
    return __atomic_load_n(&ev->listeners, __ATOMIC_RELAXED) != 0;
}

/**
 * Raise an instance of ev concerning obj (NULL for IBMSG_T_BIND_NO_OBJECT) with the elements in
 * buf (laid out as the description says), in a context that requires callbacks of at least
 * safety level required. The timestamp is taken here, once. The instance goes to every
 * registration of the type bound to obj or to every object, each through its callback of the
 * lowest safety level >= required; a registration with none counts a drop. Callbacks run in this
 * thread without the registry's lock, unless another thread is delivering instances of the same
 * source: then the instance joins the source's ring (CNT_EVENT_RING; when full it is dropped and
 * counted) and that thread delivers it, so the instances of a source are delivered one at a time
 * in timestamp order. Call it only when cnt_event_listening(ev) (it is out of line).
 */
void cnt_event_raise(cnt_event_t *ev, const void *obj, const void *buf,
                     ibmsg_t_cb_safety_t required);

/* A timestamp source: clock(ctx) gives the time in ticks (monotonic, at most max_ticks). */
typedef long long (*cnt_source_clock_cb_t)(void *ctx);

typedef struct cnt_source_desc {
    const char *name;
    const char *desc;
    ibmsg_t_source_order_t ordering;
    long long ticks_per_second;
    long long max_ticks;
    cnt_source_clock_cb_t clock;
    void *ctx;
} cnt_source_desc_t;

/**
 * Register a timestamp source (index 0 is the registry's ibmsg_monotonic). Sources are never
 * removed; a name registered again returns its index when the description matches, else
 * IBMSG_ERR_EXISTS; beyond CNT_EVENT_MAX_SOURCES: IBMSG_ERR_NO_RESOURCE.
 */
int cnt_source_register(const cnt_source_desc_t *desc, int *source_index);

/** Whether any handle of this pvar (for any object) is started now: cheap, lock-free. */
int cnt_pvar_is_started(int pvar_index);

/** Whether the tool interface is between an ibmsg_t_init_thread and its finalize. Lock-free. */
int cnt_registry_initialized(void);

/**
 * The registry's side of ibmsg_t_init_thread (counters/builtin.c implements the public call: it
 * wires the built-in sources in first): counts the initialisation and sets *provided.
 */
int cnt_registry_init_thread(int required, int *provided);

/*
 * What the registry reports about itself, so that the layer wiring it up can count it: the
 * registry knows no counter (tool_sessions_alive and friends live on the counter shards, above
 * it). sessions and handles get +1 at an allocation and -1 at a free, under the registry lock;
 * read_start returns a token (0: not timed) that read_stop gets after the pvar read it brackets.
 * Every member must be set.
 */
typedef struct cnt_registry_meters {
    void (*sessions)(int delta);
    void (*handles)(int delta);
    uint64_t (*read_start)(void);
    void (*read_stop)(uint64_t token);
} cnt_registry_meters_t;

/** Install meters (a pointer kept for the process's life), or NULL to count nothing. */
void cnt_registry_set_meters(const cnt_registry_meters_t *meters);

#ifdef __cplusplus
}
#endif

#endif
