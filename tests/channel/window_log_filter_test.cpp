#include "channel/window_report.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {
window_change change_to(std::uint32_t to)
{
    window_change c;
    c.to = to;
    c.why = window_change::reason::spare_bound;
    return c;
}
} // namespace

TEST_CASE("window_log_filter: small moves within a second are not printed, real ones are")
{
    window_log_filter f;
    constexpr std::uint32_t k = 1024;
    std::uint64_t t = 5'000'000;
    CHECK(f.keep(0, change_to(128 * k), t)); // a channel's first change
    // A round trip later, 4 KiB less: below the line's resolution.
    t += 200;
    CHECK_FALSE(f.keep(0, change_to(124 * k), t));
    // Many such steps: measured from the last printed line, not the last change.
    CHECK_FALSE(f.keep(0, change_to(116 * k), t += 200));
    CHECK(f.keep(0, change_to(108 * k), t += 200)); // 20 KiB below 128: an eighth or more
    // Growth by an eighth is printed too.
    CHECK(f.keep(0, change_to(124 * k), t += 200));
    // Other channels have their own lines.
    CHECK(f.keep(1, change_to(125 * k), t));
    // A second after the channel's last line, even a small change is printed.
    CHECK_FALSE(f.keep(0, change_to(125 * k), t += 1000));
    CHECK(f.keep(0, change_to(125 * k), t + window_log_filter::quiet_us));
    // A released channel's number starts afresh.
    f.forget(1);
    CHECK(f.keep(1, change_to(125 * k), t + 1));
}
