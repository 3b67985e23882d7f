/*
 * An MPI_T tool written against the standard <mpi.h> only, run with libibmsg-mpit loaded, that
 * watches ibmsg traffic of its own process (traffic.h: one context, two endpoints connected to
 * each other) in the Soft-RoCE guest. Checks:
 *   - ibmsg_core_eager_msgs_sent / _recvd / _bytes_sent move by exactly the messages (bytes)
 *     sent while started, and not at all while stopped (single handles and ALL_HANDLES);
 *   - ibmsg's per-object variants (_ep, _ctx, _thread) are not in the view: their NO_OBJECT sums
 *     are;
 *   - the NIC's per-port variables (ibmsg_nic_<dev>_<port>_<counter>) are listed, bound to no
 *     object, allocatable and readable, and the port's sent_pkts moves at least by the messages;
 *   - with --init, the pvar indices seen before MPI_Init name the same variables after it, and
 *     the checks pass again after it.
 *
 * Usage: mpit_traffic [--init] [--no-mpi]. Exit status 0: passed; 77: no RDMA device (skipped);
 * 1: a check failed (each failure is printed).
 */
#define _POSIX_C_SOURCE 200809L /* strdup, nanosleep */

#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "traffic.h"

#define MESSAGES 64
#define MSG_LEN  256

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

typedef struct names {
    int num;
    char **name;
} names_t;

