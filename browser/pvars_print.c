/*
 * The variable browser's output: the category tree, the values of --read, and both as one JSON
 * document (strings escaped so the document always parses).
 */
#include <ibmsg/status.h>
#include <ibmsg/tool.h>
#include <ibmsg/version.h>

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "browser/pvars.h"

/* Deeper than any sane category tree; a cycle is reported, not looped. */
#define PVARS_MAX_DEPTH 64

static const char *pvars_enum_item_name(const pvars_enum_t *e, int value)
{
    for (int i = 0; e != NULL && i < e->num_items; i++) {
        if (e->items[i].value == value) {
            return e->items[i].name;
        }
    }
    return NULL;
}

/*
 * A JSON string: quotes, backslashes and control characters escaped, valid UTF-8 passed through,
 * and any byte that is not part of valid UTF-8 replaced by U+FFFD, so the document always parses.
 */
void pvars_json_string(const char *s)
{
    const unsigned char *p = (const unsigned char *)s;

    putchar('"');
    while (*p != '\0') {
        unsigned char c = *p;
        int extra = c < 0x80             ? 0
                    : (c & 0xe0) == 0xc0 ? 1
                    : (c & 0xf0) == 0xe0 ? 2
                    : (c & 0xf8) == 0xf0 ? 3
                                         : -1;

        if (extra == 0) {
            if (c == '"' || c == '\\') {
                printf("\\%c", c);
            } else if (c == '\n') {
                fputs("\\n", stdout);
            } else if (c == '\t') {
                fputs("\\t", stdout);
            } else if (c < 0x20 || c == 0x7f) {
                printf("\\u%04x", c);
            } else {
                putchar(c);
            }
            p++;
            continue;
        }
        bool valid = extra > 0 && !(c == 0xc0 || c == 0xc1 || c > 0xf4);
        for (int k = 1; valid && k <= extra; k++) {
            valid = (p[k] & 0xc0) == 0x80;
        }
        /* Overlong 3- and 4-byte forms, surrogates and code points beyond U+10FFFF. */
        if (valid && extra == 2) {
            valid = !(c == 0xe0 && p[1] < 0xa0) && !(c == 0xed && p[1] >= 0xa0);
        } else if (valid && extra == 3) {
            valid = !(c == 0xf0 && p[1] < 0x90) && !(c == 0xf4 && p[1] >= 0x90);
        }
        if (valid) {
            fwrite(p, 1, (size_t)extra + 1, stdout);
            p += extra + 1;
        } else {
            fputs("\\ufffd", stdout);
            p++;
        }
    }
    putchar('"');
}

/* One element of a value: text for people, or a JSON number (non-finite doubles are null). */
static void pvars_element(const pvars_var_t *v, int i, bool json)
{
    switch (v->datatype) {
    case IBMSG_T_INT: {
        int x = ((const int *)v->value)[i];
        const char *item = pvars_enum_item_name(v->enumtype, x);

        if (item != NULL && !json) {
            printf("%d (%s)", x, item);
        } else {
            printf("%d", x);
        }
        break;
    }
    case IBMSG_T_UNSIGNED:
        printf("%u", ((const unsigned *)v->value)[i]);
        break;
    case IBMSG_T_UNSIGNED_LONG:
        printf("%lu", ((const unsigned long *)v->value)[i]);
        break;
    case IBMSG_T_UNSIGNED_LONG_LONG:
        printf("%llu", ((const unsigned long long *)v->value)[i]);
        break;
    case IBMSG_T_COUNT:
        printf("%lld", ((const long long *)v->value)[i]);
        break;
    case IBMSG_T_DOUBLE: {
        double x = ((const double *)v->value)[i];

        if (json && !isfinite(x)) {
            fputs("null", stdout);
        } else if (json) {
            printf("%.17g", x); /* enough digits to give the same double back */
        } else {
            printf("%g", x);
        }
        break;
    }
    case IBMSG_T_CHAR:
    case IBMSG_T_DATATYPE_NULL:
        break;
    }
}

