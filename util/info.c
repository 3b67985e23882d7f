/*
 * Info objects (include/ibmsg/info.h): an ordered array of terms.
 *
 * An info handle is a pointer to the object; its magic field catches NULL, garbage and most
 * double frees, but as with MPI_Info a handle used after ibmsg_info_free is undefined behaviour.
 */
#include <ibmsg/info.h>

#include "util/string_out.h"

#include <stdlib.h>
#include <string.h>

#define INFO_MAGIC     0x1b5e1f0u
#define INFO_DEAD      0xdeadf0u
#define INFO_MIN_TERMS 4

typedef struct info_term {
    char *key; /* NULL for a bare string term */
    ibmsg_info_type_t type;
    union {
        char *s; /* STRING value, or the bare string itself (type NONE) */
        int64_t i;
        double d;
    } v;
} info_term_t;

struct ibmsg_info_s {
    unsigned magic;
    int num;
    int cap;
    info_term_t *terms;
};

static int info_valid(ibmsg_info_t info)
{
    return info != NULL && info->magic == INFO_MAGIC;
}

static int info_key_valid(const char *key)
{
    if (key == NULL || key[0] == '\0') {
        return 0;
    }
    return strnlen(key, IBMSG_INFO_MAX_KEY + 1) <= IBMSG_INFO_MAX_KEY;
}

static void info_term_clear(info_term_t *t)
{
    free(t->key);
    if (t->type == IBMSG_INFO_TYPE_STRING || t->type == IBMSG_INFO_TYPE_NONE) {
        free(t->v.s);
    }
    memset(t, 0, sizeof(*t));
}

static info_term_t *info_find(ibmsg_info_t info, const char *key)
{
    for (int i = 0; i < info->num; i++) {
        if (info->terms[i].key != NULL && strcmp(info->terms[i].key, key) == 0) {
            return &info->terms[i];
        }
    }
    return NULL;
}

