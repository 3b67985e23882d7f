/*
 * The RDMA netlink backend of NIC port counters: all hw_counters of a port in one
 * RDMA_NLDEV_CMD_STAT_GET request and its reply (what `rdma statistic show link DEV/PORT` does),
 * instead of one pread per file. The PMA counters/ files are not in that reply and are still
 * pread. Which backend is cheaper depends on how many counters a reading needs: a single
 * counter is one pread either way, a whole port is one message instead of dozens of preads.
 */
#include <errno.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <ibmsg/status.h>

#include "counters/nic/nic_port.h"
#include "util/compiler.h"
#include "util/log.h"

#define CNT_NL_BUF          32768
#define CNT_NL_MAX_COUNTERS 512 /* more on one port: partial reads use pread */

typedef struct cnt_nl_req {
    struct nlmsghdr hdr;
    char attrs[64];
} cnt_nl_req_t;

static void cnt_nl_put_u32(cnt_nl_req_t *req, uint16_t type, uint32_t value)
{
    struct nlattr *a = (struct nlattr *)((char *)req + NLMSG_ALIGN(req->hdr.nlmsg_len));

    a->nla_type = type;
    a->nla_len = NLA_HDRLEN + sizeof(value);
    memcpy((char *)a + NLA_HDRLEN, &value, sizeof(value));
    req->hdr.nlmsg_len = NLMSG_ALIGN(req->hdr.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

/* Iterate the attributes in [p, p + len). */
#define CNT_NL_FOR_EACH(a, p, len)                                                    \
    for (struct nlattr *a = (struct nlattr *)(p);                                     \
         (char *)a + NLA_HDRLEN <= (char *)(p) + (len) && a->nla_len >= NLA_HDRLEN && \
         (char *)a + a->nla_len <= (char *)(p) + (len);                               \
         a = (struct nlattr *)((char *)a + NLA_ALIGN(a->nla_len)))

static int cnt_nl_type(const struct nlattr *a)
{
    return a->nla_type & NLA_TYPE_MASK;
}

static void *cnt_nl_data(const struct nlattr *a)
{
    return (char *)a + NLA_HDRLEN;
}

static int cnt_nl_len(const struct nlattr *a)
{
    return a->nla_len - NLA_HDRLEN;
}

/*
 * Send req and receive one reply message (not a dump) into buf; returns its payload (the
 * attributes) and length. Called with the port lock held (or before the port is shared).
 */
static int cnt_nl_transact(int fd, cnt_nl_req_t *req, char *buf, char **attrs, int *attrs_len)
{
    uint32_t seq = req->hdr.nlmsg_seq;
    ssize_t n;

    if (send(fd, req, req->hdr.nlmsg_len, 0) != (ssize_t)req->hdr.nlmsg_len) {
        return IBMSG_ERR_IO;
    }
    for (;;) {
        n = recv(fd, buf, CNT_NL_BUF, 0);
        if (n < 0) {
            return IBMSG_ERR_IO; /* includes the receive timeout */
        }
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
             h = NLMSG_NEXT(h, n)) {
            if (h->nlmsg_seq != seq) {
                continue; /* a late reply to an earlier request that timed out */
            }
            if (h->nlmsg_type == NLMSG_ERROR) {
                struct nlmsgerr *e = NLMSG_DATA(h);
                return e->error == 0 ? IBMSG_ERR_NOT_FOUND : IBMSG_ERR_NOT_SUPPORTED;
            }
            *attrs = NLMSG_DATA(h);
            *attrs_len = (int)NLMSG_PAYLOAD(h, 0);
            return IBMSG_OK;
        }
    }
}

static void cnt_nl_req_init(cnt_nl_req_t *req, int op, uint32_t seq)
{
    memset(req, 0, sizeof(*req));
    req->hdr.nlmsg_len = NLMSG_LENGTH(0);
    req->hdr.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
    req->hdr.nlmsg_flags = NLM_F_REQUEST;
    req->hdr.nlmsg_seq = seq;
}

/* Fold the hw counters of a STAT_GET reply into raw[] (indices of port->counters). */
static int cnt_nl_parse_stats(ibmsg_t_port_t port, char *attrs, int len, uint64_t raw[],
                              bool seen[])
{
    CNT_NL_FOR_EACH(a, attrs, len)
    {
        if (cnt_nl_type(a) != RDMA_NLDEV_ATTR_STAT_HWCOUNTERS) {
            continue;
        }
        CNT_NL_FOR_EACH(entry, cnt_nl_data(a), cnt_nl_len(a))
        {
            const char *name = NULL;
            uint64_t value = 0;
            bool have_value = false;
            int i;

            if (cnt_nl_type(entry) != RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY) {
                continue;
            }
            CNT_NL_FOR_EACH(f, cnt_nl_data(entry), cnt_nl_len(entry))
            {
                if (cnt_nl_type(f) == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_NAME &&
                    cnt_nl_len(f) > 0 && ((char *)cnt_nl_data(f))[cnt_nl_len(f) - 1] == '\0') {
                    name = cnt_nl_data(f);
                } else if (cnt_nl_type(f) == RDMA_NLDEV_ATTR_STAT_HWCOUNTER_ENTRY_VALUE &&
                           cnt_nl_len(f) == sizeof(uint64_t)) {
                    memcpy(&value, cnt_nl_data(f), sizeof(value));
                    have_value = true;
                }
            }
            if (name == NULL || !have_value) {
                continue;
            }
            i = cnt_nic_port_find(port, true, name);
            if (i >= 0) {
                raw[i] = value;
                seen[i] = true;
            }
        }
    }
    return IBMSG_OK;
}

/* Every counter of port: hw_counters by one netlink message, counters/ by pread. */
static int cnt_nl_snapshot(cnt_source_t *src, uint64_t raw[])
{
    ibmsg_t_port_t port = util_container_of(src, struct ibmsg_t_port_s, source);
    bool *seen = port->nl_seen;
    char *buf = port->nl_buf, *attrs;
    cnt_nl_req_t req;
    int ret = IBMSG_OK, len;

    if (port->has_hw_counters) {
        memset(seen, 0, sizeof(bool) * (size_t)src->num_counters);
        cnt_nl_req_init(&req, RDMA_NLDEV_CMD_STAT_GET, ++port->nl_seq);
        cnt_nl_put_u32(&req, RDMA_NLDEV_ATTR_DEV_INDEX, port->nl_dev_index);
        cnt_nl_put_u32(&req, RDMA_NLDEV_ATTR_PORT_INDEX, (uint32_t)port->port_num);
        ret = cnt_nl_transact(port->nl_fd, &req, buf, &attrs, &len);
        if (ret == IBMSG_OK) {
            ret = cnt_nl_parse_stats(port, attrs, len, raw, seen);
        }
    }
    for (int i = 0; i < src->num_counters && ret == IBMSG_OK; i++) {
        if (!port->counters[i].hw) {
            ret = cnt_nic_counter_pread(port, i, &raw[i]);
        } else if (seen == NULL || !seen[i]) {
            /* A file netlink does not report (dynamic counters): read it. */
            ret = cnt_nic_counter_pread(port, i, &raw[i]);
        }
    }
    return ret;
}

static int cnt_nl_read(cnt_source_t *src, int n, const int idx[], uint64_t raw[])
{
    ibmsg_t_port_t port = util_container_of(src, struct ibmsg_t_port_s, source);
    uint64_t all[CNT_NL_MAX_COUNTERS];
    bool any_hw = false;
    int ret;

    for (int i = 0; i < n; i++) {
        any_hw |= port->counters[idx[i]].hw;
    }
    if (!any_hw || n == 1) {
        /* One file is one pread: cheaper than a message. */
        return cnt_nic_pread_ops.read(src, n, idx, raw);
    }
    if (src->num_counters > CNT_NL_MAX_COUNTERS) {
        return cnt_nic_pread_ops.read(src, n, idx, raw);
    }
    ret = cnt_nl_snapshot(src, all);
    for (int i = 0; i < n && ret == IBMSG_OK; i++) {
        raw[i] = all[idx[i]];
    }
    return ret;
}

static void cnt_nl_cleanup(cnt_source_t *src)
{
    ibmsg_t_port_t port = util_container_of(src, struct ibmsg_t_port_s, source);

    cnt_nic_pread_ops.cleanup(src);
    if (port->nl_fd >= 0) {
        close(port->nl_fd);
        port->nl_fd = -1;
    }
    free(port->nl_buf);
    free(port->nl_seen);
    port->nl_buf = NULL;
    port->nl_seen = NULL;
}

const cnt_source_ops_t cnt_nic_netlink_ops = {
    .name = "rdma-netlink",
    .read = cnt_nl_read,
    .snapshot = cnt_nl_snapshot,
    .cleanup = cnt_nl_cleanup,
};

int cnt_nic_netlink_attach(ibmsg_t_port_t port)
{
    struct timeval tv = {.tv_sec = 1, .tv_usec = 0};
    struct sockaddr_nl sa = {.nl_family = AF_NETLINK};
    cnt_nl_req_t req;
    char *buf, *attrs;
    int fd, ret, len;
    bool found = false;

    fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
    if (fd < 0) {
        util_debug("nic %s: no RDMA netlink: %s", port->dev_name, strerror(errno));
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    /* A kernel that never answers must not hang a tool. */
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
        close(fd);
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    buf = malloc(CNT_NL_BUF);
    if (buf == NULL) {
        close(fd);
        return IBMSG_ERR_NO_MEMORY;
    }
    /* The kernel looks devices up by index only: dump them all and match the name. */
    cnt_nl_req_init(&req, RDMA_NLDEV_CMD_GET, 1);
    req.hdr.nlmsg_flags |= NLM_F_DUMP;
    ret = send(fd, &req, req.hdr.nlmsg_len, 0) == (ssize_t)req.hdr.nlmsg_len ? IBMSG_OK
                                                                             : IBMSG_ERR_IO;
    for (bool done = false; ret == IBMSG_OK && !done;) {
        ssize_t n = recv(fd, buf, CNT_NL_BUF, 0);
        if (n <= 0) {
            break;
        }
        for (struct nlmsghdr *h = (struct nlmsghdr *)buf; NLMSG_OK(h, (size_t)n);
             h = NLMSG_NEXT(h, n)) {
            uint32_t index = 0;
            bool have_index = false, name_match = false;

            if (h->nlmsg_type == NLMSG_DONE || h->nlmsg_type == NLMSG_ERROR) {
                done = true;
                break;
            }
            attrs = NLMSG_DATA(h);
            len = (int)NLMSG_PAYLOAD(h, 0);
            CNT_NL_FOR_EACH(a, attrs, len)
            {
                if (cnt_nl_type(a) == RDMA_NLDEV_ATTR_DEV_INDEX && cnt_nl_len(a) == 4) {
                    memcpy(&index, cnt_nl_data(a), 4);
                    have_index = true;
                } else if (cnt_nl_type(a) == RDMA_NLDEV_ATTR_DEV_NAME) {
                    name_match =
                        strncmp(cnt_nl_data(a), port->dev_name, (size_t)cnt_nl_len(a)) == 0 &&
                        strlen(port->dev_name) < (size_t)cnt_nl_len(a);
                }
            }
            if (have_index && name_match) {
                port->nl_dev_index = index;
                found = true;
            }
        }
    }
    if (!found) {
        util_debug("nic %s: not known to RDMA netlink", port->dev_name);
        free(buf);
        close(fd);
        return IBMSG_ERR_NOT_SUPPORTED;
    }
    port->nl_seen = calloc((size_t)port->source.num_counters + 1, sizeof(bool));
    if (port->nl_seen == NULL) {
        free(buf);
        close(fd);
        return IBMSG_ERR_NO_MEMORY;
    }
    port->nl_buf = buf;
    port->nl_fd = fd;
    port->nl_seq = 1;
    port->source.ops = &cnt_nic_netlink_ops;
    return IBMSG_OK;
}
