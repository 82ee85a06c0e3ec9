// Receive-window policy for one channel, as a pure state machine: no clock
// reads, no system calls. The connection core feeds it what arrived and what
// the sink consumed; it says how much credit to return (WINDOW_ADJUST).
//
// Invariant: credit the peer holds + bytes received but not yet consumed
// never exceed what the channel holds of a budget shared by all channels of
// the connection: its whole window, initial window included, or the credit
// already granted when the target shrank below it, whichever is larger. A
// peer's small overrun (tolerated as OpenSSH does) is drawn from the budget
// too, and refused when the budget cannot cover it. So the sum over all
// channels of credit granted and data buffered never exceeds the budget: a
// hard per-connection cap, however many channels the peer opens.
//
// The target follows the measured bandwidth-delay product. Every round trip
// (the RTT the driver measures, from TCP_INFO or the SSH layer's own probes)
// it looks at what the sink consumed in that time:
//
//  - it aims for twice that, times the growth seen since the previous round
//    trip: a sender in TCP slow start doubles every RTT, so the window leads
//    the congestion window by one doubling instead of following it one RTT
//    late (never slower than TCP's own ramp);
//  - when the round trip consumed most of the window (the window, not the
//    network, held the sender back) it at least doubles, up to 4x per RTT;
//  - when the sink itself is the limit (data waits in the backlog) it does
//    not grow, and halves toward twice what the sink takes: more credit
//    would only fill memory;
//  - out of slow start (a queue stands at the bottleneck, or the rate has
//    stopped doubling), it stays within what the path holds plus a margin
//    (4 MiB) for the buffers at both ends: more credit only lets TCP
//    overflow the bottleneck's queue, again and again. The buffers are the
//    connection's (one socket each way, one output queue), so channels
//    moving bulk data at once share the margin, and may go below their
//    initial window for it: eight bulk channels holding 4 MiB each would
//    queue 32 MiB in front of every other channel's data, head of line in
//    the one TCP stream. On a path under a millisecond (loopback, a LAN)
//    the margin is 1 MiB: buffers there refill within the millisecond;
//  - once the rate has been flat for a few round trips, a window far above
//    twice the rate (slow start's overshoot) is halved step by step.
//
// "What the path holds" is the recent peak rate (over two round trips, so
// that a round trip of loss recovery and the burst after it count as what
// they deliver together; decaying by an eighth per round trip) over the
// path's own round trip (TCP's minimum RTT): credit beyond it only
// lengthens the queue at the bottleneck, which the receiver's RTT estimate
// would then count as path and grant again.
//
// Growth stops at the per-channel cap and at the shared budget; a channel
// idle for a while shrinks back to its initial window. Nothing here depends
// on the kernel's buffers having grown first (HPN-SSH's failure mode).
//
// Spare credit: what the window grants beyond what one round trip delivers
// is credit the sender holds while TCP, not the window, limits it. A sender
// that reads its source as far as its credit allows buffers all of it, and
// OpenSSH's sender pays for a large buffer (window_for_peer() below): for
// such a peer the target stays within what the path holds plus `max_spare`,
// so the window still follows the bandwidth-delay product while the
// sender's unsent data stays small.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace longhaul {

struct window_config {
    std::uint32_t initial_window = 2 * 1024 * 1024; // OpenSSH's session window
    std::uint32_t max_packet = 32 * 1024;           // the largest data packet we accept
    std::uint32_t max_window = 64 * 1024 * 1024;    // growth cap per channel
    std::uint64_t budget = 256ull * 1024 * 1024;    // all channels' growth together
    // Credit beyond one round trip's delivery the peer may hold (0: no
    // bound). Set by window_for_peer() for senders that buffer their credit.
    std::uint32_t max_spare = 0;
};

// Senders whose cost grows with the credit they hold unsent. OpenSSH's
// channel reads its source while its input buffer is below the peer's
// window, into an sshbuf that grows in 256-byte steps through
// recallocarray (allocate, copy, wipe and free the old block) up to
// CHAN_INPUT_MAX (16 MiB), and packs the whole buffer on every read once
// it nears that size: a multi-megabyte copy per 32 KiB read, which stalls
// the sender for seconds (docs/PERFORMANCE.md, issue 9). HPN-SSH grows its
// buffers in large steps and is not one of these; nor is Longhaul.
enum class peer_sender { other, openssh };
peer_sender classify_sender(std::string_view peer_software) noexcept;

