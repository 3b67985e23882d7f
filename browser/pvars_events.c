/*
 * --events: the timestamp sources and event types of ibmsg's tool interface, each type with its
 * binding, verbosity, categories, description, elements (name, datatype, displacement) and the
 * enumeration of its INT elements; as text or, with --json, one JSON document. Native tool API
 * only (the MPI_T backend has no element names).
 */
#include <ibmsg/status.h>
#include <ibmsg/tool.h>
#include <ibmsg/version.h>

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "browser/pvars.h"

#define PVARS_EV_ELEMENTS 64
#define PVARS_EV_NAME     256
#define PVARS_EV_DESC     1024

static const char *pvars_ordering_name(ibmsg_t_source_order_t o)
{
    return o == IBMSG_T_SOURCE_ORDERED ? "ordered" : "unordered";
}

static int pvars_sources(bool json)
{
    int n = 0, rc = ibmsg_t_source_get_num(&n);

    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_source_get_num");
    }
    printf(json ? "\"sources\": [" : "");
    for (int i = 0; i < n; i++) {
        char name[PVARS_EV_NAME], desc[PVARS_EV_DESC];
        int nl = sizeof(name), dl = sizeof(desc);
        ibmsg_t_source_order_t order;
        long long tps, max;
        rc = ibmsg_t_source_get_info(i, name, &nl, desc, &dl, &order, &tps, &max, NULL);
        if (rc != IBMSG_OK) {
            return pvars_fail(rc, "ibmsg_t_source_get_info(%d)", i);
        }
        if (json) {
            printf("%s\n    {\"index\": %d, \"name\": ", i > 0 ? "," : "", i);
            pvars_json_string(name);
            printf(", \"description\": ");
            pvars_json_string(desc);
            printf(", \"ordering\": \"%s\", \"ticks_per_second\": %lld, \"max_ticks\": %lld}",
                   pvars_ordering_name(order), tps, max);
        } else {
            printf("source %d %s: %s, %lld ticks per second, max %lld\n    %s\n", i, name,
                   pvars_ordering_name(order), tps, max, desc);
        }
    }
    printf(json ? "\n  ],\n" : "");
    return IBMSG_OK;
}

/* The enumeration of an event's INT elements: "value name" pairs, as text or JSON. */
static int pvars_event_enum(ibmsg_t_enum_t en, bool json)
{
    char name[PVARS_EV_NAME];
    int nl = sizeof(name), num = 0;
    int rc = ibmsg_t_enum_get_info(en, &num, name, &nl);

    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_enum_get_info");
    }
    if (json) {
        printf(", \"enum\": {\"name\": ");
        pvars_json_string(name);
        printf(", \"items\": [");
    } else {
        printf("    enum %s:", name);
    }
    for (int k = 0; k < num; k++) {
        char item[PVARS_EV_NAME];
        int il = sizeof(item), value = 0;
        rc = ibmsg_t_enum_get_item(en, k, &value, item, &il);
        if (rc != IBMSG_OK) {
            return pvars_fail(rc, "ibmsg_t_enum_get_item(%d)", k);
        }
        if (json) {
            printf("%s{\"value\": %d, \"name\": ", k > 0 ? ", " : "", value);
            pvars_json_string(item);
            putchar('}');
        } else {
            printf("%s %d %s", k > 0 ? "," : "", value, item);
        }
    }
    printf(json ? "]}" : "\n");
    return IBMSG_OK;
}

/* The categories that hold event i, as "a, b" or a JSON array of names. */
static int pvars_event_categories(int i, bool json)
{
    int cats[64], num = 0;
    int rc = ibmsg_t_category_get_containing(IBMSG_T_KIND_EVENT, i, 0, 64, cats, &num);

    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_category_get_containing(event %d)", i);
    }
    for (int k = 0; k < num && k < 64; k++) {
        char name[PVARS_EV_NAME];
        int nl = sizeof(name);
        rc = ibmsg_t_category_get_info(cats[k], name, &nl, NULL, NULL, NULL, NULL, NULL);
        if (rc != IBMSG_OK) {
            return pvars_fail(rc, "ibmsg_t_category_get_info(%d)", cats[k]);
        }
        if (json) {
            printf("%s", k > 0 ? ", " : "");
            pvars_json_string(name);
        } else {
            printf("%s%s", k > 0 ? ", " : "", name);
        }
    }
    if (num == 0 && !json) {
        printf("none");
    }
    return IBMSG_OK;
}

