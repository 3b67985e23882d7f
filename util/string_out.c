#include "util/string_out.h"

#include <string.h>

void util_string_out(const char *src, char *buf, int *len)
{
    if (len == NULL) {
        return;
    }
    if (src == NULL) {
        src = "";
    }
    size_t full = strlen(src) + 1;
    if (buf == NULL || *len <= 0) {
        *len = (int)full;
        return;
    }
    size_t n = (size_t)*len < full ? (size_t)*len : full;
    memcpy(buf, src, n - 1);
    buf[n - 1] = '\0';
    *len = (int)n;
}
