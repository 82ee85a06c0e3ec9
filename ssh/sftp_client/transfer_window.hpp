// How many bytes of READ/WRITE requests the client keeps outstanding: the
// pipelining policy shared by scp and sftp, a pure function of what was
// sent, what came back and when (time is passed in).
//
// OpenSSH's client keeps at most 64 requests of 32 KiB in flight (-R, -B),
// 2 MiB per round trip: 84 Mbit/s at 200 ms whatever the link. Here the
// window follows the bandwidth-delay product instead:
//
// - Every reply gives a delivery-rate sample (bytes delivered since the
//   request was sent, over the time they took, as BBR measures it) and a
//   round-trip sample (request to reply). The window keeps the maximum rate
//   of the last rounds and the minimum round trip of the last 10 seconds.
// - A round is one window's worth of replies. While the best rate of a
//   round is at least 25% above the previous best (the pipe is not full
//   yet), the window doubles each round, as TCP's slow start does.
// - After three rounds without that growth the pipe is full: the window
//   settles at twice the measured product (rate x round trip), the
//   headroom that lets the rate double again before the window is the
//   limit; it keeps following the product as the rate and round trip move.
//   A later 25% rise (the SSH channel window grew, say) resumes doubling.
// - Rounds in which the sender did not fill the window (a slow disk, the
//   end of a file) are not counted as "no growth".
// - The window never drops below its initial size (the session starts at
//   8 MiB, four times what OpenSSH's client keeps in flight) and never
//   exceeds the memory budget.
//
// -B and -R make the window fixed: exactly R requests of B bytes, as in
// OpenSSH.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>

namespace longhaul::sftp {

using transfer_clock = std::chrono::steady_clock;

struct window_settings {
    std::uint32_t chunk = 32 * 1024;        // bytes per READ/WRITE request
    std::uint64_t initial = 2 * 1024 * 1024; // bytes in flight at the start
    std::uint64_t max = 256 * 1024 * 1024;   // memory budget
    // Fixed (-B/-R): `max_requests` requests at once, never adapted.
    bool fixed = false;
    std::uint32_t max_requests = 64;
};

// The default memory budget: 1/16 of physical memory, 64 MiB to 256 MiB.
std::uint64_t default_window_budget() noexcept;

class transfer_window {
public:
    // What the window remembers about one request until its reply.
    struct ticket {
        std::uint64_t bytes = 0;
        std::uint64_t delivered_at_send = 0;
        transfer_clock::time_point delivered_time_at_send{};
        transfer_clock::time_point sent{};
    };

    explicit transfer_window(window_settings s);

    // May a request of `bytes` go out now? Always true with nothing in
    // flight, so a request larger than the window still makes progress.
    bool may_send(std::uint64_t bytes) const noexcept;
    ticket on_send(std::uint64_t bytes, transfer_clock::time_point now) noexcept;
    // The reply to a request: `delivered` bytes moved (a short read
    // delivers less than was asked; a failed request delivers nothing).
    void on_reply(const ticket& t, std::uint64_t delivered, transfer_clock::time_point now) noexcept;
    // The sender had more window than data to put in it (disk, end of file).
    void note_app_limited() noexcept { app_limited_ = true; }

    std::uint64_t window() const noexcept { return window_; }
    std::uint64_t in_flight() const noexcept { return in_flight_; }
    std::uint32_t requests_in_flight() const noexcept { return requests_in_flight_; }
    std::uint32_t chunk() const noexcept { return s_.chunk; }
    bool fixed() const noexcept { return s_.fixed; }
    bool filling() const noexcept { return startup_; }

    // For -v lines and tests.
    double max_rate() const noexcept; // bytes per second
    std::chrono::nanoseconds min_rtt() const noexcept { return min_rtt_; }
    std::uint64_t peak_window() const noexcept { return peak_window_; }
    std::uint64_t rounds() const noexcept { return rounds_; }

private:
    void end_round() noexcept;
    void set_window(std::uint64_t w) noexcept;

    static constexpr std::size_t rate_rounds = 10;

    window_settings s_;
    std::uint64_t window_;
    std::uint64_t in_flight_ = 0;
    std::uint32_t requests_in_flight_ = 0;
    std::uint64_t delivered_ = 0;
    transfer_clock::time_point delivered_time_{};
    // Rounds.
    std::uint64_t rounds_ = 0;
    std::uint64_t next_round_delivered_ = 0;
    double round_max_rate_ = 0;
    std::array<double, rate_rounds> round_rates_{};
    bool round_filled_ = false;
    bool app_limited_ = false;
    // Startup and its full-pipe detection.
    bool startup_ = true;
    double full_rate_ = 0;
    int rounds_without_growth_ = 0;
    // Round-trip filter.
    std::chrono::nanoseconds min_rtt_ = std::chrono::nanoseconds::max();
    transfer_clock::time_point min_rtt_stamp_{};
    std::uint64_t peak_window_ = 0;
};

} // namespace longhaul::sftp