/* Every pvar's name by view index; "?" where the MPI library fails get_info (Open MPI does). */
static void names_take(names_t *out)
{
    int num = 0;
    CHECK_RC(MPI_T_pvar_get_num(&num));
    out->num = num;
    out->name = calloc((size_t)num + 1, sizeof(char *));
    for (int i = 0; i < num; i++) {
        char buf[512];
        int len = (int)sizeof(buf);
        int rc = MPI_T_pvar_get_info(i, buf, &len, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                     NULL, NULL);
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

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

/* A per-port NIC variable: ibmsg_nic_<dev>_<port>_<counter> (port a number, dev any). */
static int is_port_var(const char *name)
{
    if (strncmp(name, "ibmsg_nic_", 10) != 0) {
        return 0;
    }
    for (const char *p = name + 10; *p != '\0'; p++) {
        if (p[0] == '_' && p[1] >= '1' && p[1] <= '9') {
            const char *q = p + 1;
            while (*q >= '0' && *q <= '9') {
                q++;
            }
            if (*q == '_') {
                return 1;
            }
        }
    }
    return 0;
}

static int pvar_index(const char *name, int var_class)
{
    int index = -1;
    int rc = MPI_T_pvar_get_index(name, var_class, &index);
    CHECK(rc == MPI_SUCCESS, "pvar %s: %d", name, rc);
    return index;
}

static unsigned long long read_u64(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    CHECK_RC(MPI_T_pvar_read(s, h, &v));
    return v;
}

static void traffic(int n)
{
    CHECK(traffic_run(n, MSG_LEN) == 0, "%d messages of %d bytes", n, MSG_LEN);
}

/* A started handle on a NO_OBJECT counter of 8-byte elements, count 1. */
static MPI_T_pvar_handle counter_handle(MPI_T_pvar_session s, const char *name)
{
    MPI_T_pvar_handle h = MPI_T_PVAR_HANDLE_NULL;
    int index = pvar_index(name, MPI_T_PVAR_CLASS_COUNTER);
    int bind = -1, count = -1, continuous = 1;
    MPI_Datatype datatype = MPI_DATATYPE_NULL;
    if (index < 0) {
        return h;
    }
    CHECK_RC(MPI_T_pvar_get_info(index, NULL, NULL, NULL, NULL, &datatype, NULL, NULL, NULL, &bind,
                                 NULL, &continuous, NULL));
    CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s: bind %d", name, bind);
    CHECK(datatype == MPI_UNSIGNED_LONG_LONG, "%s: not MPI_UNSIGNED_LONG_LONG", name);
    CHECK(!continuous, "%s is continuous", name);
    CHECK_RC(MPI_T_pvar_handle_alloc(s, index, NULL, &h, &count));
    CHECK(count == 1, "%s: count %d", name, count);
    CHECK_RC(MPI_T_pvar_start(s, h));
    return h;
}

/* ibmsg's core counters: exact while started, frozen while stopped. */
static void check_core_counters(void)
{
    MPI_T_pvar_session s;
    CHECK_RC(MPI_T_pvar_session_create(&s));
    MPI_T_pvar_handle sent = counter_handle(s, "ibmsg_core_eager_msgs_sent");
    MPI_T_pvar_handle recvd = counter_handle(s, "ibmsg_core_eager_msgs_recvd");
    MPI_T_pvar_handle bytes = counter_handle(s, "ibmsg_core_eager_bytes_sent");
    if (sent == MPI_T_PVAR_HANDLE_NULL || recvd == MPI_T_PVAR_HANDLE_NULL ||
        bytes == MPI_T_PVAR_HANDLE_NULL) {
        MPI_T_pvar_session_free(&s);
        return;
    }
    unsigned long long s0 = read_u64(s, sent), r0 = read_u64(s, recvd), b0 = read_u64(s, bytes);
    traffic(MESSAGES);
    unsigned long long s1 = read_u64(s, sent), r1 = read_u64(s, recvd), b1 = read_u64(s, bytes);
    CHECK(s1 - s0 == MESSAGES, "sent moved by %llu, expected %d", s1 - s0, MESSAGES);
    CHECK(r1 - r0 == MESSAGES, "received moved by %llu, expected %d", r1 - r0, MESSAGES);
    CHECK(b1 - b0 == (unsigned long long)MESSAGES * MSG_LEN, "bytes moved by %llu, expected %d",
          b1 - b0, MESSAGES * MSG_LEN);
    printf("started: %d messages -> ibmsg_core_eager_msgs_sent +%llu, _recvd +%llu, "
           "_bytes_sent +%llu\n",
           MESSAGES, s1 - s0, r1 - r0, b1 - b0);

    CHECK_RC(MPI_T_pvar_stop(s, sent));
    CHECK_RC(MPI_T_pvar_stop(s, recvd));
    CHECK_RC(MPI_T_pvar_stop(s, bytes));
    traffic(MESSAGES / 4);
    unsigned long long s2 = read_u64(s, sent), r2 = read_u64(s, recvd);
    CHECK(s2 == s1 && r2 == r1, "stopped handles moved: sent %llu -> %llu, recvd %llu -> %llu", s1,
          s2, r1, r2);
    printf("stopped: %d messages -> ibmsg_core_eager_msgs_sent +%llu\n", MESSAGES / 4, s2 - s1);

    CHECK_RC(MPI_T_pvar_start(s, MPI_T_PVAR_ALL_HANDLES));
    traffic(MESSAGES / 8);
    CHECK_RC(MPI_T_pvar_stop(s, MPI_T_PVAR_ALL_HANDLES));
    traffic(1);
    unsigned long long s3 = read_u64(s, sent);
    CHECK(s3 - s2 == MESSAGES / 8, "ALL_HANDLES: sent moved by %llu, expected %d", s3 - s2,
          MESSAGES / 8);
    CHECK_RC(MPI_T_pvar_session_free(&s));
}

/* The view: NO_OBJECT sums only, and the NIC's per-port variables, readable. */
static void check_view(const names_t *n)
{
    int ports = 0, sent_pkts = -1;
    for (int i = 0; i < n->num; i++) {
        const char *name = n->name[i];
        if (strncmp(name, "ibmsg_", 6) != 0) {
            continue;
        }
        CHECK(!ends_with(name, "_ep") && !ends_with(name, "_ctx") && !ends_with(name, "_thread"),
              "per-object variant %s in the view", name);
        if (is_port_var(name)) {
            ports++;
            if (sent_pkts < 0 && ends_with(name, "_sent_pkts")) {
                sent_pkts = i;
            }
        }
    }
    int index;
    CHECK(MPI_T_pvar_get_index("ibmsg_core_eager_msgs_sent_ep", MPI_T_PVAR_CLASS_COUNTER, &index) ==
              MPI_T_ERR_INVALID_NAME,
          "ibmsg_core_eager_msgs_sent_ep has an index");
    CHECK(ports > 0, "no per-port NIC variable");
    printf("%d per-port NIC variables\n", ports);

    /* Every per-port variable: bound to no object, a handle, a read. */
    MPI_T_pvar_session s;
    CHECK_RC(MPI_T_pvar_session_create(&s));
    for (int i = 0; i < n->num; i++) {
        if (!is_port_var(n->name[i])) {
            continue;
        }
        int bind = -1, count = -1, var_class;
        MPI_T_pvar_handle h;
        CHECK_RC(MPI_T_pvar_get_info(i, NULL, NULL, NULL, &var_class, NULL, NULL, NULL, NULL, &bind,
                                     NULL, NULL, NULL));
        CHECK(bind == MPI_T_BIND_NO_OBJECT, "%s: bind %d", n->name[i], bind);
        CHECK(MPI_T_pvar_get_index(n->name[i], var_class, &index) == MPI_SUCCESS && index == i,
              "%s: get_index does not give %d", n->name[i], i);
        CHECK_RC(MPI_T_pvar_handle_alloc(s, i, NULL, &h, &count));
        CHECK(count >= 1, "%s: count %d", n->name[i], count);
        char *buf = calloc((size_t)count + 1, 8);
        CHECK(MPI_T_pvar_read(s, h, buf) == MPI_SUCCESS, "%s: read", n->name[i]);
        free(buf);
    }
    /* The port's packets: rxe loops back, so each message is at least one packet sent. */
    if (sent_pkts >= 0) {
        MPI_T_pvar_handle h;
        int count;
        CHECK_RC(MPI_T_pvar_handle_alloc(s, sent_pkts, NULL, &h, &count));
        CHECK_RC(MPI_T_pvar_start(s, h));
        traffic(MESSAGES);
        /* The kernel caches hw_counters for their lifespan (12 ms on rxe): wait past it. */
        struct timespec wait = {0, 100 * 1000 * 1000};
        nanosleep(&wait, NULL);
        unsigned long long pkts = read_u64(s, h);
        CHECK(pkts >= MESSAGES, "%s moved by %llu for %d messages", n->name[sent_pkts], pkts,
              MESSAGES);
        printf("%s: +%llu packets for %d messages\n", n->name[sent_pkts], pkts, MESSAGES);
    }
    CHECK_RC(MPI_T_pvar_session_free(&s));
}

#if MPI_VERSION >= 4
/* What the layer's callbacks of ibmsg_core_ep_connected saw. */
static struct {
    int calls;
    unsigned qpn[2], peer[2], copy[2][3];
    MPI_Count ts[2];
    int source[2];
    MPI_T_cb_safety level;
} connected;

static void on_connected(MPI_T_event_instance inst, MPI_T_event_registration reg,
                         MPI_T_cb_safety level, void *user_data)
{
    int i = connected.calls++;
    (void)reg;
    CHECK(user_data == &connected, "user_data %p", user_data);
    if (i >= 2) {
        return;
    }
    connected.level = level;
    CHECK_RC(MPI_T_event_read(inst, 0, &connected.qpn[i]));
    CHECK_RC(MPI_T_event_read(inst, 1, &connected.peer[i]));
    CHECK_RC(MPI_T_event_copy(inst, connected.copy[i]));
    CHECK_RC(MPI_T_event_get_timestamp(inst, &connected.ts[i]));
    CHECK_RC(MPI_T_event_get_source(inst, &connected.source[i]));
    unsigned x;
    int rc = MPI_T_event_read(inst, 3, &x);
    CHECK(rc == MPI_T_ERR_INVALID_INDEX, "element 3: %d", rc);
}

/* Registered through the view before the endpoints connect (the event has no MPI_T binding). */
static MPI_T_event_registration connected_register(void)
{
    MPI_T_event_registration reg;
    int index = -1;
    CHECK_RC(MPI_T_event_get_index("ibmsg_core_ep_connected", &index));
    CHECK_RC(MPI_T_event_handle_alloc(index, NULL, MPI_INFO_NULL, &reg));
    CHECK_RC(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL,
                                           &connected, on_connected));
    return reg;
}

/* Both endpoints' instances, delivered through the layer with their elements. */
static void connected_check(MPI_T_event_registration reg)
{
    int ns = 0, mono = -1;
    CHECK_RC(MPI_T_source_get_num(&ns));
    for (int i = 0; i < ns; i++) {
        char name[64];
        int len = sizeof(name);
        CHECK_RC(MPI_T_source_get_info(i, name, &len, NULL, NULL, NULL, NULL, NULL, NULL));
        mono = strcmp(name, "ibmsg_ibmsg_monotonic") == 0 ? i : mono;
    }
    CHECK(connected.calls == 2, "%d ibmsg_core_ep_connected instances", connected.calls);
    CHECK(connected.level == MPI_T_CB_REQUIRE_THREAD_SAFE, "level %d", (int)connected.level);
    CHECK(connected.qpn[0] != 0 && connected.qpn[0] == connected.peer[1] &&
              connected.qpn[1] == connected.peer[0],
          "qpns %u->%u, %u->%u", connected.qpn[0], connected.peer[0], connected.qpn[1],
          connected.peer[1]);
    CHECK(connected.copy[0][0] == connected.qpn[0] && connected.copy[1][1] == connected.peer[1],
          "copied elements differ from the read ones");
    CHECK(connected.ts[0] > 0 && connected.ts[1] > connected.ts[0], "timestamps %lld %lld",
          (long long)connected.ts[0], (long long)connected.ts[1]);
    CHECK(connected.source[0] == mono && connected.source[1] == mono, "sources %d %d (%d)",
          connected.source[0], connected.source[1], mono);
    CHECK_RC(MPI_T_event_handle_free(reg, NULL, NULL));
    printf("events: ibmsg_core_ep_connected delivered through the view for both endpoints\n");
}
#endif

int main(int argc, char **argv)
{
    int do_init = 0, no_mpi = 0, provided;
    for (int i = 1; i < argc; i++) {
        do_init |= strcmp(argv[i], "--init") == 0;
        no_mpi |= strcmp(argv[i], "--no-mpi") == 0;
    }
    (void)no_mpi;
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided));
#if MPI_VERSION >= 4
    MPI_T_event_registration connected_reg = connected_register();
