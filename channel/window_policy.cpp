#include "channel/window_policy.hpp"

#include <algorithm>

namespace longhaul {

namespace {

// A round trip that consumed at least this share of the window (in tenths)
// was held back by the window: a window-limited sender delivers the whole
// window per loop, and the loop is only a little longer than the RTT.
constexpr std::uint64_t window_limited_tenths = 7;

// Round trips of a flat rate before an overshooting window is reduced.
constexpr int settle_intervals = 2;
// Credit beyond what the path holds, once out of slow start, for the
// buffers at both ends (the sender's unsent data, the receiver's socket and
// backlog, credit waiting for its adjust step).
constexpr std::uint64_t path_margin = 4 * 1024 * 1024; // about 33 ms at 1 Gbit/s
} // namespace

window_config window_limits(std::uint64_t channel_max, std::uint64_t connection_max,
                            std::uint64_t physical_memory) noexcept
{
    constexpr std::uint64_t mib = 1024 * 1024;
    window_config cfg;
    cfg.budget = connection_max != 0 ? connection_max : std::clamp(physical_memory / 16, 64 * mib, 2048 * mib);
    const std::uint64_t channel = channel_max != 0 ? channel_max : std::min(cfg.budget, 1024 * mib);
    // What one side may advertise at most (DESIGN: 2^31 - 1).
    cfg.max_window = static_cast<std::uint32_t>(std::min<std::uint64_t>(channel, 0x7fffffffu));
    cfg.initial_window = std::min(cfg.initial_window, cfg.max_window);
    return cfg;
}

peer_sender classify_sender(std::string_view software) noexcept
{
    // "OpenSSH_9.2p1", "OpenSSH_for_Windows_8.1"; HPN-SSH says
    // "OpenSSH_10.2p1_hpn18.8.0" or "OpenSSH_8.9p1-hpn15v2".
    constexpr std::string_view openssh = "OpenSSH";
    if (software.substr(0, openssh.size()) != openssh)
        return peer_sender::other;
    for (std::size_t i = 0; i + 3 <= software.size(); ++i) {
        const auto lower = [&](std::size_t k) { return static_cast<char>(software[i + k] | 0x20); };
        if (lower(0) == 'h' && lower(1) == 'p' && lower(2) == 'n')
            return peer_sender::other;
    }
    return peer_sender::openssh;
}

window_config window_for_peer(window_config cfg, std::string_view peer_software) noexcept
{
    if (classify_sender(peer_software) == peer_sender::openssh)
        cfg.max_spare = openssh_max_spare;
    return cfg;
}

std::uint32_t opening_window(const window_config& cfg, std::uint64_t path_rtt_us) noexcept
{
    if (path_rtt_us != 0 && path_rtt_us < short_path_us)
        return std::min(cfg.initial_window, short_path_initial_window);
    return cfg.initial_window;
}

std::uint32_t min_initial_window(const window_config& cfg) noexcept
{
    return std::min(cfg.initial_window, 2 * cfg.max_packet);
}

receive_window::receive_window(const window_config& cfg, window_budget& budget, std::uint32_t initial) noexcept
    : cfg_(cfg), budget_(budget),
      initial_(static_cast<std::uint32_t>(
          std::min<std::uint64_t>(initial != 0 ? std::min(initial, cfg.initial_window) : cfg.initial_window,
                                  budget.available()))),
      target_(initial_), credit_(initial_), granted_(budget.take(initial_))
{
    stats_.peak_target = target_;
}

receive_window::~receive_window()
{
    set_bulk(false);
    budget_.give_back(granted_);
}

void receive_window::set_bulk(bool bulk) noexcept
{
    if (bulk == bulk_)
        return;
    bulk_ = bulk;
    if (bulk)
        budget_.bulk_joined();
    else
        budget_.bulk_left();
}

void receive_window::track_bulk(std::uint32_t consumed, std::uint64_t now_us) noexcept
{
    if (bulk_slot_start_us_ == 0 || now_us < bulk_slot_start_us_) {
        bulk_slot_start_us_ = now_us;
        bulk_slot_consumed_ = 0;
    }
    bulk_slot_consumed_ += consumed;
    if (bulk_slot_consumed_ >= bulk_slot_bytes)
        set_bulk(true);
    const std::uint64_t elapsed = now_us - bulk_slot_start_us_;
    if (elapsed < bulk_slot_us)
        return;
    // The slot is over: a channel whose rate fell below the mark leaves (a
    // slot stretched by a pause counts at its rate, not its bytes).
    if (bulk_slot_consumed_ * bulk_slot_us < bulk_slot_bytes * elapsed)
        set_bulk(false);
    bulk_slot_start_us_ = now_us;
    bulk_slot_consumed_ = 0;
}

std::uint64_t receive_window::margin_share(std::uint64_t whole) const noexcept
{
    if (min_rtt_us_ != 0 && min_rtt_us_ < short_path_us)
        whole /= 4;
    const std::uint64_t sharing = std::max<std::uint32_t>(budget_.bulk_channels(), 1);
    return std::max(whole / sharing, std::min(whole, min_margin_share));
}

std::uint32_t receive_window::floor() const noexcept
{
    // While several bulk channels share the margin, a target may go down to
    // its share of it (a few packets at least), below the initial window.
    const std::uint64_t share = cfg_.max_spare != 0 ? margin_share(cfg_.max_spare) : margin_share(path_margin);
    const std::uint64_t least = std::max<std::uint64_t>(share, 4ull * cfg_.max_packet);
    return static_cast<std::uint32_t>(std::min<std::uint64_t>(initial_, least));
}

std::uint32_t receive_window::window_in_effect() const noexcept
{
    // After the target shrank, the peer may still hold more credit than the
    // new target: that credit, not the target, is what it can send.
    return static_cast<std::uint32_t>(std::max<std::uint64_t>(target_, std::uint64_t(credit_) + backlog_));
}

std::uint32_t receive_window::adjust_threshold() const noexcept
{
    // Return credit in steps of an eighth of the window (at most 256 KiB, at
    // least one packet): the peer keeps at least 7/8 of the window in
    // flight, at a cost of one small message per step.
    // A small window (a share of a margin) returns credit in steps of up to
    // half of it, 64 KiB at most: an adjust per packet would cost more than
    // the credit it returns early.
    const std::uint32_t step = std::max(std::min<std::uint32_t>(target_ / 8, 256 * 1024),
                                        std::min<std::uint32_t>(target_ / 2, 64 * 1024));
    return std::max(step, std::min(cfg_.max_packet, target_));
}

bool receive_window::on_receive(std::uint32_t n, std::uint64_t now_us) noexcept
{
    last_data_us_ = now_us;
    if (n <= credit_) {
        credit_ -= n;
        excess_ = 0; // as OpenSSH: the grace is for one overrun, not a running total
    } else {
        excess_ += n - credit_;
        credit_ = 0;
        // OpenSSH tolerates a peer overrunning by up to a tenth of the window.
        if (excess_ > target_ / 10)
            return false;
        // The overrun is buffered like any data: the budget must cover it.
        const std::uint64_t held = std::uint64_t(backlog_) + n;
        if (held > granted_) {
            const std::uint64_t want = held - granted_;
            const std::uint64_t got = budget_.take(want);
            granted_ += got;
            if (got < want)
                return false;
        }
    }
    backlog_ += n;
    interval_received_ += n;
    return true;
}

void receive_window::measure(std::uint32_t consumed, std::uint64_t now_us, std::uint64_t rtt_us,
                             std::uint64_t path_rtt_us) noexcept
{
    stats_.bytes += consumed;
    if (rtt_us == 0)
        return;
    if (path_rtt_us != 0)
        min_rtt_us_ = std::min(path_rtt_us, rtt_us);
    else if (min_rtt_us_ == 0 || rtt_us < min_rtt_us_)
        min_rtt_us_ = rtt_us;
    // A new interval after a quiet spell: the time without data is idle, not
    // a slow round trip.
    const bool quiet = interval_start_us_ != 0 && backlog_ == 0 && interval_bytes_ == 0;
    if (interval_start_us_ == 0 || now_us < interval_start_us_ || quiet) {
        interval_start_us_ = now_us;
        interval_bytes_ = consumed;
        interval_received_ = consumed;
        interval_target_ = window_in_effect();
        interval_backlog_ = backlog_;
        return;
    }
    interval_backlog_ = std::min(interval_backlog_, backlog_);
    interval_bytes_ += consumed;
    const std::uint64_t elapsed = now_us - interval_start_us_;
    if (elapsed < rtt_us)
        return;
    end_interval(elapsed, rtt_us);
    interval_start_us_ = now_us;
    interval_bytes_ = 0;
    interval_received_ = 0;
    interval_target_ = window_in_effect();
    interval_backlog_ = backlog_;
}

void receive_window::end_interval(std::uint64_t elapsed, std::uint64_t rtt_us) noexcept
{
    // An interval much longer than the RTT had gaps in it (the sender paused):
    // count at most two round trips of it as active time.
    const std::uint64_t counted = std::min(elapsed, 2 * rtt_us);
    // What moved end to end: the sender's delivery, unless the sink took
    // less. A sink draining a backlog takes more than arrived, and that
    // burst says nothing about the path.
    const std::uint64_t per_rtt = std::min(interval_bytes_, interval_received_) * rtt_us / elapsed;
    // The same rate over the path's own round trip (the smallest RTT seen):
    // what the path holds without any queue.
    const std::uint64_t per_path = std::min(interval_bytes_, interval_received_) * min_rtt_us_ / elapsed;
    const std::uint64_t t = interval_target_;
    // A queue stands at the bottleneck when the round trip is well above
    // the path's own: the link is busy. The threshold is HyStart's (Linux
    // CUBIC's delay-based exit from slow start): an eighth of the path's
    // RTT, between 4 and 16 ms.
    const bool queue_standing =
        rtt_us > min_rtt_us_ + std::clamp<std::uint64_t>(min_rtt_us_ / 8, 4000, 16000);
    window_limit kind = window_limit::network;
    // Data that arrives in bursts waits briefly in every sink; a sink that
    // is the limit never catches up, so even its smallest backlog is large.
    if (interval_backlog_ >= std::max<std::uint64_t>(t / 8, 4ull * cfg_.max_packet))
        kind = window_limit::sink;
    else if (per_rtt * 10 >= t * window_limited_tenths &&
             (cfg_.max_spare == 0 ? !queue_standing && t < per_rtt + margin_share(path_margin) / 2
                                  : t < per_path + margin_share(cfg_.max_spare) / 2))
        // A window bounded to the path plus a margin (or, for a sender that
        // buffers its credit, plus the spare) is mostly in flight by design:
        // the sender was held back only if it used most of the margin. And
        // a window that fills the path and a queue behind it held nothing
        // back: the link carried all it could.
        kind = window_limit::window;

    stats_.active_us += counted;
    stats_.target_time_product += (t * counted) >> 20;
    switch (kind) {
    case window_limit::network: stats_.network_limited_us += counted; break;
    case window_limit::window: stats_.window_limited_us += counted; break;
    case window_limit::sink: stats_.sink_limited_us += counted; break;
    }

    // The trend: how much more this round trip carried than the last one
    // (1x to 2x, in 1/256ths). A sender in slow start doubles per RTT.
    const bool previous_rate_known = previous_per_rtt_ > 0;
    const std::uint64_t ratio = previous_rate_known ? per_rtt * 256 / previous_per_rtt_ : 256;
    const std::uint64_t trend = std::clamp<std::uint64_t>(ratio, 256, 512);
    previous_per_rtt_ = per_rtt;
    if (kind == window_limit::sink) {
        // The sink is the limit: more credit would only fill memory. Halve
        // the window toward twice what the sink takes, so a stalled sink
        // does not hold a whole overgrown window of data; if the sink
        // recovers, the window-limited rule grows it again within a few
        // round trips.
        const std::uint64_t sink_per_rtt = interval_bytes_ * rtt_us / elapsed;
        if (target_ > 4 * sink_per_rtt)
            shrink_to(std::max<std::uint64_t>(2 * sink_per_rtt, target_ / 2), window_change::reason::sink_limited,
                      sink_per_rtt, rtt_us);
        return;
    }
    // Twice what the sender will be sending when this credit reaches it:
    // one window in flight while the previous one's credit travels back.
    // What we measured is about a round trip old (the interval's middle,
    // plus half an RTT for the data to arrive), and the credit needs half
    // an RTT more to reach the sender: two round trips of the trend ahead.
    std::uint64_t aim = 2 * per_rtt * trend / 256 * trend / 256;
    auto why = window_change::reason::lead;
    if (kind == window_limit::window) {
        aim = std::max(aim, 4 * per_rtt);
        why = window_change::reason::window_limited;
    }
    // "What the path holds": the recent peak of the rate over the path's
    // own round trip, decaying by an eighth per round trip. The rate is
    // taken over this round trip and the one before: a round trip of TCP
    // loss recovery delivers little (the data waits in the kernel's
    // out-of-order queue) and the next one delivers it all at once, and
    // neither is the path's rate; together they are.
    const std::uint64_t moved = std::min(interval_bytes_, interval_received_);
    const std::uint64_t per_path_smoothed = (moved + previous_moved_) * min_rtt_us_ / (elapsed + previous_elapsed_);
    previous_moved_ = moved;
    previous_elapsed_ = elapsed;
    // The recent peak, decaying by an eighth per round trip, not the last
    // sample: a round trip that delivers less (a hiccup at either end)
    // does not pull the bound below the path at once. (An OpenSSH sender's
    // bound, tuned on its own, takes each round trip's own sample: its
    // ramp is additive and follows each one.) Tried instead for other
    // senders: the largest smoothed rate of the last eight round trips
    // (BBR's filter) kept loss recovery's bursts for eight round trips, so
    // at 50 ms the window let TCP overflow the queue again for 3 s
    // (docs/PERFORMANCE.md).
    recent_per_rtt_ = std::max(cfg_.max_spare != 0 ? per_path : per_path_smoothed, recent_per_rtt_ - recent_per_rtt_ / 8);
    // Slow start lasts until a queue stands at the bottleneck (the link is
    // full) or two round trips (not necessarily in a row: after a loss,
    // stalls and bursts alternate) carry less than a quarter more than the
    // one before (TCP has left it, or the sender is not sending more).
    // Until then the rate lags the congestion window by a round trip, and
    // the window must lead it, not follow the rate.
    if (queue_standing || (previous_rate_known && ratio < 320 && ++settled_intervals_ >= 2))
        slow_start_ = false;
    if (cfg_.max_spare != 0) {
        // A sender that buffers its credit: at most one round trip's
        // delivery in flight plus max_spare held. Growth is then additive,
        // max_spare per two round trips (what a round trip delivers was
        // sent under the window of the one before); after a drop in rate
        // the window comes down with it, so the credit held stays bounded.
        // The recent peak, not the last sample: shrinking to what a round
        // trip of loss recovery delivered starved the sender for the round
        // trips after it (1-s goodput 700-900 Mbit/s at 100 ms against a
        // flat 964 for a fixed window).
        // Not the data behind the holes of a lossy path: the sender then
        // holds that credit too whenever its TCP is in loss recovery, and
        // its buffer's growth collapses it (at 50 ms and 1 % loss a path
        // beside the bound gave 0.36-0.38 of raw TCP, the sender at 10-17
        // CPU s/GiB; a quarter or half a path no gain beyond the runs'
        // spread: docs/PERFORMANCE.md).
        const std::uint64_t bound = recent_per_rtt_ + margin_share(cfg_.max_spare);
        if (target_ > bound) {
            steady_intervals_ = 0;
            shrink_to(bound, window_change::reason::spare_bound, per_rtt, rtt_us);
            return;
        }
        aim = std::min(aim, bound);
    } else if (!slow_start_) {
        // Any other sender, once out of slow start: the path (and a
        // sixteenth, for the rate's jitter and the smoothing's lag) plus a
        // margin for the credit in transit and the buffers at both ends.
        // More credit only lets a loss-based TCP fill the bottleneck's
        // queue, and overflow it again and again: at 200 ms, windows of
        // 270-520 MiB gave a loss every second for five seconds and 840
        // Mbit/s of a 1 Gbit/s link (docs/PERFORMANCE.md). A sender held at
        // this bound fills the path and leaves a queue of at most the
        // margin behind it, so the link stays busy; while the window holds
        // it below the link, every round trip delivers a little more and
        // the bound grows with it (and a window-limited round trip grows
        // the window to the bound at once).
        std::uint64_t bound = recent_per_rtt_ + recent_per_rtt_ / 16 + margin_share(path_margin);
        // A path that drops packets at random (loss recovery for a second
        // and more, and no queue: not a slow start's overshoot) holds more:
        // the receiving kernel keeps what arrived behind each hole until its
        // retransmission comes, a round trip and more later (the sender's
        // reordering allowance first), and that data used the credit too:
        // half a path again beside the path. Without it, at 50 ms and 1 %
        // loss the window sat at the path plus the margin and the transfer
        // ran at 0.66 of raw TCP; one path beside it gave 0.87 up, one and a
        // half 0.93-0.96 (docs/PERFORMANCE.md).
        if (random_loss_ && !queue_standing)
            bound += recent_per_rtt_ + recent_per_rtt_ / 2;
        // (Not for a sliver: the bound moves with every round trip's rate.)
        if (target_ > bound + bound / 16) {
            steady_intervals_ = 0;
            shrink_to(bound, window_change::reason::path_bound, per_rtt, rtt_us);
            return;
        }
        aim = std::min(aim, bound);
    }
    // Slow start overshoots: once the rate has been flat for a few round
    // trips and the window is well above twice the rate, halve it toward
    // that, so idle credit does not tie up the connection's budget.
    const bool flat = ratio >= 228 && ratio <= 288; // within about 12% of the last round trip
    steady_intervals_ = kind == window_limit::network && flat ? steady_intervals_ + 1 : 0;
    if (steady_intervals_ >= settle_intervals && target_ > 2 * aim) {
        shrink_to(std::max<std::uint64_t>(aim, target_ / 2), window_change::reason::settled, per_rtt, rtt_us);
        steady_intervals_ = 0;
        return;
    }
    grow_to(aim, why, per_rtt, rtt_us);
}

void receive_window::on_discarded(std::uint32_t n) noexcept
{
    backlog_ -= std::min(n, backlog_);
    release_unneeded_budget();
}

void receive_window::shrink_to(std::uint64_t to, window_change::reason why, std::uint64_t per_rtt,
                               std::uint64_t rtt_us) noexcept
{
    to = std::max<std::uint64_t>(to, floor());
    if (to >= target_)
        return;
    const std::uint32_t from = change_ ? change_->from : target_;
    target_ = static_cast<std::uint32_t>(to);
    change_ = window_change{from, target_, why, per_rtt, rtt_us};
    release_unneeded_budget();
}

void receive_window::grow_to(std::uint64_t aim, window_change::reason why, std::uint64_t per_rtt,
                             std::uint64_t rtt_us) noexcept
{
    // At most 4x per round trip: a burst is not a trend.
    aim = std::min<std::uint64_t>({aim, cfg_.max_window, 4ull * target_});
    if (aim <= target_)
        return;
    if (aim > granted_)
        granted_ += budget_.take(aim - granted_);
    const std::uint64_t to = std::min(aim, granted_);
    if (to <= target_) {
        if (!change_ || change_->why != window_change::reason::budget)
            change_ = window_change{target_, target_, window_change::reason::budget, per_rtt, rtt_us};
        return;
    }
    const std::uint32_t from = change_ ? change_->from : target_;
    target_ = static_cast<std::uint32_t>(to);
    change_ = window_change{from, target_, why, per_rtt, rtt_us};
    stats_.peak_target = std::max(stats_.peak_target, target_);
}

void receive_window::release_unneeded_budget() noexcept
{
    // Budget is held for the target, and for credit the peer still holds
    // even after the target shrank: that credit can still arrive as data.
    const std::uint64_t need = std::max<std::uint64_t>(target_, std::uint64_t(credit_) + backlog_);
    if (need < granted_) {
        budget_.give_back(granted_ - need);
        granted_ = need;
    }
}

std::uint32_t receive_window::on_consumed(std::uint32_t n, std::uint64_t now_us, std::uint64_t rtt_us,
                                          std::uint64_t path_rtt_us) noexcept
{
    backlog_ -= std::min(n, backlog_);
    track_bulk(n, now_us);
    measure(n, now_us, rtt_us, path_rtt_us);
    const std::uint64_t held = std::uint64_t(credit_) + backlog_;
    if (held >= target_) {
        release_unneeded_budget();
        return 0;
    }
    const std::uint32_t avail = static_cast<std::uint32_t>(target_ - held);
    if (avail < adjust_threshold())
        return 0;
    credit_ += avail;
    return avail;
}

void receive_window::on_tick(std::uint64_t now_us) noexcept
{
    if (bulk_ && now_us - last_data_us_ >= 2 * bulk_slot_us)
        set_bulk(false);
    if (target_ != initial_ && now_us - last_data_us_ >= idle_shrink_us) {
        // Idle: the next burst starts afresh from the initial window. Grown
        // beyond it: credit already given cannot be taken back; the target
        // drops and no new credit is returned until what the peer holds
        // falls below it. Squeezed below it while other channels moved bulk
        // data: back to it, as far as the budget allows.
        if (initial_ > granted_)
            granted_ += budget_.take(initial_ - granted_);
        const auto to = static_cast<std::uint32_t>(std::min<std::uint64_t>(initial_, std::max<std::uint64_t>(target_, granted_)));
        if (to != target_)
            change_ = window_change{change_ ? change_->from : target_, to, window_change::reason::idle, 0, 0};
        target_ = to;
        interval_start_us_ = 0;
        previous_per_rtt_ = 0;
        recent_per_rtt_ = 0;
        previous_moved_ = 0;
        previous_elapsed_ = 0;
        settled_intervals_ = 0;
        slow_start_ = true;
    }
    release_unneeded_budget();
}

std::optional<window_change> receive_window::take_change() noexcept
{
    auto c = change_;
    change_.reset();
    return c;
}

} // namespace longhaul
