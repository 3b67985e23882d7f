#include "util/parse.h"

#include <ibmsg/status.h>

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* Skips leading blanks and says which base the integer after them uses. */
static const char *parse_prefix(const char *str, int *base)
{
    while (isspace((unsigned char)*str)) {
        str++;
    }
    const char *digits = str;
    if (*digits == '+' || *digits == '-') {
        digits++;
    }
    *base = (digits[0] == '0' && (digits[1] == 'x' || digits[1] == 'X')) ? 16 : 10;
    return str;
}

/* The parse is complete when only blanks follow the number and at least one digit was read. */
static int parse_complete(const char *start, const char *end)
{
    if (end == start) {
        return 0;
    }
    while (isspace((unsigned char)*end)) {
        end++;
    }
    return *end == '\0';
}

int util_parse_ll(const char *str, long long min, long long max, long long *value)
{
    int base;
    char *end;

    if (str == NULL || value == NULL) {
        return IBMSG_ERR_INVALID;
    }
    str = parse_prefix(str, &base);
    errno = 0;
    long long v = strtoll(str, &end, base);
    if (!parse_complete(str, end)) {
        return IBMSG_ERR_INVALID;
    }
    if (errno == ERANGE || v < min || v > max) {
        return IBMSG_ERR_OUT_OF_RANGE;
    }
    *value = v;
    return IBMSG_OK;
}

int util_parse_ull(const char *str, unsigned long long max, unsigned long long *value)
{
    int base;
    char *end;

    if (str == NULL || value == NULL) {
        return IBMSG_ERR_INVALID;
    }
    str = parse_prefix(str, &base);
    /* strtoull accepts "-1" and wraps it; an unsigned setting never takes a sign. */
    if (*str == '-') {
        return IBMSG_ERR_INVALID;
    }
    errno = 0;
    unsigned long long v = strtoull(str, &end, base);
    if (!parse_complete(str, end)) {
        return IBMSG_ERR_INVALID;
    }
    if (errno == ERANGE || v > max) {
        return IBMSG_ERR_OUT_OF_RANGE;
    }
    *value = v;
    return IBMSG_OK;
}

int util_parse_double(const char *str, double *value)
{
    char *end;

    if (str == NULL || value == NULL) {
        return IBMSG_ERR_INVALID;
    }
    while (isspace((unsigned char)*str)) {
        str++;
    }
    errno = 0;
    double v = strtod(str, &end);
    if (!parse_complete(str, end) || isnan(v)) {
        return IBMSG_ERR_INVALID;
    }
    if (isinf(v)) {
        /* strtod gives HUGE_VAL with ERANGE on overflow and inf for a literal "inf". */
        return errno == ERANGE ? IBMSG_ERR_OUT_OF_RANGE : IBMSG_ERR_INVALID;
    }
    *value = v;
    return IBMSG_OK;
}

int util_str_equal_nocase(const char *a, const char *b)
{
    while (*a != '\0' && *b != '\0') {
        if (tolower((unsigned char)*a) != tolower((unsigned char)*b)) {
            return 0;
        }
        a++;
        b++;
    }
    return *a == *b;
}