#endif
    int ret = traffic_open();
    if (ret == TRAFFIC_NO_DEVICE) {
        printf("mpit_traffic: SKIP: no RDMA device (run in the guest: test/vm/run -- ...)\n");
        MPI_T_finalize();
        return 77;
    }
    CHECK(ret == 0, "traffic_open: %d", ret);
    if (ret != 0) {
        return 1;
    }
#if MPI_VERSION >= 4
    connected_check(connected_reg);
#endif
    names_t before;
    names_take(&before);
    check_view(&before);
    check_core_counters();

#ifndef MPIT_TOOL_NO_MPI_LIB
    if (do_init) {
        CHECK_RC(MPI_Init_thread(&argc, &argv, MPI_THREAD_SINGLE, &provided));
        names_t after;
        names_take(&after);
        CHECK(after.num >= before.num, "pvar count shrank: %d -> %d", before.num, after.num);
        int same = 0;
        for (int i = 0; i < before.num && i < after.num; i++) {
            if (strncmp(before.name[i], "ibmsg", 5) != 0 && strcmp(after.name[i], "?") == 0) {
                continue; /* the MPI library no longer describes it (Open MPI 4.1) */
            }
            CHECK(strcmp(before.name[i], after.name[i]) == 0, "pvar %d was %s, now %s", i,
                  before.name[i], after.name[i]);
            same++;
        }
        printf("after MPI_Init: %d pvars, %d of the %d earlier indices name the same variable\n",
               after.num, same, before.num);
        check_view(&after);
        check_core_counters();
        names_free(&after);
    }
#endif
    names_free(&before);
    traffic_close();
    CHECK_RC(MPI_T_finalize());
#ifndef MPIT_TOOL_NO_MPI_LIB
    if (do_init) {
        MPI_Finalize();
    }
#endif
    printf("%s\n", failures == 0 ? "mpit_traffic: all checks passed" : "mpit_traffic: FAILED");
    return failures == 0 ? 0 : 1;
}
