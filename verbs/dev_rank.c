/* Ranking of the ports found (see dev_rank.h). */
#include "verbs/dev_rank.h"

/* Why a port cannot serve a context, or NULL when it can. */
static const char *unusable(const verbs_port_desc_t *p)
{
    if (!p->active) {
        return "not ACTIVE";
    }
    if (p->transport == VERBS_TRANSPORT_IWARP) {
        return "iWARP: no SEND_WITH_IMM";
    }
    if (p->transport != VERBS_TRANSPORT_IB) {
        return "no RC queue pairs (efa, usNIC)";
    }
    if (p->ethernet && p->gid_index < 0) {
        return "no RoCE v2 GID";
    }
    return 0;
}

int verbs_port_rank(const verbs_port_desc_t *ports, size_t n, int cpu_node, const char **why)
{
    int first = -1;

    for (size_t i = 0; i < n; i++) {
        const char *reason = unusable(&ports[i]);
        if (why != 0) {
            why[i] = reason;
        }
        if (reason != 0) {
            continue;
        }
        if (cpu_node >= 0 && ports[i].numa_node == cpu_node) {
            /* NUMA-local: the rest only fill in their reasons. */
            for (size_t j = i + 1; why != 0 && j < n; j++) {
                why[j] = unusable(&ports[j]);
            }
            return (int)i;
        }
        if (first < 0) {
            first = (int)i;
        }
    }
    return first;
}
