// The words for what the window policy did: a -v (debug1) line per change
// of a channel's window that window_log_filter keeps, and one VERBOSE
// summary line per channel when it is released. Pure formatting (and the
// filter's rule), so the lines regress tests read are unit-tested.
#pragma once

#include "channel/connection.hpp"

#include <cstdint>
#include <string>
#include <unordered_map>

namespace longhaul {

// "channel 0: window 2.0 MiB -> 8.0 MiB: window-limited, 1.9 MiB per 100.4 ms round trip"
std::string describe_window_change(channel_id id, const window_change& c, std::uint64_t budget_limit);

// Which window changes get their -v line. On a short path the policy moves
// a window every round trip, a fraction of a millisecond: Longhaul's ssh
// with eight bulk -L channels to Debian's sshd printed 924 lines in 0.35 s,
// most of them changes below the line's own 0.1 MiB resolution. A channel's
// change is printed when it moves the window by an eighth or more from what
// its last printed line said, or a second after that line.
class window_log_filter {
public:
    bool keep(channel_id id, const window_change& c, std::uint64_t now_us);
    // The channel was released (its number may be given to a new one).
    void forget(channel_id id) { last_.erase(id); }

    static constexpr std::uint64_t quiet_us = 1'000'000;

private:
    struct printed {
        std::uint32_t to = 0;
        std::uint64_t at_us = 0;
    };
    std::unordered_map<channel_id, printed> last_;
};

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
