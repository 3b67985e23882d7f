/* Symbol visibility for the installed library. */
#ifndef IBMSG_EXPORT_H
#define IBMSG_EXPORT_H

/* The shared library is built with hidden visibility; only what carries IBMSG_API is exported. */
#if defined(__GNUC__)
#define IBMSG_API __attribute__((visibility("default")))
#else
#define IBMSG_API
#endif

#endif
