// wan_meter: the measuring helper behind contrib/bench/wan. Each subcommand
// prints one JSON object (on stdout unless stated) so that the benchmark
// script only has to pick fields out of it.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace wan_meter {

using args = std::vector<std::string>;

std::int64_t now_ns(); // CLOCK_MONOTONIC: shared by every network namespace
double cpu_self_s();   // user + system seconds of this process

// Pseudo-random, incompressible block the sources repeat.
std::span<const std::byte> pattern();

// Writes to fd for a byte count or a duration (counted from the first
// completed write, which only succeeds once the reader is flowing).
struct source_limit {
    std::uint64_t bytes = 0;
    double seconds = 0;
};
std::uint64_t pump_out(int fd, const source_limit& limit);

// Reads fd to EOF and prints {"bytes","first_ns","last_ns","cpu_s"}; with
// timeline_ms > 0 also "timeline_ms" and "timeline_bytes" (bytes received in
// each interval of that length, counted from the first byte).
int drain_and_report(int fd, std::FILE* out, int timeline_ms = 0);
int parse_timeline_ms(const std::string& v);

int cmd_source(const args& a);
int cmd_sink(const args& a);
int cmd_run(const args& a);
int cmd_tcp_sink(const args& a);
int cmd_tcp_source(const args& a);
int cmd_cpu(const args& a);
int cmd_watch(const args& a);

source_limit parse_limit(const args& a, std::size_t& i);

} // namespace wan_meter
