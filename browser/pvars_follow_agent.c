/*
 * The agent of ibmsg_pvars --follow: a small tool preloaded (LD_PRELOAD) into the followed
 * command. At load it initializes the tool interface of the libibmsg the command uses, registers
 * a callback for every endpoint on every event type (the messaging core registers its types when
 * libibmsg loads, before this constructor runs), and writes each instance as one line to the file
 * descriptor the browser passed in IBMSG_PVARS_FOLLOW_FD: the browser copies the lines to its
 * standard output.
 *
 * Lines: "<timestamp> <pid> <source> <event> <element>=<value>..." (INT elements of a type with an
 * enumeration by item name), or with IBMSG_PVARS_FOLLOW_JSON=1 one JSON object per line. A
 * callback runs inside the command's progress (tool.h: MPI_RESTRICTED), so it never blocks: the
 * descriptor is non-blocking, one write() per line (atomic below PIPE_BUF), and a line that does
 * not fit in the pipe is counted and reported on stderr at exit.
 */
#include <ibmsg/status.h>
#include <ibmsg/tool.h>

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define FOLLOW_MAX_ELEMENTS 16
#define FOLLOW_NAME         64
#define FOLLOW_LINE         2048

typedef struct follow_item {
    int value;
    char name[FOLLOW_NAME];
} follow_item_t;

typedef struct follow_type {
    char name[FOLLOW_NAME];
    int num_elements;
    ibmsg_t_datatype_t types[FOLLOW_MAX_ELEMENTS];
    long displs[FOLLOW_MAX_ELEMENTS];
    char elements[FOLLOW_MAX_ELEMENTS][FOLLOW_NAME];
    int num_items;
    follow_item_t *items; /* the enumeration of its INT elements */
    ibmsg_t_event_registration_t reg;
} follow_type_t;

static int follow_fd = -1;
static int follow_json;
static int follow_num_types;
static follow_type_t *follow_types;
static int follow_num_sources;
static char (*follow_sources)[FOLLOW_NAME];
static unsigned long follow_lost; /* atomic: lines the pipe had no room for */

/* Appends to (line, *used) like snprintf, never past FOLLOW_LINE. */
static void follow_put(char *line, size_t *used, const char *fmt, ...)
{
    va_list ap;

    if (*used >= FOLLOW_LINE) {
        return;
    }
    va_start(ap, fmt);
    int n = vsnprintf(line + *used, FOLLOW_LINE - *used, fmt, ap);
    va_end(ap);
    if (n > 0) {
        *used += (size_t)n;
    }
}

static const char *follow_item_name(const follow_type_t *t, int value)
{
    for (int i = 0; i < t->num_items; i++) {
        if (t->items[i].value == value) {
            return t->items[i].name;
        }
    }
    return NULL;
}

static void follow_value(char *line, size_t *used, const follow_type_t *t, int k, const void *p)
{
    switch (t->types[k]) {
    case IBMSG_T_INT: {
        int v;
        memcpy(&v, p, sizeof(v));
        const char *name = follow_item_name(t, v);
        if (name != NULL) {
            follow_put(line, used, follow_json ? "\"%s\"" : "%s", name);
        } else {
            follow_put(line, used, "%d", v);
        }
        break;
    }
    case IBMSG_T_UNSIGNED: {
        unsigned v;
        memcpy(&v, p, sizeof(v));
        follow_put(line, used, "%u", v);
        break;
    }
    case IBMSG_T_UNSIGNED_LONG: {
        unsigned long v;
        memcpy(&v, p, sizeof(v));
        follow_put(line, used, "%lu", v);
        break;
    }
    case IBMSG_T_UNSIGNED_LONG_LONG: {
        unsigned long long v;
        memcpy(&v, p, sizeof(v));
        follow_put(line, used, "%llu", v);
        break;
    }
    case IBMSG_T_COUNT: {
        long long v;
        memcpy(&v, p, sizeof(v));
        follow_put(line, used, "%lld", v);
        break;
    }
    case IBMSG_T_DOUBLE: {
        double v;
        memcpy(&v, p, sizeof(v));
        follow_put(line, used, "%.17g", v);
        break;
    }
    case IBMSG_T_CHAR: {
        unsigned char c = *(const unsigned char *)p;
        follow_put(line, used, "%u", c);
        break;
    }
    default:
        follow_put(line, used, follow_json ? "null" : "?");
        break;
    }
}

static void follow_on_event(ibmsg_t_event_instance_t inst, ibmsg_t_event_registration_t reg,
                            ibmsg_t_cb_safety_t level, void *user_data)
{
    const follow_type_t *t = user_data;
    unsigned char buf[512];
    long long ts = 0;
    int source = -1;
    char line[FOLLOW_LINE + 2];
    size_t used = 0;

    (void)reg, (void)level;
    if (ibmsg_t_event_copy(inst, buf) != IBMSG_OK ||
        ibmsg_t_event_get_timestamp(inst, &ts) != IBMSG_OK ||
        ibmsg_t_event_get_source(inst, &source) != IBMSG_OK) {
        return;
    }
    const char *src = source >= 0 && source < follow_num_sources ? follow_sources[source] : "?";
    if (follow_json) {
        follow_put(line, &used,
                   "{\"timestamp\": %lld, \"pid\": %ld, \"source\": \"%s\", \"event\": \"%s\", "
                   "\"elements\": {",
                   ts, (long)getpid(), src, t->name);
    } else {
        follow_put(line, &used, "%lld %ld %s %s", ts, (long)getpid(), src, t->name);
    }
    for (int k = 0; k < t->num_elements; k++) {
        follow_put(line, &used,
                   follow_json ? "%s\"%s\": " : " %s%s=", k > 0 && follow_json ? ", " : "",
                   t->elements[k]);
        follow_value(line, &used, t, k, buf + t->displs[k]);
    }
    follow_put(line, &used, follow_json ? "}}" : "");
    if (used >= FOLLOW_LINE) {
        used = FOLLOW_LINE - 1;
    }
    line[used++] = '\n';
    if (write(follow_fd, line, used) != (ssize_t)used) {
        __atomic_add_fetch(&follow_lost, 1, __ATOMIC_RELAXED);
    }
}

