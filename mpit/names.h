/*
 * Names of ibmsg's items in the merged view. Every ibmsg cvar, pvar and category is shown as
 * "ibmsg_<native name>" (the root category "ibmsg" keeps its name), so they never collide with
 * the MPI library's names and a tool can tell them apart. The mapping is one to one.
 */
#ifndef IBMSG_MPIT_NAMES_H
#define IBMSG_MPIT_NAMES_H

#ifdef __cplusplus
extern "C" {
#endif

#define MPIT_NAME_PREFIX "ibmsg"

/** Write the view name of an ibmsg native name to (buf, *len) with MPI_T string semantics. */
void mpit_name_out(const char *native, char *buf, int *len);

/** The native ibmsg name inside a view name, or NULL when view is not an ibmsg name. */
const char *mpit_name_native(const char *view);

#ifdef __cplusplus
}
#endif

#endif
