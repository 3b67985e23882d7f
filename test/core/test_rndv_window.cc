// Rendezvous keys on a real device (Soft-RoCE in the guest): the key an RTS offers opens exactly
// the message's bytes, only while the transfer is outstanding. The peer's side is played by
// endpoint b reading with ibmsg_get through keys forged with wide local bounds, so that only
// the device can refuse. A refused READ puts the pair's QPs in error: each such check opens
// its own context. Without windows, every registration a transfer makes is released when it
// completes, is cancelled or fails (made minus released, exactly).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "core/core.h"
#include "core/rkey.h"
#include "core_fixture.h"
#include "ibmsg/ibmsg.h"
#include "util/log.h"
#include "verbs/fault.h"
#include "verbs/reg_cache.h"

namespace
{

struct WindowTest : core_test::PairTest {
    std::vector<uint8_t> out, in;
    uint8_t *msg = nullptr; // the message: 100 bytes into out, so its pages hold other bytes too
    size_t len = 0;
    ibmsg_mem_t lmem = IBMSG_MEM_NULL;
    ibmsg_request_t sreq = IBMSG_REQUEST_NULL;

    bool need_windows = true; // skip where the device has none (the fault tests need none)
    core_test::InfoFn hints;  // a test's own hints besides core_rndv_windows

