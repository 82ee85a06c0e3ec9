// forward_load_util: die, set_nodelay, the pattern's bytes, percentile and
// fmt (forward_load_util.hpp).
#include "forward_load_util.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>

namespace forward_load {

[[noreturn]] void die(const std::string& what)
{
    std::fprintf(stderr, "forward_load: %s\n", what.c_str());
    std::exit(2);
}

void set_nodelay(int fd)
{
    // Requests and probes are small and must not wait for Nagle; bulk
    // writes are large anyway.
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

pattern::pattern() : bytes_(period + max_io)
{
    std::uint64_t x = 0x9e3779b97f4a7c15ULL;
    for (std::size_t i = 0; i < period; ++i) {
        // xorshift64*: cheap and without short cycles.
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        bytes_[i] = static_cast<unsigned char>((x * 0x2545f4914f6cdd1dULL) >> 56);
    }
    std::copy_n(bytes_.begin(), max_io, bytes_.begin() + period);
}

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return std::nan("");
    std::sort(v.begin(), v.end());
    // Nearest rank: the smallest value with at least p% of the samples at
    // or below it.
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    return v[std::min(v.size(), std::max<std::size_t>(rank, 1)) - 1];
}

std::string fmt(double v, int decimals)
{
    if (std::isnan(v))
        return "nan";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

}  // namespace forward_load
