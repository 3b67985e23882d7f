/*
 * Info objects: typed hints (the typed-info proposal for MPI). An info object is an ordered list of
 * terms; a term is a bare string or a (key, value) pair whose value is a string, an integer or a
 * double. Setting a key that is already present replaces its value (and type) in place; bare
 * strings are appended in order. Keys are case-sensitive and at most IBMSG_INFO_MAX_KEY bytes
 * (without the NUL).
 *
 * Thread safety: an info object may be read from several threads at once; writing it while
 * another thread uses it is the caller's to prevent.
 *
 * Handles are pointers checked by a magic number (NULL and most garbage give IBMSG_ERR_INVALID);
 * as with MPI_Info, using a handle after ibmsg_info_free is undefined behaviour. Every function
 * returns IBMSG_ERR_INVALID for a NULL required argument, an empty key or one longer than
 * IBMSG_INFO_MAX_KEY.
 */
#ifndef IBMSG_INFO_H
#define IBMSG_INFO_H

#include <stdint.h>
#include <ibmsg/export.h>
#include <ibmsg/status.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct ibmsg_info_s *ibmsg_info_t;

#define IBMSG_INFO_NULL    ((ibmsg_info_t)0)
#define IBMSG_INFO_MAX_KEY 255

/* The type of a term's value. */
typedef enum ibmsg_info_type {
    IBMSG_INFO_TYPE_NONE = 0, /* a bare string term (ibmsg_info_append) has no value */
    IBMSG_INFO_TYPE_STRING,
    IBMSG_INFO_TYPE_INT,
    IBMSG_INFO_TYPE_DOUBLE,
} ibmsg_info_type_t;

/** Create an empty info object. */
IBMSG_API int ibmsg_info_create(ibmsg_info_t *info);
/** Free an info object and set *info to IBMSG_INFO_NULL. Freeing IBMSG_INFO_NULL is an error. */
IBMSG_API int ibmsg_info_free(ibmsg_info_t *info);
/** A new info object with the same terms in the same order. */
IBMSG_API int ibmsg_info_dup(ibmsg_info_t info, ibmsg_info_t *newinfo);

/** Set key to a string, an integer or a double; a later value for the same key replaces it. */
IBMSG_API int ibmsg_info_set_string(ibmsg_info_t info, const char *key, const char *value);
IBMSG_API int ibmsg_info_set_int(ibmsg_info_t info, const char *key, int64_t value);
IBMSG_API int ibmsg_info_set_double(ibmsg_info_t info, const char *key, double value);
/** Append a bare string term (no key) at the end. */
IBMSG_API int ibmsg_info_append(ibmsg_info_t info, const char *string);

/**
 * Typed gets. A missing key is IBMSG_ERR_NOT_FOUND; a value of another type is
 * IBMSG_ERR_WRONG_TYPE (no conversion). ibmsg_info_get_string follows the tool interface's string
 * convention for (value, value_len).
 */
IBMSG_API int ibmsg_info_get_type(ibmsg_info_t info, const char *key, ibmsg_info_type_t *type);
IBMSG_API int ibmsg_info_get_string(ibmsg_info_t info, const char *key, char *value,
                                    int *value_len);
IBMSG_API int ibmsg_info_get_int(ibmsg_info_t info, const char *key, int64_t *value);
IBMSG_API int ibmsg_info_get_double(ibmsg_info_t info, const char *key, double *value);

/** Number of terms (keys and bare strings). */
IBMSG_API int ibmsg_info_get_nkeys(ibmsg_info_t info, int *nkeys);
/**
 * The n-th term (0-based, in list order): for a key term its key, for a bare string the string
 * itself (then the type is IBMSG_INFO_TYPE_NONE). String convention as for the tool interface.
 * n out of range is IBMSG_ERR_OUT_OF_RANGE.
 */
IBMSG_API int ibmsg_info_get_nthkey(ibmsg_info_t info, int n, char *key, int *key_len,
                                    ibmsg_info_type_t *type);

#ifdef __cplusplus
}
#endif

#endif
