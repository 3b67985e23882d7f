// Collects the library's log messages while it lives, so tests can check what an error says.
#ifndef IBMSG_TEST_LOG_CAPTURE_H
#define IBMSG_TEST_LOG_CAPTURE_H

#include <string>
#include <vector>

#include "util/log.h"

struct LogCapture {
    std::vector<std::string> lines;
    util_log_sink_cb_t old_sink = nullptr;
    void *old_arg = nullptr;
    LogCapture()
    {
        util_log_set_sink(&LogCapture::sink, this, &old_sink, &old_arg);
    }
    ~LogCapture()
    {
        util_log_set_sink(old_sink, old_arg, nullptr, nullptr);
    }
    LogCapture(const LogCapture &) = delete;
    LogCapture &operator=(const LogCapture &) = delete;
    static void sink(util_log_level_t, const char *, int, const char *msg, void *arg)
    {
        static_cast<LogCapture *>(arg)->lines.emplace_back(msg);
    }
    bool contains(const std::string &s) const
    {
        for (const auto &l : lines) {
            if (l.find(s) != std::string::npos) {
                return true;
            }
        }
        return false;
    }
};

#endif