    void open(const char *windows = "1")
    {
        open_pair([this, windows](ibmsg_info_t info) {
            ibmsg_info_set_string(info, "core_rndv_windows", windows);
            if (hints) {
                hints(info);
            }
        });
        if (IsSkipped() || HasFatalFailure()) {
            return;
        }
#if !IBMSG_HAVE_CORE_COUNTERS
        GTEST_SKIP() << "counters compiled out (IBMSG_CORE_COUNTERS=OFF)";
#endif
        if (need_windows && windows[0] == '1') {
            // Whether windows exist is the device's answer (libibverbs), not the library's.
            ibmsg_context_attr_t attr;
            ASSERT_EQ(ibmsg_context_query(ctx, &attr), IBMSG_OK);
            if (!core_test::device_caps(attr.device).mw2b) {
                IBMSG_TEST_MISSING("the device has no type 2B memory windows");
            }
            ASSERT_TRUE(a->rndv.windows) << "the device has type 2B windows";
        }
        len = limit + 5000;
        out.resize(len + 8192);
        in.resize(len + 8192);
        for (size_t i = 0; i < out.size(); i++) {
            out[i] = uint8_t(i * 7 + 3);
        }
        msg = out.data() + 100;
        ASSERT_EQ(ibmsg_mem_map(ctx, in.data(), in.size(), 0, &lmem), IBMSG_OK);
    }
    // The context and its mapping go, for a test that opens another.
    void close()
    {
        if (lmem != IBMSG_MEM_NULL) {
            EXPECT_EQ(ibmsg_mem_unmap(lmem), IBMSG_OK);
            lmem = IBMSG_MEM_NULL;
        }
        EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
        ctx = IBMSG_CONTEXT_NULL;
    }
    void TearDown() override
    {
        verbs_faults = verbs_faults_t{};
        util_log_set_sink(nullptr, nullptr, nullptr, nullptr);
        util_log_level = UTIL_LOG_WARN;
        if (lmem != IBMSG_MEM_NULL) {
            EXPECT_EQ(ibmsg_mem_unmap(lmem), IBMSG_OK);
        }
        if (ctx != IBMSG_CONTEXT_NULL) {
            EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
        }
    }
    uint64_t cnt(cnt_id_t id) const
    {
        return cnt_read(ctx->cnt, id, CNT_READ_VALUE);
    }
    // Registrations alive now: made minus released (the context's registration cache).
    uint64_t live() const
    {
        return cnt(CNT_VERBS_REG_CACHE_MISSES) - cnt(CNT_VERBS_REG_RELEASES);
    }
    // Registrations the cache keeps (destinations), and their bytes.
    uint64_t cached(uint64_t *bytes = nullptr) const
    {
        uint32_t entries = 0;
        uint64_t b = 0;
        verbs_rcache_usage(verbs_mr_cache_rcache(ctx->rcache), &entries, &b);
        if (bytes != nullptr) {
            *bytes = b;
        }
        return entries;
    }
    // Nothing registered but what the cache keeps: no transfer's registration outlived it.
    void expect_only_cached_registrations(const char *when)
    {
        uint64_t bytes = 0;
        const uint64_t entries = cached(&bytes);
        EXPECT_EQ(live(), entries) << when;
        EXPECT_EQ(cnt(CNT_VERBS_REG_BYTES), bytes) << when;
    }
    void progress_until(const std::function<bool()> &done)
    {
        for (int spin = 0; spin < 1000000 && !done(); spin++) {
            ASSERT_EQ(ibmsg_context_progress(ctx, nullptr), IBMSG_OK);
        }
        ASSERT_TRUE(done());
    }
    // a sends the message with no receive posted: its RTS waits in b's unexpected queue.
    void send_outstanding(uint64_t tag)
    {
        uint64_t before = cnt(CNT_CORE_UNEXPECTED_RECVQ);
        ASSERT_EQ(ibmsg_tag_isend(a, msg, len, tag, &sreq), IBMSG_OK);
        progress_until([&] { return cnt(CNT_CORE_UNEXPECTED_RECVQ) == before + 1; });
        ASSERT_EQ(sreq->rndv.active, 1);
    }
    // b answers the outstanding send with a FIN of its own making, with flags, as a plain SEND
    // (no invalidation): what a broken or lying peer sends.
    core_wire_rndv_t forge_fin(uint8_t flags)
    {
        const core_wire_rndv_t fin{uintptr_t(msg), len, sreq->rndv.rkey, sreq->rndv.id};
        progress_until([&] { return core_ep_can_send(b); });
        EXPECT_EQ(core_ep_post_hdr(b, CORE_WIRE_FIN, flags, 0, &fin, sizeof(fin), nullptr),
                  IBMSG_OK);
        return fin;
    }
    // b receives it: both sides complete, the bytes arrive.
    void receive(uint64_t tag)
    {
        ibmsg_tag_status_t st{};
        ASSERT_EQ(ibmsg_tag_recv(ctx, b, in.data(), len, tag, IBMSG_TAG_MASK_EXACT, &st), IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK);
        ASSERT_EQ(memcmp(in.data(), msg, len), 0);
    }
    // b READs n bytes at addr of a under device key rkey; the completion status of the get.
    int read(uint64_t addr, size_t n, uint32_t rkey)
    {
        core_rkey_blob_t k{uintptr_t(out.data()), out.size(), rkey, IBMSG_MEM_REMOTE_READ};
        uint8_t blob[IBMSG_RKEY_BLOB_SIZE];
        ibmsg_rkey_t key = IBMSG_RKEY_NULL;
        ibmsg_request_t req;
        EXPECT_EQ(core_rkey_pack(&k, blob, sizeof(blob)), IBMSG_OK);
        EXPECT_EQ(ibmsg_rkey_unpack(b, blob, sizeof(blob), &key), IBMSG_OK);
        memset(in.data(), 0, in.size());
        int ret = ibmsg_get(b, in.data(), n, lmem, addr, key, &req);
        if (ret == IBMSG_OK) {
            ret = ibmsg_request_wait(&req, nullptr);
        }
        ibmsg_rkey_destroy(key);
        return ret;
    }
};

// Log lines at info and above, kept for a test to look for.
std::vector<std::string> logged;

void keep_log(util_log_level_t, const char *, int, const char *message, void *)
{
    logged.emplace_back(message);
}

void capture_log()
{
    logged.clear();
    util_log_level = UTIL_LOG_INFO;
    util_log_set_sink(keep_log, nullptr, nullptr, nullptr);
}

size_t logged_with(const char *text)
{
    return size_t(std::count_if(logged.begin(), logged.end(), [text](const std::string &m) {
        return m.find(text) != std::string::npos;
    }));
}

// Whether the test device advertises type 2B windows that can be allocated.
bool device_has_windows()
{
    ibmsg_context_t c;
    if (core_test::open_context(&c) != IBMSG_OK) {
        return false;
    }
    bool has = verbs_dev_info(c->dev)->mw_type2 != 0;
    ibmsg_context_destroy(c);
    return has;
}

} // namespace

// While the transfer is outstanding the key reads the whole message, and not one byte more.
TEST_F(WindowTest, KeyOpensTheMessageAndNotOneByteMore)
{
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    send_outstanding(1);
    const uint32_t key = sreq->rndv.rkey;
    EXPECT_EQ(cnt(CNT_CORE_RNDV_WINDOWS_BOUND), 1u);
    EXPECT_NE(key, sreq->rndv.reg->rkey) << "the RTS offers a window, not the registration";
    ASSERT_EQ(read(uintptr_t(msg), len, key), IBMSG_OK);
    EXPECT_EQ(memcmp(in.data(), msg, len), 0);
    EXPECT_EQ(read(uintptr_t(msg), len + 1, key), IBMSG_ERR_ACCESS);
}

