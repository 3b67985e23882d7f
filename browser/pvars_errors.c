/* How the variable browser reports a failed tool call or a lack of memory (on stderr). */
#include <ibmsg/status.h>

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>

#include "browser/pvars.h"

/* Reports a failed tool call once, where it is found; the caller returns the code upwards. */
int pvars_fail(int rc, const char *fmt, ...)
{
    va_list ap;

    fprintf(stderr, "ibmsg_pvars: ");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, ": %s (%d)\n", ibmsg_status_string(rc), rc);
    return rc;
}

int pvars_no_memory(void)
{
    fprintf(stderr, "ibmsg_pvars: out of memory\n");
    return IBMSG_ERR_NO_MEMORY;
}

/* Not accessible now / not supported: the variable's state, reported with it. */
bool pvars_unavailable(int rc)
{
    return rc == IBMSG_T_ERR_NOT_ACCESSIBLE || rc == IBMSG_T_ERR_NOT_SUPPORTED;
}
