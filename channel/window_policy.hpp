// Receive-window policy for one channel, as a pure state machine: no clock
// reads, no system calls. The connection core feeds it what arrived and what
// the sink consumed; it says how much credit to return (WINDOW_ADJUST).
//
// Invariant: credit the peer holds + bytes received but not yet consumed
// never exceed the target window, so a channel's memory is bounded by its
// target.
//
// The target follows the measured bandwidth-delay product: every round trip
// (the RTT the driver measures on the TCP connection) it looks at how many
// bytes the sink consumed in that time and aims for twice that. A transfer
// held back by the window consumes a whole window per RTT, so the target
// doubles each RTT, like TCP slow start, until the link or the sink is the
// limit; then it settles at twice the real BDP. Growth beyond the initial
// window is drawn from a budget shared by all channels of the connection, and
// is given back when the channel idles. Nothing here depends on the kernel's
// buffers having grown first (HPN-SSH's failure mode).
#pragma once

#include <cstdint>

namespace longhaul {

struct window_config {
    std::uint32_t initial_window = 2 * 1024 * 1024; // OpenSSH's session window
    std::uint32_t max_packet = 32 * 1024;           // the largest data packet we accept
    std::uint32_t max_window = 64 * 1024 * 1024;    // growth cap per channel
    std::uint64_t budget = 256ull * 1024 * 1024;    // all channels' targets together
};

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
    std::uint64_t limit() const noexcept { return limit_; }

private:
    std::uint64_t limit_;
    std::uint64_t used_ = 0;
};

class receive_window {
public:
    receive_window(const window_config& cfg, window_budget& budget) noexcept;
    ~receive_window();
    receive_window(const receive_window&) = delete;
    receive_window& operator=(const receive_window&) = delete;

    // The window we open with (CHANNEL_OPEN / OPEN_CONFIRMATION).
    std::uint32_t initial() const noexcept { return cfg_.initial_window; }

    // `n` bytes arrived. False when the peer sent more than its credit
    // (beyond a small tolerance, as OpenSSH allows for old peers).
    bool on_receive(std::uint32_t n, std::uint64_t now_us) noexcept;

    // The sink took `n` bytes. `rtt_us` is the connection's current round-trip
    // estimate (0: unknown, no growth). Returns the credit to send in
    // WINDOW_ADJUST now (0: not worth a message yet).
    std::uint32_t on_consumed(std::uint32_t n, std::uint64_t now_us, std::uint64_t rtt_us) noexcept;

    // Periodic: an idle channel gives its growth back to the budget.
    void on_tick(std::uint64_t now_us) noexcept;

    std::uint32_t credit() const noexcept { return credit_; }
    std::uint32_t target() const noexcept { return target_; }
    std::uint32_t backlog() const noexcept { return backlog_; }

    // A channel idle this long shrinks back to its initial window.
    static constexpr std::uint64_t idle_shrink_us = 10'000'000;

private:
    std::uint32_t adjust_threshold() const noexcept;
    void measure(std::uint32_t consumed, std::uint64_t now_us, std::uint64_t rtt_us) noexcept;

    const window_config& cfg_;
    window_budget& budget_;
    std::uint32_t target_;
    std::uint32_t credit_;       // what the peer may still send
    std::uint32_t backlog_ = 0;  // received, not yet consumed by the sink
    std::uint32_t excess_ = 0;   // bytes received beyond credit (tolerated up to a bound)
    std::uint64_t granted_ = 0;  // growth taken from the budget
    std::uint64_t last_data_us_ = 0;
    std::uint64_t interval_start_us_ = 0; // current measurement interval (one RTT)
    std::uint64_t interval_bytes_ = 0;
};

} // namespace longhaul
