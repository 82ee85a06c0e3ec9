// Command-line configuration of the WAN emulator (see README.md).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace wanem {

// What one direction of the emulated path does to packets. Times are in
// nanoseconds, sizes in bytes; zero means "not limited" where noted.
struct link_params {
    std::int64_t delay_ns = 0;        // one-way propagation delay
    std::int64_t jitter_ns = 0;       // delay varies uniformly in [-jitter, +jitter]
    std::uint64_t rate_bps = 0;       // bottleneck rate in bit/s of IP bytes; 0 = unlimited
    std::uint64_t queue_bytes = 0;    // drop-tail limit on bytes waiting for the bottleneck; 0 = auto
    std::uint64_t queue_packets = 0;  // drop-tail limit in packets; 0 = none
    double loss = 0.0;                // probability that a wire packet is lost, 0..1
    std::uint32_t overhead_bytes = 0; // per-packet framing charged to the rate (e.g. 38 for Ethernet)
};

// Where one end of the emulated path lives: a TUN device created inside a
// network namespace (the namespace of the caller when ns_path is empty).
struct endpoint {
    std::string ns_path;
    std::string dev_name;
};

struct options {
    endpoint client;
    endpoint server;
    link_params c2s;  // client -> server
    link_params s2c;  // server -> client
    bool offload = true;           // IFF_VNET_HDR + TSO: move up-to-64 KiB super-packets
    std::int64_t slack_ns = 50'000; // release packets up to this early to batch wake-ups
    std::uint64_t seed = 1;
    int realtime_priority = 10;    // SCHED_FIFO priority; 0 = normal scheduling
    std::uint64_t ring_bytes = 0;  // per-direction packet storage; 0 = sized from the link
    std::string ready_file;        // written once both devices exist
    std::string stats_json;        // counters written here on exit
    bool help = false;
};

// Parses argv (without argv[0]); throws std::invalid_argument with a message
// naming the bad option.
options parse_options(const std::vector<std::string>& args);

// Fills in defaults that depend on other settings (auto queue size).
void finalize(options& opts);

const char* usage_text();

} // namespace wanem
