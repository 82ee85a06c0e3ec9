// The round-trip time measured by the SSH layer itself, for connections
// whose transport is not a TCP socket the driver can ask (a ProxyCommand, a
// ProxyJump hop, sshd -i on a pipe), and as a cross-check of TCP_INFO where
// both exist. The connection core sends a keepalive@openssh.com global
// request with want_reply (every SSH peer must answer one, RFC 4254 4) and
// times the answer; this class decides when and keeps the smoothed estimate,
// as a pure function of the times it is given.
#pragma once

#include <cstdint>

namespace longhaul {

class rtt_probe {
public:
    // Whether a probe should go out now (the caller sends probes only while
    // data moves). Without a transport RTT the window policy depends on this
    // one, so it probes often at first and every few seconds after; with one,
    // less often, to cross-check it.
    bool due(std::uint64_t now_us, bool transport_rtt_known) const noexcept;
    void sent(std::uint64_t now_us) noexcept;
    // The answer to the probe in flight arrived.
    void answered(std::uint64_t now_us) noexcept;

    bool in_flight() const noexcept { return in_flight_; }
    std::uint64_t sent_at() const noexcept { return sent_us_; }
    // Smoothed as TCP does (RFC 6298: 7/8 old + 1/8 new); 0 before the first answer.
    std::uint64_t srtt_us() const noexcept { return srtt_us_; }
    // What the window policy uses: the smallest sample so far, the path's
    // own round trip. A probe waits behind whatever bulk data the peer has
    // queued (in slow start that can be seconds' worth), so later samples
    // overstate the path; the window's twofold headroom covers the queue,
    // and a window that turns out too small is seen as window-limited and
    // grown anyway.
    std::uint64_t estimate_us() const noexcept;
    std::uint64_t min_us() const noexcept { return min_us_; }
    std::uint64_t samples() const noexcept { return samples_; }

    static constexpr std::uint64_t early_interval_us = 500'000;     // the first few samples
    static constexpr std::uint64_t interval_us = 2'000'000;         // no transport RTT
    static constexpr std::uint64_t cross_check_interval_us = 5'000'000;
    static constexpr std::uint64_t early_samples = 4;

private:
    bool in_flight_ = false;
    std::uint64_t sent_us_ = 0;
    std::uint64_t last_sent_us_ = 0;
    std::uint64_t srtt_us_ = 0;
    std::uint64_t min_us_ = 0;
    std::uint64_t samples_ = 0;
};

} // namespace longhaul
