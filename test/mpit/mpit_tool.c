/*
 * An MPI_T tool written against the standard <mpi.h> only (no ibmsg header), run with
 * libibmsg-mpit loaded (LD_PRELOAD, or linked for the no-MPI-library build). It checks what an
 * existing tool would see: the MPI library's variables and ibmsg's in one view, an ibmsg counter
 * that moves while started and not while stopped, MPI_T_PVAR_ALL_HANDLES reaching both sides,
 * standard error codes, and indices that still name the same items after MPI_Init.
 *
 * Usage: mpit_tool [--init] [--no-mpi] [--nic-fixture]
 *   --init    call MPI_Init_thread after the first look and check the indices again
 *   --no-mpi  no MPI library is loaded: expect ibmsg's items only
 *   --nic-fixture  ibmsg reads the NIC fixtures of test/counters/nic/fixtures
 * (IBMSG_NIC_SYSFS_ROOT): check the per-port variables the view makes of ibmsg's port-bound ones
 * Exit status 0 when every check passed; each failure is printed.
 */
#define _POSIX_C_SOURCE 200809L /* strdup */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures;

#define CHECK(cond, ...)                                                    \
    do {                                                                    \
        if (!(cond)) {                                                      \
            fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
            fprintf(stderr, __VA_ARGS__);                                   \
            fprintf(stderr, "\n");                                          \
            failures++;                                                     \
        }                                                                   \
    } while (0)

#define CHECK_RC(call)                                 \
    do {                                               \
        int rc_ = (call);                              \
        CHECK(rc_ == MPI_SUCCESS, "returned %d", rc_); \
    } while (0)

enum { KIND_CVAR, KIND_PVAR, KIND_CAT, KIND_LAST };
static const char *const kind_names[KIND_LAST] = {"cvar", "pvar", "category"};

/* Names of every item of a kind, by view index. */
typedef struct names {
    int num;
    char **name;
} names_t;

/*
 * strict: every get_info must succeed. Open MPI 4.1 invalidates some of its own cvars at MPI_Init
 * (MPI_T_ERR_INVALID_INDEX from the library itself), so after MPI_Init failures are recorded as
 * "?" names instead.
 */
