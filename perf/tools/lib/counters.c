#include <stdlib.h>
#include <string.h>

#include "perf/tools/lib/counters.h"

static bool perf_category_wanted(const char *list, const char *cat)
{
    size_t n = strlen(cat);

    if (list == NULL || list[0] == '\0') {
        return true;
    }
    for (const char *p = list; p != NULL; p = strchr(p, ',')) {
        p += *p == ',';
        if (strncmp(p, cat, n) == 0 && (p[n] == ',' || p[n] == '\0')) {
            return true;
        }
    }
    return false;
}

/* The port object of the context's device and port, to bind NIC variables to. */
static bool perf_find_port(ibmsg_context_t ctx, ibmsg_t_port_t *out, char *label, size_t len)
{
    ibmsg_context_attr_t attr;
    int num = 0;

    if (ibmsg_context_query(ctx, &attr) != IBMSG_OK || ibmsg_t_port_get_num(&num) != IBMSG_OK) {
        return false;
    }
    for (int i = 0; i < num; i++) {
        ibmsg_t_port_t port;
        char name[64];
        int name_len = sizeof(name), port_num = 0;

        if (ibmsg_t_port_get(i, &port) == IBMSG_OK &&
            ibmsg_t_port_get_info(port, name, &name_len, &port_num) == IBMSG_OK &&
            strcmp(name, attr.device) == 0 && port_num == attr.port) {
            *out = port;
            snprintf(label, len, "%s port %d", name, port_num);
            return true;
        }
    }
    return false;
}

/* papi_unavailable_events says which events PAPI cannot count here, and why. */
static void perf_papi_note(perf_counters_t *pc)
{
    int index, count = 0;
    ibmsg_t_pvar_handle_t h;
    char *buf;

    if (ibmsg_t_pvar_get_index("papi_unavailable_events", IBMSG_T_PVAR_CLASS_STATE, &index) !=
            IBMSG_OK &&
        ibmsg_t_pvar_get_index("papi_unavailable_events", IBMSG_T_PVAR_CLASS_GENERIC, &index) !=
            IBMSG_OK) {
        snprintf(pc->papi_note, sizeof(pc->papi_note), "no PAPI events registered");
        return;
    }
    if (ibmsg_t_pvar_handle_alloc(pc->session, index, NULL, &h, &count) != IBMSG_OK || count < 1) {
        return;
    }
    buf = calloc((size_t)count + 1, 1);
    if (buf != NULL && ibmsg_t_pvar_read(pc->session, h, buf) == IBMSG_OK) {
        snprintf(pc->papi_note, sizeof(pc->papi_note), "%s", buf);
    }
    free(buf);
    ibmsg_t_pvar_handle_free(pc->session, &h);
}

