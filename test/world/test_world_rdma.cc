// The world API on a device (Soft-RoCE in the guest) without a launcher: the single-process
// fallback and the two-process TCP bootstrap (IBMSG_WORLD_PEER / IBMSG_WORLD_RANK).
#include <gtest/gtest.h>

#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <string>

#include <ibmsg/world.h>

#include "guest.h"
#include "world_device.h"

namespace
{

using world_test::have_device;
using world_test::kSkip;

void clear_env()
{
    unsetenv("PMIX_RANK");
    unsetenv("PMIX_NAMESPACE");
    unsetenv("IBMSG_WORLD_PEER");
    unsetenv("IBMSG_WORLD_RANK");
}

TEST(WorldRdma, SingleProcess)
{
    if (!have_device()) {
        IBMSG_TEST_MISSING(kSkip);
    }
    clear_env();
    ibmsg_world_t w, w2;
    uint32_t rank = 9, size = 9, local = 9;
    ibmsg_world_bootstrap_t how;
    ibmsg_context_t ctx = IBMSG_CONTEXT_NULL;
    ibmsg_ep_t ep;
    ASSERT_EQ(ibmsg_world_init(IBMSG_INFO_NULL, &w), IBMSG_OK);
    EXPECT_EQ(ibmsg_world_init(IBMSG_INFO_NULL, &w2), IBMSG_ERR_BUSY);
    EXPECT_EQ(ibmsg_world_rank(w, &rank), IBMSG_OK);
    EXPECT_EQ(ibmsg_world_size(w, &size), IBMSG_OK);
    EXPECT_EQ(ibmsg_world_local_rank(w, &local), IBMSG_OK);
    EXPECT_EQ(ibmsg_world_bootstrap(w, &how), IBMSG_OK);
    EXPECT_EQ(ibmsg_world_context(w, &ctx), IBMSG_OK);
    EXPECT_EQ(rank, 0u);
    EXPECT_EQ(size, 1u);
    EXPECT_EQ(local, 0u);
    EXPECT_EQ(how, IBMSG_WORLD_SINGLE);
    EXPECT_NE(ctx, IBMSG_CONTEXT_NULL);
    EXPECT_EQ(ibmsg_world_ep(w, 0, &ep), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_world_ep(w, 1, &ep), IBMSG_ERR_OUT_OF_RANGE);
    // An endpoint of the context that is not the world's.
    ibmsg_ep_t other;
    ASSERT_EQ(ibmsg_ep_create(ctx, &other), IBMSG_OK);
    EXPECT_EQ(ibmsg_world_ep_rank(w, other, &rank), IBMSG_ERR_NOT_FOUND);
    EXPECT_EQ(ibmsg_world_barrier(w), IBMSG_OK);
    EXPECT_EQ(ibmsg_world_finalize(w), IBMSG_OK);
    EXPECT_EQ(ibmsg_world_finalize(w), IBMSG_ERR_INVALID);
}

// Rank 1 (child) echoes 100 messages back; both check bytes, tags and ranks. Then rank 0 starts
// one more send (held for a batched post), enters the barrier and waits on a pipe, outside
// ibmsg, for rank 1 to report it received that message after the barrier: the barrier must
// have posted it.
TEST(WorldRdma, TwoProcessesOverTcp)
{
    if (!have_device()) {
        IBMSG_TEST_MISSING(kSkip);
    }
    clear_env();
    // A free port: bind an ephemeral one, note it, close it.
    ibmsg_oob_t l;
    uint16_t port = 0;
    ASSERT_EQ(ibmsg_oob_listen("127.0.0.1", 0, &l), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_port(l, &port), IBMSG_OK);
    ibmsg_oob_close(l);
    std::string peer = "127.0.0.1:" + std::to_string(port);
    setenv("IBMSG_WORLD_PEER", peer.c_str(), 1);
    int got[2];
    ASSERT_EQ(pipe(got), 0);
    fflush(nullptr);
    pid_t pid = fork();
    ASSERT_GE(pid, 0);
    const int n = 100;
    const uint64_t last_tag = 7777;
    if (pid == 0) {
        setenv("IBMSG_WORLD_RANK", "1", 1);
        ibmsg_world_t w;
        ibmsg_context_t ctx;
        ibmsg_ep_t ep;
        uint32_t rank, size, from;
        if (ibmsg_world_init(IBMSG_INFO_NULL, &w) != IBMSG_OK ||
            ibmsg_world_rank(w, &rank) != IBMSG_OK || ibmsg_world_size(w, &size) != IBMSG_OK ||
            rank != 1 || size != 2 || ibmsg_world_context(w, &ctx) != IBMSG_OK ||
            ibmsg_world_ep(w, 0, &ep) != IBMSG_OK) {
            _exit(10);
        }
        for (int i = 0; i < n; i++) {
            char buf[64];
            ibmsg_tag_status_t st;
            if (ibmsg_tag_recv(ctx, IBMSG_EP_NULL, buf, sizeof(buf), 0, IBMSG_TAG_MASK_ANY, &st) !=
                    IBMSG_OK ||
                ibmsg_world_ep_rank(w, st.source, &from) != IBMSG_OK || from != 0 ||
                st.tag != uint64_t(i) || ibmsg_tag_send(ep, buf, st.length, st.tag + 1000) != 0) {
                _exit(11);
            }
        }
        char last[8] = {0};
        if (ibmsg_world_barrier(w) != IBMSG_OK ||
            ibmsg_tag_recv(ctx, ep, last, sizeof(last), last_tag, IBMSG_TAG_MASK_EXACT, nullptr) !=
                IBMSG_OK ||
            memcmp(last, "last", 5) != 0 || write(got[1], "y", 1) != 1) {
            _exit(12);
        }
        _exit(ibmsg_world_finalize(w) == IBMSG_OK ? 0 : 13);
    }
    setenv("IBMSG_WORLD_RANK", "0", 1);
    ibmsg_world_t w;
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    uint32_t rank = 9, size = 9;
    ibmsg_world_bootstrap_t how;
    ASSERT_EQ(ibmsg_world_init(IBMSG_INFO_NULL, &w), IBMSG_OK);
    ASSERT_EQ(ibmsg_world_rank(w, &rank), IBMSG_OK);
    ASSERT_EQ(ibmsg_world_size(w, &size), IBMSG_OK);
    ASSERT_EQ(ibmsg_world_bootstrap(w, &how), IBMSG_OK);
    EXPECT_EQ(rank, 0u);
    EXPECT_EQ(size, 2u);
    EXPECT_EQ(how, IBMSG_WORLD_TCP);
    ASSERT_EQ(ibmsg_world_context(w, &ctx), IBMSG_OK);
    ASSERT_EQ(ibmsg_world_ep(w, 1, &ep), IBMSG_OK);
    for (int i = 0; i < n; i++) {
        char out[64], in[64];
        size_t len = 1 + i % 64;
        memset(out, 'a' + i % 26, len);
        ibmsg_tag_status_t st;
        ASSERT_EQ(ibmsg_tag_send(ep, out, len, i), IBMSG_OK);
        ASSERT_EQ(ibmsg_tag_recv(ctx, ep, in, sizeof(in), 1000 + i, IBMSG_TAG_MASK_EXACT, &st),
                  IBMSG_OK);
        ASSERT_EQ(st.length, len);
        ASSERT_EQ(memcmp(in, out, len), 0);
    }
    ibmsg_request_t req;
    ASSERT_EQ(ibmsg_tag_isend(ep, "last", 5, last_tag, &req), IBMSG_OK);
    EXPECT_EQ(ibmsg_world_barrier(w), IBMSG_OK);
    struct pollfd pfd = {got[0], POLLIN, 0};
    char y = 0;
    if (poll(&pfd, 1, 20000) != 1) {
        kill(pid, SIGKILL);
        waitpid(pid, nullptr, 0);
        FAIL() << "rank 1 did not receive the message sent before the barrier (still held?)";
    }
    EXPECT_EQ(read(got[0], &y, 1), 1);
    EXPECT_EQ(y, 'y');
    EXPECT_EQ(ibmsg_request_wait(&req, nullptr), IBMSG_OK);
    int status = 0;
    ASSERT_EQ(waitpid(pid, &status, 0), pid);
    EXPECT_TRUE(WIFEXITED(status));
    EXPECT_EQ(WEXITSTATUS(status), 0);
    EXPECT_EQ(ibmsg_world_finalize(w), IBMSG_OK);
    clear_env();
}

} // namespace
