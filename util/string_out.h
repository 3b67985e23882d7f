/* Returning strings the MPI tool interface way (see include/ibmsg/tool.h). */
#ifndef IBMSG_UTIL_STRING_OUT_H
#define IBMSG_UTIL_STRING_OUT_H

#ifdef __cplusplus
extern "C" {
#endif

/**
 * Copy src (NULL means "") out to (buf, *len): with buf NULL or *len 0 only *len is set to the
 * full length including the NUL; else at most *len bytes are written, always NUL-terminated, and
 * *len becomes the bytes written including the NUL. len NULL: nothing happens. A negative *len is
 * treated as 0.
 */
void util_string_out(const char *src, char *buf, int *len);

#ifdef __cplusplus
}
#endif

#endif