static int perf_add_category(perf_counters_t *pc, const char *cat, ibmsg_context_t *ctx,
                             ibmsg_t_port_t *port, bool every_class, FILE *err)
{
    int cat_index, num = 0, *idx;
    int ret = ibmsg_t_category_get_index(cat, &cat_index);

    if (ret != IBMSG_OK) {
        return IBMSG_OK; /* e.g. no NIC category on a host without ports */
    }
    ret = ibmsg_t_category_flatten(cat_index, IBMSG_T_KIND_PVAR, 0, NULL, &num);
    if (ret != IBMSG_OK || num == 0) {
        return ret;
    }
    idx = malloc(sizeof(*idx) * (size_t)num);
    if (idx == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    ret = ibmsg_t_category_flatten(cat_index, IBMSG_T_KIND_PVAR, num, idx, &num);
    if (ret == IBMSG_OK && !every_class) {
        ret =
            ibmsg_t_pvar_filter(num, idx, IBMSG_T_PVAR_CLASS_COUNTER, IBMSG_T_ANY, num, idx, &num);
    }
    for (int i = 0; ret == IBMSG_OK && i < num && pc->num < PERF_COUNTERS_MAX; i++) {
        perf_counter_t *c = &pc->c[pc->num];
        int name_len = sizeof(c->name), bind, continuous, count = 0;
        void *obj = NULL;

        ret = ibmsg_t_pvar_get_info(idx[i], c->name, &name_len, NULL, NULL, NULL, NULL, NULL, NULL,
                                    &bind, NULL, &continuous, NULL);
        if (ret != IBMSG_OK) {
            fprintf(err, "counters: pvar %d: %s\n", idx[i], ibmsg_status_string(ret));
            break;
        }
        if (bind == IBMSG_T_BIND_CONTEXT || bind == IBMSG_T_BIND_ENDPOINT) {
            obj = ctx; /* an endpoint's counters also bind to its context: all its endpoints */
        } else if (bind == IBMSG_T_BIND_PORT) {
            if (port == NULL) {
                continue;
            }
            obj = port;
        } else if (bind != IBMSG_T_BIND_NO_OBJECT) {
            continue;
        }
        /* A port without this counter, or a PAPI event that cannot start, has no handle. */
        ret = ibmsg_t_pvar_handle_alloc(pc->session, idx[i], obj, &c->handle, &count);
        if (getenv("IBMSG_PERF_DEBUG") != NULL) {
            fprintf(err, "counters: %s (bind %d): %s, count %d\n", c->name, bind,
                    ibmsg_status_string(ret), count);
        }
        if (ret != IBMSG_OK || count != 1) {
            ret = IBMSG_OK;
            if (c->handle != IBMSG_T_PVAR_HANDLE_NULL) {
                ibmsg_t_pvar_handle_free(pc->session, &c->handle);
            }
            continue;
        }
        snprintf(c->category, sizeof(c->category), "%s", cat);
        c->continuous = continuous != 0;
        if (!c->continuous) {
            pc->handles[pc->num_started++] = c->handle;
        }
        pc->num++;
    }
    free(idx);
    return ret;
}

int perf_counters_open(perf_counters_t *pc, const char *categories, bool every_class,
                       ibmsg_context_t ctx, FILE *err)
{
    static const char *cats[] = {"core", "verbs", "nic", "papi"};
    ibmsg_context_t ctx_obj = ctx;
    ibmsg_t_port_t port;
    bool have_port;
    int provided, ret;

    memset(pc, 0, sizeof(*pc));
    ret = ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided);
    if (ret != IBMSG_OK) {
        fprintf(err, "counters: ibmsg_t_init_thread: %s\n", ibmsg_status_string(ret));
        return ret;
    }
    ret = ibmsg_t_pvar_session_create(&pc->session);
    if (ret != IBMSG_OK) {
        fprintf(err, "counters: ibmsg_t_pvar_session_create: %s\n", ibmsg_status_string(ret));
        ibmsg_t_finalize();
        return ret;
    }
    have_port = perf_find_port(ctx, &port, pc->port_name, sizeof(pc->port_name));
    for (size_t i = 0; i < sizeof(cats) / sizeof(cats[0]) && ret == IBMSG_OK; i++) {
        if (perf_category_wanted(categories, cats[i])) {
            ret = perf_add_category(pc, cats[i], &ctx_obj, have_port ? &port : NULL, every_class,
                                    err);
        }
    }
    if (perf_category_wanted(categories, "papi")) {
        bool any = false;
        for (int i = 0; i < pc->num; i++) {
            any = any || strcmp(pc->c[i].category, "papi") == 0;
        }
        if (!any) {
            perf_papi_note(pc);
            if (pc->papi_note[0] == '\0') {
                snprintf(pc->papi_note, sizeof(pc->papi_note), "no PAPI event could start");
            }
        }
    }
    if (ret != IBMSG_OK) {
        perf_counters_close(pc);
    }
    return ret;
}

int perf_counters_start(perf_counters_t *pc)
{
    for (int i = 0; i < pc->num; i++) {
        if (pc->c[i].continuous) {
            int ret = ibmsg_t_pvar_read(pc->session, pc->c[i].handle, &pc->c[i].base);
            if (ret != IBMSG_OK) {
                return ret;
            }
        }
    }
    return pc->num_started == 0
               ? IBMSG_OK
               : ibmsg_t_pvar_start_list(pc->session, pc->num_started, pc->handles);
}

int perf_counters_stop(perf_counters_t *pc)
{
    int ret = pc->num_started == 0
                  ? IBMSG_OK
                  : ibmsg_t_pvar_stop_list(pc->session, pc->num_started, pc->handles);

    for (int i = 0; ret == IBMSG_OK && i < pc->num; i++) {
        unsigned long long now;
        if (pc->c[i].continuous) {
            ret = ibmsg_t_pvar_read(pc->session, pc->c[i].handle, &now);
            pc->c[i].delta += now - pc->c[i].base; /* wraps like the counter: stays exact */
        }
    }
    return ret;
}

int perf_counters_read(perf_counters_t *pc)
{
    for (int i = 0; i < pc->num; i++) {
        int ret;
        if (pc->c[i].continuous) {
            continue; /* accumulated at each stop */
        }
        ret = ibmsg_t_pvar_read(pc->session, pc->c[i].handle, &pc->c[i].delta);
        if (ret != IBMSG_OK) {
            return ret;
        }
    }
    return IBMSG_OK;
}

long long perf_counters_get(const perf_counters_t *pc, const char *name)
{
    for (int i = 0; i < pc->num; i++) {
        if (strcmp(pc->c[i].name, name) == 0) {
            return (long long)pc->c[i].delta;
        }
    }
    return -1;
}

void perf_counters_close(perf_counters_t *pc)
{
    if (pc->session != IBMSG_T_PVAR_SESSION_NULL) {
        ibmsg_t_pvar_session_free(&pc->session);
        ibmsg_t_finalize();
    }
}
