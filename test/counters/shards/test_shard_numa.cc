// NUMA placement of counter shards: a shard lives on the node of the CPU its creator ran on.
// Needs two NUMA nodes: run it in the guest with test/vm/run --numa 2 -- ctest --test-dir build -L
// numa
#include "counters/shards/shard.h"

#include "ibmsg_config.h"
#include <ibmsg/tool.h>

#include <gtest/gtest.h>

#include <pthread.h>
#include <sched.h>

#include <thread>

#if IBMSG_HAVE_NUMA
#include <numa.h>
#include <numaif.h>
#endif

namespace
{

#if IBMSG_HAVE_NUMA
// The node the page at addr is on (faulting it in if needed), or -1.
int node_of_address(const void *addr)
{
    int node = -1;
    if (get_mempolicy(&node, nullptr, 0, const_cast<void *>(addr), MPOL_F_NODE | MPOL_F_ADDR) !=
        0) {
        return -1;
    }
    return node;
}

// Run fn on a thread pinned to cpu.
template <typename F> void on_cpu(int cpu, F fn)
{
    std::thread th([&] {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(cpu, &set);
        ASSERT_EQ(pthread_setaffinity_np(pthread_self(), sizeof(set), &set), 0);
        ASSERT_EQ(sched_getcpu(), cpu);
        fn();
    });
    th.join();
}
#endif

} // namespace

class ShardNuma : public ::testing::Test
{
  protected:
    void SetUp() override
    {
#if !IBMSG_HAVE_NUMA
        GTEST_SKIP() << "built without libnuma (IBMSG_WITH_NUMA=OFF): shards are not placed";
#else
        if (numa_available() < 0 || numa_num_configured_nodes() < 2) {
            GTEST_SKIP()
                << "1 NUMA node: run test/vm/run --numa 2 -- ctest --test-dir build -L numa";
        }
#endif
    }
};

#if IBMSG_HAVE_NUMA
TEST_F(ShardNuma, ThreadShardOnTheNodeOfItsCpu)
{
    int cpus = numa_num_configured_cpus();
    int checked = 0;
    for (int cpu = 0; cpu < cpus; cpu++) {
        int want = numa_node_of_cpu(cpu);
        if (want < 0 || !numa_bitmask_isbitset(numa_all_cpus_ptr, (unsigned)cpu)) {
            continue;
        }
        on_cpu(cpu, [&] {
            cnt_shard_t *shard = cnt_shard_get();
            cnt_inc(shard, CNT_CORE_MATCH_ATTEMPTS);
            EXPECT_EQ(cnt_shard_node(shard), want) << "cpu " << cpu;
            EXPECT_EQ(node_of_address(&shard->slot[0]), want) << "cpu " << cpu;
            EXPECT_EQ(node_of_address(&shard->slot[CNT_SLOT_COUNT - 1]), want) << "cpu " << cpu;
            int node = -2;
            ibmsg_t_thread_t self;
            ASSERT_EQ(ibmsg_t_thread_self(&self), IBMSG_OK);
            ASSERT_EQ(ibmsg_t_thread_get_info(self, nullptr, &node, nullptr), IBMSG_OK);
            EXPECT_EQ(node, want);
        });
        checked++;
    }
    EXPECT_GE(checked, 2);
}

// The case the issue names: a thread pinned to CPU 1 (node 1 in the --numa 2 guest).
TEST_F(ShardNuma, CpuOneIsOnItsNode)
{
    if (numa_num_configured_cpus() < 2) {
        GTEST_SKIP() << "no CPU 1";
    }
    int want = numa_node_of_cpu(1);
    on_cpu(1, [&] {
        cnt_shard_t *shard = cnt_shard_get();
        EXPECT_EQ(node_of_address(shard), want);
        // Blocks are placed on their creator's node too.
        int owner;
        cnt_shard_t *block = nullptr;
        ASSERT_EQ(cnt_block_create(IBMSG_T_BIND_ENDPOINT, &owner, &block), IBMSG_OK);
        EXPECT_EQ(cnt_shard_node(block), want);
        EXPECT_EQ(node_of_address(block), want);
        cnt_block_destroy(block);
    });
    // And a shard recycled later by a thread on another node is not reused across nodes.
    on_cpu(0, [&] {
        cnt_shard_t *shard = cnt_shard_get();
        EXPECT_EQ(node_of_address(shard), numa_node_of_cpu(0));
    });
}
#endif

// Keeps the suite non-empty when built without libnuma.
TEST_F(ShardNuma, SkipsWithAReason)
{
    SUCCEED();
}