static int info_reserve(ibmsg_info_t info, int need)
{
    if (need <= info->cap) {
        return IBMSG_OK;
    }
    int cap = info->cap < INFO_MIN_TERMS ? INFO_MIN_TERMS : info->cap;
    while (cap < need) {
        cap *= 2;
    }
    info_term_t *terms = realloc(info->terms, (size_t)cap * sizeof(*terms));
    if (terms == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    info->terms = terms;
    info->cap = cap;
    return IBMSG_OK;
}

int ibmsg_info_create(ibmsg_info_t *info)
{
    if (info == NULL) {
        return IBMSG_ERR_INVALID;
    }
    ibmsg_info_t obj = calloc(1, sizeof(*obj));
    if (obj == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    obj->magic = INFO_MAGIC;
    *info = obj;
    return IBMSG_OK;
}

int ibmsg_info_free(ibmsg_info_t *info)
{
    if (info == NULL || !info_valid(*info)) {
        return IBMSG_ERR_INVALID;
    }
    ibmsg_info_t obj = *info;
    for (int i = 0; i < obj->num; i++) {
        info_term_clear(&obj->terms[i]);
    }
    free(obj->terms);
    obj->magic = INFO_DEAD;
    free(obj);
    *info = IBMSG_INFO_NULL;
    return IBMSG_OK;
}

static int info_term_copy(info_term_t *dst, const info_term_t *src)
{
    memset(dst, 0, sizeof(*dst));
    if (src->key != NULL && (dst->key = strdup(src->key)) == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    dst->type = src->type;
    if (src->type == IBMSG_INFO_TYPE_STRING || src->type == IBMSG_INFO_TYPE_NONE) {
        if ((dst->v.s = strdup(src->v.s)) == NULL) {
            free(dst->key);
            dst->key = NULL;
            return IBMSG_ERR_NO_MEMORY;
        }
    } else {
        dst->v = src->v;
    }
    return IBMSG_OK;
}

int ibmsg_info_dup(ibmsg_info_t info, ibmsg_info_t *newinfo)
{
    ibmsg_info_t copy;
    int ret;

    if (!info_valid(info) || newinfo == NULL) {
        return IBMSG_ERR_INVALID;
    }
    ret = ibmsg_info_create(&copy);
    if (ret != IBMSG_OK) {
        return ret;
    }
    ret = info_reserve(copy, info->num);
    if (ret != IBMSG_OK) {
        goto err_free_copy;
    }
    for (int i = 0; i < info->num; i++) {
        ret = info_term_copy(&copy->terms[i], &info->terms[i]);
        if (ret != IBMSG_OK) {
            goto err_free_copy;
        }
        copy->num++;
    }
    *newinfo = copy;
    return IBMSG_OK;

err_free_copy:
    ibmsg_info_free(&copy);
    return ret;
}

/* Sets key to the value in term (which owns its string); replaces in place or appends. */
static int info_set(ibmsg_info_t info, const char *key, info_term_t *term)
{
    if (!info_valid(info) || !info_key_valid(key)) {
        return IBMSG_ERR_INVALID;
    }
    info_term_t *old = info_find(info, key);
    if (old != NULL) {
        if (old->type == IBMSG_INFO_TYPE_STRING) {
            free(old->v.s);
        }
        old->type = term->type;
        old->v = term->v;
        return IBMSG_OK;
    }
    if (info_reserve(info, info->num + 1) != IBMSG_OK || (term->key = strdup(key)) == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    info->terms[info->num++] = *term;
    return IBMSG_OK;
}

int ibmsg_info_set_string(ibmsg_info_t info, const char *key, const char *value)
{
    info_term_t term = {.type = IBMSG_INFO_TYPE_STRING};

    if (value == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if ((term.v.s = strdup(value)) == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    int ret = info_set(info, key, &term);
    if (ret != IBMSG_OK) {
        free(term.v.s);
    }
    return ret;
}

int ibmsg_info_set_int(ibmsg_info_t info, const char *key, int64_t value)
{
    info_term_t term = {.type = IBMSG_INFO_TYPE_INT, .v.i = value};
    return info_set(info, key, &term);
}

int ibmsg_info_set_double(ibmsg_info_t info, const char *key, double value)
{
    info_term_t term = {.type = IBMSG_INFO_TYPE_DOUBLE, .v.d = value};
    return info_set(info, key, &term);
}

int ibmsg_info_append(ibmsg_info_t info, const char *string)
{
    if (!info_valid(info) || string == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (info_reserve(info, info->num + 1) != IBMSG_OK) {
        return IBMSG_ERR_NO_MEMORY;
    }
    info_term_t term = {.type = IBMSG_INFO_TYPE_NONE};
    if ((term.v.s = strdup(string)) == NULL) {
        return IBMSG_ERR_NO_MEMORY;
    }
    info->terms[info->num++] = term;
    return IBMSG_OK;
}

/* Finds a key for a typed get: argument errors first, then presence, then type. */
static int info_lookup(ibmsg_info_t info, const char *key, const void *out, ibmsg_info_type_t type,
                       const info_term_t **term)
{
    if (!info_valid(info) || !info_key_valid(key) || out == NULL) {
        return IBMSG_ERR_INVALID;
    }
    const info_term_t *t = info_find(info, key);
    if (t == NULL) {
        return IBMSG_ERR_NOT_FOUND;
    }
    if (type != IBMSG_INFO_TYPE_NONE && t->type != type) {
        return IBMSG_ERR_WRONG_TYPE;
    }
    *term = t;
    return IBMSG_OK;
}

int ibmsg_info_get_type(ibmsg_info_t info, const char *key, ibmsg_info_type_t *type)
{
    const info_term_t *t;
    int ret = info_lookup(info, key, type, IBMSG_INFO_TYPE_NONE, &t);
    if (ret == IBMSG_OK) {
        *type = t->type;
    }
    return ret;
}

int ibmsg_info_get_string(ibmsg_info_t info, const char *key, char *value, int *value_len)
{
    const info_term_t *t;
    int ret = info_lookup(info, key, value_len, IBMSG_INFO_TYPE_STRING, &t);
    if (ret == IBMSG_OK) {
        util_string_out(t->v.s, value, value_len);
    }
    return ret;
}

int ibmsg_info_get_int(ibmsg_info_t info, const char *key, int64_t *value)
{
    const info_term_t *t;
    int ret = info_lookup(info, key, value, IBMSG_INFO_TYPE_INT, &t);
    if (ret == IBMSG_OK) {
        *value = t->v.i;
    }
    return ret;
}

int ibmsg_info_get_double(ibmsg_info_t info, const char *key, double *value)
{
    const info_term_t *t;
    int ret = info_lookup(info, key, value, IBMSG_INFO_TYPE_DOUBLE, &t);
    if (ret == IBMSG_OK) {
        *value = t->v.d;
    }
    return ret;
}

int ibmsg_info_get_nkeys(ibmsg_info_t info, int *nkeys)
{
    if (!info_valid(info) || nkeys == NULL) {
        return IBMSG_ERR_INVALID;
    }
    *nkeys = info->num;
    return IBMSG_OK;
}

int ibmsg_info_get_nthkey(ibmsg_info_t info, int n, char *key, int *key_len,
                          ibmsg_info_type_t *type)
{
    if (!info_valid(info) || key_len == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (n < 0 || n >= info->num) {
        return IBMSG_ERR_OUT_OF_RANGE;
    }
    const info_term_t *t = &info->terms[n];
    util_string_out(t->key != NULL ? t->key : t->v.s, key, key_len);
    if (type != NULL) {
        *type = t->type;
    }
    return IBMSG_OK;
}