static void names_take(int kind, names_t *out, int strict)
{
    int num = 0;
    if (kind == KIND_CVAR) {
        CHECK_RC(MPI_T_cvar_get_num(&num));
    } else if (kind == KIND_PVAR) {
        CHECK_RC(MPI_T_pvar_get_num(&num));
    } else {
        CHECK_RC(MPI_T_category_get_num(&num));
    }
    out->num = num;
    out->name = calloc((size_t)num + 1, sizeof(char *));
    for (int i = 0; i < num; i++) {
        char buf[512];
        int len = (int)sizeof(buf);
        int rc;
        if (kind == KIND_CVAR) {
            rc = MPI_T_cvar_get_info(i, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
        } else if (kind == KIND_PVAR) {
            rc = MPI_T_pvar_get_info(i, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                     NULL, NULL);
        } else {
            rc = MPI_T_category_get_info(i, buf, &len, NULL, NULL, NULL, NULL, NULL);
        }
        CHECK(rc == MPI_SUCCESS || !strict, "%s %d get_info: %d", kind_names[kind], i, rc);
        out->name[i] = strdup(rc == MPI_SUCCESS ? buf : "?");
    }
}

static void names_free(names_t *n)
{
    for (int i = 0; i < n->num; i++) {
        free(n->name[i]);
    }
    free(n->name);
}

static int count_ibmsg(const names_t *n)
{
    int k = 0;
    for (int i = 0; i < n->num; i++) {
        k += strncmp(n->name[i], "ibmsg", 5) == 0;
    }
    return k;
}

static int pvar_index(const char *name, int var_class)
{
    int index = -1;
    int rc = MPI_T_pvar_get_index(name, var_class, &index);
    CHECK(rc == MPI_SUCCESS, "pvar %s: %d", name, rc);
    return index;
}

/* Read a one-element 8-byte counter. */
static unsigned long long read_u64(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    CHECK_RC(MPI_T_pvar_read(s, h, &v));
    return v;
}

/* Allocate and free n handles of some ibmsg pvar through the view, in a session of their own. */
static void alloc_ibmsg_handles(int index, int n)
{
    MPI_T_pvar_session s;
    CHECK_RC(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < n; i++) {
        MPI_T_pvar_handle h;
        int count;
        CHECK_RC(MPI_T_pvar_handle_alloc(s, index, NULL, &h, &count));
        CHECK_RC(MPI_T_pvar_handle_free(s, &h));
    }
    CHECK_RC(MPI_T_pvar_session_free(&s));
}

/* An ibmsg counter through the view: exact movement while started, none while stopped. */
static void check_counter(void)
{
    int allocs = pvar_index("ibmsg_tool_handle_allocs", MPI_T_PVAR_CLASS_COUNTER);
    int alive = pvar_index("ibmsg_tool_sessions_alive", MPI_T_PVAR_CLASS_LEVEL);
    if (allocs < 0 || alive < 0) {
        return;
    }
    int var_class, bind, readonly, continuous, atomic;
    MPI_Datatype datatype;
    CHECK_RC(MPI_T_pvar_get_info(allocs, NULL, NULL, NULL, &var_class, &datatype, NULL, NULL, NULL,
                                 &bind, &readonly, &continuous, &atomic));
    CHECK(var_class == MPI_T_PVAR_CLASS_COUNTER, "class %d", var_class);
    CHECK(bind == MPI_T_BIND_NO_OBJECT, "bind %d", bind);
    CHECK(datatype == MPI_UNSIGNED_LONG_LONG || datatype == MPI_UNSIGNED_LONG ||
              datatype == MPI_COUNT,
          "tool_handle_allocs is not an 8-byte MPI datatype");

    MPI_T_pvar_session s;
    MPI_T_pvar_handle h;
    int count = -1;
    CHECK_RC(MPI_T_pvar_session_create(&s));
    CHECK_RC(MPI_T_pvar_handle_alloc(s, allocs, NULL, &h, &count));
    CHECK(count == 1, "count %d", count);
    if (!continuous) {
        CHECK_RC(MPI_T_pvar_start(s, h));
    }
    unsigned long long v0 = read_u64(s, h);
    alloc_ibmsg_handles(alive, 3);
    unsigned long long v1 = read_u64(s, h);
    CHECK(v1 == v0 + 3, "started: %llu -> %llu, expected +3", v0, v1);
    if (!continuous) {
        CHECK_RC(MPI_T_pvar_stop(s, h));
        unsigned long long v2 = read_u64(s, h);
        alloc_ibmsg_handles(alive, 2);
        unsigned long long v3 = read_u64(s, h);
        CHECK(v3 == v2, "stopped: %llu -> %llu, expected no change", v2, v3);

        /* MPI_T_PVAR_ALL_HANDLES reaches ibmsg's handles too. */
        CHECK_RC(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
        alloc_ibmsg_handles(alive, 4);
        unsigned long long v4 = read_u64(s, h);
        CHECK(v4 == v3 + 4, "ALL_HANDLES start: %llu -> %llu, expected +4", v3, v4);
        CHECK_RC(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
        alloc_ibmsg_handles(alive, 1);
        CHECK(read_u64(s, h) == v4, "ALL_HANDLES stop did not stop the counter");
    }

    /* Standard errors, in this MPI's numbering. */
    unsigned long long v;
    int rc = MPI_T_pvar_read(s, MPI_T_PVAR_ALL_HANDLES, &v);
    CHECK(rc == MPI_T_ERR_INVALID_HANDLE, "read ALL_HANDLES: %d", rc);
    MPI_T_pvar_session other;
    CHECK_RC(MPI_T_pvar_session_create(&other));
    rc = MPI_T_pvar_read(other, h, &v);
    CHECK(rc == MPI_T_ERR_INVALID_HANDLE, "handle of another session: %d", rc);
    CHECK_RC(MPI_T_pvar_session_free(&other));
    CHECK_RC(MPI_T_pvar_handle_free(s, &h));
    CHECK(h == MPI_T_PVAR_HANDLE_NULL, "handle not reset to NULL");
    CHECK_RC(MPI_T_pvar_session_free(&s));
    CHECK(s == MPI_T_PVAR_SESSION_NULL, "session not reset to NULL");
}

/* The log_level cvar: read through the view, with its enum. */
static void check_cvar(void)
{
    int index = -1;
    int rc = MPI_T_cvar_get_index("ibmsg_log_level", &index);
    CHECK(rc == MPI_SUCCESS, "cvar ibmsg_log_level: %d", rc);
    if (rc != MPI_SUCCESS) {
        return;
    }
    MPI_Datatype datatype;
    MPI_T_enum enumtype;
    int bind, scope, count;
    CHECK_RC(MPI_T_cvar_get_info(index, NULL, NULL, NULL, &datatype, &enumtype, NULL, NULL, &bind,
                                 &scope));
    CHECK(datatype == MPI_INT, "log_level is not MPI_INT");
    CHECK(bind == MPI_T_BIND_NO_OBJECT, "bind %d", bind);
    MPI_T_cvar_handle h;
    CHECK_RC(MPI_T_cvar_handle_alloc(index, NULL, &h, &count));
    CHECK(count == 1, "count %d", count);
    int level = -1;
    CHECK_RC(MPI_T_cvar_read(h, &level));
    CHECK(level >= 0, "level %d", level);
    if (enumtype != MPI_T_ENUM_NULL) {
        int num = 0;
        char name[64];
        int len = (int)sizeof(name);
        CHECK_RC(MPI_T_enum_get_info(enumtype, &num, name, &len));
        CHECK(num > level, "enum %s has %d items, level %d", name, num, level);
    }
    CHECK_RC(MPI_T_cvar_handle_free(&h));
}

/* A per-port variable's index by name, or -1 with the error code in *rc. */
static int port_var(const char *name, int var_class, int *rc)
{
    int index = -1;
    *rc = MPI_T_pvar_get_index(name, var_class, &index);
    return *rc == MPI_SUCCESS ? index : -1;
}

/*
 * The fixtures: mlx5_0 port 1 (PMA counters and hw_counters, port_xmit_data and symbol_error
 * saturated), mlx5_1 port 1 (PMA, extended width), rxe0 port 1 (hw_counters only).
 */
static void check_nic_fixture(const names_t *pvars)
{
    int rc;
    /* Port-bound variables are one NO_OBJECT variable per port that has the counter. */
    int sat = port_var("ibmsg_nic_mlx5_0_1_saturated", MPI_T_PVAR_CLASS_GENERIC, &rc);
    CHECK(sat >= 0, "ibmsg_nic_mlx5_0_1_saturated: %d", rc);
    CHECK(port_var("ibmsg_nic_mlx5_1_1_port_xmit_data", MPI_T_PVAR_CLASS_COUNTER, &rc) >= 0,
          "ibmsg_nic_mlx5_1_1_port_xmit_data: %d", rc);
    CHECK(port_var("ibmsg_nic_rxe0_1_sent_pkts", MPI_T_PVAR_CLASS_COUNTER, &rc) >= 0,
          "ibmsg_nic_rxe0_1_sent_pkts: %d", rc);
    /* rxe has no PMA counters, mlx5_1 no port_rcv_errors; bound templates are not in the view. */
    port_var("ibmsg_nic_rxe0_1_port_xmit_data", MPI_T_PVAR_CLASS_COUNTER, &rc);
    CHECK(rc == MPI_T_ERR_INVALID_NAME, "ibmsg_nic_rxe0_1_port_xmit_data: %d", rc);
    port_var("ibmsg_nic_mlx5_1_1_port_rcv_errors", MPI_T_PVAR_CLASS_COUNTER, &rc);
    CHECK(rc == MPI_T_ERR_INVALID_NAME, "ibmsg_nic_mlx5_1_1_port_rcv_errors: %d", rc);
    port_var("ibmsg_nic_port_xmit_data", MPI_T_PVAR_CLASS_COUNTER, &rc);
    CHECK(rc == MPI_T_ERR_INVALID_NAME, "ibmsg_nic_port_xmit_data (bound): %d", rc);
    port_var("ibmsg_core_eager_msgs_sent_ep", MPI_T_PVAR_CLASS_COUNTER, &rc);
    CHECK(rc == MPI_T_ERR_INVALID_NAME, "ibmsg_core_eager_msgs_sent_ep (bound): %d", rc);
    for (int i = 0; i < pvars->num; i++) {
        const char *n = pvars->name[i];
        size_t len = strlen(n);
        CHECK(strncmp(n, "ibmsg", 5) != 0 || !((len > 3 && strcmp(n + len - 3, "_ep") == 0) ||
                                               (len > 4 && strcmp(n + len - 4, "_ctx") == 0) ||
                                               (len > 7 && strcmp(n + len - 7, "_thread") == 0)),
              "per-object variant %s in the view", n);
    }
    /* The saturated list of mlx5_0 through the view, once its counters have been read. */
    if (sat >= 0) {
        MPI_T_pvar_session s;
        MPI_T_pvar_handle h, counters[2];
        int count = 0, bind = -1;
        char buf[4096] = "";
        const char *const saturating[2] = {"ibmsg_nic_mlx5_0_1_port_xmit_data",
                                           "ibmsg_nic_mlx5_0_1_symbol_error"};
        CHECK_RC(MPI_T_pvar_get_info(sat, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, &bind,
                                     NULL, NULL, NULL));
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "bind %d", bind);
        CHECK_RC(MPI_T_pvar_session_create(&s));
        for (int i = 0; i < 2; i++) {
            unsigned long long v = 1;
            int index = port_var(saturating[i], MPI_T_PVAR_CLASS_COUNTER, &rc);
            CHECK(index >= 0, "%s: %d", saturating[i], rc);
            CHECK_RC(MPI_T_pvar_handle_alloc(s, index, NULL, &counters[i], &count));
            CHECK_RC(MPI_T_pvar_start(s, counters[i]));
            CHECK_RC(MPI_T_pvar_read(s, counters[i], &v));
            CHECK(v == 0, "%s: %llu right after start", saturating[i], v);
        }
        CHECK_RC(MPI_T_pvar_handle_alloc(s, sat, NULL, &h, &count));
        CHECK(count > 0 && count <= (int)sizeof(buf), "count %d", count);
        if (count > 0 && count <= (int)sizeof(buf)) {
            CHECK_RC(MPI_T_pvar_read(s, h, buf));
            CHECK(strcmp(buf, "port_xmit_data,symbol_error") == 0, "saturated: '%s'", buf);
        }
        CHECK_RC(MPI_T_pvar_session_free(&s));
    }
    /* A port's category lists that port's variables only. */
    int cat = -1;
    CHECK_RC(MPI_T_category_get_index("ibmsg_nic_rxe0_port1", &cat));
    int num = 0;
    CHECK_RC(MPI_T_category_get_info(cat, NULL, NULL, NULL, NULL, NULL, &num, NULL));
    CHECK(num >= 15, "ibmsg_nic_rxe0_port1 has %d pvars", num);
    int *members = calloc((size_t)num + 1, sizeof(int));
    CHECK_RC(MPI_T_category_get_pvars(cat, num, members));
    for (int i = 0; i < num; i++) {
        CHECK(members[i] >= 0 && members[i] < pvars->num &&
                  strncmp(pvars->name[members[i]], "ibmsg_nic_rxe0_1_", 17) == 0,
              "ibmsg_nic_rxe0_port1 holds %s",
              members[i] < pvars->num ? pvars->name[members[i]] : "?");
    }
    free(members);
    printf("nic fixture: per-port variables checked\n");
}

static void check_errors(void)
{
    int n = 0, index;
    CHECK_RC(MPI_T_pvar_get_num(&n));
    int rc = MPI_T_pvar_get_info(n + 1000, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                 NULL, NULL, NULL);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX, "index out of range: %d", rc);
    rc = MPI_T_cvar_get_index("ibmsg_no_such_variable", &index);
    CHECK(rc == MPI_T_ERR_INVALID_NAME, "unknown name: %d", rc);
    MPI_T_cvar_handle bogus = (MPI_T_cvar_handle)(void *)&index;
    rc = MPI_T_cvar_read(bogus, &index);
    CHECK(rc == MPI_T_ERR_INVALID_HANDLE, "garbage cvar handle: %d", rc);
}

#if MPI_VERSION >= 4
static int freed_calls;
static MPI_T_event_registration freed_reg;

static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety level, void *user_data)
{
    (void)level;
    freed_calls += user_data == &freed_calls;
    freed_reg = reg;
}

