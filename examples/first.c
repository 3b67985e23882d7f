/* first: a tagged message each way and a counter. Run `first PORT` and `first PORT HOST`. */
#include <ibmsg/ibmsg.h>
#include <ibmsg/tool.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                \
    if ((rc = (call)) != IBMSG_OK) \
    return fprintf(stderr, "%s: %s\n", #call, ibmsg_status_string(rc)), 1

int main(int argc, char **argv)
{
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    ibmsg_oob_t listener, oob;
    ibmsg_t_pvar_session_t session;
    ibmsg_t_pvar_handle_t handle;
    char msg[16];
    unsigned long long sent = 0;
    int rc, provided, index, count, client = argc > 2, port = argc > 1 ? atoi(argv[1]) : 18515;

    CHECK(ibmsg_context_create(IBMSG_INFO_NULL, &ctx));
    CHECK(ibmsg_ep_create(ctx, &ep));
    if (client) {
        CHECK(ibmsg_oob_connect(argv[2], (uint16_t)port, 10000, &oob));
    } else {
        CHECK(ibmsg_oob_listen(NULL, (uint16_t)port, &listener));
        CHECK(ibmsg_oob_accept(listener, 10000, &oob));
        ibmsg_oob_close(listener);
    }
    CHECK(ibmsg_oob_ep_connect(oob, ep, 10000)); /* the TCP helper swaps endpoint addresses */

    /* A counter through the tool interface (MPI_T semantics): it counts while started. */
    CHECK(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided));
    CHECK(ibmsg_t_pvar_get_index("core_eager_msgs_sent", IBMSG_T_PVAR_CLASS_COUNTER, &index));
    CHECK(ibmsg_t_pvar_session_create(&session));
    CHECK(ibmsg_t_pvar_handle_alloc(session, index, NULL, &handle, &count));
    CHECK(ibmsg_t_pvar_start(session, handle));

    CHECK(ibmsg_tag_send(ep, client ? "ping" : "pong", 5, 42)); /* tag 42, 5 bytes */
    CHECK(ibmsg_tag_recv(ctx, ep, msg, sizeof(msg), 42, IBMSG_TAG_MASK_EXACT, NULL));
    printf("%s got \"%s\"\n", client ? "client" : "server", msg);
    size_t len = 1; /* both have received before either endpoint goes */
    CHECK(ibmsg_oob_send(oob, "", 1, 10000));
    CHECK(ibmsg_oob_recv(oob, msg, &len, 10000));

    CHECK(ibmsg_t_pvar_read(session, handle, &sent));
    printf("core_eager_msgs_sent: %llu\n", sent);
    ibmsg_t_pvar_session_free(&session);
    ibmsg_t_finalize();
    ibmsg_oob_close(oob);
    ibmsg_ep_destroy(ep);
    return ibmsg_context_destroy(ctx);
}