// The spare credit allowed to an OpenSSH sender: its input buffer then
// stays under a quarter of CHAN_INPUT_MAX, so its size (data plus the
// consumed space not yet packed away, up to twice the data) never reaches
// the forced pack, and its step-by-step growth copies little.
constexpr std::uint32_t openssh_max_spare = 4 * 1024 * 1024;

// `cfg` for a peer whose identification gave `peer_software` (e.g.
// "OpenSSH_9.2p1"): max_spare set for an OpenSSH sender, unchanged otherwise.
window_config window_for_peer(window_config cfg, std::string_view peer_software) noexcept;

// The window limits from ChannelWindowMax and ConnectionWindowMax (0:
// "auto"). The automatic rule: the connection's budget is 1/16 of physical
// memory, between 64 MiB and 2 GiB, and one channel may use up to 1 GiB of
// it. A machine with 16 GiB so reaches 10 Gbit/s at 200 ms (a 250 MB
// bandwidth-delay product, a window of about twice that) on one channel;
// the budget is a cap on credit and backlog, not memory allocated up front.
// A channel cap below 2 MiB lowers the initial window with it.
window_config window_limits(std::uint64_t channel_max, std::uint64_t connection_max,
                            std::uint64_t physical_memory) noexcept;

// Shared by all channels of a connection: growth beyond the initial window
// draws from it.
class window_budget {
public:
    explicit window_budget(std::uint64_t limit) : limit_(limit) {}
    // Grants up to `want` bytes; returns what was granted.
    std::uint64_t take(std::uint64_t want) noexcept
    {
        const std::uint64_t free = limit_ > used_ ? limit_ - used_ : 0;
        const std::uint64_t got = want < free ? want : free;
        used_ += got;
        return got;
    }
    void give_back(std::uint64_t n) noexcept { used_ = n < used_ ? used_ - n : 0; }
    std::uint64_t used() const noexcept { return used_; }
    std::uint64_t available() const noexcept { return limit_ > used_ ? limit_ - used_ : 0; }
    std::uint64_t limit() const noexcept { return limit_; }

    // Channels moving bulk data now (each receive_window counts itself in
    // and out). The margin for the buffers at both ends of the connection
    // (the sender's queues, the receiver's socket) belongs to the
    // connection, not to each channel: its bulk channels share it.
    void bulk_joined() noexcept { ++bulk_; }
    void bulk_left() noexcept { bulk_ -= bulk_ > 0 ? 1 : 0; }
    std::uint32_t bulk_channels() const noexcept { return bulk_; }

private:
    std::uint64_t limit_;
    std::uint64_t used_ = 0;
    std::uint32_t bulk_ = 0;
};

// What held a channel's data back in one measured round trip.
enum class window_limit { network, window, sink };

// Why the target changed (for -v lines).
struct window_change {
    std::uint32_t from = 0, to = 0;
    enum class reason { lead, window_limited, settled, sink_limited, idle, budget, spare_bound, path_bound } why = reason::lead;
    std::uint64_t per_rtt = 0; // bytes consumed per round trip when measured
    std::uint64_t rtt_us = 0;
};

// Per-channel figures for the connection summary and the metrics file.
struct window_stats {
    std::uint64_t bytes = 0;           // consumed by the sink
    std::uint64_t active_us = 0;       // time in measured round trips with data
    std::uint64_t window_limited_us = 0;
    std::uint64_t network_limited_us = 0;
    std::uint64_t sink_limited_us = 0;
    std::uint64_t target_time_product = 0; // sum of target x interval (for the mean), in MiB*us
    std::uint32_t peak_target = 0;
    std::uint64_t mean_target() const noexcept
    {
        return active_us == 0 ? 0 : (target_time_product << 20) / active_us;
    }
};