static int pvars_event(int i, bool json)
{
    char name[PVARS_EV_NAME], desc[PVARS_EV_DESC];
    int nl = sizeof(name), dl = sizeof(desc), verbosity = 0, bind = 0, num = PVARS_EV_ELEMENTS;
    ibmsg_t_datatype_t types[PVARS_EV_ELEMENTS];
    long displs[PVARS_EV_ELEMENTS];
    ibmsg_t_enum_t en = IBMSG_T_ENUM_NULL;
    int rc = ibmsg_t_event_get_info(i, name, &nl, &verbosity, types, displs, &num, &en, NULL, desc,
                                    &dl, &bind);

    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_event_get_info(%d)", i);
    }
    if (json) {
        printf("%s\n    {\"index\": %d, \"name\": ", i > 0 ? "," : "", i);
        pvars_json_string(name);
        printf(", \"description\": ");
        pvars_json_string(desc);
        printf(", \"bind\": \"%s\", \"verbosity\": \"%s\", \"categories\": [",
               pvars_bind_name(bind), pvars_verbosity_name(verbosity));
    } else {
        printf("event %s (category ", name);
    }
    rc = pvars_event_categories(i, json);
    if (rc != IBMSG_OK) {
        return rc;
    }
    if (json) {
        printf("], \"elements\": [");
    } else {
        printf(")\n    bind %s, verbosity %s\n    %s\n    elements:", pvars_bind_name(bind),
               pvars_verbosity_name(verbosity), desc);
    }
    for (int k = 0; k < num && k < PVARS_EV_ELEMENTS; k++) {
        char el[PVARS_EV_NAME];
        int el_len = sizeof(el);
        rc = ibmsg_t_event_get_element_name(i, k, el, &el_len);
        if (rc != IBMSG_OK) {
            return pvars_fail(rc, "ibmsg_t_event_get_element_name(%d, %d)", i, k);
        }
        if (json) {
            printf("%s{\"name\": ", k > 0 ? ", " : "");
            pvars_json_string(el);
            printf(", \"datatype\": \"%s\", \"displacement\": %ld}", pvars_datatype_name(types[k]),
                   displs[k]);
        } else {
            printf("%s %s %s @%ld", k > 0 ? "," : "", el, pvars_datatype_name(types[k]), displs[k]);
        }
    }
    printf(json ? "]" : "\n");
    if (en != IBMSG_T_ENUM_NULL) {
        rc = pvars_event_enum(en, json);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    if (json) {
        putchar('}');
    }
    return IBMSG_OK;
}

int pvars_events(const pvars_state_t *st)
{
    int n = 0, ns = 0, rc = ibmsg_t_event_get_num(&n);

    if (rc == IBMSG_OK) {
        rc = ibmsg_t_source_get_num(&ns);
    }
    if (rc != IBMSG_OK) {
        return pvars_fail(rc, "ibmsg_t_event_get_num / ibmsg_t_source_get_num");
    }
    if (st->json) {
        printf("{\n  \"version\": \"%s\",\n  ", ibmsg_version_string());
    } else {
        printf("ibmsg %s tool interface: %d event types, %d timestamp sources\n",
               ibmsg_version_string(), n, ns);
    }
    rc = pvars_sources(st->json);
    if (rc != IBMSG_OK) {
        return rc;
    }
    printf(st->json ? "  \"events\": [" : "");
    for (int i = 0; i < n; i++) {
        rc = pvars_event(i, st->json);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    printf(st->json ? "\n  ]\n}\n" : "");
    return IBMSG_OK;
}
