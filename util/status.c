/* Strings of the status codes, from the same list as the enum. */
#include <ibmsg/status.h>

#include <stddef.h>

const char *ibmsg_status_string(int status)
{
    switch (status) {
#define UTIL_STATUS_CASE(name, value, text) \
    case (value):                           \
        return (text);
        IBMSG_STATUS_LIST(UTIL_STATUS_CASE)
#undef UTIL_STATUS_CASE
    }
    return "unknown status";
}
