/* The version of the loaded library, which may differ from the header a program was built with. */
#include <ibmsg/version.h>

const char *ibmsg_version_string(void)
{
    return IBMSG_VERSION_STRING;
}