TEST_F(WindowTest, KeyDoesNotOpenTheByteBefore)
{
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    send_outstanding(1);
    EXPECT_EQ(read(uintptr_t(msg) - 1, 2, sreq->rndv.rkey), IBMSG_ERR_ACCESS);
}

// The registration under the window grants no remote access of its own.
TEST_F(WindowTest, RegistrationKeyOpensNothing)
{
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    send_outstanding(1);
    EXPECT_EQ(read(uintptr_t(msg), 1, sreq->rndv.reg->rkey), IBMSG_ERR_ACCESS);
}

// The receiver's FIN invalidates the window (SEND_WITH_INV); the key is dead after the transfer,
// and the reused window offers another key.
TEST_F(WindowTest, KeyDiesWithTheTransfer)
{
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    send_outstanding(1);
    const uint32_t key = sreq->rndv.rkey;
    receive(1);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_LOCAL_INVALIDATIONS), 0u) << "the FIN invalidated the window";
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REMOTE_INVALIDATIONS), 1u);
    EXPECT_NE(a->rndv.win_free, nullptr) << "the device saw it: the window is kept for reuse";
    send_outstanding(2);
    const uint32_t key2 = sreq->rndv.rkey;
    EXPECT_NE(key2, key);
    EXPECT_EQ(key2 >> 8, key >> 8) << "the same window, bound again";
    receive(2);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_WINDOWS_BOUND), 2u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_LOCAL_INVALIDATIONS), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REMOTE_INVALIDATIONS), 2u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REJECTED), 0u);
    EXPECT_GE(cnt(CNT_VERBS_REG_CACHE_HITS), 1u) << "the source registration stays cached";
    EXPECT_EQ(read(uintptr_t(msg), len, key), IBMSG_ERR_ACCESS);
}

// A FIN that does not invalidate (an old or broken peer) costs a local invalidation before the
// send completes: the key is dead all the same.
TEST_F(WindowTest, FinWithoutInvalidationIsInvalidatedLocally)
{
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    send_outstanding(1);
    const core_wire_rndv_t fin = forge_fin(0);
    ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_LOCAL_INVALIDATIONS), 1u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REMOTE_INVALIDATIONS), 0u);
    EXPECT_EQ(read(uintptr_t(msg), len, fin.rkey), IBMSG_ERR_ACCESS);
}

// A device that invalidates without saying so (bnxt_re sets no IBV_WC_WITH_INV; injected here):
// the FIN's INVALIDATED flag decides. No LOCAL_INV (on an already free window it would fail the
// endpoint); the window is freed rather than reused, since only the peer's word says it is free.
TEST_F(WindowTest, FinSentWithInvalidateIsBelievedWhereTheDeviceDoesNotSaySo)
{
    verbs_faults.wc_hide_invalidation = 1;
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    uint32_t key = 0;
    for (uint64_t i = 1; i <= 3; i++) {
        send_outstanding(i);
        key = sreq->rndv.rkey;
        receive(i);
        EXPECT_EQ(cnt(CNT_CORE_RNDV_REMOTE_INVALIDATIONS), i);
        EXPECT_EQ(cnt(CNT_CORE_RNDV_LOCAL_INVALIDATIONS), 0u);
        EXPECT_EQ(a->rndv.win_free, nullptr) << "freed, not kept: " << i;
    }
    EXPECT_EQ(cnt(CNT_CORE_RNDV_WINDOWS_BOUND), 3u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REJECTED), 0u);
    EXPECT_EQ(a->state, CORE_EP_CONNECTED);
    EXPECT_EQ(read(uintptr_t(msg), len, key), IBMSG_ERR_ACCESS);
}

// A peer that flags an invalidation it did not do (a plain SEND) keeps no access: the window is
// freed, which invalidates it, and no LOCAL_INV is posted.
TEST_F(WindowTest, FinClaimingAnInvalidationItDidNotDoLeavesTheKeyDead)
{
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    send_outstanding(1);
    const core_wire_rndv_t fin = forge_fin(CORE_WIRE_FLAG_INVALIDATED);
    ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REMOTE_INVALIDATIONS), 1u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_LOCAL_INVALIDATIONS), 0u);
    EXPECT_EQ(a->rndv.win_free, nullptr);
    EXPECT_EQ(read(uintptr_t(msg), len, fin.rkey), IBMSG_ERR_ACCESS);
}

