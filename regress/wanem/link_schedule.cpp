#include "link_schedule.hpp"

#include <algorithm>

namespace wanem {

link_schedule::link_schedule(const link_params& params, std::uint64_t seed)
    : params_(params), rng_(seed)
{
}

std::uint64_t link_schedule::backlog_bytes(std::int64_t now_ns) const
{
    if (params_.rate_bps == 0 || busy_until_ns_ <= now_ns)
        return 0;
    // The bottleneck drains at a constant rate, so what is left equals the
    // time it still needs; rounding up counts a partly sent packet.
    const auto left_ns = static_cast<unsigned __int128>(busy_until_ns_ - now_ns);
    return static_cast<std::uint64_t>((left_ns * params_.rate_bps + 8'000'000'000 - 1) / 8'000'000'000);
}

std::uint64_t link_schedule::backlog_packets(std::int64_t now_ns)
{
    while (!serialising_.empty() && serialising_.front() <= now_ns)
        serialising_.pop_front();
    return serialising_.size();
}

admission link_schedule::admit(std::uint32_t ip_bytes, std::int64_t now_ns)
{
    if (down_)
        return {verdict::outage, 0};
    // Loss first, as on a lossy access link in front of the queue: a lost
    // packet takes no room in the buffer.
    if (params_.loss > 0 && unit_(rng_) < params_.loss)
        return {verdict::lost, 0};

    const std::uint64_t wire = std::uint64_t{ip_bytes} + params_.overhead_bytes;
    std::int64_t done_ns = now_ns;
    if (params_.rate_bps != 0) {
        const std::uint64_t queued = backlog_bytes(now_ns);
        if (params_.queue_bytes != 0 && queued + wire > params_.queue_bytes)
            return {verdict::queue_full, 0};
        if (params_.queue_packets != 0 && backlog_packets(now_ns) + 1 > params_.queue_packets)
            return {verdict::queue_full, 0};
        // Integer nanoseconds with the remainder carried over, so a long run
        // at 1 Gbit/s does not drift by the rounding of every packet.
        const std::uint64_t scaled = wire * 8 * 1'000'000'000ULL + carry_;
        const auto ser_ns = static_cast<std::int64_t>(scaled / params_.rate_bps);
        carry_ = scaled % params_.rate_bps;
        done_ns = std::max(busy_until_ns_, now_ns) + ser_ns;
        busy_until_ns_ = done_ns;
        serialising_.push_back(done_ns);
        high_water_bytes_ = std::max(high_water_bytes_, queued + wire);
        high_water_packets_ = std::max<std::uint64_t>(high_water_packets_, backlog_packets(now_ns));
    }

    std::int64_t delay = params_.delay_ns;
    if (params_.jitter_ns > 0) {
        std::uniform_int_distribution<std::int64_t> j(-params_.jitter_ns, params_.jitter_ns);
        delay = std::max<std::int64_t>(0, delay + j(rng_));
    }
    // A packet never overtakes the one before it: jitter stretches gaps but
    // TCP sees no reordering (netem's rate mode behaves the same way).
    const std::int64_t deliver = std::max(done_ns + delay, last_deliver_ns_);
    last_deliver_ns_ = deliver;
    return {verdict::pass, deliver};
}

} // namespace wanem
