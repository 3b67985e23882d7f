// The public API without a device: argument checks, hints, "no device" errors, the TCP helper.
#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "core/config.h"
#include "ibmsg/ibmsg.h"
#include "ibmsg/tool.h"
#include "log_capture.h"
#include "util/log.h"

TEST(CoreApi, NullArguments)
{
    int dummy = 0;
    ibmsg_request_t req = IBMSG_REQUEST_NULL;
    size_t len = 64;
    char buf[64];
    EXPECT_EQ(ibmsg_context_create(IBMSG_INFO_NULL, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_context_destroy(nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_context_progress(nullptr, &dummy), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_context_query(nullptr, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_context_get_fd(nullptr, &dummy), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_context_arm(nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_context_wait(nullptr, 0), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_ep_create(nullptr, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_ep_address(nullptr, buf, &len), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_ep_connect(nullptr, buf, len), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_ep_destroy(nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_isend(nullptr, buf, 1, 0, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_irecv(nullptr, nullptr, buf, 1, 0, 0, &req), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_send(nullptr, buf, 1, 0), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_tag_recv(nullptr, nullptr, buf, 1, 0, 0, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_request_test(nullptr, &dummy, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_request_test(&req, &dummy, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_request_wait(nullptr, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_request_wait(&req, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_request_cancel(nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_oob_listen(nullptr, 0, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_oob_connect(nullptr, 1, 0, nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_oob_close(nullptr), IBMSG_ERR_INVALID);
    EXPECT_EQ(ibmsg_oob_ep_connect(nullptr, nullptr, 0), IBMSG_ERR_INVALID);
}

TEST(CoreApi, BadHintsAreRejectedBeforeTheDevice)
{
    ibmsg_info_t info;
    ibmsg_context_t ctx = IBMSG_CONTEXT_NULL;
    ASSERT_EQ(ibmsg_info_create(&info), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_int(info, "core_credits", 2), IBMSG_OK);
    {
        LogCapture log;
        EXPECT_EQ(ibmsg_context_create(info, &ctx), IBMSG_ERR_OUT_OF_RANGE);
        EXPECT_TRUE(log.contains("core_credits = 2: out of range [4, 4096]"));
    }
    ASSERT_EQ(ibmsg_info_set_double(info, "core_credits", 64.0), IBMSG_OK);
    {
        LogCapture log;
        EXPECT_EQ(ibmsg_context_create(info, &ctx), IBMSG_ERR_WRONG_TYPE);
    }
    ASSERT_EQ(ibmsg_info_set_string(info, "core_credits", "64x"), IBMSG_OK);
    {
        LogCapture log;
        EXPECT_EQ(ibmsg_context_create(info, &ctx), IBMSG_ERR_WRONG_TYPE);
    }
    ASSERT_EQ(ibmsg_info_set_string(info, "core_credits", "64"), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_int(info, "device", 3), IBMSG_OK);
    {
        LogCapture log;
        EXPECT_EQ(ibmsg_context_create(info, &ctx), IBMSG_ERR_WRONG_TYPE);
    }
    EXPECT_EQ(ctx, IBMSG_CONTEXT_NULL) << "output set only on success";
    ibmsg_info_free(&info);
}

TEST(CoreApi, NoDeviceNamesWhatWasFound)
{
    ibmsg_info_t info;
    ibmsg_context_t ctx = IBMSG_CONTEXT_NULL;
    ASSERT_EQ(ibmsg_info_create(&info), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_string(info, "device", "no_such_dev9"), IBMSG_OK);
    LogCapture log;
    EXPECT_EQ(ibmsg_context_create(info, &ctx), IBMSG_ERR_NO_DEVICE);
    // Without devices the message says so; with some it lists them.
    EXPECT_TRUE(log.contains("found 0 devices") ||
                log.contains("no RDMA device named no_such_dev9"))
        << (log.lines.empty() ? "" : log.lines.back());
    ibmsg_info_free(&info);
}

TEST(CoreOob, FramesRoundTrip)
{
    ibmsg_oob_t listener, server, client;
    uint16_t port = 0;
    ASSERT_EQ(ibmsg_oob_listen("127.0.0.1", 0, &listener), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_port(listener, &port), IBMSG_OK);
    ASSERT_NE(port, 0);
    ASSERT_EQ(ibmsg_oob_connect("127.0.0.1", port, 5000, &client), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_accept(listener, 5000, &server), IBMSG_OK);

    std::vector<uint8_t> big(65536);
    for (size_t i = 0; i < big.size(); i++) {
        big[i] = uint8_t(i * 7);
    }
    ASSERT_EQ(ibmsg_oob_send(client, big.data(), big.size(), 5000), IBMSG_OK);
    std::vector<uint8_t> in(65536);
    size_t len = in.size();
    ASSERT_EQ(ibmsg_oob_recv(server, in.data(), &len, 5000), IBMSG_OK);
    EXPECT_EQ(len, big.size());
    EXPECT_EQ(in, big);

    ASSERT_EQ(ibmsg_oob_send(server, nullptr, 0, 5000), IBMSG_OK);
    len = 4;
    ASSERT_EQ(ibmsg_oob_recv(client, in.data(), &len, 5000), IBMSG_OK);
    EXPECT_EQ(len, 0u);

    EXPECT_EQ(ibmsg_oob_send(client, big.data(), 65537, 5000), IBMSG_ERR_INVALID);
    ASSERT_EQ(ibmsg_oob_send(client, big.data(), 100, 5000), IBMSG_OK);
    len = 99;
    EXPECT_EQ(ibmsg_oob_recv(server, in.data(), &len, 5000), IBMSG_ERR_PROTOCOL);
    EXPECT_EQ(len, 99u);

    len = 8;
    EXPECT_EQ(ibmsg_oob_recv(client, in.data(), &len, 100), IBMSG_ERR_TIMEOUT);
    ibmsg_oob_close(server);
    EXPECT_EQ(ibmsg_oob_recv(client, in.data(), &len, 5000), IBMSG_ERR_PEER_FAILED);
    ibmsg_oob_close(client);
    ibmsg_oob_close(listener);
}

TEST(CoreOob, PartialWritesAreReassembled)
{
    ibmsg_oob_t listener, server;
    uint16_t port = 0;
    ASSERT_EQ(ibmsg_oob_listen("127.0.0.1", 0, &listener), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_port(listener, &port), IBMSG_OK);
    std::promise<void> read_done;
    std::thread writer([port, &read_done] {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in sa{};
        sa.sin_family = AF_INET;
        sa.sin_port = htons(port);
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        ASSERT_EQ(connect(fd, reinterpret_cast<sockaddr *>(&sa), sizeof(sa)), 0);
        const uint8_t frame[] = {0, 0, 0, 5, 'h', 'e', 'l', 'l', 'o'};
        for (uint8_t byte : frame) { // one byte at a time
            ASSERT_EQ(write(fd, &byte, 1), 1);
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        const uint8_t huge[] = {0, 1, 0, 1}; // 65537: over the frame limit
        ASSERT_EQ(write(fd, huge, sizeof(huge)), 4);
        read_done.get_future().wait(); // closed only after the server read the bad frame
        close(fd);
    });
    ASSERT_EQ(ibmsg_oob_accept(listener, 5000, &server), IBMSG_OK);
    char buf[1 << 17];
    size_t len = sizeof(buf);
    ASSERT_EQ(ibmsg_oob_recv(server, buf, &len, 5000), IBMSG_OK);
    EXPECT_EQ(std::string(buf, len), "hello");
    len = sizeof(buf);
    {
        LogCapture log;
        EXPECT_EQ(ibmsg_oob_recv(server, buf, &len, 5000), IBMSG_ERR_PROTOCOL);
    }
    read_done.set_value();
    writer.join();
    ibmsg_oob_close(server);
    ibmsg_oob_close(listener);
}

TEST(CoreOob, ConnectTimesOutWithoutListener)
{
    ibmsg_oob_t listener, conn = nullptr;
    uint16_t port = 0;
    // Find a free port, then close it so nobody listens there.
    ASSERT_EQ(ibmsg_oob_listen("127.0.0.1", 0, &listener), IBMSG_OK);
    ASSERT_EQ(ibmsg_oob_port(listener, &port), IBMSG_OK);
    ibmsg_oob_close(listener);
    LogCapture log;
    auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(ibmsg_oob_connect("127.0.0.1", port, 300, &conn), IBMSG_ERR_TIMEOUT);
    auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0)
            .count();
    EXPECT_GE(ms, 250);
    EXPECT_LT(ms, 3000);
    EXPECT_EQ(conn, nullptr);
    EXPECT_EQ(ibmsg_oob_connect("no-such-host.invalid", 1, 300, &conn), IBMSG_ERR_NOT_FOUND);
}

// core_wait_mode: an enumeration cvar (spin, sleep, adaptive), and a hint given by name or value.
TEST(CoreApi, WaitModeIsAnEnumSettingAndAHint)
{
    core_config_init();
    int index = -1, provided = 0;
    ibmsg_t_datatype_t dt;
    ibmsg_t_enum_t en = IBMSG_T_ENUM_NULL;
    ASSERT_EQ(ibmsg_t_init_thread(IBMSG_T_THREAD_SINGLE, &provided), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_cvar_get_index("core_wait_mode", &index), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_cvar_get_info(index, nullptr, nullptr, nullptr, &dt, &en, nullptr, nullptr,
                                    nullptr, nullptr),
              IBMSG_OK);
    EXPECT_EQ(dt, IBMSG_T_INT);
    const char *const names[] = {"spin", "sleep", "adaptive"};
    for (int i = 0; i < 3; i++) {
        int value = -1;
        char name[32];
        int len = sizeof(name);
        ASSERT_EQ(ibmsg_t_enum_get_item(en, i, &value, name, &len), IBMSG_OK);
        EXPECT_EQ(value, i);
        EXPECT_STREQ(name, names[i]);
    }
    ibmsg_t_cvar_handle_t h;
    int count = 0, v = -1;
    ASSERT_EQ(ibmsg_t_cvar_handle_alloc(index, nullptr, &h, &count), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_cvar_read(h, &v), IBMSG_OK);
    EXPECT_EQ(v, getenv("IBMSG_CORE_WAIT_MODE") == nullptr ? CORE_WAIT_SPIN : v) << "spin: default";
    EXPECT_EQ(ibmsg_t_cvar_handle_free(&h), IBMSG_OK);
    ASSERT_EQ(ibmsg_t_cvar_get_index("core_wait_spin_us", &index), IBMSG_OK);

    ibmsg_info_t info;
    core_config_t cfg;
    ASSERT_EQ(ibmsg_info_create(&info), IBMSG_OK);
    const struct {
        const char *s;
        int64_t want;
    } ok[] = {{"sleep", CORE_WAIT_SLEEP}, {"adaptive", CORE_WAIT_ADAPTIVE}, {"0", CORE_WAIT_SPIN}};
    for (const auto &c : ok) {
        ASSERT_EQ(ibmsg_info_set_string(info, "core_wait_mode", c.s), IBMSG_OK);
        ASSERT_EQ(core_config_acquire(info, &cfg), IBMSG_OK) << c.s;
        core_config_release();
        EXPECT_EQ(cfg.wait_mode, c.want) << c.s;
    }
    ASSERT_EQ(ibmsg_info_set_int(info, "core_wait_mode", 2), IBMSG_OK);
    ASSERT_EQ(ibmsg_info_set_int(info, "core_wait_spin_us", 7), IBMSG_OK);
    ASSERT_EQ(core_config_acquire(info, &cfg), IBMSG_OK);
    core_config_release();
    EXPECT_EQ(cfg.wait_mode, CORE_WAIT_ADAPTIVE);
    EXPECT_EQ(cfg.wait_spin_us, 7);
    {
        LogCapture log;
        ASSERT_EQ(ibmsg_info_set_string(info, "core_wait_mode", "nap"), IBMSG_OK);
        EXPECT_EQ(core_config_acquire(info, &cfg), IBMSG_ERR_WRONG_TYPE);
        ASSERT_EQ(ibmsg_info_set_int(info, "core_wait_mode", 3), IBMSG_OK);
        EXPECT_EQ(core_config_acquire(info, &cfg), IBMSG_ERR_OUT_OF_RANGE);
    }
    ibmsg_info_free(&info);
    EXPECT_EQ(ibmsg_t_finalize(), IBMSG_OK);
}