// Only a window's key can have been invalidated: a FIN flagging it for a registration's key is
// rejected and ends nothing; the right FIN then ends the send.
TEST_F(WindowTest, FinFlaggingAnInvalidatedRegistrationIsRejected)
{
    open("0");
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    send_outstanding(1);
    forge_fin(CORE_WIRE_FLAG_INVALIDATED);
    progress_until([&] { return cnt(CNT_CORE_RNDV_REJECTED) == 1; });
    EXPECT_EQ(sreq->rndv.active, 1) << "still outstanding";
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REMOTE_INVALIDATIONS), 0u);
    forge_fin(0);
    ASSERT_EQ(ibmsg_request_wait(&sreq, nullptr), IBMSG_OK);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REJECTED), 1u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_LOCAL_INVALIDATIONS), 0u);
}

// Registrations ask for relaxed ordering; a device refusing it is asked once, then never again.
TEST_F(WindowTest, RelaxedOrderingRefusedIsAskedOnceThenNever)
{
    verbs_faults.relaxed_ordering_errno = EINVAL;
    capture_log();
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    EXPECT_EQ(verbs_faults.relaxed_ordering_refused, 1u);
    EXPECT_EQ(verbs_dev_info(ctx->dev)->relaxed_ordering, 0);
    send_outstanding(1);
    receive(1);
    EXPECT_EQ(verbs_faults.relaxed_ordering_refused, 1u) << "not asked again";
    EXPECT_GE(cnt(CNT_VERBS_REG_CACHE_MISSES), 2u) << "the transfer registered both buffers";
    EXPECT_EQ(logged_with("registrations refuse relaxed ordering (Invalid argument)"), 1u);
}

// The device (rxe) takes the flag; verbs_relaxed_ordering 0 never asks for it.
TEST_F(WindowTest, RelaxedOrderingIsAskedUnlessTurnedOff)
{
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    send_outstanding(1);
    receive(1);
    EXPECT_EQ(verbs_dev_info(ctx->dev)->relaxed_ordering, 1) << "asked, and not refused";
    close();
    verbs_faults.relaxed_ordering_errno = EINVAL; // would refuse any registration asking
    hints = [](ibmsg_info_t info) { ibmsg_info_set_string(info, "verbs_relaxed_ordering", "0"); };
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    send_outstanding(1);
    receive(1);
    EXPECT_EQ(verbs_faults.relaxed_ordering_refused, 0u) << "never asked";
    EXPECT_EQ(verbs_dev_info(ctx->dev)->relaxed_ordering, 0);
}

// A device taking fewer inline bytes than asked: its real limit is found (300 of 512 asked, not
// the 256 that halving gave), logged once, and asked for directly by the next queue pair.
TEST_F(WindowTest, QueuePairsTakeTheDevicesInlineLimit)
{
    verbs_faults.qp_inline_max = 300;
    capture_log();
    hints = [](ibmsg_info_t info) { ibmsg_info_set_string(info, "core_inline_limit", "488"); };
    need_windows = false;
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    verbs_qp_params_t ca, cb;
    verbs_qp_caps(a->qp, &ca);
    verbs_qp_caps(b->qp, &cb);
    EXPECT_EQ(ca.max_inline, 300u);
    EXPECT_EQ(cb.max_inline, 300u);
    // 512 asked, then the bisection of [0, 511]: 256 taken, 384 and 320 refused, 288 and 296
    // taken, 304 refused, 300 taken, 302 and 301 refused. The second queue pair asks 300.
    EXPECT_EQ(verbs_faults.qp_refused, 6u);
    EXPECT_EQ(logged_with("queue pairs take at most 300 inline bytes (512 asked)"), 1u);
    EXPECT_EQ(a->inline_max, 300 - int32_t(sizeof(core_wire_hdr_t)));
    ibmsg_tag_status_t st{};
    std::vector<uint8_t> small(276, 0x5a), got(276);
    ASSERT_EQ(ibmsg_tag_send(a, small.data(), small.size(), 3), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_recv(ctx, b, got.data(), got.size(), 3, IBMSG_TAG_MASK_EXACT, &st),
              IBMSG_OK);
    EXPECT_EQ(got, small);
}

// Without windows each send registers exactly its bytes for one transfer: the same bounds,
// released after the FIN (destinations stay cached).
TEST_F(WindowTest, WithoutWindowsARegistrationPerTransferOfExactlyTheMessage)
{
    open("0");
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    for (uint64_t tag = 1; tag <= 3; tag++) {
        send_outstanding(tag);
        EXPECT_EQ(sreq->rndv.rkey, sreq->rndv.reg->rkey);
        EXPECT_EQ(sreq->rndv.reg->start, uintptr_t(msg));
        EXPECT_EQ(sreq->rndv.reg->end, uintptr_t(msg) + len);
        receive(tag);
    }
    EXPECT_EQ(cnt(CNT_CORE_RNDV_WINDOWS_BOUND), 0u);
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_MISSES), 3u + 1u) << "3 sources, 1 cached destination";
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_HITS), 2u);
    send_outstanding(4);
    EXPECT_EQ(read(uintptr_t(msg), len + 1, sreq->rndv.rkey), IBMSG_ERR_ACCESS);
}

