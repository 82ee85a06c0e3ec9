#include "channel/send_limit.hpp"

#include <algorithm>

namespace longhaul {

void send_limit::on_return(std::uint64_t bytes, std::uint64_t now_us) noexcept
{
    if (!started_) {
        started_ = true;
        since_us_ = now_us;
        returned_ = 0;
        return; // the first return opens the first interval
    }
    returned_ += bytes;
    const std::uint64_t elapsed = now_us > since_us_ ? now_us - since_us_ : 0;
    if (elapsed < rate_interval_us)
        return;
    // 2^40 bytes in one interval keeps the product far from overflow.
    const std::uint64_t sample = std::min<std::uint64_t>(returned_, std::uint64_t(1) << 40) * 1'000'000 / elapsed;
    // A peak that loses a quarter per interval: a slow interval (the
    // peer's process descheduled for a few milliseconds) does not take the
    // room a fast sink earned. Halving per millisecond did: one -L stream to
    // Debian's sshd over an emulated 0 ms, 1 Gbit/s link moved 0.89 of raw
    // TCP (docs/PERFORMANCE.md).
    rate_ = std::max(sample, rate_ - rate_ / 4);
    returned_ = 0;
    since_us_ = now_us;
}

std::uint64_t send_limit::floor(std::uint64_t peer_max_packet) noexcept
{
    // A peer's maximum packet is a uint32: no overflow.
    return std::max(short_path_send_floor, 5 * peer_max_packet);
}

std::uint64_t send_limit::limit(std::uint64_t peer_max_packet) const noexcept
{
    const std::uint64_t earned = std::min<std::uint64_t>(rate_, std::uint64_t(1) << 40) * short_path_send_horizon_us / 1'000'000;
    return std::max(floor(peer_max_packet), earned);
}

std::uint64_t send_limit::capacity(std::uint64_t opened, std::uint64_t window, std::uint64_t peer_max_packet) const noexcept
{
    const std::uint64_t in_use = opened > window ? opened - window : 0;
    const std::uint64_t room = limit(peer_max_packet);
    return in_use >= room ? 0 : std::min(window, room - in_use);
}

} // namespace longhaul
