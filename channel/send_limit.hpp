// How much of a peer's window a channel uses when that window is far more
// than the path holds (the sending side's counterpart of window_policy).
//
// OpenSSH's receive windows are fixed: 2 MiB per channel, returned as its
// channel writes the data out (classify_sender() == peer_sender::openssh).
// On a path under a millisecond that is a hundred times what the path
// holds, so whatever a channel sends beyond what the peer is writing out
// waits in the one TCP stream: in our socket's unsent queue and the peer's
// receive queue, ahead of every other channel's requests. Longhaul's ssh
// with eight bulk -L channels to Debian's sshd on loopback queued 4 MB in
// its socket and 2 MB in sshd's, and 64-byte requests beside them waited
// 29-70 ms (p95) where a Longhaul sshd, whose windows follow the path, kept
// them at 8-12 ms (docs/PERFORMANCE.md).
//
// So on such a path a channel keeps at most limit() of a fixed window in
// use (sent, not yet returned): what the peer returned over
// short_path_send_horizon_us at its recent rate, and never less than
// floor(): five of the peer's maximum packets (160 KiB for OpenSSH's 32
// KiB), the three an OpenSSH receiver holds back before it returns credit
// and two more in flight, so the limit cannot stop a channel whose data the
// peer has already written out; the rate term lets a channel that the peer
// drains fast (a 10 Gbit/s LAN) keep the link busy. Peers whose windows move
// (Longhaul, HPN-SSH) already size them to the path, and a connection with
// one channel has no other channel's data to make room for: no limit.
#pragma once

#include <cstdint>

namespace longhaul {

inline constexpr std::uint64_t short_path_send_floor = 5 * 32 * 1024; // for OpenSSH's packets
inline constexpr std::uint64_t short_path_send_horizon_us = 4000;

class send_limit {
public:
    // The peer returned `bytes` of credit (a window adjust) at `now_us`.
    void on_return(std::uint64_t bytes, std::uint64_t now_us) noexcept;
    // The least limit for a peer whose packets are at most `peer_max_packet`.
    static std::uint64_t floor(std::uint64_t peer_max_packet) noexcept;
    // The most this channel may have in use.
    std::uint64_t limit(std::uint64_t peer_max_packet) const noexcept;
    // What may be sent now: the peer opened the channel with `opened` and
    // its window is now `window` (what is in use is the difference).
    std::uint64_t capacity(std::uint64_t opened, std::uint64_t window, std::uint64_t peer_max_packet) const noexcept;
    // Bytes per second the peer returned (the last intervals' decaying peak).
    std::uint64_t return_rate() const noexcept { return rate_; }

    // The rate is measured over intervals of at least this long: the
    // horizon itself, so that a sample spans the peer's bursts of returns.
    static constexpr std::uint64_t rate_interval_us = short_path_send_horizon_us;

private:
    std::uint64_t returned_ = 0;
    std::uint64_t since_us_ = 0;
    bool started_ = false;
    std::uint64_t rate_ = 0;
};

} // namespace longhaul
