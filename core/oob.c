/*
 * The TCP helper for out-of-band address exchange: length-framed messages with timeouts on
 * every step, partial reads and writes resumed, sizes validated.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <ibmsg/ibmsg.h>

#include "util/compiler.h"
#include "util/log.h"

#define OOB_FRAME_MAX 65536

struct ibmsg_oob_s {
    int fd;
    int listening;
};

static int64_t now_ms(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Milliseconds left until deadline (-1: none) for poll(); 0 when passed. */
static int left_ms(int64_t deadline)
{
    int64_t left;

    if (deadline < 0) {
        return -1;
    }
    left = deadline - now_ms();
    return left <= 0 ? 0 : (int)UTIL_MIN(left, (int64_t)INT32_MAX);
}

static int64_t deadline_of(int timeout_ms)
{
    return timeout_ms < 0 ? -1 : now_ms() + timeout_ms;
}

/* Wait until fd is ready for events; IBMSG_ERR_TIMEOUT when the deadline passes first. */
static int wait_fd(int fd, short events, int64_t deadline)
{
    struct pollfd pfd = {.fd = fd, .events = events};

    for (;;) {
        int n = poll(&pfd, 1, left_ms(deadline));
        if (n > 0) {
            return IBMSG_OK;
        }
        if (n == 0) {
            return IBMSG_ERR_TIMEOUT;
        }
        if (errno != EINTR) {
            return IBMSG_ERR_IO;
        }
    }
}

static int oob_new(int fd, int listening, ibmsg_oob_t *oob)
{
    ibmsg_oob_t o = calloc(1, sizeof(*o));

    if (o == NULL) {
        close(fd);
        return IBMSG_ERR_NO_MEMORY;
    }
    o->fd = fd;
    o->listening = listening;
    *oob = o;
    return IBMSG_OK;
}

static void set_nodelay(int fd)
{
    int one = 1;

    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

int ibmsg_oob_listen(const char *host, uint16_t port, ibmsg_oob_t *listener)
{
    struct addrinfo hints = {0}, *res, *ai;
    char service[8];
    int fd = -1, ret;

    if (listener == NULL) {
        return IBMSG_ERR_INVALID;
    }
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    snprintf(service, sizeof(service), "%u", (unsigned)port);
    ret = getaddrinfo(host, service, &hints, &res);
    if (ret != 0) {
        util_error("oob: cannot resolve %s: %s", host ? host : "*", gai_strerror(ret));
        return IBMSG_ERR_NOT_FOUND;
    }
    for (ai = res; ai != NULL; ai = ai->ai_next) {
        int one = 1;
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0) {
            continue;
        }
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 16) == 0) {
            break;
        }
        close(fd);
        fd = -1;
    }
    freeaddrinfo(res);
    if (fd < 0) {
        util_error("oob: cannot listen on %s:%u: %s", host ? host : "*", (unsigned)port,
                   strerror(errno));
        return IBMSG_ERR_IO;
    }
    return oob_new(fd, 1, listener);
}

int ibmsg_oob_port(ibmsg_oob_t oob, uint16_t *port)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    if (oob == NULL || port == NULL) {
        return IBMSG_ERR_INVALID;
    }
    if (getsockname(oob->fd, (struct sockaddr *)&ss, &len) != 0) {
        return IBMSG_ERR_IO;
    }
    if (ss.ss_family == AF_INET) {
        *port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
    } else {
        *port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    return IBMSG_OK;
}

int ibmsg_oob_accept(ibmsg_oob_t listener, int timeout_ms, ibmsg_oob_t *conn)
{
    int64_t deadline = deadline_of(timeout_ms);
    int fd, status;

    if (listener == NULL || conn == NULL || !listener->listening) {
        return IBMSG_ERR_INVALID;
    }
    for (;;) {
        status = wait_fd(listener->fd, POLLIN, deadline);
        if (status != IBMSG_OK) {
            return status;
        }
        fd = accept4(listener->fd, NULL, NULL, SOCK_CLOEXEC);
        if (fd >= 0) {
            break;
        }
        if (errno != EINTR && errno != EAGAIN && errno != ECONNABORTED) {
            util_error("oob: accept failed: %s", strerror(errno));
            return IBMSG_ERR_IO;
        }
    }
    set_nodelay(fd);
    return oob_new(fd, 0, conn);
}

