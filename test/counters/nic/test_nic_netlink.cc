// The RDMA netlink backend against the pread backend on the real rxe0 (label rdma: in the guest).
#include "counters/nic/nic_port.h"
#include "guest.h"

#include <ibmsg/status.h>

#include <gtest/gtest.h>

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <vector>

namespace
{

TEST(NicNetlink, AgreesWithPreadOnRxe0)
{
    struct stat st;
    if (stat("/sys/class/infiniband/rxe0/ports/1/hw_counters", &st) != 0) {
        IBMSG_TEST_MISSING("no RDMA device: run test/vm/run -- ctest --test-dir build -L rdma");
    }
    cnt_nic_t *a = nullptr, *b = nullptr;
    ASSERT_EQ(cnt_nic_open(nullptr, &a), IBMSG_OK);
    ASSERT_EQ(cnt_nic_open(nullptr, &b), IBMSG_OK);
    ibmsg_t_port_t pa = nullptr, pb = nullptr;
    for (int i = 0; i < a->num_ports; i++) {
        if (strcmp(a->ports[i]->dev_name, "rxe0") == 0 && a->ports[i]->port_num == 1) {
            pa = a->ports[i];
            pb = b->ports[i];
        }
    }
    ASSERT_NE(pa, nullptr);
    ASSERT_EQ(cnt_nic_netlink_attach(pb), IBMSG_OK);
    EXPECT_STREQ(pb->source.ops->name, "rdma-netlink");
    int n = pa->source.num_counters;
    ASSERT_EQ(n, pb->source.num_counters);
    std::vector<uint64_t> va(n), vb(n), va2(n);
    // Traffic first (an idle rxe0 reads 0 everywhere, which any two backends agree on), then
    // none: 100 round trips of ibv_rc_pingpong, client and server on rxe0 (as test_nic_rdma).
    int rc = system("P='ibv_rc_pingpong -d rxe0 -g 1 -n 100 -p 18779';"
                    "timeout 120 $P >/dev/null 2>&1 & srv=$!; ok=0; i=0;"
                    "while [ $i -lt 60 ]; do"
                    "  if timeout 60 $P localhost >/dev/null 2>&1; then ok=1; break; fi;"
                    "  i=$((i+1)); sleep 0.5;"
                    "done;"
                    "[ $ok = 1 ] || kill $srv 2>/dev/null; wait $srv; srv_rc=$?;"
                    "[ $ok = 1 ] && [ $srv_rc = 0 ]");
    ASSERT_EQ(rc, 0) << "ibv_rc_pingpong failed";
    // A netlink reading between two equal pread readings saw the same quiet port (a stray
    // packet, e.g. another test's, shows as two preads that differ: read again).
    for (int tries = 0; tries < 20; tries++) {
        usleep(50000); // past hw_counters' cache lifespan (10 ms)
        ASSERT_EQ(cnt_nic_port_snapshot(pa, va.data()), IBMSG_OK);
        ASSERT_EQ(cnt_nic_port_snapshot(pb, vb.data()), IBMSG_OK);
        ASSERT_EQ(cnt_nic_port_snapshot(pa, va2.data()), IBMSG_OK);
        if (va == va2) {
            break;
        }
    }
    ASSERT_EQ(va, va2) << "rxe0 never quiet";
    int sent = -1, rcvd = -1;
    for (int i = 0; i < n; i++) {
        sent = strcmp(pa->counters[i].name, "sent_pkts") == 0 ? i : sent;
        rcvd = strcmp(pa->counters[i].name, "rcvd_pkts") == 0 ? i : rcvd;
    }
    ASSERT_GE(sent, 0);
    ASSERT_GE(rcvd, 0);
    EXPECT_GE(va[sent], 200u) << "sent_pkts: the pingpong's packets";
    EXPECT_GE(va[rcvd], 200u) << "rcvd_pkts";
    for (int i = 0; i < n; i++) {
        EXPECT_EQ(va[i], vb[i]) << pa->counters[i].name;
    }
    // Cost of one whole-port reading by each backend (printed for the record).
    const int iters = 2000;
    for (ibmsg_t_port_t p : {pa, pb}) {
        auto t0 = std::chrono::steady_clock::now();
        for (int k = 0; k < iters; k++) {
            ASSERT_EQ(cnt_nic_port_snapshot(p, va.data()), IBMSG_OK);
        }
        auto t1 = std::chrono::steady_clock::now();
        int one = 0;
        for (int k = 0; k < iters; k++) {
            ASSERT_EQ(cnt_nic_port_read(p, 1, &one, va.data()), IBMSG_OK);
        }
        auto t2 = std::chrono::steady_clock::now();
        printf("%s: whole port (%d counters) %.2f us, one counter %.2f us\n", p->source.ops->name,
               n, std::chrono::duration<double, std::micro>(t1 - t0).count() / iters,
               std::chrono::duration<double, std::micro>(t2 - t1).count() / iters);
    }
    cnt_nic_close(a);
    cnt_nic_close(b);
}

} // namespace
