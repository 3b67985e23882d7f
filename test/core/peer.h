// What the two-process tests share: a forked peer, elapsed time, and failure.h's detection bound.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>

#include "ibmsg/ibmsg.h"

namespace core_test
{

// Forks the peer of a two-process test: *listener listens on 127.0.0.1 (a free port); the child
// closes it and runs peer(port), which must not return. The parent gets the child's pid (-1
// when something failed, reported) and keeps *listener for ibmsg_oob_accept.
template <typename Peer> inline pid_t fork_peer(ibmsg_oob_t *listener, Peer peer)
{
    uint16_t port = 0;
    if (ibmsg_oob_listen("127.0.0.1", 0, listener) != IBMSG_OK ||
        ibmsg_oob_port(*listener, &port) != IBMSG_OK) {
        ADD_FAILURE() << "no TCP listener for the peer";
        return -1;
    }
    fflush(nullptr);
    pid_t pid = fork();
    if (pid == 0) {
        ibmsg_oob_close(*listener);
        peer(port);
        _exit(99);
    }
    EXPECT_GE(pid, 0) << "fork";
    return pid;
}

inline double since_ms(std::chrono::steady_clock::time_point t0)
{
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The margin over failure.h's bounds in the emulated guest (TCG on 2 shared cores), where a
// process can lose its CPU for a while: in full runs of ./test/run a send to a killed peer failed
// up to 117 ms after the formula (verbs_timeout 12, one retry: 150.9 ms against 33.6), and a
// keepalive detection came within 4 ms of a 100 ms margin. Small beside what the bounds
// separate (a keepalive of 300 ms; a budget of 470 ms at the defaults).
constexpr double kGuestMarginMs = 250;

// failure.h's bound for a dead peer to show: core_keepalive_ms * 5/4 + (verbs_retry_cnt + 1)
// ACK timeouts of 4.096 us * 2^verbs_timeout, plus margin_ms (the emulated guest's scheduling).
inline double failure_bound_ms(int keepalive_ms, int retry, int timeout, double margin_ms)
{
    return keepalive_ms * 1.25 + (retry + 1) * 4.096e-3 * (1 << timeout) + margin_ms;
}

} // namespace core_test
