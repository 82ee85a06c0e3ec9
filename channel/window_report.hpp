// The words for what the window policy did: one -v (debug1) line per change
// of a channel's window, and one VERBOSE summary line per channel when it is
// released. Pure formatting, so the lines regress tests read are unit-tested.
#pragma once

#include "channel/connection.hpp"

#include <string>

namespace longhaul {

// "channel 0: window 2.0 MiB -> 8.0 MiB: window-limited, 1.9 MiB per 100.4 ms round trip"
std::string describe_window_change(channel_id id, const window_change& c, std::uint64_t budget_limit);

// "channel 0 (session) summary: in 536870912 bytes, out 0 bytes, 9.31 s; window mean 18.2 MiB,
//  peak 32.0 MiB; active 8.90 s: window-limited 0.00 s (0.0%), network-limited 8.90 s (100.0%),
//  sink-limited 0.00 s (0.0%); send blocked by peer window 0.00 s; rtt 101.2 ms (tcp 101.2 ms,
//  ssh 103.5 ms)"
std::string describe_channel_summary(const channel_summary& s);

// One line of the metrics file (ssh_config Metrics/MetricsPath/MetricsInterval):
// space-separated columns, named by metrics_header().
struct channel_metrics {
    double time_s = 0;  // seconds since the Unix epoch
    channel_id id = 0;
    std::uint64_t bytes_in = 0, bytes_out = 0;
    std::uint32_t window = 0, credit = 0, backlog = 0; // our receive window
    std::uint64_t peer_window = 0;                     // what we may still send
    std::uint64_t rtt_us = 0, tcp_rtt_us = 0, ssh_rtt_us = 0;
    window_stats stats;
    std::uint64_t send_blocked_us = 0;
    std::uint64_t tcp_cwnd_bytes = 0, tcp_retransmits = 0, tcp_rcv_space = 0; // 0 without TCP_INFO
};
std::string metrics_header();
std::string metrics_line(const channel_metrics& m);

// 2097152 -> "2.0 MiB"
std::string mib(std::uint64_t bytes);

} // namespace longhaul
