// The emulator's event loop: reads both TUN devices, releases due packets,
// sleeps until the next delivery, answers signals.
#pragma once

#include "link_direction.hpp"
#include "options.hpp"
#include "tun_device.hpp"

#include <csignal>
#include <cstdint>
#include <cstdio>

namespace wanem {

class relay {
public:
    relay(const options& opts, tun_device client, tun_device server);
    relay(const relay&) = delete;
    relay& operator=(const relay&) = delete;
    ~relay();

    // Runs until SIGINT or SIGTERM; returns the process exit status.
    int run();

    void print_stats(std::FILE* out) const;
    void write_stats_json(const std::string& path) const;

private:
    // Reads up to a batch of frames from one device; false on a fatal error.
    bool drain(const tun_device& from, link_direction& dir);
    void release_due(std::int64_t now_ns);
    bool handle_signal();

    options opts_;
    tun_device client_;
    tun_device server_;
    link_direction c2s_;
    link_direction s2c_;
    int epoll_fd_ = -1;
    int signal_fd_ = -1;
    std::int64_t started_ns_ = 0;
    std::uint64_t wakeups_ = 0;
    bool stop_ = false;
};

std::int64_t monotonic_ns();

// Real-time signals take the link down and bring it up again (wanem-net
// outage): two signals, not a toggle, so a repeated command is harmless.
inline int link_down_signal() { return SIGRTMIN + 1; }
inline int link_up_signal() { return SIGRTMIN + 2; }

} // namespace wanem