/* Loads type i (names, elements, enumeration) and registers for it on every object. */
static int follow_type_load(int i, follow_type_t *t)
{
    ibmsg_t_enum_t en = IBMSG_T_ENUM_NULL;
    int nl = FOLLOW_NAME, num = FOLLOW_MAX_ELEMENTS;
    int rc = ibmsg_t_event_get_info(i, t->name, &nl, NULL, t->types, t->displs, &num, &en, NULL,
                                    NULL, NULL, NULL);

    if (rc != IBMSG_OK || num > FOLLOW_MAX_ELEMENTS) {
        return rc != IBMSG_OK ? rc : IBMSG_ERR_NOT_SUPPORTED;
    }
    t->num_elements = num;
    for (int k = 0; k < num; k++) {
        int el = FOLLOW_NAME;
        rc = ibmsg_t_event_get_element_name(i, k, t->elements[k], &el);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    if (en != IBMSG_T_ENUM_NULL && ibmsg_t_enum_get_info(en, &t->num_items, NULL, NULL) == 0 &&
        t->num_items > 0) {
        t->items = calloc((size_t)t->num_items, sizeof(*t->items));
        for (int k = 0; t->items != NULL && k < t->num_items; k++) {
            int il = FOLLOW_NAME;
            ibmsg_t_enum_get_item(en, k, &t->items[k].value, t->items[k].name, &il);
        }
        if (t->items == NULL) {
            t->num_items = 0;
        }
    }
    rc = ibmsg_t_event_handle_alloc(i, NULL, IBMSG_INFO_NULL, &t->reg);
    if (rc == IBMSG_OK) {
        rc = ibmsg_t_event_register_callback(t->reg, IBMSG_T_CB_REQUIRE_THREAD_SAFE,
                                             IBMSG_INFO_NULL, t, follow_on_event);
    }
    return rc;
}

__attribute__((constructor)) static void follow_start(void)
{
    const char *fd = getenv("IBMSG_PVARS_FOLLOW_FD");
    const char *json = getenv("IBMSG_PVARS_FOLLOW_JSON");
    int provided, rc;

    if (fd == NULL || fd[0] == '\0') {
        return;
    }
    follow_fd = atoi(fd);
    follow_json = json != NULL && strcmp(json, "1") == 0;
    fcntl(follow_fd, F_SETFL, fcntl(follow_fd, F_GETFL) | O_NONBLOCK);
    rc = ibmsg_t_init_thread(IBMSG_T_THREAD_MULTIPLE, &provided);
    if (rc == IBMSG_OK) {
        rc = ibmsg_t_source_get_num(&follow_num_sources);
    }
    if (rc == IBMSG_OK) {
        follow_sources = calloc((size_t)follow_num_sources + 1, sizeof(*follow_sources));
        for (int i = 0; follow_sources != NULL && i < follow_num_sources; i++) {
            int nl = FOLLOW_NAME;
            ibmsg_t_source_get_info(i, follow_sources[i], &nl, NULL, NULL, NULL, NULL, NULL, NULL);
        }
        follow_num_sources = follow_sources != NULL ? follow_num_sources : 0;
        rc = ibmsg_t_event_get_num(&follow_num_types);
    }
    if (rc == IBMSG_OK) {
        follow_types = calloc((size_t)follow_num_types + 1, sizeof(*follow_types));
        rc = follow_types == NULL ? IBMSG_ERR_NO_MEMORY : IBMSG_OK;
    }
    for (int i = 0; rc == IBMSG_OK && i < follow_num_types; i++) {
        rc = follow_type_load(i, &follow_types[i]);
    }
    if (rc != IBMSG_OK) {
        fprintf(stderr, "ibmsg_pvars --follow: cannot follow this process's events: %s\n",
                ibmsg_status_string(rc));
    }
}

__attribute__((destructor)) static void follow_stop(void)
{
    if (follow_fd < 0) {
        return;
    }
    for (int i = 0; follow_types != NULL && i < follow_num_types; i++) {
        if (follow_types[i].reg != IBMSG_T_EVENT_REGISTRATION_NULL) {
            ibmsg_t_event_handle_free(follow_types[i].reg, NULL, NULL);
        }
        free(follow_types[i].items);
    }
    free(follow_types);
    free(follow_sources);
    ibmsg_t_finalize();
    unsigned long lost = __atomic_load_n(&follow_lost, __ATOMIC_RELAXED);
    if (lost > 0) {
        fprintf(stderr,
                "ibmsg_pvars --follow: %lu events of process %ld not shown: the pipe was full\n",
                lost, (long)getpid());
    }
}
