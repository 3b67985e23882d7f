// A temporary copy of test/counters/nic/fixtures (sysfs format) that tests can write values into.
#ifndef IBMSG_TEST_COUNTERS_NIC_FIXTURE_H
#define IBMSG_TEST_COUNTERS_NIC_FIXTURE_H

#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <unistd.h>

class NicSysfsCopy
{
  public:
    NicSysfsCopy()
    {
        char tmpl[] = "/tmp/ibmsg_nic_XXXXXX";
        const char *dir = mkdtemp(tmpl);
        if (dir == nullptr) {
            std::abort();
        }
        root_ = dir;
        std::filesystem::copy(IBMSG_TEST_NIC_FIXTURES, root_,
                              std::filesystem::copy_options::recursive);
    }
    ~NicSysfsCopy()
    {
        std::error_code ec;
        std::filesystem::remove_all(root_, ec);
    }
    NicSysfsCopy(const NicSysfsCopy &) = delete;
    NicSysfsCopy &operator=(const NicSysfsCopy &) = delete;

    const std::string &root() const
    {
        return root_;
    }
    // Rewrite <root>/<dev>/ports/<port>/<dir>/<name> in place (same inode, as sysfs would show
    // a new value to an open descriptor).
    void set(const std::string &dev, int port, const std::string &dir, const std::string &name,
             uint64_t value) const
    {
        std::ofstream f(path(dev, port, dir, name), std::ios::trunc);
        f << value << "\n";
    }
    void set_text(const std::string &dev, int port, const std::string &dir, const std::string &name,
                  const std::string &text) const
    {
        std::ofstream f(path(dev, port, dir, name), std::ios::trunc);
        f << text;
    }
    std::string path(const std::string &dev, int port, const std::string &dir,
                     const std::string &name) const
    {
        return root_ + "/" + dev + "/ports/" + std::to_string(port) + "/" + dir + "/" + name;
    }

  private:
    std::string root_;
};

#endif