/* One non-blocking connect attempt to ai, finished within the deadline. */
static int connect_one(const struct addrinfo *ai, int64_t deadline, int *fd_p)
{
    int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
    int err = 0, status;
    socklen_t len = sizeof(err);

    if (fd < 0) {
        return IBMSG_ERR_IO;
    }
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
        if (errno != EINPROGRESS) {
            err = errno;
            goto err_close;
        }
        status = wait_fd(fd, POLLOUT, deadline);
        if (status != IBMSG_OK) {
            close(fd);
            return status;
        }
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
            goto err_close;
        }
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    set_nodelay(fd);
    *fd_p = fd;
    return IBMSG_OK;

err_close:
    close(fd);
    errno = err;
    return (err == ECONNREFUSED || err == ENETUNREACH || err == EHOSTUNREACH) ? IBMSG_ERR_BUSY
                                                                              : IBMSG_ERR_IO;
}

int ibmsg_oob_connect(const char *host, uint16_t port, int timeout_ms, ibmsg_oob_t *conn)
{
    int64_t deadline = deadline_of(timeout_ms);
    struct addrinfo hints = {0}, *res, *ai;
    char service[8];
    int fd = -1, ret, status = IBMSG_ERR_IO;

    if (host == NULL || conn == NULL || port == 0) {
        return IBMSG_ERR_INVALID;
    }
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    snprintf(service, sizeof(service), "%u", (unsigned)port);
    ret = getaddrinfo(host, service, &hints, &res);
    if (ret != 0) {
        util_error("oob: cannot resolve %s: %s", host, gai_strerror(ret));
        return IBMSG_ERR_NOT_FOUND;
    }
    /* The server may not listen yet: retry refused connections until the deadline. */
    for (;;) {
        for (ai = res; ai != NULL; ai = ai->ai_next) {
            status = connect_one(ai, deadline, &fd);
            if (status == IBMSG_OK || status == IBMSG_ERR_TIMEOUT) {
                break;
            }
        }
        if (status == IBMSG_OK || status == IBMSG_ERR_TIMEOUT || left_ms(deadline) == 0) {
            break;
        }
        poll(NULL, 0, UTIL_MIN(50, left_ms(deadline) < 0 ? 50 : left_ms(deadline)));
    }
    freeaddrinfo(res);
    if (status != IBMSG_OK) {
        if (status == IBMSG_ERR_BUSY) {
            status = IBMSG_ERR_TIMEOUT; /* refused until the deadline */
        }
        util_error("oob: cannot connect to %s:%u: %s", host, (unsigned)port,
                   ibmsg_status_string(status));
        return status;
    }
    return oob_new(fd, 0, conn);
}

static int write_all(int fd, const void *buf, size_t len, int64_t deadline)
{
    const char *p = buf;

    while (len > 0) {
        ssize_t n;
        int status = wait_fd(fd, POLLOUT, deadline);
        if (status != IBMSG_OK) {
            return status;
        }
        n = send(fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                continue;
            }
            return (errno == EPIPE || errno == ECONNRESET) ? IBMSG_ERR_PEER_FAILED : IBMSG_ERR_IO;
        }
        p += n;
        len -= (size_t)n;
    }
    return IBMSG_OK;
}

static int read_all(int fd, void *buf, size_t len, int64_t deadline)
{
    char *p = buf;

    while (len > 0) {
        ssize_t n;
        int status = wait_fd(fd, POLLIN, deadline);
        if (status != IBMSG_OK) {
            return status;
        }
        n = recv(fd, p, len, MSG_DONTWAIT);
        if (n == 0) {
            return IBMSG_ERR_PEER_FAILED;
        }
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN) {
                continue;
            }
            return errno == ECONNRESET ? IBMSG_ERR_PEER_FAILED : IBMSG_ERR_IO;
        }
        p += n;
        len -= (size_t)n;
    }
    return IBMSG_OK;
}