// An RTS that passes every wire check but carries a key that opens nothing: the READ is refused
// by the sender's device, the receive fails with the endpoint, and nothing is delivered.
TEST_F(WindowTest, RtsWithABadKeyFailsTheReceive)
{
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    const core_wire_rndv_t rts{uintptr_t(msg), len, 0x00bad100, a->rndv.tx_next_id};
    progress_until([&] { return core_ep_can_send(a); });
    ASSERT_EQ(
        core_ep_post_hdr(a, CORE_WIRE_RTS, CORE_WIRE_FLAG_WINDOW, 5, &rts, sizeof(rts), nullptr),
        IBMSG_OK);
    memset(in.data(), 0, in.size());
    ibmsg_tag_status_t st{};
    EXPECT_EQ(ibmsg_tag_recv(ctx, b, in.data(), len, 5, IBMSG_TAG_MASK_EXACT, &st),
              IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(ibmsg_ep_status(b), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_MSGS_RECVD), 1u) << "the RTS itself was well-formed";
    EXPECT_EQ(cnt(CNT_CORE_RNDV_BYTES_RECVD), 0u);
    EXPECT_GE(cnt(CNT_VERBS_WC_ERRORS), 1u);
    EXPECT_EQ(std::count(in.begin(), in.end(), 0), ptrdiff_t(in.size())) << "nothing delivered";
}

// A device that advertises type 2B windows while its provider cannot allocate one (bnxt_re and
// hns: ibv_alloc_mw fails with EOPNOTSUPP): the probe at context creation finds out (logged at
// info), and every rendezvous goes with a registration of exactly its bytes (counted).
TEST_F(WindowTest, WindowsThatCannotBeAllocatedAtCreationFallBack)
{
    CORE_TEST_SKIP_WITHOUT_DEVICE();
    if (!device_has_windows()) {
        GTEST_SKIP() << "the device has no type 2B memory windows to lose";
    }
    need_windows = false;
    verbs_faults.mw_alloc_errno = EOPNOTSUPP;
    capture_log();
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    EXPECT_EQ(verbs_dev_info(ctx->dev)->mw_type2, 0);
    EXPECT_EQ(a->rndv.windows, 0);
    EXPECT_EQ(logged_with("ibv_alloc_mw fails (operation not supported)"), 1u);
    for (uint64_t tag = 1; tag <= 3; tag++) {
        send_outstanding(tag);
        EXPECT_EQ(sreq->rndv.win, nullptr);
        EXPECT_EQ(sreq->rndv.rkey, sreq->rndv.reg->rkey);
        EXPECT_EQ(sreq->rndv.reg->start, uintptr_t(msg));
        EXPECT_EQ(sreq->rndv.reg->end, uintptr_t(msg) + len);
        receive(tag);
    }
    EXPECT_EQ(cnt(CNT_CORE_RNDV_WINDOWS_BOUND), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REGISTERED_SENDS), 3u);
    EXPECT_EQ(ibmsg_ep_status(a), IBMSG_OK);
}

