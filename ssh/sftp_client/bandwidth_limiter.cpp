#include "ssh/sftp_client/bandwidth_limiter.hpp"

#include <algorithm>

namespace longhaul::sftp {

transfer_clock::time_point bandwidth_limiter::account(std::uint64_t bytes, transfer_clock::time_point now) noexcept
{
    if (rate_ == 0)
        return now;
    const auto burst = std::chrono::milliseconds(100);
    if (!started_ || next_ < now - burst)
        next_ = now - burst;
    started_ = true;
    const auto cost = std::chrono::nanoseconds(static_cast<std::int64_t>(double(bytes) * 8.0 * 1e9 / double(rate_)));
    next_ += std::chrono::duration_cast<transfer_clock::duration>(cost);
    return std::max(next_, now);
}

} // namespace longhaul::sftp
