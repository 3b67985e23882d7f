// Device, port and GID selection on the guest's Soft-RoCE devices (label rdma): what is chosen
// with no hint, cross-checked against sysfs; a device chosen by name, by network interface; an
// unknown name or interface. With --two-hosts (rxe0, rxe1) the named ones are the second.
#include <gtest/gtest.h>

#include <infiniband/verbs.h>

#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <ibmsg/status.h>

#include "guest.h"
#include "log_capture.h"
#include "verbs/device.h"

namespace
{

std::vector<std::string> device_names()
{
    std::vector<std::string> names;
    int num = 0;
    ibv_device **list = ibv_get_device_list(&num);
    for (int i = 0; list != nullptr && i < num; i++) {
        names.emplace_back(ibv_get_device_name(list[i]));
    }
    if (list != nullptr) {
        ibv_free_device_list(list);
    }
    return names;
}

std::string sysfs(const std::string &dev, unsigned port, const std::string &what)
{
    std::ifstream f("/sys/class/infiniband/" + dev + "/ports/" + std::to_string(port) + "/" + what);
    std::string line;
    std::getline(f, line);
    return line;
}

// A GID as sysfs prints it: eight groups of four hex digits.
std::string gid_text(const uint8_t *g)
{
    char buf[48];
    std::snprintf(buf, sizeof(buf),
                  "%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x:%02x%02x", g[0],
                  g[1], g[2], g[3], g[4], g[5], g[6], g[7], g[8], g[9], g[10], g[11], g[12], g[13],
                  g[14], g[15]);
    return buf;
}

bool roce_v2_ipv4(const std::string &dev, unsigned port, int index)
{
    std::string type = sysfs(dev, port, "gid_attrs/types/" + std::to_string(index));
    std::string gid = sysfs(dev, port, "gids/" + std::to_string(index));
    return type == "RoCE v2" && gid.rfind("0000:0000:0000:0000:0000:ffff:", 0) == 0;
}

// The device the named cases ask for: the second host's (rxe1, listed second), else the last.
std::string named_device(const std::vector<std::string> &names)
{
    const char *b = getenv("IBMSG_VM_DEV_B");
    return b != nullptr ? b : names.back();
}

struct Opened {
    verbs_dev_t *dev = nullptr;
    ~Opened()
    {
        verbs_dev_close(dev);
    }
};

} // namespace

// No hint: the first listed device with an ACTIVE port, its first RoCE v2 IPv4-mapped GID.
TEST(DeviceSelection, DefaultIsTheFirstUsablePortAndItsRoceV2Gid)
{
    std::vector<std::string> names = device_names();
    if (names.empty()) {
        IBMSG_TEST_MISSING("no RDMA device");
    }
    verbs_dev_params_t p{nullptr, 0, -1, nullptr, 1, 1};
    Opened o;
    ASSERT_EQ(verbs_dev_open(&p, &o.dev), IBMSG_OK);
    const verbs_dev_info_t *info = verbs_dev_info(o.dev);
    std::string expect;
    for (const auto &n : names) {
        if (sysfs(n, 1, "state") == "4: ACTIVE") {
            expect = n;
            break;
        }
    }
    EXPECT_EQ(info->name, expect);
    EXPECT_EQ(info->port, 1u);
    EXPECT_EQ(sysfs(info->name, 1, "link_layer"), "Ethernet");
    ASSERT_GE(info->gid_index, 0);
    EXPECT_TRUE(roce_v2_ipv4(info->name, 1, info->gid_index));
    for (int i = 0; i < info->gid_index; i++) {
        EXPECT_FALSE(roce_v2_ipv4(info->name, 1, i)) << "index " << i << " comes first";
    }
    EXPECT_EQ(gid_text(info->gid), sysfs(info->name, 1, "gids/" + std::to_string(info->gid_index)));
}

// By name: the named device, though another is listed first (rxe1 with --two-hosts).
TEST(DeviceSelection, ANamedDeviceIsTheOneOpened)
{
    std::vector<std::string> names = device_names();
    if (names.empty()) {
        IBMSG_TEST_MISSING("no RDMA device");
    }
    std::string name = named_device(names);
    verbs_dev_params_t p{name.c_str(), 0, -1, nullptr, 1, 1};
    Opened o;
    ASSERT_EQ(verbs_dev_open(&p, &o.dev), IBMSG_OK);
    const verbs_dev_info_t *info = verbs_dev_info(o.dev);
    EXPECT_EQ(info->name, name);
    ASSERT_GE(info->gid_index, 0);
    EXPECT_TRUE(roce_v2_ipv4(name, 1, info->gid_index));
}

TEST(DeviceSelection, AnUnknownNameIsNoDeviceAndNamesWhatWasFound)
{
    std::vector<std::string> names = device_names();
    if (names.empty()) {
        IBMSG_TEST_MISSING("no RDMA device");
    }
    std::string found = "no RDMA device named no_such_dev9; found:";
    for (const auto &n : names) {
        found += " " + n;
    }
    verbs_dev_params_t p{"no_such_dev9", 0, -1, nullptr, 1, 1};
    verbs_dev_t *dev = nullptr;
    LogCapture log;
    EXPECT_EQ(verbs_dev_open(&p, &dev), IBMSG_ERR_NO_DEVICE);
    EXPECT_EQ(dev, nullptr);
    ASSERT_FALSE(log.lines.empty());
    EXPECT_EQ(log.lines.back(), found);
}

// By network interface (verbs_netdev): the device, port and GID of that interface.
TEST(DeviceSelection, ANetdevChoosesItsDeviceAndGid)
{
    std::vector<std::string> names = device_names();
    if (names.empty()) {
        IBMSG_TEST_MISSING("no RDMA device");
    }
    std::string name = named_device(names);
    int index = 0;
    while (index < 256 && !roce_v2_ipv4(name, 1, index)) {
        index++;
    }
    ASSERT_LT(index, 256) << name << " has no RoCE v2 IPv4-mapped GID";
    std::string netdev = sysfs(name, 1, "gid_attrs/ndevs/" + std::to_string(index));
    ASSERT_FALSE(netdev.empty());
    verbs_dev_params_t p{nullptr, 0, -1, netdev.c_str(), 1, 1};
    Opened o;
    ASSERT_EQ(verbs_dev_open(&p, &o.dev), IBMSG_OK);
    const verbs_dev_info_t *info = verbs_dev_info(o.dev);
    EXPECT_EQ(info->name, name) << "netdev " << netdev;
    EXPECT_EQ(info->gid_index, index);
}

TEST(DeviceSelection, AnUnknownNetdevIsNoDevice)
{
    verbs_dev_params_t p{nullptr, 0, -1, "no_such_if9", 1, 1};
    verbs_dev_t *dev = nullptr;
    LogCapture log;
    EXPECT_EQ(verbs_dev_open(&p, &dev), IBMSG_ERR_NO_DEVICE);
    EXPECT_EQ(dev, nullptr);
    ASSERT_EQ(log.lines.size(), 1u);
    EXPECT_EQ(log.lines[0], "no network interface named no_such_if9 (verbs_netdev)");
}
