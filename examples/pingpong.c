/*
 * pingpong: two processes exchange tagged messages with ibmsg and report the half round-trip
 * time. The server waits for one client; both check every byte they receive.
 *
 *   server:  pingpong [-s bytes] [-n iterations] [-p port]
 *   client:  pingpong [-s bytes] [-n iterations] [-p port] server-host
 *
 * Device, port and GID come from IBMSG_DEVICE, IBMSG_PORT and IBMSG_GID_INDEX (or defaults).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <ibmsg/ibmsg.h>

#define TAG     0x5049u
#define TIMEOUT 30000 /* ms for the TCP exchange */

static int check(const char *what, int status)
{
    if (status != IBMSG_OK) {
        fprintf(stderr, "pingpong: %s: %s\n", what, ibmsg_status_string(status));
        exit(1);
    }
    return status;
}

static void fill(unsigned char *buf, size_t len, unsigned seed)
{
    for (size_t i = 0; i < len; i++) {
        buf[i] = (unsigned char)(seed * 31u + i);
    }
}

int main(int argc, char **argv)
{
    size_t size = 8, n;
    long iters = 1000;
    uint16_t port = 18515;
    unsigned char *sbuf, *rbuf;
    const char *host;
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t oob, listener;
    ibmsg_tag_status_t st;
    struct timespec t0, t1;
    int opt;

    while ((opt = getopt(argc, argv, "s:n:p:")) != -1) {
        switch (opt) {
        case 's':
            size = strtoul(optarg, NULL, 0);
            break;
        case 'n':
            iters = strtol(optarg, NULL, 0);
            break;
        case 'p':
            port = (uint16_t)strtoul(optarg, NULL, 0);
            break;
        default:
            fprintf(stderr, "usage: %s [-s bytes] [-n iterations] [-p port] [server]\n", argv[0]);
            return 2;
        }
    }
    host = optind < argc ? argv[optind] : NULL;
    sbuf = malloc(size + 1);
    rbuf = malloc(size + 1);
    if (sbuf == NULL || rbuf == NULL || iters < 1) {
        return 2;
    }

    check("context", ibmsg_context_create(IBMSG_INFO_NULL, &ctx));
    check("endpoint", ibmsg_ep_create(ctx, &ep));
    if (host == NULL) {
        check("listen", ibmsg_oob_listen(NULL, port, &listener));
        check("accept", ibmsg_oob_accept(listener, TIMEOUT, &oob));
        ibmsg_oob_close(listener);
    } else {
        check("connect", ibmsg_oob_connect(host, port, TIMEOUT, &oob));
    }
    check("exchange", ibmsg_oob_ep_connect(oob, ep, TIMEOUT));

    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long i = 0; i < iters; i++) {
        if (host != NULL) { /* the client speaks first */
            fill(sbuf, size, (unsigned)i);
            check("send", ibmsg_tag_send(ep, sbuf, size, TAG));
        }
        check("recv", ibmsg_tag_recv(ctx, ep, rbuf, size, TAG, IBMSG_TAG_MASK_EXACT, &st));
        fill(sbuf, size, (unsigned)i);
        if (st.length != size || memcmp(rbuf, sbuf, size) != 0) {
            fprintf(stderr, "pingpong: iteration %ld: wrong data (%zu bytes)\n", i, st.length);
            return 1;
        }
        if (host == NULL) {
            check("send", ibmsg_tag_send(ep, sbuf, size, TAG));
        }
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    n = (size_t)iters;
    printf("%zu bytes %ld iterations: %.2f us half round trip\n", size, iters,
           ((double)(t1.tv_sec - t0.tv_sec) * 1e6 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e3) /
               (2.0 * (double)n));

    /* The last message must be received before the endpoint goes: one more exchange of 0 B. */
    check("final send", ibmsg_tag_send(ep, NULL, 0, TAG + 1));
    check("final recv", ibmsg_tag_recv(ctx, ep, NULL, 0, TAG + 1, IBMSG_TAG_MASK_EXACT, NULL));
    ibmsg_oob_close(oob);
    check("endpoint destroy", ibmsg_ep_destroy(ep));
    check("context destroy", ibmsg_context_destroy(ctx));
    free(sbuf);
    free(rbuf);
    return 0;
}
