/*
 * Strict string to number parsing for configuration values (environment variables, info hints).
 * The whole string must be a number (leading and trailing blanks allowed); "0x" selects hex for
 * the integer parsers, anything else is decimal (a leading 0 is not octal).
 */
#ifndef IBMSG_UTIL_PARSE_H
#define IBMSG_UTIL_PARSE_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Parse a signed integer in [min, max] into *value.
 * Returns IBMSG_OK, IBMSG_ERR_INVALID (NULL argument, empty, trailing garbage) or
 * IBMSG_ERR_OUT_OF_RANGE (does not fit, or outside [min, max]). *value is set only on success.
 */
int util_parse_ll(const char *str, long long min, long long max, long long *value);

/** As util_parse_ll for an unsigned integer in [0, max]; a minus sign is IBMSG_ERR_INVALID. */
int util_parse_ull(const char *str, unsigned long long max, unsigned long long *value);

/** Parse a finite double ("inf" and "nan" are IBMSG_ERR_INVALID; overflow IBMSG_ERR_OUT_OF_RANGE).
 */
int util_parse_double(const char *str, double *value);

/** Case-insensitive equality of two NUL-terminated strings (ASCII). */
int util_str_equal_nocase(const char *a, const char *b);

#ifdef __cplusplus
}
#endif

#endif
