/*
 * event_loop: one epoll loop waits on ibmsg and on stdin at once, and sleeps while neither has
 * anything. Each line typed is sent to the peer; each line the peer sends is printed. At the end
 * of its input a side says goodbye; both leave once each has said it.
 * Run `event_loop PORT` and `event_loop PORT HOST`.
 */
#include <ibmsg/ibmsg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <unistd.h>

#define TAG_LINE 1
#define TAG_BYE  2

#define CHECK(call)                \
    if ((rc = (call)) != IBMSG_OK) \
    return fprintf(stderr, "%s: %s\n", #call, ibmsg_status_string(rc)), 1

int main(int argc, char **argv)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t listener, oob;
    ibmsg_request_t recv;
    ibmsg_tag_status_t st;
    struct epoll_event e = {.events = EPOLLIN}, evs[2];
    char in[4096], msg[4096], line[4096];
    size_t have = 0, len = 1;
    int rc, fd, ep_fd, done, stdin_open = 1, peer_open = 1;
    int client = argc > 2, port = argc > 1 ? atoi(argv[1]) : 18515;

    CHECK(ibmsg_context_create(IBMSG_INFO_NULL, &ctx));
    CHECK(ibmsg_ep_create(ctx, &ep));
    if (client) {
        CHECK(ibmsg_oob_connect(argv[2], (uint16_t)port, 10000, &oob));
    } else {
        CHECK(ibmsg_oob_listen(NULL, (uint16_t)port, &listener));
        CHECK(ibmsg_oob_accept(listener, 10000, &oob));
        ibmsg_oob_close(listener);
    }
    CHECK(ibmsg_oob_ep_connect(oob, ep, 10000));

    /* The context's fd and stdin in one epoll set. */
    CHECK(ibmsg_context_get_fd(ctx, &fd));
    ep_fd = epoll_create1(0);
    e.data.fd = fd;
    epoll_ctl(ep_fd, EPOLL_CTL_ADD, fd, &e);
    e.data.fd = 0;
    epoll_ctl(ep_fd, EPOLL_CTL_ADD, 0, &e);

    CHECK(ibmsg_tag_irecv(ctx, ep, msg, sizeof(msg) - 1, 0, IBMSG_TAG_MASK_ANY, &recv));
    while (stdin_open || peer_open) {
        /* What ibmsg has: test progresses, so call it before every arm. After the goodbye no
           receive is outstanding (a completed test frees the request): nothing to test. */
        done = 0;
        if (peer_open) {
            CHECK(ibmsg_request_test(&recv, &done, &st));
        }
        if (done && st.tag == TAG_BYE) {
            peer_open = 0;
        } else if (done) {
            printf("got: %.*s\n", (int)st.length, msg);
            fflush(stdout);
            CHECK(ibmsg_tag_irecv(ctx, ep, msg, sizeof(msg) - 1, 0, IBMSG_TAG_MASK_ANY, &recv));
        }
        if (!peer_open && !stdin_open) {
            break;
        }
        /* Sleep only when the arm finds nothing (BUSY: work came in between: look again). The
           timeout keeps the keepalive going while the peer is silent. */
        rc = ibmsg_context_arm(ctx);
        if (rc == IBMSG_ERR_BUSY) {
            continue;
        }
        CHECK(rc);
        int n = epoll_wait(ep_fd, evs, 2, 250);
        for (int i = 0; i < n; i++) {
            if (evs[i].data.fd != 0) {
                continue; /* ibmsg: the test at the top of the loop progresses */
            }
            ssize_t got = read(0, in + have, sizeof(in) - have);
            if (got <= 0) { /* the end of the input: say goodbye */
                stdin_open = 0;
                epoll_ctl(ep_fd, EPOLL_CTL_DEL, 0, NULL);
                CHECK(ibmsg_tag_send(ep, NULL, 0, TAG_BYE));
                continue;
            }
            have += (size_t)got;
            char *nl;
            while ((nl = memchr(in, '\n', have)) != NULL) { /* each whole line is a message */
                size_t l = (size_t)(nl - in);
                memcpy(line, in, l);
                CHECK(ibmsg_tag_send(ep, line, l, TAG_LINE));
                have -= l + 1;
                memmove(in, nl + 1, have);
            }
        }
    }
    /* Both have received everything before either endpoint goes. */
    CHECK(ibmsg_oob_send(oob, "", 1, 10000));
    CHECK(ibmsg_oob_recv(oob, line, &len, 10000));
    close(ep_fd);
    ibmsg_oob_close(oob);
    ibmsg_ep_destroy(ep);
    return ibmsg_context_destroy(ctx);
}
