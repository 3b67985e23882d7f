// Set-up shared by the core's device tests: a context on the test device, two endpoints of it
// connected to each other, and the skip (with its reason) where no RDMA device exists.
#pragma once

#include <gtest/gtest.h>
#include <infiniband/verbs.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <vector>

#include "guest.h"
#include "ibmsg/ibmsg.h"
#include "ibmsg/rma.h"
#include "ibmsg/tool.h"

namespace core_test
{

// Test data: byte i of the stream seed (neighbouring bytes, pages and seeds all differ).
inline uint8_t pattern(uint64_t seed, size_t i)
{
    return uint8_t((seed * 0x9e3779b97f4a7c15ull + i * 7 + (i >> 8) * 13 + 1) >> 3);
}

// The first len bytes of the stream seed.
inline std::vector<uint8_t> payload(uint64_t seed, size_t len)
{
    std::vector<uint8_t> v(len);
    for (size_t i = 0; i < len; i++) {
        v[i] = pattern(seed, i);
    }
    return v;
}

constexpr const char *kSkip = "no RDMA device: run test/vm/run -- ctest --test-dir build -L rdma";

// Sets a test's own hints on the info, after the device.
using InfoFn = std::function<void(ibmsg_info_t)>;

// A context on device (nullptr: IBMSG_TEST_DEVICE, else the default), or IBMSG_ERR_NO_DEVICE.
inline int open_context(ibmsg_context_t *ctx, const char *device = nullptr,
                        const InfoFn &set = nullptr)
{
    ibmsg_info_t info;
    if (ibmsg_info_create(&info) != IBMSG_OK) {
        return IBMSG_ERR_NO_MEMORY;
    }
    if (device == nullptr) {
        device = getenv("IBMSG_TEST_DEVICE");
    }
    if (device != nullptr) {
        ibmsg_info_set_string(info, "device", device);
    }
    if (set) {
        set(info);
    }
    int ret = ibmsg_context_create(info, ctx);
    ibmsg_info_free(&info);
    return ret;
}

// Whether a context opens on the test device.
inline bool have_device(const InfoFn &set = nullptr)
{
    ibmsg_context_t probe;
    if (open_context(&probe, nullptr, set) != IBMSG_OK) {
        return false;
    }
    ibmsg_context_destroy(probe);
    return true;
}

// Connects a and b (of one process) to each other.
inline int connect_pair(ibmsg_ep_t a, ibmsg_ep_t b)
{
    uint8_t ba[IBMSG_EP_ADDRESS_MAX], bb[IBMSG_EP_ADDRESS_MAX];
    size_t la = sizeof(ba), lb = sizeof(bb);
    int ret = ibmsg_ep_address(a, ba, &la);
    if (ret == IBMSG_OK) {
        ret = ibmsg_ep_address(b, bb, &lb);
    }
    if (ret == IBMSG_OK) {
        ret = ibmsg_ep_connect(a, bb, lb);
    }
    if (ret == IBMSG_OK) {
        ret = ibmsg_ep_connect(b, ba, la);
    }
    return ret;
}

// *ctx on the test device (the test skipped without one, failed in the guest), endpoints *a <-> *b.
// A skip or a failed assertion returns from here only: callers check IsSkipped() /
// HasFatalFailure().
inline void open_pair(ibmsg_context_t *ctx, ibmsg_ep_t *a, ibmsg_ep_t *b,
                      const InfoFn &set = nullptr)
{
    int ret = open_context(ctx, nullptr, set);
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(kSkip);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(*ctx, a), IBMSG_OK);
    ASSERT_EQ(ibmsg_ep_create(*ctx, b), IBMSG_OK);
    ASSERT_EQ(connect_pair(*a, *b), IBMSG_OK);
}

// The child of a two-process test: an endpoint *ep of ctx connected to the parent's, through the
// TCP helper (*conn) to the parent listening on 127.0.0.1:port.
inline int join_parent(ibmsg_context_t ctx, uint16_t port, ibmsg_ep_t *ep, ibmsg_oob_t *conn)
{
    int ret = ibmsg_ep_create(ctx, ep);
    if (ret == IBMSG_OK) {
        ret = ibmsg_oob_connect("127.0.0.1", port, 20000, conn);
    }
    if (ret == IBMSG_OK) {
        ret = ibmsg_oob_ep_connect(*conn, *ep, 20000);
    }
    return ret;
}

// A handle in session s of the performance variable name (class cls) bound to obj (nullptr: the
// sum), which must have one element; not started.
inline ibmsg_t_pvar_handle_t pvar_handle(ibmsg_t_pvar_session_t s, const char *name, int cls,
                                         void *obj)
{
    int index = -1, count = 0;
    ibmsg_t_pvar_handle_t h = IBMSG_T_PVAR_HANDLE_NULL;
    EXPECT_EQ(ibmsg_t_pvar_get_index(name, cls, &index), IBMSG_OK) << name;
    EXPECT_EQ(ibmsg_t_pvar_handle_alloc(s, index, obj, &h, &count), IBMSG_OK) << name;
    EXPECT_EQ(count, 1) << name;
    return h;
}

