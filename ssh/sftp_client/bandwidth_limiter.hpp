// -l limit: holds transfers to a rate (bits per second). OpenSSH's scp and
// sftp sleep after each buffer; the pipelined engine instead asks when the
// next request may go, so the requests already in flight keep the link busy
// while the sender waits.
#pragma once

#include "ssh/sftp_client/transfer_window.hpp"

#include <cstdint>

namespace longhaul::sftp {

class bandwidth_limiter {
public:
    explicit bandwidth_limiter(std::uint64_t bits_per_second) noexcept : rate_(bits_per_second) {}

    // Accounts `bytes` sent at `now`; returns the earliest time the next
    // request may go. A burst of up to 100 ms of the rate is allowed, so a
    // short stall (the sender busy elsewhere) is made up.
    transfer_clock::time_point account(std::uint64_t bytes, transfer_clock::time_point now) noexcept;
    std::uint64_t rate() const noexcept { return rate_; }

private:
    std::uint64_t rate_;
    transfer_clock::time_point next_{};
    bool started_ = false;
};

} // namespace longhaul::sftp