static void on_event(MPI_T_event_instance inst, MPI_T_event_registration reg, MPI_T_cb_safety level,
                     void *user_data)
{
    (void)inst, (void)reg, (void)level, (void)user_data;
}

/* The name of event index i ("" when get_info fails). */
static void event_name(int i, char *name, int len)
{
    name[0] = '\0';
    MPI_T_event_get_info(i, name, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
}

/*
 * ibmsg's events and sources in the view next to the MPI library's (MPICH 4 has the calls and
 * no events): described in MPI's terms, found by name and by category, registered, freed; every
 * handle and safety level checked. Their delivery is mpit_traffic's (it needs a device).
 */
static void check_events(void)
{
    int n = 0, ns = 0, index = -1, rc;
    CHECK_RC(MPI_T_event_get_num(&n));
    CHECK_RC(MPI_T_source_get_num(&ns));
    CHECK(n >= 6 && ns >= 1, "%d events, %d sources", n, ns);
    for (int i = 0; i < n; i++) {
        char a[128];
        event_name(i, a, sizeof(a));
        CHECK(a[0] != '\0', "event %d has no name", i);
        for (int j = 0; j < i; j++) {
            char b[128];
            event_name(j, b, sizeof(b));
            CHECK(strcmp(a, b) != 0, "events %d and %d are both %s", j, i, a);
        }
    }
    int mono = -1;
    for (int i = 0; i < ns; i++) {
        char name[64];
        int len = sizeof(name);
        MPI_T_source_order order;
        MPI_Count tps = 0, max = 0;
        CHECK_RC(MPI_T_source_get_info(i, name, &len, NULL, NULL, &order, &tps, &max, NULL));
        if (strcmp(name, "ibmsg_ibmsg_monotonic") == 0) {
            mono = i;
            CHECK(order == MPI_T_SOURCE_ORDERED, "ordering %d", (int)order);
            CHECK(tps == 1000000000, "ticks per second %lld", (long long)tps);
        }
    }
    CHECK(mono >= 0, "no source ibmsg_ibmsg_monotonic");
    MPI_Count t1 = 0, t2 = 0;
    CHECK_RC(MPI_T_source_get_timestamp(mono, &t1));
    CHECK_RC(MPI_T_source_get_timestamp(mono, &t2));
    CHECK(t1 > 0 && t2 >= t1, "timestamps %lld %lld", (long long)t1, (long long)t2);
    rc = MPI_T_source_get_info(ns, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX, "source out of range: %d", rc);

    CHECK_RC(MPI_T_event_get_index("ibmsg_core_ep_connected", &index));
    char name[64], desc[256];
    int nl = sizeof(name), dl = sizeof(desc), verbosity, bind = -1, num = 8;
    MPI_Datatype types[8];
    MPI_Aint displs[8];
    MPI_T_enum en = MPI_T_ENUM_NULL;
    CHECK_RC(MPI_T_event_get_info(index, name, &nl, &verbosity, types, displs, &num, &en, NULL,
                                  desc, &dl, &bind));
    CHECK(strcmp(name, "ibmsg_core_ep_connected") == 0, "name %s", name);
    CHECK(num == 3, "%d elements", num);
    for (int i = 0; i < 3 && i < num; i++) {
        CHECK(types[i] == MPI_UNSIGNED, "element %d datatype", i);
        CHECK(displs[i] == 4 * i, "element %d at %ld", i, (long)displs[i]);
    }
    CHECK(bind == MPI_T_BIND_NO_OBJECT, "bind %d", bind);
    CHECK(en == MPI_T_ENUM_NULL, "an enum");
    rc = MPI_T_event_get_index("ibmsg_no_such_event", &index);
    CHECK(rc == MPI_T_ERR_INVALID_NAME, "unknown event: %d", rc);
    rc = MPI_T_event_get_info(n, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX, "event out of range: %d", rc);
    int failed = -1, enum_items = 0;
    CHECK_RC(MPI_T_event_get_index("ibmsg_core_ep_failed", &failed));
    CHECK_RC(MPI_T_event_get_info(failed, NULL, NULL, NULL, NULL, NULL, NULL, &en, NULL, NULL, NULL,
                                  NULL));
    nl = sizeof(name);
    CHECK_RC(MPI_T_enum_get_info(en, &enum_items, name, &nl));
    CHECK(strcmp(name, "core_ep_fail_causes") == 0 && enum_items == 10, "enum %s of %d", name,
          enum_items);

    /* The category ibmsg_connection holds both connection events, in the view's indices. */
    int cat = -1, nev = 0, members[4] = {-1, -1, -1, -1};
    CHECK_RC(MPI_T_category_get_index("ibmsg_connection", &cat));
    CHECK_RC(MPI_T_category_get_num_events(cat, &nev));
    CHECK(nev == 2, "ibmsg_connection has %d events", nev);
    CHECK_RC(MPI_T_category_get_events(cat, 4, members));
    CHECK(members[0] == index && members[1] == failed, "members %d %d", members[0], members[1]);

    /* A registration: callbacks set and removed, bad levels and handles refused, freed once. */
    MPI_T_event_registration reg;
    CHECK_RC(MPI_T_event_handle_alloc(index, NULL, MPI_INFO_NULL, &reg));
    CHECK_RC(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL,
                                           on_event));
    CHECK_RC(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL,
                                           on_event));
    CHECK_RC(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, NULL));
    rc = MPI_T_event_register_callback(reg, (MPI_T_cb_safety)42, MPI_INFO_NULL, NULL, on_event);
    CHECK(rc == MPI_T_ERR_INVALID, "bad safety level: %d", rc);
    CHECK_RC(MPI_T_event_set_dropped_handler(reg, NULL));
    rc = MPI_T_event_handle_alloc(n, NULL, MPI_INFO_NULL, &reg);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX, "alloc out of range: %d", rc);
    CHECK_RC(MPI_T_event_handle_free(reg, &freed_calls, on_free));
    CHECK(freed_calls == 1 && freed_reg == reg, "free callback: %d calls", freed_calls);
    rc = MPI_T_event_handle_free(reg, &freed_calls, on_free);
    CHECK(rc == MPI_T_ERR_INVALID_HANDLE, "freed twice: %d", rc);
    rc = MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_event);
    CHECK(rc == MPI_T_ERR_INVALID_HANDLE, "freed handle: %d", rc);
    rc = MPI_T_event_set_dropped_handler((MPI_T_event_registration)(void *)&rc, NULL);
    CHECK(rc == MPI_T_ERR_INVALID_HANDLE, "garbage handle: %d", rc);
    CHECK(freed_calls == 1, "free callback: %d calls", freed_calls);
    int v = 0;
    rc = MPI_T_event_read((MPI_T_event_instance)(void *)&v, 0, &v);
    CHECK(rc == MPI_T_ERR_INVALID_HANDLE, "instance outside a callback: %d", rc);
    printf("events   total %4d  sources %d: ibmsg's checked\n", n, ns);
}
#endif

