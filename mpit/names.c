#include "mpit/names.h"

#include <string.h>

#include "util/string_out.h"

#define PREFIX_LEN (sizeof(MPIT_NAME_PREFIX) - 1)

void mpit_name_out(const char *native, char *buf, int *len)
{
    if (len == NULL) {
        return;
    }
    if (native == NULL) {
        native = "";
    }
    if (strcmp(native, MPIT_NAME_PREFIX) == 0) {
        util_string_out(native, buf, len);
        return;
    }
    size_t full = PREFIX_LEN + 1 + strlen(native) + 1;
    if (buf == NULL || *len <= 0) {
        *len = (int)full;
        return;
    }
    size_t n = (size_t)*len < full ? (size_t)*len : full; /* bytes written, NUL included */
    size_t chars = n - 1;
    size_t head = chars < PREFIX_LEN + 1 ? chars : PREFIX_LEN + 1;
    memcpy(buf, MPIT_NAME_PREFIX "_", head);
    memcpy(buf + head, native, chars - head);
    buf[chars] = '\0';
    *len = (int)n;
}

const char *mpit_name_native(const char *view)
{
    if (view == NULL || strncmp(view, MPIT_NAME_PREFIX, PREFIX_LEN) != 0) {
        return NULL;
    }
    if (view[PREFIX_LEN] == '\0') {
        return view;
    }
    if (view[PREFIX_LEN] == '_' && view[PREFIX_LEN + 1] != '\0') {
        return view + PREFIX_LEN + 1;
    }
    return NULL;
}
