// The per-channel state of `connection`, shared by its two source files:
// connection.cpp (the peer's messages, the window policy's ticks) and
// connection_send.cpp (what this side opens, sends and closes). Not part of
// the interface: only those two include it.
#pragma once

#include "channel/connection.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>

namespace longhaul {

namespace connection_detail {

inline std::uint64_t micros(steady_time t)
{
    return static_cast<std::uint64_t>(
        std::chrono::duration_cast<std::chrono::microseconds>(t.time_since_epoch()).count());
}

// CHANNEL_DATA: byte, uint32 recipient, uint32 length. EXTENDED adds uint32 type.
inline constexpr std::size_t data_header = 9;
inline constexpr std::size_t extended_header = 13;

} // namespace connection_detail

struct connection::channel {
    channel(const window_config& cfg, window_budget& budget, std::uint32_t initial) : rx(cfg, budget, initial) {}
    channel_info info;
    receive_window rx;
    bool local_open = false;       // we sent OPEN or CONFIRMATION
    bool awaiting_accept = false;  // the peer's open, not yet accepted/rejected
    std::uint32_t replies_pending = 0; // our want_reply requests
    std::uint32_t replies_owed = 0;    // the peer's want_reply requests
    std::uint64_t created_us = 0;
    std::uint64_t window_empty_since_us = 0; // the peer's window ran out (0: it has not)
    std::uint64_t send_blocked_us = 0;
    std::uint64_t peer_opened = 0; // the window the peer opened with
    send_limit send;               // a fixed window on a short path (peer_window_fixed_)
    // Inactivity (idle_expired): the timeout (0: none), when idle_expired()
    // last saw data move (0: not looked at since the channel opened), the
    // byte count it saw then, and whether the channel was reported.
    std::uint64_t idle_timeout_us = 0;
    std::uint64_t idle_since_us = 0;
    std::uint64_t idle_seen_bytes = 0;
    bool idle_reported = false;
};

} // namespace longhaul
