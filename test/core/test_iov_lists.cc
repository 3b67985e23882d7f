// core/iov.c without a device: the checks of a vector's entries, the gather and scatter copies
// of eager messages, and the scatter/gather lists of work requests split at an element limit.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "core/core.h"

namespace
{

TEST(IovCheck, TotalsAndRefusals)
{
    uint8_t b[8];
    size_t total = 99;
    ibmsg_iov_t ok[3] = {{b, 3, IBMSG_MEM_NULL}, {nullptr, 0, IBMSG_MEM_NULL}, {b + 3, 5, nullptr}};
    ASSERT_EQ(core_iov_check(ok, 3, &total), IBMSG_OK);
    EXPECT_EQ(total, 8u);
    ASSERT_EQ(core_iov_check(nullptr, 0, &total), IBMSG_OK);
    EXPECT_EQ(total, 0u);

    std::vector<ibmsg_iov_t> many(IBMSG_IOV_MAX + 1, ibmsg_iov_t{b, 1, IBMSG_MEM_NULL});
    ASSERT_EQ(core_iov_check(many.data(), IBMSG_IOV_MAX, &total), IBMSG_OK);
    EXPECT_EQ(total, size_t(IBMSG_IOV_MAX));
    total = 7;
    EXPECT_EQ(core_iov_check(many.data(), IBMSG_IOV_MAX + 1, &total), IBMSG_ERR_INVALID);
    EXPECT_EQ(core_iov_check(nullptr, 1, &total), IBMSG_ERR_INVALID);
    ibmsg_iov_t no_buf[1] = {{nullptr, 1, IBMSG_MEM_NULL}};
    EXPECT_EQ(core_iov_check(no_buf, 1, &total), IBMSG_ERR_INVALID);
    ibmsg_iov_t sum_wraps[2] = {{b, SIZE_MAX / 2 + 1, IBMSG_MEM_NULL},
                                {b, SIZE_MAX / 2 + 1, IBMSG_MEM_NULL}};
    EXPECT_EQ(core_iov_check(sum_wraps, 2, &total), IBMSG_ERR_INVALID);
    ibmsg_iov_t end_wraps[1] = {{reinterpret_cast<void *>(UINTPTR_MAX - 1), 2, IBMSG_MEM_NULL}};
    EXPECT_EQ(core_iov_check(end_wraps, 1, &total), IBMSG_ERR_INVALID);
    EXPECT_EQ(total, 7u) << "set only on success";
}

TEST(IovCopies, GatherAndScatterStopAtN)
{
    uint8_t a[3] = {1, 2, 3}, c[4] = {4, 5, 6, 7};
    ibmsg_iov_t v[3] = {
        {a, 3, IBMSG_MEM_NULL}, {nullptr, 0, IBMSG_MEM_NULL}, {c, 4, IBMSG_MEM_NULL}};
    uint8_t out[8];
    std::memset(out, 0xee, sizeof(out));
    core_iov_gather(out, v, 3, 5);
    const uint8_t want[8] = {1, 2, 3, 4, 5, 0xee, 0xee, 0xee};
    EXPECT_EQ(std::memcmp(out, want, 8), 0);

    uint8_t x[3], y[4];
    std::memset(x, 0xee, 3);
    std::memset(y, 0xee, 4);
    ibmsg_iov_t w[3] = {
        {x, 3, IBMSG_MEM_NULL}, {nullptr, 0, IBMSG_MEM_NULL}, {y, 4, IBMSG_MEM_NULL}};
    const uint8_t src[7] = {10, 11, 12, 13, 14, 15, 16};
    core_iov_scatter(w, 3, src, 4); // a truncated message's first 4 bytes
    const uint8_t wx[3] = {10, 11, 12}, wy[4] = {13, 0xee, 0xee, 0xee};
    EXPECT_EQ(std::memcmp(x, wx, 3), 0);
    EXPECT_EQ(std::memcmp(y, wy, 4), 0);
}

// Lists from consecutive offsets cover the vector exactly once, never more than max_sge
// elements or max_bytes per list, and skip empty entries.
TEST(IovSges, SplitAtTheElementAndByteLimits)
{
    std::vector<uint8_t> back(1000);
    struct ibmsg_mem_s mem;
    std::memset(&mem, 0, sizeof(mem));
    mem.vm.lkey = 0x1234;
    ibmsg_iov_t v[5] = {{&back[0], 10, &mem},
                        {&back[100], 0, &mem},
                        {&back[200], 7, &mem},
                        {&back[300], 20, &mem},
                        {&back[400], 1, &mem}};
    core_iov_ext_t ext;
    std::memset(&ext, 0, sizeof(ext));
    for (int i = 0; i < 5; i++) {
        ext.hold[i].mem = &mem;
    }
    core_iov_req_t r = {v, 5, &ext};
    verbs_sge_t sge[VERBS_QP_SGE_MAX];
    int n = -1;
    // Two elements per list: [0,10) + [200,207), then [300,320) + [400,401).
    EXPECT_EQ(core_iov_sges(&r, 0, 1000, 2, sge, &n), 17u);
    ASSERT_EQ(n, 2);
    EXPECT_EQ(sge[0].addr, uintptr_t(&back[0]));
    EXPECT_EQ(sge[0].length, 10u);
    EXPECT_EQ(sge[0].lkey, 0x1234u);
    EXPECT_EQ(sge[1].addr, uintptr_t(&back[200]));
    EXPECT_EQ(sge[1].length, 7u);
    EXPECT_EQ(core_iov_sges(&r, 17, 1000, 2, sge, &n), 21u);
    ASSERT_EQ(n, 2);
    EXPECT_EQ(sge[0].addr, uintptr_t(&back[300]));
    EXPECT_EQ(sge[1].addr, uintptr_t(&back[400]));
    // A byte limit inside an entry, then the rest of it from that offset.
    EXPECT_EQ(core_iov_sges(&r, 5, 8, 16, sge, &n), 8u);
    ASSERT_EQ(n, 2);
    EXPECT_EQ(sge[0].addr, uintptr_t(&back[5]));
    EXPECT_EQ(sge[0].length, 5u);
    EXPECT_EQ(sge[1].length, 3u);
    EXPECT_EQ(core_iov_sges(&r, 13, 1000, 1, sge, &n), 4u);
    EXPECT_EQ(sge[0].addr, uintptr_t(&back[203]));
    // Past the end: nothing.
    EXPECT_EQ(core_iov_sges(&r, 38, 1000, 16, sge, &n), 0u);
    EXPECT_EQ(n, 0);
    // No extension (an inline put): key 0.
    core_iov_req_t bare = {v, 5, nullptr};
    EXPECT_EQ(core_iov_sges(&bare, 0, 1000, 16, sge, &n), 38u);
    ASSERT_EQ(n, 4);
    EXPECT_EQ(sge[3].lkey, 0u);
}

} // namespace