/* The value of a variable that was read: CHAR as a string, one element bare, more as a list. */
static void pvars_value(const pvars_var_t *v, bool json)
{
    if (v->datatype == IBMSG_T_CHAR) {
        /* The buffer has count + 1 bytes, zeroed: a string that fills count is still ended. */
        if (json) {
            pvars_json_string(v->value);
        } else {
            printf("\"%s\"", (const char *)v->value);
        }
        return;
    }
    if (v->count == 1) {
        pvars_element(v, 0, json);
        return;
    }
    putchar('[');
    for (int i = 0; i < v->count; i++) {
        fputs(i > 0 ? ", " : "", stdout);
        pvars_element(v, i, json);
    }
    putchar(']');
}

/* ---- Text output ------------------------------------------------------------------------------
 */

static void pvars_text_var(const pvars_var_t *v, int depth)
{
    int indent = 2 * depth;

    printf("%*s%s %s\n", indent, "", v->kind == IBMSG_T_KIND_CVAR ? "cvar" : "pvar", v->name);
    if (v->kind == IBMSG_T_KIND_PVAR) {
        printf("%*s  class %s, datatype %s, bind %s, verbosity %s, flags:%s%s%s%s\n", indent, "",
               pvars_class_name(v->var_class), pvars_datatype_name(v->datatype),
               pvars_bind_name(v->bind), pvars_verbosity_name(v->verbosity),
               v->readonly ? " readonly" : "", v->continuous ? " continuous" : "",
               v->atomic ? " atomic" : "",
               (v->readonly || v->continuous || v->atomic) ? "" : " none");
    } else {
        printf("%*s  datatype %s, bind %s, verbosity %s, scope %s\n", indent, "",
               pvars_datatype_name(v->datatype), pvars_bind_name(v->bind),
               pvars_verbosity_name(v->verbosity), pvars_scope_name(v->scope));
    }
    if (v->desc[0] != '\0') {
        printf("%*s  %s\n", indent, "", v->desc);
    }
    if (v->enumtype != NULL) {
        printf("%*s  enum %s:", indent, "", v->enumtype->name);
        for (int i = 0; i < v->enumtype->num_items; i++) {
            printf("%s %d %s", i > 0 ? "," : "", v->enumtype->items[i].value,
                   v->enumtype->items[i].name);
        }
        putchar('\n');
    }
}

/* Enters category index at depth of the walk (path: the categories above): a cycle or a tree
 * deeper than PVARS_MAX_DEPTH is reported, not followed. */
static int pvars_category_enter(const pvars_category_t *c, int index, int *path, int depth)
{
    for (int i = 0; i < depth; i++) {
        if (path[i] == index) {
            return pvars_fail(IBMSG_T_ERR_INVALID, "category %s contains itself", c->name);
        }
    }
    if (depth >= PVARS_MAX_DEPTH) {
        return pvars_fail(IBMSG_T_ERR_INVALID, "categories nested deeper than %d at %s",
                          PVARS_MAX_DEPTH, c->name);
    }
    path[depth] = index;
    return IBMSG_OK;
}