int main(int argc, char **argv)
{
    int do_init = 0, no_mpi = 0, nic_fixture = 0, provided = -1;
    for (int i = 1; i < argc; i++) {
        do_init |= strcmp(argv[i], "--init") == 0;
        no_mpi |= strcmp(argv[i], "--no-mpi") == 0;
        nic_fixture |= strcmp(argv[i], "--nic-fixture") == 0;
    }
    int rc = MPI_T_pvar_get_num(&provided);
    CHECK(rc == MPI_T_ERR_NOT_INITIALIZED, "before init: %d", rc);
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));

    names_t before[KIND_LAST];
    for (int k = 0; k < KIND_LAST; k++) {
        names_take(k, &before[k], 1);
        int ours = count_ibmsg(&before[k]);
        int theirs = before[k].num - ours;
        printf("%-8s total %4d  ibmsg %3d  MPI %4d\n", kind_names[k], before[k].num, ours, theirs);
        CHECK(ours > 0 || k == KIND_CAT, "no ibmsg %ss", kind_names[k]);
        if (no_mpi) {
            CHECK(theirs == 0, "%d %ss that are not ibmsg's without an MPI library", theirs,
                  kind_names[k]);
        }
    }
    if (!no_mpi) {
        CHECK(before[KIND_CVAR].num - count_ibmsg(&before[KIND_CVAR]) > 0,
              "the MPI library's cvars are missing");
    }
    check_counter();
    check_cvar();
    check_errors();
