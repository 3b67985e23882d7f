// The RDMA netlink backend against the pread backend on the real rxe0 (label rdma: in the guest).
#include "counters/nic/nic_port.h"
#include "guest.h"

#include <ibmsg/status.h>

#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <vector>
#include <sys/stat.h>

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
    std::vector<uint64_t> va(n), vb(n);
    // Nothing sends on rxe0 while this runs: both backends must read the same values.
    ASSERT_EQ(cnt_nic_port_snapshot(pa, va.data()), IBMSG_OK);
    ASSERT_EQ(cnt_nic_port_snapshot(pb, vb.data()), IBMSG_OK);
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
