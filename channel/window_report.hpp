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

// 2097152 -> "2.0 MiB"
std::string mib(std::uint64_t bytes);

} // namespace longhaul