static int frame_send(ibmsg_oob_t conn, const void *buf, size_t len, int64_t deadline)
{
    uint8_t hdr[4] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8),
                      (uint8_t)len};
    int status = write_all(conn->fd, hdr, sizeof(hdr), deadline);

    return status == IBMSG_OK && len > 0 ? write_all(conn->fd, buf, len, deadline) : status;
}

static int frame_recv(ibmsg_oob_t conn, void *buf, size_t *len, int64_t deadline)
{
    uint8_t hdr[4];
    uint32_t n;
    int status = read_all(conn->fd, hdr, sizeof(hdr), deadline);

    if (status != IBMSG_OK) {
        return status;
    }
    n = ((uint32_t)hdr[0] << 24) | ((uint32_t)hdr[1] << 16) | ((uint32_t)hdr[2] << 8) | hdr[3];
    if (n > OOB_FRAME_MAX || n > *len) {
        util_error("oob: frame of %u bytes, at most %zu expected", n,
                   UTIL_MIN(*len, (size_t)OOB_FRAME_MAX));
        return IBMSG_ERR_PROTOCOL;
    }
    status = n > 0 ? read_all(conn->fd, buf, n, deadline) : IBMSG_OK;
    if (status == IBMSG_OK) {
        *len = n;
    }
    return status;
}

int ibmsg_oob_send(ibmsg_oob_t conn, const void *buf, size_t len, int timeout_ms)
{
    if (conn == NULL || conn->listening || (buf == NULL && len > 0) || len > OOB_FRAME_MAX) {
        return IBMSG_ERR_INVALID;
    }
    return frame_send(conn, buf, len, deadline_of(timeout_ms));
}

int ibmsg_oob_recv(ibmsg_oob_t conn, void *buf, size_t *len, int timeout_ms)
{
    if (conn == NULL || conn->listening || len == NULL || (buf == NULL && *len > 0)) {
        return IBMSG_ERR_INVALID;
    }
    return frame_recv(conn, buf, len, deadline_of(timeout_ms));
}

int ibmsg_oob_ep_connect(ibmsg_oob_t conn, ibmsg_ep_t ep, int timeout_ms)
{
    int64_t deadline = deadline_of(timeout_ms);
    uint8_t mine[IBMSG_EP_ADDRESS_MAX], peer[IBMSG_EP_ADDRESS_MAX], ok, peer_ok = 0;
    size_t mine_len = sizeof(mine), peer_len = sizeof(peer), one = 1;
    int status, conn_status;

    if (conn == NULL || conn->listening || ep == NULL) {
        return IBMSG_ERR_INVALID;
    }
    status = ibmsg_ep_address(ep, mine, &mine_len);
    if (status != IBMSG_OK) {
        return status;
    }
    status = frame_send(conn, mine, mine_len, deadline);
    if (status == IBMSG_OK) {
        status = frame_recv(conn, peer, &peer_len, deadline);
    }
    if (status != IBMSG_OK) {
        util_error("oob: address exchange failed: %s", ibmsg_status_string(status));
        return status;
    }
    conn_status = ibmsg_ep_connect(ep, peer, peer_len);
    /* Both sides say whether they connected, so neither sends to a queue pair not yet ready. */
    ok = conn_status == IBMSG_OK;
    status = frame_send(conn, &ok, 1, deadline);
    if (status == IBMSG_OK) {
        status = frame_recv(conn, &peer_ok, &one, deadline);
    }
    if (conn_status != IBMSG_OK) {
        return conn_status;
    }
    if (status != IBMSG_OK) {
        return status;
    }
    return peer_ok == 1 && one == 1 ? IBMSG_OK : IBMSG_ERR_PEER_FAILED;
}

int ibmsg_oob_close(ibmsg_oob_t oob)
{
    if (oob == NULL) {
        return IBMSG_ERR_INVALID;
    }
    close(oob->fd);
    free(oob);
    return IBMSG_OK;
}
