// Timing model of one direction: random loss, a drop-tail queue in front of
// a fixed-rate bottleneck, then a propagation delay with optional jitter.
#pragma once

#include "options.hpp"

#include <cstdint>
#include <deque>
#include <random>

namespace wanem {

enum class verdict { pass, lost, queue_full, outage };

struct admission {
    verdict outcome;
    std::int64_t deliver_ns; // when the last bit reaches the far end (pass only)
};

// Works on wire packets (one TCP segment each, even when the kernel hands us
// a TSO super-packet) and on a clock passed in, so it can be tested without
// devices or sleeping. Like dummynet's pipe: a packet waits for the
// bottleneck to finish everything queued before it, is serialised at the
// configured rate, then travels for the delay.
class link_schedule {
public:
    link_schedule(const link_params& params, std::uint64_t seed);

    admission admit(std::uint32_t ip_bytes, std::int64_t now_ns);

    // A link that is down (a cut cable, a dead access link) drops every
    // packet offered to it; packets already queued or on the wire still
    // arrive, as they would beyond the cut.
    void set_down(bool down) { down_ = down; }
    bool down() const { return down_; }

    // Bytes still waiting for (or being clocked onto) the bottleneck.
    std::uint64_t backlog_bytes(std::int64_t now_ns) const;
    std::uint64_t backlog_packets(std::int64_t now_ns);

    std::uint64_t high_water_bytes() const { return high_water_bytes_; }
    std::uint64_t high_water_packets() const { return high_water_packets_; }
    const link_params& params() const { return params_; }

private:
    link_params params_;
    std::mt19937_64 rng_;
    std::uniform_real_distribution<double> unit_{0.0, 1.0};
    std::int64_t busy_until_ns_ = 0;  // bottleneck idle from this instant
    std::uint64_t carry_ = 0;         // sub-nanosecond remainder of serialisation
    std::int64_t last_deliver_ns_ = 0; // delivery is monotonic: no reordering
    std::deque<std::int64_t> serialising_; // finish times of queued packets
    std::uint64_t high_water_bytes_ = 0;
    std::uint64_t high_water_packets_ = 0;
    bool down_ = false;
};

} // namespace wanem
