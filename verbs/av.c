/* Address vectors (see av.h). */
#include "verbs/av.h"

#include <string.h>

#include <ibmsg/status.h>

#include "util/log.h"

static const char *link_name(uint8_t link_layer)
{
    return link_layer == VERBS_LINK_ETHERNET ? "RoCE" : "IB";
}

void verbs_av_local(const verbs_dev_info_t *info, uint32_t qpn, uint32_t psn, verbs_addr_t *addr)
{
    memset(addr, 0, sizeof(*addr));
    addr->qpn = qpn;
    addr->psn = psn;
    addr->lid = info->lid;
    addr->mtu = info->active_mtu;
    addr->link_layer = info->link_layer;
    if (info->gid_index >= 0) {
        memcpy(addr->gid, info->gid, sizeof(addr->gid));
    }
}

int verbs_av_remote(const verbs_dev_info_t *info, const verbs_addr_t *remote, uint8_t hop_limit,
                    const char *kind, uint32_t qpn, struct ibv_ah_attr *av)
{
    memset(av, 0, sizeof(*av));
    if (remote->link_layer != info->link_layer) {
        util_error("%s 0x%x: peer is on %s, this port on %s", kind, qpn,
                   link_name(remote->link_layer), link_name(info->link_layer));
        return IBMSG_ERR_INVALID;
    }
    av->dlid = remote->lid;
    av->port_num = info->port;
    if (info->link_layer == VERBS_LINK_ETHERNET || !verbs_gid_is_zero(remote->gid)) {
        if (info->gid_index < 0) {
            util_error("%s 0x%x: peer needs a GRH but this port has no GID", kind, qpn);
            return IBMSG_ERR_INVALID;
        }
        av->is_global = 1;
        memcpy(av->grh.dgid.raw, remote->gid, sizeof(av->grh.dgid.raw));
        av->grh.sgid_index = (uint8_t)info->gid_index;
        av->grh.hop_limit = hop_limit;
    }
    return IBMSG_OK;
}
