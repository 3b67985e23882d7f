// The NIC counters of the real Soft-RoCE device rxe0 through the tool API (label rdma: run in the
// guest, test/vm/run -- ctest --test-dir build -L rdma). Traffic comes from ibv_rc_pingpong
// (ibverbs-utils), client and server both on rxe0, so every packet rxe0 sends it also receives.
#include <ibmsg/tool.h>

#include <gtest/gtest.h>

#include "counters/nic/nic_port.h"
#include "guest.h"

#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>

namespace
{

bool have_rxe0()
{
    struct stat st;
    return stat("/sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts", &st) == 0;
}

TEST(NicRdma, Rxe0CountersFollowTraffic)
{
    if (!have_rxe0()) {
        IBMSG_TEST_MISSING("no RDMA device: run test/vm/run -- ctest --test-dir build -L rdma");
    }
    int provided;
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_T_SUCCESS);
    int num = 0;
    ASSERT_EQ(ibmsg_t_port_get_num(&num), IBMSG_T_SUCCESS);
    ibmsg_t_port_t rxe = nullptr;
    for (int i = 0; i < num; i++) {
        ibmsg_t_port_t p;
        char name[64];
        int len = sizeof(name), port_num = 0;
        ASSERT_EQ(ibmsg_t_port_get(i, &p), IBMSG_T_SUCCESS);
        ASSERT_EQ(ibmsg_t_port_get_info(p, name, &len, &port_num), IBMSG_T_SUCCESS);
        if (strcmp(name, "rxe0") == 0 && port_num == 1) {
            rxe = p;
        }
    }
    ASSERT_NE(rxe, nullptr);
    // nic_backend=auto (the default): RDMA netlink reads the real rxe0
    // (perf/bench/bench_hwcounters: faster).
    EXPECT_STREQ(rxe->source.ops->name, "rdma-netlink");

    ibmsg_t_pvar_session_t s;
    ASSERT_EQ(ibmsg_t_pvar_session_create(&s), IBMSG_T_SUCCESS);
    const char *names[] = {"nic_sent_pkts", "nic_rcvd_pkts", "nic_rdma_sends", "nic_rdma_recvs"};
    ibmsg_t_pvar_handle_t h[4];
    for (int i = 0; i < 4; i++) {
        int index, count = 0;
        ASSERT_EQ(ibmsg_t_pvar_get_index(names[i], IBMSG_T_PVAR_CLASS_COUNTER, &index),
                  IBMSG_T_SUCCESS)
            << names[i];
        ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, index, &rxe, &h[i], &count), IBMSG_T_SUCCESS);
        ASSERT_EQ(count, 1);
    }
    int life_index, count;
    ibmsg_t_pvar_handle_t life;
    ASSERT_EQ(
        ibmsg_t_pvar_get_index("nic_hw_counters_lifespan", IBMSG_T_PVAR_CLASS_SIZE, &life_index),
        IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_pvar_handle_alloc(s, life_index, &rxe, &life, &count), IBMSG_T_SUCCESS);
    unsigned long long lifespan = 0;
    ASSERT_EQ(ibmsg_t_pvar_read(s, life, &lifespan), IBMSG_T_SUCCESS);
    EXPECT_GT(lifespan, 0u);

    ASSERT_EQ(ibmsg_t_pvar_start_list(s, 4, h), IBMSG_T_SUCCESS);
    // 100 round trips of 4096 B (4 packets each way at IB MTU 1024, 1 at 4096), and their acks.
    // The client retries until the server listens (a slow guest may take seconds to start it);
    // timeouts make a failure a failed test, never a hang.
    int rc = system("P='ibv_rc_pingpong -d rxe0 -g 1 -n 100 -p 18777';"
                    "timeout 120 $P >/dev/null 2>&1 & srv=$!; ok=0; i=0;"
                    "while [ $i -lt 60 ]; do"
                    "  if timeout 60 $P localhost >/dev/null 2>&1; then ok=1; break; fi;"
                    "  i=$((i+1)); sleep 0.5;"
                    "done;"
                    "[ $ok = 1 ] || kill $srv 2>/dev/null; wait $srv; srv_rc=$?;"
                    "[ $ok = 1 ] && [ $srv_rc = 0 ]");
    ASSERT_EQ(rc, 0) << "ibv_rc_pingpong failed";
    // hw_counters are cached for lifespan ms: wait that long so the reading is fresh.
    struct timespec ts = {0, (long)(lifespan + 2) * 1000000L};
    nanosleep(&ts, nullptr);
    ASSERT_EQ(ibmsg_t_pvar_stop_list(s, 4, h), IBMSG_T_SUCCESS);
    unsigned long long v[4];
    for (int i = 0; i < 4; i++) {
        ASSERT_EQ(ibmsg_t_pvar_read(s, h[i], &v[i]), IBMSG_T_SUCCESS);
    }
    // Both ends are rxe0: every packet it sent it received.
    EXPECT_GE(v[0], 200u) << "sent_pkts";
    EXPECT_EQ(v[0], v[1]) << "sent_pkts vs rcvd_pkts";
    EXPECT_GE(v[2], 200u) << "rdma_sends";
    EXPECT_EQ(v[2], v[3]) << "rdma_sends vs rdma_recvs";
    ASSERT_EQ(ibmsg_t_pvar_session_free(&s), IBMSG_T_SUCCESS);
    ASSERT_EQ(ibmsg_t_finalize(), IBMSG_T_SUCCESS);
}

} // namespace