// What the device itself reports (libibverbs, not the library under test): expectations are
// taken from here, so a library that misreads the device fails instead of agreeing with itself.
struct DevCaps {
    bool found = false;
    uint32_t init_rd_atom = 0; // RDMA READs a QP may have outstanding
    uint32_t rd_atom = 0;      // RDMA READs a QP serves at once
    bool mw2b = false;         // type 2B memory windows
};

inline DevCaps device_caps(const char *name)
{
    DevCaps caps;
    int n = 0;
    ibv_device **list = ibv_get_device_list(&n);
    for (int i = 0; list != nullptr && i < n && !caps.found; i++) {
        if (strcmp(ibv_get_device_name(list[i]), name) != 0) {
            continue;
        }
        ibv_context *dev = ibv_open_device(list[i]);
        ibv_device_attr da;
        if (dev != nullptr && ibv_query_device(dev, &da) == 0) {
            caps.found = true;
            caps.init_rd_atom = uint32_t(da.max_qp_init_rd_atom);
            caps.rd_atom = uint32_t(da.max_qp_rd_atom);
            caps.mw2b = (da.device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B) != 0 && da.max_mw > 0;
        }
        if (dev != nullptr) {
            ibv_close_device(dev);
        }
    }
    if (list != nullptr) {
        ibv_free_device_list(list);
    }
    return caps;
}

// A fixture's context and its connected pair a <-> b; limit is the context's eager limit.
struct PairTest : ::testing::Test {
    ibmsg_context_t ctx = IBMSG_CONTEXT_NULL;
    ibmsg_ep_t a = IBMSG_EP_NULL, b = IBMSG_EP_NULL;
    size_t limit = 0;

    void open_pair(const InfoFn &set = nullptr)
    {
        core_test::open_pair(&ctx, &a, &b, set);
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
        ibmsg_context_attr_t attr;
        ASSERT_EQ(ibmsg_context_query(ctx, &attr), IBMSG_OK);
        limit = attr.eager_limit;
    }
};

// m's key as ep's peer would use it: packed, then unpacked on ep (IBMSG_RKEY_NULL, the test
// failed, on an error).
inline ibmsg_rkey_t unpack_key(ibmsg_mem_t m, ibmsg_ep_t ep)
{
    uint8_t blob[64];
    size_t len = sizeof(blob);
    ibmsg_rkey_t k = IBMSG_RKEY_NULL;
    EXPECT_EQ(ibmsg_mem_rkey_pack(m, blob, &len), IBMSG_OK);
    EXPECT_EQ(len, size_t(IBMSG_RKEY_BLOB_SIZE));
    EXPECT_EQ(ibmsg_rkey_unpack(ep, blob, len, &k), IBMSG_OK);
    return k;
}

// The one-sided tests' memory: a "remote" region (mapped for remote read and write, reached
// through ep's key to it) and a "local" one (the initiator's buffers), len bytes each.
struct RmaRegions {
    std::vector<uint8_t> remote, local;
    ibmsg_mem_t rmem = IBMSG_MEM_NULL, lmem = IBMSG_MEM_NULL;
    ibmsg_rkey_t rkey = IBMSG_RKEY_NULL;
    uint64_t rbase = 0; // the remote region's address

    // A failed assertion returns from here only: callers check HasFatalFailure().
    void map_regions(ibmsg_context_t ctx, ibmsg_ep_t ep, size_t len)
    {
        remote.assign(len, 0);
        local.assign(len, 0);
        ASSERT_EQ(ibmsg_mem_map(ctx, remote.data(), remote.size(),
                                IBMSG_MEM_REMOTE_READ | IBMSG_MEM_REMOTE_WRITE, &rmem),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_mem_map(ctx, local.data(), local.size(), 0, &lmem), IBMSG_OK);
        rkey = unpack_key(rmem, ep);
        ASSERT_NE(rkey, IBMSG_RKEY_NULL);
        rbase = uint64_t(uintptr_t(remote.data()));
    }
    // What map_regions made; nothing may be in flight on it.
    void unmap_regions()
    {
        if (rkey != IBMSG_RKEY_NULL) {
            EXPECT_EQ(ibmsg_rkey_destroy(rkey), IBMSG_OK);
        }
        if (rmem != IBMSG_MEM_NULL) {
            EXPECT_EQ(ibmsg_mem_unmap(rmem), IBMSG_OK) << "nothing in flight";
        }
        if (lmem != IBMSG_MEM_NULL) {
            EXPECT_EQ(ibmsg_mem_unmap(lmem), IBMSG_OK) << "nothing in flight";
        }
    }
};

} // namespace core_test

// Skips the test (returns from it) without a device, fails it in the guest (which has one); any
// other failure to open fails it.
#define CORE_TEST_SKIP_WITHOUT_DEVICE()              \
    do {                                             \
        ibmsg_context_t probe_;                      \
        int ret_ = core_test::open_context(&probe_); \
        if (ret_ == IBMSG_ERR_NO_DEVICE) {           \
            IBMSG_TEST_MISSING(core_test::kSkip);    \
        }                                            \
        ASSERT_EQ(ret_, IBMSG_OK);                   \
        ibmsg_context_destroy(probe_);               \
    } while (0)