// A path whose own round trip is under a millisecond: loopback, a LAN. Its
// buffers at both ends refill within that millisecond, so the margin for
// them is a quarter (1 MiB): more only queues ahead of every other
// channel's data in the one TCP stream (on loopback, eight bulk -L channels
// sharing 4 MiB gave 64-byte requests beside them a p95 of 28 ms, sharing
// 1 MiB 11 ms, at a higher throughput: docs/PERFORMANCE.md).
inline constexpr std::uint64_t short_path_us = 1000;

// The window a channel opens with on such a path: the least share of the
// margin a bulk channel keeps when many share it (min_margin_share below),
// so channels opened together start where the shared margin would put
// them. Credit given at the open cannot be taken back, and channels opened
// together all start sending at once: eight bulk -L channels opened with
// OpenSSH's 2 MiB each queued 16 MiB (about 55 ms on loopback) in front of
// the small requests of the channels opened beside them before the shared
// margin could act; with 256 KiB each the first requests still waited 11-17
// ms, with 128 KiB 6-9 ms (docs/PERFORMANCE.md). A lone bulk channel is held
// back for a round trip or two: the window-limited rule grows it up to 4x
// per round trip, and a round trip here is under a millisecond.
inline constexpr std::uint32_t short_path_initial_window = 128 * 1024;

// The window a new channel opens with: the configured initial window
// (OpenSSH's 2 MiB), or short_path_initial_window when the path's own round
// trip is known (not 0) and under short_path_us.
std::uint32_t opening_window(const window_config& cfg, std::uint64_t path_rtt_us) noexcept;

// The smallest initial window a channel may open with when the budget is
// short: two packets. Below that the connection refuses new channels.
std::uint32_t min_initial_window(const window_config& cfg) noexcept;

class receive_window {
public:
    // Takes its initial window from the budget: `initial` (0: cfg's
    // initial_window; never more than that), or what the budget has left if
    // that is less (the caller checks that at least min_initial_window() is
    // left).
    receive_window(const window_config& cfg, window_budget& budget, std::uint32_t initial = 0) noexcept;
    ~receive_window();
    receive_window(const receive_window&) = delete;
    receive_window& operator=(const receive_window&) = delete;

    // The window we open with (CHANNEL_OPEN / OPEN_CONFIRMATION).
    std::uint32_t initial() const noexcept { return initial_; }

    // `n` bytes arrived. False when the peer sent more than its credit
    // (beyond a small tolerance, as OpenSSH allows for old peers, and only
    // as far as the budget covers it).
    bool on_receive(std::uint32_t n, std::uint64_t now_us) noexcept;

    // `n` bytes that arrived were thrown away unread (an extended data type
    // nobody reads): they leave the backlog, but no credit goes back for them
    // now, so a peer cannot keep the window turning with data nobody takes.
    void on_discarded(std::uint32_t n) noexcept;

    // The sink took `n` bytes. `rtt_us` is the connection's current round-trip
    // estimate (0: unknown, no growth); `path_rtt_us` the path's own round
    // trip without queues (TCP's minimum RTT; 0: the smallest `rtt_us`
    // given). Returns the credit to send in WINDOW_ADJUST now (0: not worth
    // a message yet).
    std::uint32_t on_consumed(std::uint32_t n, std::uint64_t now_us, std::uint64_t rtt_us,
                              std::uint64_t path_rtt_us = 0) noexcept;
    // Whether the path drops packets at random: the receiving TCP socket
    // has had packets arrive out of order for a second and more
    // (connection::set_rtt). Then loss recovery never ends: the kernel
    // holds what arrived behind each hole until its retransmission, up to a
    // round trip of data the window must cover beside the path.
    void set_random_loss(bool on) noexcept { random_loss_ = on; }

    // Periodic: an idle channel gives its growth back to the budget.
    void on_tick(std::uint64_t now_us) noexcept;

    std::uint32_t credit() const noexcept { return credit_; }
    std::uint32_t target() const noexcept { return target_; }
    std::uint32_t backlog() const noexcept { return backlog_; }
    // Budget this channel holds now: its window, or credit and backlog when larger.
    std::uint64_t budget_held() const noexcept { return granted_; }
    const window_stats& stats() const noexcept { return stats_; }
    // The last change of the target not yet reported, if any.
    std::optional<window_change> take_change() noexcept;

