#include "channel/window_policy.hpp"

#include <doctest/doctest.h>

#include <algorithm>

using namespace longhaul;

namespace {

// Simulates a sender limited only by the window over a path with `rtt_us`,
// at most `link_per_rtt` bytes per RTT; returns the receiver's target after
// `rtts` round trips.
std::uint32_t simulate(receive_window& w, std::uint64_t rtt_us, std::uint64_t link_per_rtt, int rtts,
                       std::uint64_t& now)
{
    std::uint64_t credit_at_sender = w.credit();
    for (int i = 0; i < rtts; ++i) {
        const std::uint64_t burst = std::min(credit_at_sender, link_per_rtt);
        credit_at_sender -= burst;
        std::uint64_t granted = 0;
        // The burst arrives in 32 KiB packets spread over the RTT and is consumed at once.
        for (std::uint64_t off = 0; off < burst; off += 32768) {
            const auto n = static_cast<std::uint32_t>(std::min<std::uint64_t>(32768, burst - off));
            now += rtt_us * n / std::max<std::uint64_t>(burst, 1);
            REQUIRE(w.on_receive(n, now));
            granted += w.on_consumed(n, now, rtt_us);
        }
        if (burst == 0)
            now += rtt_us;
        credit_at_sender += granted; // the adjusts arrive for the next round trip
    }
    return w.target();
}

} // namespace

TEST_CASE("window_policy: a window-limited transfer doubles the window per RTT up to the BDP")
{
    window_config cfg;
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    std::uint64_t now = 1;
    // 100 ms RTT, link carries 12.5 MB per RTT (1 Gbit/s): BDP 12.5 MB.
    const auto target = simulate(w, 100'000, 12'500'000, 12, now);
    CHECK(target >= 2 * 12'500'000 * 7 / 8);
    CHECK(target <= cfg.max_window);
    CHECK(budget.used() == target - cfg.initial_window);
}

TEST_CASE("window_policy: no growth without an RTT, or when the link is the limit")
{
    window_config cfg;
    window_budget budget(cfg.budget);
    {
        receive_window w(cfg, budget);
        std::uint64_t now = 1;
        CHECK(simulate(w, 0, 10'000'000, 10, now) == cfg.initial_window);
    }
    {
        receive_window w(cfg, budget);
        std::uint64_t now = 1;
        // 10 ms RTT at 100 Mbit/s: BDP 125 kB, far below the 2 MiB initial window.
        CHECK(simulate(w, 10'000, 125'000, 20, now) == cfg.initial_window);
    }
    CHECK(budget.used() == 0);
}

TEST_CASE("window_policy: growth stops at the shared budget and returns when idle")
{
    window_config cfg;
    cfg.budget = 8 * 1024 * 1024;
    window_budget budget(cfg.budget);
    receive_window a(cfg, budget), b(cfg, budget);
    std::uint64_t now = 1;
    simulate(a, 100'000, 50'000'000, 10, now);
    simulate(b, 100'000, 50'000'000, 10, now);
    CHECK(budget.used() <= cfg.budget);
    CHECK(std::uint64_t(a.target()) + b.target() <= 2ull * cfg.initial_window + cfg.budget);
    a.on_tick(now + receive_window::idle_shrink_us + 1);
    CHECK(a.target() == cfg.initial_window);
    CHECK(budget.used() == b.target() - cfg.initial_window);
}

TEST_CASE("window_policy: credit plus backlog never exceeds the target")
{
    window_config cfg;
    cfg.initial_window = 1 << 20;
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    std::uint64_t now = 1;
    // The sink lags: consumes half of what arrives.
    for (int i = 0; i < 100; ++i) {
        if (w.credit() >= 32768) {
            REQUIRE(w.on_receive(32768, now));
        }
        w.on_consumed(16384, now, 1000);
        now += 100;
        CHECK(std::uint64_t(w.credit()) + w.backlog() <= w.target());
    }
}

TEST_CASE("window_policy: overrunning the window is tolerated only a little")
{
    window_config cfg;
    cfg.initial_window = 100000;
    window_budget budget(cfg.budget);
    receive_window w(cfg, budget);
    CHECK(w.on_receive(100000, 1));
    CHECK(w.on_receive(5000, 2));
    CHECK_FALSE(w.on_receive(6000, 3));
}