// The same found only at run time (the first window an endpoint allocates fails with
// EOPNOTSUPP): that send goes with a registration, the endpoint stops trying windows (one
// warning), the other endpoint is unaffected until it finds out the same, and nothing fails.
TEST_F(WindowTest, WindowsThatCannotBeAllocatedAtRunTimeFallBack)
{
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    capture_log();
    verbs_faults.mw_alloc_errno = EOPNOTSUPP;
    for (uint64_t tag = 1; tag <= 2; tag++) {
        send_outstanding(tag);
        EXPECT_EQ(sreq->rndv.win, nullptr);
        EXPECT_EQ(sreq->rndv.rkey, sreq->rndv.reg->rkey);
        receive(tag);
    }
    EXPECT_EQ(a->rndv.windows, 0);
    EXPECT_EQ(b->rndv.windows, 1);
    EXPECT_EQ(logged_with("memory windows not supported after all"), 1u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REGISTERED_SENDS), 2u);
    // b's first window works once the device does: a window for b, still none for a.
    verbs_faults.mw_alloc_errno = 0;
    ibmsg_request_t s2, r2;
    ASSERT_EQ(ibmsg_tag_irecv(ctx, a, in.data(), len, 9, IBMSG_TAG_MASK_EXACT, &r2), IBMSG_OK);
    ASSERT_EQ(ibmsg_tag_isend(b, msg, len, 9, &s2), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&r2, nullptr), IBMSG_OK);
    ASSERT_EQ(ibmsg_request_wait(&s2, nullptr), IBMSG_OK);
    ASSERT_EQ(memcmp(in.data(), msg, len), 0);
    send_outstanding(3);
    EXPECT_EQ(sreq->rndv.win, nullptr);
    receive(3);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_WINDOWS_BOUND), 1u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REGISTERED_SENDS), 3u);
    EXPECT_EQ(ibmsg_ep_status(a), IBMSG_OK);
    EXPECT_EQ(ibmsg_ep_status(b), IBMSG_OK);
    // The three fallback registrations are gone; what stays is cached (a window's source
    // registration, the destinations).
    expect_only_cached_registrations("after the fallback transfers");
    EXPECT_EQ(cnt(CNT_VERBS_REG_RELEASES), 3u);
}

// Without windows, each send's registration of exactly its bytes is released when its transfer
// completes: with one transfer outstanding at a time, and with several at once. Only the
// destination stays registered (cached): made minus released is exactly that.
TEST_F(WindowTest, PerTransferRegistrationsAreReleasedAtCompletion)
{
    open("0");
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    const uint64_t n = 5;
    for (uint64_t tag = 1; tag <= n; tag++) {
        send_outstanding(tag);
        EXPECT_EQ(live(), cached() + 1) << "transfer " << tag << ": its source, uncached";
        receive(tag);
        expect_only_cached_registrations("after a transfer completed");
    }
    EXPECT_EQ(cached(), 1u) << "the destination";
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_MISSES), n + 1);
    EXPECT_EQ(cnt(CNT_VERBS_REG_RELEASES), n);

    // Three at once, from three parts of one buffer: three registrations, then none.
    const size_t k = 3, part = limit + 1000;
    std::vector<uint8_t> three(k * part);
    for (size_t i = 0; i < three.size(); i++) {
        three[i] = uint8_t(i * 13 + 5);
    }
    ASSERT_LE(part, in.size());
    ibmsg_request_t s[k];
    for (size_t i = 0; i < k; i++) {
        ASSERT_EQ(ibmsg_tag_isend(a, three.data() + i * part, part, 20 + i, &s[i]), IBMSG_OK);
    }
    EXPECT_EQ(live(), cached() + k);
    for (size_t i = 0; i < k; i++) {
        ASSERT_EQ(ibmsg_tag_recv(ctx, b, in.data(), part, 20 + i, IBMSG_TAG_MASK_EXACT, nullptr),
                  IBMSG_OK);
        ASSERT_EQ(ibmsg_request_wait(&s[i], nullptr), IBMSG_OK);
        ASSERT_EQ(memcmp(in.data(), three.data() + i * part, part), 0);
    }
    expect_only_cached_registrations("after three transfers at once");
    EXPECT_EQ(cnt(CNT_VERBS_REG_RELEASES), n + k);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REGISTERED_SENDS), n + k);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_WINDOWS_BOUND), 0u);
}