static int pvars_text_category(const pvars_state_t *st, int index, int *path, int depth)
{
    const pvars_category_t *c = &st->categories[index];
    int rc = pvars_category_enter(c, index, path, depth);

    if (rc != IBMSG_OK) {
        return rc;
    }
    printf("%*s[%s]%s%s\n", 2 * depth, "", c->name, c->desc[0] != '\0' ? " " : "", c->desc);
    for (int i = 0; i < c->num_cvars; i++) {
        pvars_text_var(&st->cvars[c->cvars[i]], depth + 1);
    }
    for (int i = 0; i < c->num_pvars; i++) {
        pvars_text_var(&st->pvars[c->pvars[i]], depth + 1);
    }
    for (int i = 0; i < c->num_categories; i++) {
        rc = pvars_text_category(st, c->categories[i], path, depth + 1);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    return IBMSG_OK;
}

int pvars_text_tree(const pvars_state_t *st)
{
    int path[PVARS_MAX_DEPTH];
    bool header = false;

    printf("ibmsg %s %s%s: %d categories (%d roots), %d control variables, "
           "%d performance variables\n",
           ibmsg_version_string(), pvars_api == &pvars_native_api ? "tool interface" : "view of ",
           pvars_api == &pvars_native_api ? "" : pvars_api->name, st->num_categories, st->num_roots,
           st->num_cvars, st->num_pvars);
    for (int i = 0; i < st->num_roots; i++) {
        int rc;

        putchar('\n');
        rc = pvars_text_category(st, st->roots[i], path, 0);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    /* Variables no category holds are still variables: list them so nothing is hidden. */
    for (int k = 0; k < 2; k++) {
        const pvars_var_t *vars = k == 0 ? st->cvars : st->pvars;
        int num = k == 0 ? st->num_cvars : st->num_pvars;

        for (int i = 0; i < num; i++) {
            if (!vars[i].in_category) {
                if (!header) {
                    printf("\n[no category]\n");
                    header = true;
                }
                pvars_text_var(&vars[i], 1);
            }
        }
    }
    return IBMSG_OK;
}

void pvars_text_values(const pvars_state_t *st)
{
    int width = 8, not_read = 0;

    for (int k = 0; k < 2; k++) {
        const pvars_var_t *vars = k == 0 ? st->cvars : st->pvars;
        int num = k == 0 ? st->num_cvars : st->num_pvars;

        for (int i = 0; i < num; i++) {
            int len = (int)strlen(vars[i].name);

            width = vars[i].read && len > width ? len : width;
        }
    }
    for (int k = 0; k < 2; k++) {
        const pvars_var_t *vars = k == 0 ? st->cvars : st->pvars;
        int num = k == 0 ? st->num_cvars : st->num_pvars;

        printf("%s%s variables bound to no object%s:\n", k == 0 ? "" : "\n",
               k == 0 ? "control" : "performance",
               k == 0       ? ""
               : st->totals ? " (counters: totals since each source began: ibmsg's since the "
                              "process started, PAPI's since the thread began counting)"
                            : " (counters: since this read started them; MPI_T has no totals)");
        for (int i = 0; i < num; i++) {
            const pvars_var_t *v = &vars[i];

            if (!v->read) {
                not_read += !v->read_on_ports;
                continue;
            }
            printf("  %-*s %-13s = ", width, v->name,
                   v->kind == IBMSG_T_KIND_PVAR ? pvars_class_name(v->var_class) : "");
            if (v->read_rc == IBMSG_OK) {
                pvars_value(v, false);
            } else {
                printf("unavailable: %s", ibmsg_status_string(v->read_rc));
            }
            putchar('\n');
        }
    }
    if (st->num_bound > 0) {
        int pw = 8;

        for (int i = 0; i < st->num_bound; i++) {
            int len = (int)strlen(st->bound[i].v.name);
            pw = len > pw ? len : pw;
        }
        printf("\nperformance variables bound to NIC ports (port-wide: every process on the "
               "port; counters: %s):\n",
               st->totals ? "the port's totals, as the kernel reports them" : "since this read");
        for (int i = 0; i < st->num_bound; i++) {
            const pvars_var_t *v = &st->bound[i].v;

            printf("  %-10s %-*s %-13s = ", st->bound[i].port, pw, v->name,
                   pvars_class_name(v->var_class));
            if (v->read_rc == IBMSG_OK) {
                pvars_value(v, false);
            } else {
                printf("unavailable: %s", ibmsg_status_string(v->read_rc));
            }
            putchar('\n');
        }
    }
    printf("\n%d variables bound to objects were not read (they need an object handle)\n",
           not_read);
}

/* ---- JSON output ------------------------------------------------------------------------------
 */

static void pvars_json_key(const char *key)
{
    pvars_json_string(key);
    putchar(':');
}

static void pvars_json_var(const pvars_var_t *v, bool with_values)
{
    printf("{\"index\":%d,\"name\":", v->index);
    pvars_json_string(v->name);
    if (v->kind == IBMSG_T_KIND_PVAR) {
        printf(",\"class\":\"%s\"", pvars_class_name(v->var_class));
    }
    printf(",\"datatype\":\"%s\",\"bind\":\"%s\",\"verbosity\":\"%s\"",
           pvars_datatype_name(v->datatype), pvars_bind_name(v->bind),
           pvars_verbosity_name(v->verbosity));
    if (v->kind == IBMSG_T_KIND_PVAR) {
        printf(",\"readonly\":%s,\"continuous\":%s,\"atomic\":%s", v->readonly ? "true" : "false",
               v->continuous ? "true" : "false", v->atomic ? "true" : "false");
    } else {
        printf(",\"scope\":\"%s\"", pvars_scope_name(v->scope));
    }
    printf(",\"desc\":");
    pvars_json_string(v->desc);
    printf(",\"enum\":");
    if (v->enumtype == NULL) {
        printf("null");
    } else {
        printf("{\"name\":");
        pvars_json_string(v->enumtype->name);
        printf(",\"items\":[");
        for (int i = 0; i < v->enumtype->num_items; i++) {
            printf("%s{\"value\":%d,\"name\":", i > 0 ? "," : "", v->enumtype->items[i].value);
            pvars_json_string(v->enumtype->items[i].name);
            putchar('}');
        }
        printf("]}");
    }
    if (with_values && v->read) {
        if (v->read_rc == IBMSG_OK) {
            printf(",\"count\":%d,\"value\":", v->count);
            pvars_value(v, true);
        } else {
            printf(",\"value\":null,\"unavailable\":");
            pvars_json_string(ibmsg_status_string(v->read_rc));
        }
    }
    putchar('}');
}

static int pvars_json_category(const pvars_state_t *st, int index, int *path, int depth)
{
    const pvars_category_t *c = &st->categories[index];
    int rc = pvars_category_enter(c, index, path, depth);

    if (rc != IBMSG_OK) {
        return rc;
    }
    printf("{\"index\":%d,\"name\":", index);
    pvars_json_string(c->name);
    printf(",\"desc\":");
    pvars_json_string(c->desc);
    printf(",\"cvars\":[");
    for (int i = 0; i < c->num_cvars; i++) {
        printf("%s", i > 0 ? "," : "");
        pvars_json_string(st->cvars[c->cvars[i]].name);
    }
    printf("],\"pvars\":[");
    for (int i = 0; i < c->num_pvars; i++) {
        printf("%s", i > 0 ? "," : "");
        pvars_json_string(st->pvars[c->pvars[i]].name);
    }
    printf("],\"categories\":[");
    for (int i = 0; i < c->num_categories; i++) {
        printf("%s", i > 0 ? "," : "");
        rc = pvars_json_category(st, c->categories[i], path, depth + 1);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    printf("]}");
    return IBMSG_OK;
}

/*
 * One document: the tree (categories nested, members by name), then every variable in full by
 * index (with "value" under --read). Object keys are fixed, so tools can rely on them.
 */
int pvars_json(const pvars_state_t *st)
{
    int path[PVARS_MAX_DEPTH];

    printf("{");
    pvars_json_key("ibmsg_version");
    pvars_json_string(ibmsg_version_string());
    printf(",");
    pvars_json_key("interface");
    pvars_json_string(pvars_api->name);
    printf(",\"tree\":[");
    for (int i = 0; i < st->num_roots; i++) {
        int rc;

        printf("%s", i > 0 ? "," : "");
        rc = pvars_json_category(st, st->roots[i], path, 0);
        if (rc != IBMSG_OK) {
            return rc;
        }
    }
    printf("],\"cvars\":[");
    for (int i = 0; i < st->num_cvars; i++) {
        printf("%s\n", i > 0 ? "," : "");
        pvars_json_var(&st->cvars[i], st->read);
    }
    printf("],\"pvars\":[");
    for (int i = 0; i < st->num_pvars; i++) {
        printf("%s\n", i > 0 ? "," : "");
        pvars_json_var(&st->pvars[i], st->read);
    }
    printf("]");
    if (st->read) {
        /* What a counter's value counts from: "total" (the source's) or "interval" (MPI_T). */
        printf(",\"counters\":\"%s\"", st->totals ? "total" : "interval");
        /* Variables bound to NIC ports, read on every port that has them. */
        printf(",\"port_values\":[");
        for (int i = 0; i < st->num_bound; i++) {
            const pvars_var_t *v = &st->bound[i].v;

            printf("%s\n{\"port\":", i > 0 ? "," : "");
            pvars_json_string(st->bound[i].port);
            printf(",\"index\":%d,\"name\":", v->index);
            pvars_json_string(v->name);
            if (v->read_rc == IBMSG_OK) {
                printf(",\"count\":%d,\"value\":", v->count);
                pvars_value(v, true);
            } else {
                printf(",\"value\":null,\"unavailable\":");
                pvars_json_string(ibmsg_status_string(v->read_rc));
            }
            putchar('}');
        }
        printf("]");
    }
    printf("}\n");
    return IBMSG_OK;
}
