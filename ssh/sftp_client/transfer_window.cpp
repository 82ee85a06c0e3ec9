#include "ssh/sftp_client/transfer_window.hpp"

#include "common/physical_memory.hpp"

#include <algorithm>

namespace longhaul::sftp {

namespace {

constexpr std::uint64_t mib = 1024 * 1024;
// "Still rising": a round's best rate at least this much above the best so far.
constexpr double growth_factor = 1.25;
// Rounds without that growth before the pipe counts as full (BBR's 3).
constexpr int full_pipe_rounds = 3;
// The settled window is this many times the measured product.
constexpr double steady_gain = 2.0;
// The minimum round trip is forgotten after this long (routes change).
constexpr auto min_rtt_lifetime = std::chrono::seconds(10);

} // namespace

std::uint64_t default_window_budget() noexcept
{
    return std::clamp<std::uint64_t>(physical_memory_bytes() / 16, 64 * mib, 256 * mib);
}

transfer_window::transfer_window(window_settings s) : s_(s)
{
    if (s_.chunk == 0)
        s_.chunk = 1;
    if (s_.fixed) {
        s_.max_requests = std::max<std::uint32_t>(s_.max_requests, 1);
        s_.initial = std::uint64_t(s_.chunk) * s_.max_requests;
        s_.max = s_.initial;
    }
    s_.max = std::max(s_.max, std::uint64_t(s_.chunk));
    s_.initial = std::clamp(s_.initial, std::uint64_t(s_.chunk), s_.max);
    window_ = s_.initial;
    peak_window_ = window_;
}

bool transfer_window::may_send(std::uint64_t bytes) const noexcept
{
    if (in_flight_ == 0)
        return true;
    if (s_.fixed && requests_in_flight_ >= s_.max_requests)
        return false;
    return in_flight_ + bytes <= window_;
}

transfer_window::ticket transfer_window::on_send(std::uint64_t bytes, transfer_clock::time_point now) noexcept
{
    // After an idle spell the rate is measured from now, not from the
    // last delivery (the gap is not the network's doing).
    if (in_flight_ == 0)
        delivered_time_ = now;
    ticket t{bytes, delivered_, delivered_time_, now};
    in_flight_ += bytes;
    ++requests_in_flight_;
    // The window was what stopped the sender this round.
    if (in_flight_ + s_.chunk > window_)
        round_filled_ = true;
    return t;
}

void transfer_window::on_reply(const ticket& t, std::uint64_t delivered, transfer_clock::time_point now) noexcept
{
    in_flight_ -= std::min(in_flight_, t.bytes);
    if (requests_in_flight_ > 0)
        --requests_in_flight_;
    delivered_ += delivered;
    delivered_time_ = now;
    if (delivered > 0) {
        const auto interval = now - t.delivered_time_at_send;
        if (interval.count() > 0) {
            const double seconds = std::chrono::duration<double>(interval).count();
            const double rate = double(delivered_ - t.delivered_at_send) / seconds;
            round_max_rate_ = std::max(round_max_rate_, rate);
        }
        const auto rtt = std::chrono::duration_cast<std::chrono::nanoseconds>(now - t.sent);
        if (rtt < min_rtt_ || now - min_rtt_stamp_ > min_rtt_lifetime) {
            min_rtt_ = rtt;
            min_rtt_stamp_ = now;
        }
    }
    // A round ends with the reply to the first request sent after the
    // previous round ended.
    if (t.delivered_at_send >= next_round_delivered_) {
        next_round_delivered_ = delivered_;
        end_round();
    }
}

double transfer_window::max_rate() const noexcept
{
    return *std::max_element(round_rates_.begin(), round_rates_.end());
}

void transfer_window::end_round() noexcept
{
    const double rate = round_max_rate_;
    round_rates_[rounds_ % rate_rounds] = rate;
    ++rounds_;
    const bool filled = round_filled_ && !app_limited_;
    round_max_rate_ = 0;
    round_filled_ = false;
    app_limited_ = false;
    if (s_.fixed)
        return;

    if (rate >= full_rate_ * growth_factor && rate > 0) {
        full_rate_ = rate;
        rounds_without_growth_ = 0;
        if (filled) {
            // Still rising and the window was the limit: more pipe to fill.
            startup_ = true;
            set_window(window_ * 2);
        }
    } else {
        full_rate_ = std::max(full_rate_, rate);
        if (filled && startup_ && ++rounds_without_growth_ >= full_pipe_rounds)
            startup_ = false;
    }
    if (!startup_ && min_rtt_ != std::chrono::nanoseconds::max()) {
        const double product = max_rate() * std::chrono::duration<double>(min_rtt_).count();
        set_window(std::uint64_t(steady_gain * product));
    }
}

void transfer_window::set_window(std::uint64_t w) noexcept
{
    window_ = std::clamp(w, s_.initial, s_.max);
    peak_window_ = std::max(peak_window_, window_);
}

} // namespace longhaul::sftp
