/* ibmsg status codes: one table gives the enum and the strings. */
#ifndef IBMSG_STATUS_H
#define IBMSG_STATUS_H

#include <ibmsg/export.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Every public function returns one of these. IBMSG_OK is 0, errors are negative.
 * IBMSG_T_ERR_* are the tool interface's errors (MPI_T_ERR_* renamed); they live in the same
 * table so that one function gives the string of any code.
 */
#define IBMSG_STATUS_LIST(X)                                                                  \
    X(OK, 0, "success")                                                                       \
    X(ERR_INVALID, -1, "invalid argument")                                                    \
    X(ERR_NO_MEMORY, -2, "out of memory")                                                     \
    X(ERR_NOT_SUPPORTED, -3, "operation not supported")                                       \
    X(ERR_NO_DEVICE, -4, "no usable RDMA device")                                             \
    X(ERR_IO, -5, "input/output error")                                                       \
    X(ERR_TIMEOUT, -6, "timed out")                                                           \
    X(ERR_IN_PROGRESS, -7, "operation in progress")                                           \
    X(ERR_CANCELED, -8, "request canceled")                                                   \
    X(ERR_TRUNCATED, -9, "message truncated: receive buffer too small")                       \
    X(ERR_NO_RESOURCE, -10, "out of resources")                                               \
    X(ERR_PEER_FAILED, -11, "peer failed or connection lost")                                 \
    X(ERR_PROTOCOL, -12, "malformed or unexpected data from peer")                            \
    X(ERR_BUSY, -13, "resource busy")                                                         \
    X(ERR_NOT_FOUND, -14, "not found")                                                        \
    X(ERR_EXISTS, -15, "already exists")                                                      \
    X(ERR_OUT_OF_RANGE, -16, "value out of range")                                            \
    X(ERR_WRONG_TYPE, -17, "value has another type")                                          \
    X(ERR_OUT_OF_BOUNDS, -20, "remote access outside the memory its key covers")              \
    X(ERR_ACCESS, -21, "remote access the key does not permit")                               \
    X(T_ERR_MEMORY, -101, "tool interface: out of memory")                                    \
    X(T_ERR_NOT_INITIALIZED, -102, "tool interface: not initialized")                         \
    X(T_ERR_CANNOT_INIT, -103, "tool interface: cannot be initialized")                       \
    X(T_ERR_NOT_SUPPORTED, -104, "tool interface: not supported")                             \
    X(T_ERR_NOT_ACCESSIBLE, -105, "tool interface: not accessible now")                       \
    X(T_ERR_INVALID, -106, "tool interface: invalid argument")                                \
    X(T_ERR_INVALID_INDEX, -107, "tool interface: index out of range")                        \
    X(T_ERR_INVALID_ITEM, -108, "tool interface: enum item out of range")                     \
    X(T_ERR_INVALID_SESSION, -109, "tool interface: invalid session")                         \
    X(T_ERR_INVALID_HANDLE, -110, "tool interface: invalid handle")                           \
    X(T_ERR_INVALID_NAME, -111, "tool interface: no variable or category of that name")       \
    X(T_ERR_OUT_OF_HANDLES, -112, "tool interface: no more handles")                          \
    X(T_ERR_OUT_OF_SESSIONS, -113, "tool interface: no more sessions")                        \
    X(T_ERR_CVAR_SET_NOT_NOW, -114, "tool interface: control variable cannot be set now")     \
    X(T_ERR_CVAR_SET_NEVER, -115, "tool interface: control variable can never be set")        \
    X(T_ERR_PVAR_NO_STARTSTOP, -116, "tool interface: variable cannot be started or stopped") \
    X(T_ERR_PVAR_NO_WRITE, -117, "tool interface: variable cannot be written or reset")       \
    X(T_ERR_PVAR_NO_ATOMIC, -118, "tool interface: variable cannot be read and reset atomically")

typedef enum ibmsg_status {
#define IBMSG_STATUS_ENUM(name, value, text) IBMSG_##name = (value),
    IBMSG_STATUS_LIST(IBMSG_STATUS_ENUM)
#undef IBMSG_STATUS_ENUM
} ibmsg_status_t;

/**
 * The message of a status code. Never NULL: an unknown code gives "unknown status".
 * Thread safe.
 */
IBMSG_API const char *ibmsg_status_string(int status);

#ifdef __cplusplus
}
#endif

#endif
