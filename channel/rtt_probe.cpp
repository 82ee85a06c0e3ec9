#include "channel/rtt_probe.hpp"

#include <algorithm>

namespace longhaul {

bool rtt_probe::due(std::uint64_t now_us, bool transport_rtt_known) const noexcept
{
    if (in_flight_)
        return false;
    if (samples_ == 0 && last_sent_us_ == 0)
        return true;
    std::uint64_t every = transport_rtt_known ? cross_check_interval_us : interval_us;
    if (!transport_rtt_known && samples_ < early_samples)
        every = early_interval_us;
    return now_us >= last_sent_us_ + every;
}

void rtt_probe::sent(std::uint64_t now_us) noexcept
{
    in_flight_ = true;
    sent_us_ = now_us;
    last_sent_us_ = now_us;
}

void rtt_probe::answered(std::uint64_t now_us) noexcept
{
    if (!in_flight_)
        return;
    in_flight_ = false;
    // A sample of 0 would read as "unknown"; a microsecond is the floor.
    const std::uint64_t sample = std::max<std::uint64_t>(now_us > sent_us_ ? now_us - sent_us_ : 0, 1);
    srtt_us_ = samples_ == 0 ? sample : (7 * srtt_us_ + sample) / 8;
    min_us_ = samples_ == 0 ? sample : std::min(min_us_, sample);
    ++samples_;
}

std::uint64_t rtt_probe::estimate_us() const noexcept { return min_us_; }

} // namespace longhaul