// Without windows, cancelled transfers release their registrations: a send still queued (behind
// exhausted credits) was never registered and cancels without one; the sends whose RTS went out
// are cancelled by destroying their endpoint, and each one's registration goes with it.
TEST_F(WindowTest, PerTransferRegistrationsAreReleasedWhenCancelled)
{
    open("0");
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    const size_t k = 3, part = limit + 1000;
    std::vector<uint8_t> three(k * part, 0x3c);
    const uint64_t unexpected = cnt(CNT_CORE_UNEXPECTED_RECVQ);
    ibmsg_request_t s[k];
    for (size_t i = 0; i < k; i++) {
        ASSERT_EQ(ibmsg_tag_isend(a, three.data() + i * part, part, 20 + i, &s[i]), IBMSG_OK);
    }
    progress_until([&] { return cnt(CNT_CORE_UNEXPECTED_RECVQ) == unexpected + k; });
    EXPECT_EQ(live(), k);

    // Exhaust a's credits with eager messages nobody receives, then queue one more rendezvous.
    std::vector<ibmsg_request_t> eager;
    uint64_t word = 7;
    for (int i = 0; i < 100000; i++) {
        ibmsg_request_t r;
        ASSERT_EQ(ibmsg_tag_isend(a, &word, sizeof(word), 99, &r), IBMSG_OK);
        eager.push_back(r);
        if (r->state == CORE_REQ_POSTED) {
            break;
        }
    }
    ASSERT_EQ(eager.back()->state, CORE_REQ_POSTED) << "credits never ran out";
    const uint64_t made = cnt(CNT_VERBS_REG_CACHE_MISSES);
    ibmsg_request_t queued;
    ASSERT_EQ(ibmsg_tag_isend(a, msg, len, 30, &queued), IBMSG_OK);
    ASSERT_EQ(queued->state, CORE_REQ_POSTED);
    EXPECT_EQ(queued->rndv.reg, nullptr) << "registered only when its RTS can go";
    ASSERT_EQ(ibmsg_request_cancel(queued), IBMSG_OK);
    EXPECT_EQ(ibmsg_request_wait(&queued, nullptr), IBMSG_ERR_CANCELED);
    EXPECT_EQ(cnt(CNT_VERBS_REG_CACHE_MISSES), made);
    EXPECT_EQ(live(), k);

    // The sends whose RTS went: cancelled with their endpoint, registrations released.
    ASSERT_EQ(ibmsg_ep_destroy(a), IBMSG_OK);
    for (size_t i = 0; i < k; i++) {
        EXPECT_EQ(ibmsg_request_wait(&s[i], nullptr), IBMSG_ERR_CANCELED) << i;
    }
    for (size_t i = 0; i < eager.size(); i++) { // all sent but the one left queued
        EXPECT_EQ(ibmsg_request_wait(&eager[i], nullptr),
                  i + 1 < eager.size() ? IBMSG_OK : IBMSG_ERR_CANCELED)
            << i;
    }
    ASSERT_EQ(ibmsg_ep_destroy(b), IBMSG_OK);
    a = b = IBMSG_EP_NULL;
    expect_only_cached_registrations("after the cancellations");
    EXPECT_EQ(live(), 0u);
    EXPECT_EQ(cnt(CNT_VERBS_REG_RELEASES), k);
}

// Without windows, a peer killed while it holds the RTS of three sends (their FINs never come):
// the endpoint fails, the sends fail with it, and each one's registration is released.
TEST(WindowProcesses, PerTransferRegistrationsAreReleasedWhenThePeerDies)
{
    // Short transport timeouts (4.2 ms ACK timeout, one retry) so the death shows quickly.
    const core_test::InfoFn set = [](ibmsg_info_t info) {
        ibmsg_info_set_string(info, "core_rndv_windows", "0");
        ibmsg_info_set_int(info, "verbs_timeout", 10);
        ibmsg_info_set_int(info, "verbs_retry_cnt", 1);
    };
    ibmsg_context_t ctx;
    int ret = core_test::open_context(&ctx, getenv("IBMSG_VM_DEV_A"), set);
    if (ret == IBMSG_ERR_NO_DEVICE) {
        IBMSG_TEST_MISSING(core_test::kSkip);
    }
    ASSERT_EQ(ret, IBMSG_OK);
    ibmsg_oob_t listener, conn;
    uint16_t port = 0;
    ASSERT_EQ(ibmsg_oob_listen("127.0.0.1", 0, &listener), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_port(listener, &port), IBMSG_OK);
    fflush(nullptr);
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) { // the peer: connects, then holds every RTS unanswered until killed
        ibmsg_context_t cctx;
        ibmsg_ep_t cep;
        ibmsg_oob_t cconn;
        ibmsg_oob_close(listener);
        if (core_test::open_context(&cctx, getenv("IBMSG_VM_DEV_B"), set) != IBMSG_OK ||
            core_test::join_parent(cctx, port, &cep, &cconn) != IBMSG_OK) {
            _exit(10);
        }
        for (int i = 0; i < 600; i++) {
            ibmsg_context_progress(cctx, nullptr);
            usleep(100000);
        }
        _exit(11); // never reached: killed
    }
    ibmsg_ep_t ep;
    ASSERT_EQ(ibmsg_ep_create(ctx, &ep), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_accept(listener, 20000, &conn), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_ep_connect(conn, ep, 20000), IBMSG_OK);
    ibmsg_context_attr_t attr;
    ASSERT_EQ(ibmsg_context_query(ctx, &attr), IBMSG_OK);
    auto cnt = [&](cnt_id_t id) { return cnt_read(ctx->cnt, id, CNT_READ_VALUE); };
    auto live = [&] { return cnt(CNT_VERBS_REG_CACHE_MISSES) - cnt(CNT_VERBS_REG_RELEASES); };

    const size_t k = 3, part = attr.eager_limit + 4096;
    std::vector<uint8_t> out(k * part, 0x5a);
    ibmsg_request_t s[k];
    for (size_t i = 0; i < k; i++) {
        ASSERT_EQ(ibmsg_tag_isend(ep, out.data() + i * part, part, 1 + i, &s[i]), IBMSG_OK);
        ASSERT_EQ(s[i]->rndv.active, 1) << "its RTS went";
    }
    EXPECT_EQ(live(), k);
    EXPECT_EQ(cnt(CNT_VERBS_REG_BYTES), k * part);

    ASSERT_EQ(kill(child, SIGKILL), 0);
    int status = 0;
    ASSERT_EQ(waitpid(child, &status, 0), child);
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;
    // A message the dead peer cannot acknowledge: the transport's retries run out.
    uint64_t word = 1;
    ibmsg_request_t probe;
    ASSERT_EQ(ibmsg_tag_isend(ep, &word, sizeof(word), 9, &probe), IBMSG_OK);
    for (size_t i = 0; i < k; i++) {
        EXPECT_EQ(ibmsg_request_wait(&s[i], nullptr), IBMSG_ERR_PEER_FAILED) << i;
    }
    const int pret = ibmsg_request_wait(&probe, nullptr);
    EXPECT_TRUE(pret == IBMSG_OK || pret == IBMSG_ERR_PEER_FAILED) << ibmsg_status_string(pret);
    EXPECT_EQ(ibmsg_ep_status(ep), IBMSG_ERR_PEER_FAILED);
    EXPECT_EQ(live(), 0u) << "a registration outlived its failed transfer";
    EXPECT_EQ(cnt(CNT_VERBS_REG_RELEASES), k);
    EXPECT_EQ(cnt(CNT_VERBS_REG_BYTES), 0u);
    EXPECT_EQ(cnt(CNT_CORE_RNDV_REGISTERED_SENDS), k);
    ibmsg_oob_close(conn);
    ibmsg_oob_close(listener);
    EXPECT_EQ(ibmsg_ep_destroy(ep), IBMSG_OK);
    EXPECT_EQ(ibmsg_context_destroy(ctx), IBMSG_OK);
}

