#include "channel/window_policy.hpp"

#include <algorithm>

namespace longhaul {

receive_window::receive_window(const window_config& cfg, window_budget& budget) noexcept
    : cfg_(cfg), budget_(budget), target_(cfg.initial_window), credit_(cfg.initial_window)
{
}

receive_window::~receive_window() { budget_.give_back(granted_); }

std::uint32_t receive_window::adjust_threshold() const noexcept
{
    // Return credit in steps of an eighth of the window (at most 256 KiB, at
    // least one packet): the peer keeps at least 7/8 of the window in
    // flight, at a cost of one small message per step.
    const std::uint32_t step = std::min<std::uint32_t>(target_ / 8, 256 * 1024);
    return std::max(step, std::min(cfg_.max_packet, target_));
}

bool receive_window::on_receive(std::uint32_t n, std::uint64_t now_us) noexcept
{
    last_data_us_ = now_us;
    if (n <= credit_) {
        credit_ -= n;
    } else {
        excess_ += n - credit_;
        credit_ = 0;
        // OpenSSH tolerates a peer overrunning by up to a tenth of the window.
        if (excess_ > target_ / 10)
            return false;
    }
    backlog_ += n;
    return true;
}

void receive_window::measure(std::uint32_t consumed, std::uint64_t now_us, std::uint64_t rtt_us) noexcept
{
    if (rtt_us == 0)
        return;
    if (interval_start_us_ == 0 || now_us < interval_start_us_) {
        interval_start_us_ = now_us;
        interval_bytes_ = 0;
    }
    interval_bytes_ += consumed;
    const std::uint64_t elapsed = now_us - interval_start_us_;
    if (elapsed < rtt_us)
        return;
    // Bytes the sink took per round trip, and twice that as the aim (one
    // window in flight while the previous one's credit travels back).
    const std::uint64_t per_rtt = interval_bytes_ * rtt_us / elapsed;
    interval_start_us_ = now_us;
    interval_bytes_ = 0;
    const std::uint64_t aim = std::min<std::uint64_t>(2 * per_rtt, cfg_.max_window);
    if (aim <= target_)
        return;
    // At most doubling per interval: a burst is not a trend.
    const std::uint64_t want = std::min<std::uint64_t>(aim - target_, target_);
    const std::uint64_t got = budget_.take(want);
    granted_ += got;
    target_ += static_cast<std::uint32_t>(got);
}

std::uint32_t receive_window::on_consumed(std::uint32_t n, std::uint64_t now_us, std::uint64_t rtt_us) noexcept
{
    backlog_ -= std::min(n, backlog_);
    measure(n, now_us, rtt_us);
    const std::uint64_t held = std::uint64_t(credit_) + backlog_;
    if (held >= target_)
        return 0;
    const std::uint32_t avail = static_cast<std::uint32_t>(target_ - held);
    if (avail < adjust_threshold())
        return 0;
    credit_ += avail;
    return avail;
}

void receive_window::on_tick(std::uint64_t now_us) noexcept
{
    if (granted_ == 0 || now_us - last_data_us_ < idle_shrink_us)
        return;
    // Credit already given cannot be taken back; the target drops and no new
    // credit is returned until what the peer holds falls below it.
    budget_.give_back(granted_);
    target_ = cfg_.initial_window;
    granted_ = 0;
    interval_start_us_ = 0;
}

} // namespace longhaul
