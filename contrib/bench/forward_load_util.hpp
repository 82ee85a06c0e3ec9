// forward_load_util: what every part of forward_load shares: the clock and
// I/O sizes, small socket helpers, the byte pattern every stream sends and
// checks, and the formatting of the result line's figures.
#pragma once

#include <cerrno>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace forward_load {

using steady = std::chrono::steady_clock;

// Largest single read or write: big enough that a bulk stream costs few
// system calls per MiB, small enough to stay in cache for the compare.
inline constexpr std::size_t max_io = 256 * 1024;

// Bytes one connection may move (read + written) before the loop turns to
// the others: fairness between streams, so that a newly opened stream's
// probe is not queued behind a bulk stream that always has more to move.
inline constexpr std::size_t turn_bytes = 1024 * 1024;

inline double ms_between(steady::time_point a, steady::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

[[noreturn]] void die(const std::string& what);

void set_nodelay(int fd);

inline bool would_block(int e) { return e == EAGAIN || e == EWOULDBLOCK; }

// What every stream sends: stream i's byte at position p is
// bytes_[(origin_i + p) % period_]. The period is not a multiple of any
// chunk or packet size, so a lost, repeated or reordered block shifts what
// follows and the compare sees it. The buffer holds max_io bytes past the
// period, so any window of up to max_io bytes is contiguous.
class pattern {
public:
    static constexpr std::size_t period = (std::size_t{1} << 22) + 4099;

    pattern();

    const unsigned char* at(std::uint64_t origin, std::uint64_t pos) const
    {
        return bytes_.data() + (origin + pos) % period;
    }

private:
    std::vector<unsigned char> bytes_;
};

// The nearest-rank p-th percentile of v; NaN when v is empty.
double percentile(std::vector<double> v, double p);

// v with the given decimals, "nan" for NaN.
std::string fmt(double v, int decimals = 2);

}  // namespace forward_load