// The registration cache's share of RLIMIT_MEMLOCK: without a limit (root) its own maximum;
// under one (core_unprivileged: nobody, 64 MiB) the limit less what the context pins itself:
// with the defaults 2048 receive buffers of the shared receive queue at its largest and 64 send
// buffers of 8 KiB, and its two CQs' 64-byte entries; and an eighth of the limit when the
// context's own needs leave less (core_srq_max 16384: 128 MiB of receive buffers).
TEST_F(WindowTest, RegistrationCacheKeepsTheLockedMemoryLimitLessWhatTheContextPins)
{
    capture_log();
    need_windows = false;
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    const uint64_t limit = verbs_memlock_limit();
    const uint64_t cap = verbs_rcache_max_bytes(verbs_mr_cache_rcache(ctx->rcache));
    if (limit == UINT64_MAX) {
        EXPECT_EQ(cap, uint64_t(1) << 30) << "verbs_reg_cache_max_bytes";
        EXPECT_EQ(logged_with("registration cache: at most"), 0u);
        return;
    }
    ASSERT_NE(ctx->srq, nullptr) << "the defaults take a shared receive queue";
    const uint64_t cqes = uint64_t(verbs_cq_size(ctx->scq)) + uint64_t(verbs_cq_size(ctx->rcq));
    const uint64_t need = (2048 + 64) * 8192 + cqes * 64;
    EXPECT_EQ(core_context_pinned(ctx, 1), need);
    EXPECT_EQ(cap, limit - need);
    EXPECT_GT(cap, limit / 2) << "more than the half it used to keep";
    const std::string line = "registration cache: at most " + std::to_string(cap / 1024) +
                             " KiB: RLIMIT_MEMLOCK (ulimit -l) " + std::to_string(limit / 1024) +
                             " KiB less " + std::to_string(need / 1024) + " KiB";
    EXPECT_EQ(logged_with(line.c_str()), 1u) << line;
    close();

    hints = [](ibmsg_info_t info) { ibmsg_info_set_string(info, "core_srq_max", "16384"); };
    open();
    if (IsSkipped() || HasFatalFailure()) {
        return;
    }
    ASSERT_GT(core_context_pinned(ctx, 1), limit);
    EXPECT_EQ(verbs_rcache_max_bytes(verbs_mr_cache_rcache(ctx->rcache)), limit / 8) << "the floor";
    send_outstanding(1);
    receive(1);
}