#if MPI_VERSION >= 4
    check_events();
#endif
    if (nic_fixture) {
        check_nic_fixture(&before[KIND_PVAR]);
    }

#ifndef MPIT_TOOL_NO_MPI_LIB
    if (do_init) {
        int level;
        CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &level));
        for (int k = 0; k < KIND_LAST; k++) {
            names_t after;
            names_take(k, &after, 0);
            CHECK(after.num >= before[k].num, "%s count shrank", kind_names[k]);
            int same = 0, gone = 0;
            for (int i = 0; i < before[k].num && i < after.num; i++) {
                if (strcmp(after.name[i], "?") == 0) {
                    CHECK(strncmp(before[k].name[i], "ibmsg", 5) != 0, "%s %d (%s) unreadable",
                          kind_names[k], i, before[k].name[i]);
                    gone++;
                    continue;
                }
                CHECK(strcmp(before[k].name[i], after.name[i]) == 0, "%s %d was %s, now %s",
                      kind_names[k], i, before[k].name[i], after.name[i]);
                same++;
            }
            printf("%-8s after MPI_Init: total %4d, %d of the earlier indices name the same item, "
                   "%d the MPI library no longer describes\n",
                   kind_names[k], after.num, same, gone);
            names_free(&after);
        }
        check_counter();
    }
#endif
    for (int k = 0; k < KIND_LAST; k++) {
        names_free(&before[k]);
    }
    /* Open MPI 4.1 crashes in MPI_T_finalize after MPI_Finalize: finalize MPI_T first. */
    CHECK_RC(MPI_T_finalize());
#ifndef MPIT_TOOL_NO_MPI_LIB
    if (do_init) {
        MPI_Finalize();
    }
#endif
    rc = MPI_T_pvar_get_num(&provided);
    CHECK(rc == MPI_T_ERR_NOT_INITIALIZED, "after finalize: %d", rc);
    printf("%s\n", failures == 0 ? "mpit_tool: all checks passed" : "mpit_tool: FAILED");
    return failures == 0 ? 0 : 1;
}
