/* ibmsg_t_pvar_filter: keep the pvars of a list that have a class and a binding (the container
   operations proposal's filter). */
#include "counters/registry/tool_internal.h"

#include <stdlib.h>

int ibmsg_t_pvar_filter(int num_in, const int in[], int var_class, int bind, int len, int out[],
                        int *num_out)
{
    if (!cnt_tool_initialized()) {
        return IBMSG_T_ERR_NOT_INITIALIZED;
    }
    if (num_in < 0 || (num_in > 0 && in == NULL) || len < 0 || (len > 0 && out == NULL)) {
        return IBMSG_T_ERR_INVALID;
    }
    if (var_class != IBMSG_T_ANY &&
        (var_class < IBMSG_T_PVAR_CLASS_STATE || var_class > IBMSG_T_PVAR_CLASS_GENERIC)) {
        return IBMSG_T_ERR_INVALID;
    }
    if (bind != IBMSG_T_ANY && (bind < IBMSG_T_BIND_NO_OBJECT || bind >= IBMSG_T_BIND_LAST)) {
        return IBMSG_T_ERR_INVALID;
    }
    int npvars = cnt_table_num(&cnt_reg.pvars);
    for (int i = 0; i < num_in; i++) {
        if (in[i] < 0 || in[i] >= npvars) {
            return IBMSG_T_ERR_INVALID_INDEX;
        }
    }
    unsigned char *seen = calloc((size_t)npvars + 1, 1);
    if (seen == NULL) {
        return IBMSG_T_ERR_MEMORY;
    }
    int n = 0;
    for (int i = 0; i < num_in; i++) {
        const cnt_pvar_t *pv = cnt_table_get(&cnt_reg.pvars, in[i]);
        if (seen[in[i]] || (var_class != IBMSG_T_ANY && pv->d.var_class != var_class) ||
            (bind != IBMSG_T_ANY && pv->d.bind != bind)) {
            continue;
        }
        seen[in[i]] = 1;
        if (n < len) {
            out[n] = in[i];
        }
        n++;
    }
    free(seen);
    if (num_out != NULL) {
        *num_out = n;
    }
    return IBMSG_T_SUCCESS;
}
