// The world API without a device or launcher: argument checks, the environment parsing of the
// TCP bootstrap, and a clean failure (nothing left behind) when no device exists.
#include <gtest/gtest.h>

#include <cstdlib>

#include <ibmsg/world.h>

namespace
{

class EnvGuard
{
  public:
    EnvGuard()
    {
        unsetenv("PMIX_RANK");
        unsetenv("PMIX_NAMESPACE");
        unsetenv("IBMSG_WORLD_PEER");
        unsetenv("IBMSG_WORLD_RANK");
    }
    ~EnvGuard()
    {
        unsetenv("IBMSG_WORLD_PEER");
        unsetenv("IBMSG_WORLD_RANK");
    }
};

TEST(World, NullArguments)
{
    uint32_t v;
    ibmsg_world_bootstrap_t how;
    ibmsg_context_t ctx;
    ibmsg_ep_t ep;
    EXPECT_EQ(ibmsg_world_init(IBMSG_INFO_NULL, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_world_finalize(IBMSG_WORLD_NULL), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_world_rank(IBMSG_WORLD_NULL, &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_world_size(IBMSG_WORLD_NULL, &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_world_local_rank(IBMSG_WORLD_NULL, &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_world_bootstrap(IBMSG_WORLD_NULL, &how), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_world_context(IBMSG_WORLD_NULL, &ctx), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_world_ep(IBMSG_WORLD_NULL, 0, &ep), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_world_ep_rank(IBMSG_WORLD_NULL, IBMSG_EP_NULL, &v), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_world_barrier(IBMSG_WORLD_NULL), IBMSG_ERR_INVALID);
}

TEST(World, MalformedTcpEnvironment)
{
    EnvGuard env;
    ibmsg_world_t w = IBMSG_WORLD_NULL;
    const char *bad_peers[] = {"nohostport", ":1234", "host:", "host:0", "host:65536", "host:12x"};
    setenv("IBMSG_WORLD_RANK", "0", 1);
    for (const char *peer : bad_peers) {
        setenv("IBMSG_WORLD_PEER", peer, 1);
        EXPECT_EQ(ibmsg_world_init(IBMSG_INFO_NULL, &w), IBMSG_ERR_INVALID) << peer;
        EXPECT_EQ(w, IBMSG_WORLD_NULL);
    }
    const char *bad_ranks[] = {"2", "-1", "", "01"};
    setenv("IBMSG_WORLD_PEER", "127.0.0.1:4000", 1);
    for (const char *rank : bad_ranks) {
        setenv("IBMSG_WORLD_RANK", rank, 1);
        EXPECT_EQ(ibmsg_world_init(IBMSG_INFO_NULL, &w), IBMSG_ERR_INVALID) << rank;
    }
    unsetenv("IBMSG_WORLD_RANK");
    EXPECT_EQ(ibmsg_world_init(IBMSG_INFO_NULL, &w), IBMSG_ERR_INVALID);
}

TEST(World, SingleWithoutDeviceFailsCleanly)
{
    EnvGuard env;
    ibmsg_context_t probe;
    if (ibmsg_context_create(IBMSG_INFO_NULL, &probe) == IBMSG_OK) {
        ibmsg_context_destroy(probe);
        GTEST_SKIP() << "a device exists here: covered by test_core_world_rdma";
    }
    ibmsg_world_t w = IBMSG_WORLD_NULL;
    EXPECT_EQ(ibmsg_world_init(IBMSG_INFO_NULL, &w), IBMSG_ERR_NO_DEVICE);
    EXPECT_EQ(w, IBMSG_WORLD_NULL);
    // Nothing stayed behind: the next attempt is not BUSY.
    EXPECT_EQ(ibmsg_world_init(IBMSG_INFO_NULL, &w), IBMSG_ERR_NO_DEVICE);
}

} // namespace
