/*
 * A program outside the ibmsg tree, built against an installed ibmsg by test/install/run (through
 * the CMake package and through pkg-config, shared and static). It prints what it finds; the
 * script compares the output line by line, and every unexpected return is a non-zero exit.
 */
#include <ibmsg/status.h>
#include <ibmsg/tool.h>
#include <ibmsg/version.h>

#include <stdio.h>
#include <string.h>

static int check(const char *what, int rc, int expected)
{
    if (rc != expected) {
        fprintf(stderr, "consumer: %s returned %d (%s), expected %d\n", what, rc,
                ibmsg_status_string(rc), expected);
        return 1;
    }
    return 0;
}

int main(void)
{
    int provided = -1;
    int num_pvar = 0;
    int num_cvar = 0;
    int rc;

    /* The header this program was built with and the library it runs with must agree. */
    printf("ibmsg %s (header %s)\n", ibmsg_version_string(), IBMSG_VERSION_STRING);
    if (strcmp(ibmsg_version_string(), IBMSG_VERSION_STRING) != 0) {
        fprintf(stderr, "consumer: library and header versions differ\n");
        return 1;
    }
    printf("status %d: %s\n", IBMSG_T_ERR_INVALID_INDEX,
           ibmsg_status_string(IBMSG_T_ERR_INVALID_INDEX));

    rc = ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided);
    if (check("ibmsg_t_init_thread", rc, IBMSG_T_SUCCESS) != 0) {
        return 1;
    }
    printf("tool: provided %s\n", provided == IBMSG_T_THREAD_MULTIPLE ? "THREAD_MULTIPLE" : "less");
    if (check("ibmsg_t_pvar_get_num", ibmsg_t_pvar_get_num(&num_pvar), IBMSG_T_SUCCESS) != 0 ||
        check("ibmsg_t_cvar_get_num", ibmsg_t_cvar_get_num(&num_cvar), IBMSG_T_SUCCESS) != 0) {
        ibmsg_t_finalize();
        return 1;
    }
    /* The library registers its own variables (the tool interface's and the logger's at least). */
    printf("tool: performance variables %s, control variables %s\n", num_pvar > 0 ? "yes" : "no",
           num_cvar > 0 ? "yes" : "no");
    if (check("ibmsg_t_finalize", ibmsg_t_finalize(), IBMSG_T_SUCCESS) != 0) {
        return 1;
    }
    rc = ibmsg_t_pvar_get_num(&num_pvar);
    printf("tool after finalize: %s\n", ibmsg_status_string(rc));
    return check("ibmsg_t_pvar_get_num after finalize", rc, IBMSG_T_ERR_NOT_INITIALIZED);
}