    // A channel idle this long shrinks back to its initial window.
    static constexpr std::uint64_t idle_shrink_us = 10'000'000;
    // A channel is a bulk channel while its sink takes at least
    // bulk_slot_bytes per bulk_slot_us (about 10 Mbit/s): keystrokes and
    // small requests are not, and do not take a share of the margin.
    static constexpr std::uint64_t bulk_slot_us = 200'000;
    static constexpr std::uint64_t bulk_slot_bytes = 256 * 1024;
    // The least share of the margin a channel keeps, however many share it.
    static constexpr std::uint64_t min_margin_share = 128 * 1024;
    // Whether this channel counts as a bulk channel now.
    bool bulk() const noexcept { return bulk_; }

private:
    std::uint32_t adjust_threshold() const noexcept;
    std::uint32_t window_in_effect() const noexcept;
    void measure(std::uint32_t consumed, std::uint64_t now_us, std::uint64_t rtt_us, std::uint64_t path_rtt_us) noexcept;
    void end_interval(std::uint64_t elapsed_us, std::uint64_t rtt_us) noexcept;
    void grow_to(std::uint64_t aim, window_change::reason why, std::uint64_t per_rtt, std::uint64_t rtt_us) noexcept;
    void shrink_to(std::uint64_t to, window_change::reason why, std::uint64_t per_rtt, std::uint64_t rtt_us) noexcept;
    void release_unneeded_budget() noexcept;
    void track_bulk(std::uint32_t consumed, std::uint64_t now_us) noexcept;
    void set_bulk(bool bulk) noexcept;
    // This channel's share of a connection-wide margin (path_margin, max_spare).
    std::uint64_t margin_share(std::uint64_t whole) const noexcept;
    // The least target: the initial window, or less while several bulk
    // channels share the margin.
    std::uint32_t floor() const noexcept;

    const window_config& cfg_;
    window_budget& budget_;
    std::uint32_t initial_;      // this channel's initial window (and the floor it shrinks to)
    std::uint32_t target_;
    std::uint32_t credit_;       // what the peer may still send
    std::uint32_t backlog_ = 0;  // received, not yet consumed by the sink
    std::uint32_t excess_ = 0;   // bytes received beyond credit (tolerated up to a bound)
    std::uint64_t granted_ = 0;  // budget held: at least max(target, credit + backlog)
    std::uint64_t last_data_us_ = 0;
    // The current measurement interval (about one RTT).
    std::uint64_t interval_start_us_ = 0;
    std::uint64_t interval_bytes_ = 0;    // consumed by the sink in it
    std::uint64_t interval_received_ = 0; // arrived from the peer in it
    std::uint32_t interval_target_ = 0;  // window in effect when the interval began
    std::uint32_t interval_backlog_ = 0; // smallest backlog left after the sink took data
    std::uint64_t previous_per_rtt_ = 0;
    std::uint64_t recent_per_rtt_ = 0; // decaying peak of per-RTT delivery over the path (its bounds)
    std::uint64_t previous_moved_ = 0;   // bytes moved in the previous interval
    std::uint64_t previous_elapsed_ = 0; // and its length
    int settled_intervals_ = 0;          // round trips growing by less than a quarter (slow start's end)
    bool random_loss_ = false;           // set_random_loss()
    bool slow_start_ = true;             // the sender's rate still doubling (no path bound yet)
    std::uint64_t min_rtt_us_ = 0;     // the path's RTT: as given, else the smallest RTT given
    int steady_intervals_ = 0;
    bool bulk_ = false;                 // counted in budget_.bulk_channels()
    std::uint64_t bulk_slot_start_us_ = 0;
    std::uint64_t bulk_slot_consumed_ = 0;
    window_stats stats_;
    std::optional<window_change> change_;
};

static_assert(short_path_initial_window == receive_window::min_margin_share,
              "channels on a short path open with the share the margin leaves each of many");

} // namespace longhaul
