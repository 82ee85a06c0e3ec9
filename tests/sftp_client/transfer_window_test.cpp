// The pipelining policy alone: slow-start doubling while the rate rises,
// settling at twice the measured product, the memory budget, the fixed
// -B/-R mode, and rounds the sender did not fill.
#include "ssh/sftp_client/transfer_window.hpp"

#include <doctest/doctest.h>

#include <deque>

using namespace longhaul::sftp;
using namespace std::chrono_literals;

namespace {

// A pipe of `rate` bytes/s and round trip `rtt`: requests are answered in
// order, each at max(sent + rtt, previous answer + its bytes / rate).
struct pipe_model {
    double rate;
    std::chrono::nanoseconds rtt;
    transfer_clock::time_point now{std::chrono::seconds(10)};
    transfer_clock::time_point last_answer{};

    struct pending {
        transfer_window::ticket t;
        transfer_clock::time_point due;
    };
    std::deque<pending> queue;

    // Keeps the window full for `duration`; returns the bytes delivered.
    std::uint64_t run(transfer_window& w, std::chrono::nanoseconds duration, std::uint32_t chunk)
    {
        const auto end = now + duration;
        std::uint64_t delivered = 0;
        while (now < end) {
            while (w.may_send(chunk)) {
                auto t = w.on_send(chunk, now);
                auto due = std::max(now + rtt, last_answer + std::chrono::nanoseconds(std::int64_t(chunk * 1e9 / rate)));
                last_answer = due;
                queue.push_back({t, due});
            }
            auto p = queue.front();
            queue.pop_front();
            now = std::max(now, p.due);
            w.on_reply(p.t, chunk, now);
            delivered += chunk;
        }
        return delivered;
    }
};

} // namespace

TEST_CASE("transfer window: doubles while the rate rises, settles near twice the product")
{
    window_settings s;
    s.chunk = 256 * 1024;
    s.initial = 2 * 1024 * 1024;
    s.max = 256 * 1024 * 1024;
    transfer_window w(s);
    pipe_model p{125e6, 200ms};
    p.run(w, 10s, s.chunk);
    const double product = 125e6 * 0.2; // 25 MB
    CHECK_FALSE(w.filling());
    CHECK(w.window() >= std::uint64_t(1.5 * product));
    CHECK(w.window() <= std::uint64_t(3 * product));
    CHECK(w.max_rate() > 0.9 * 125e6);
    CHECK(w.min_rtt() >= 200ms);
    CHECK(w.min_rtt() < 220ms);
    // Steady state: the rate is the link's.
    const auto bytes = p.run(w, 5s, s.chunk);
    CHECK(double(bytes) / 5.0 > 0.95 * 125e6);
}

TEST_CASE("transfer window: never beyond the memory budget, never below its start")
{
    window_settings s;
    s.chunk = 256 * 1024;
    s.initial = 2 * 1024 * 1024;
    s.max = 8 * 1024 * 1024;
    transfer_window w(s);
    pipe_model p{1e9, 500ms};
    p.run(w, 20s, s.chunk);
    CHECK(w.window() == s.max);
    CHECK(w.peak_window() == s.max);

    transfer_window small(window_settings{.chunk = 65536, .initial = 1 << 20, .max = 1 << 28});
    pipe_model fast{1e8, 100us};
    fast.run(small, 2s, 65536);
    CHECK(small.window() == (1u << 20));
}

TEST_CASE("transfer window: -B/-R are fixed: R requests, whatever the pipe")
{
    window_settings s;
    s.chunk = 32768;
    s.fixed = true;
    s.max_requests = 64;
    transfer_window w(s);
    pipe_model p{125e6, 200ms};
    const auto bytes = p.run(w, 10s, s.chunk);
    CHECK(w.window() == 64u * 32768);
    // 2 MiB per round trip.
    CHECK(double(bytes) / 10.0 < 11e6);
    CHECK(double(bytes) / 10.0 > 9e6);
}

TEST_CASE("transfer window: a sender that does not fill the window does not end the growth")
{
    window_settings s;
    s.chunk = 256 * 1024;
    s.initial = 2 * 1024 * 1024;
    transfer_window w(s);
    // Rounds of one small request (an app-limited sender) keep the window
    // in its starting phase.
    auto now = transfer_clock::time_point(std::chrono::seconds(5));
    for (int i = 0; i < 10; ++i) {
        auto t = w.on_send(1000, now);
        w.note_app_limited();
        now += 100ms;
        w.on_reply(t, 1000, now);
    }
    CHECK(w.filling());
    CHECK(w.window() == s.initial);
}
