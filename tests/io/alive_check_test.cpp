#include "common/io/alive_check.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace std::chrono_literals;
using action = alive_check::action;

namespace {
const alive_check::clock::time_point alive_t0{100s};
}

TEST_CASE("alive_check: a silent peer is given up (count_max + 1) intervals after its last byte")
{
    alive_check a(15s, 3);
    // Heard at alive_t0; the timer first fires early (armed at the start).
    auto s = a.on_timer(alive_t0, alive_t0 + 5s);
    CHECK(s.what == action::wait);
    CHECK(s.next == alive_t0 + 15s);
    int probes = 0;
    auto now = s.next;
    for (;;) {
        s = a.on_timer(alive_t0, now);
        if (s.what != action::probe)
            break;
        ++probes;
        now = s.next;
    }
    CHECK(probes == 3);
    CHECK(s.what == action::give_up);
    CHECK(now == alive_t0 + 60s); // ssh_config(5): "approximately 45 seconds" of probing after 15 s idle
}

TEST_CASE("alive_check: a reply (any input) answers every probe sent before it")
{
    alive_check a(1s, 3);
    CHECK(a.on_timer(alive_t0, alive_t0 + 1s).what == action::probe);
    CHECK(a.on_timer(alive_t0, alive_t0 + 2s).what == action::probe);
    CHECK(a.unanswered() == 2);
    // The reply came at alive_t0 + 2.05 s: the next probe is due an interval after it.
    const auto reply = alive_t0 + 2050ms;
    auto s = a.on_timer(reply, alive_t0 + 3s);
    CHECK(s.what == action::wait);
    CHECK(s.next == reply + 1s);
    CHECK(a.unanswered() == 0);
    CHECK(a.on_timer(reply, s.next).what == action::probe);
}

TEST_CASE("alive_check: a link that keeps delivering is never probed")
{
    alive_check a(2s, 1);
    auto now = alive_t0;
    for (int i = 0; i < 100; ++i) {
        now += 1500ms;
        auto s = a.on_timer(now - 100ms, now);
        REQUIRE(s.what == action::wait);
        CHECK(s.next == now - 100ms + 2s);
    }
}

TEST_CASE("alive_check: ClientAliveCountMax 0 gives up at the first expiry, without a probe")
{
    alive_check a(5s, 0);
    CHECK(a.on_timer(alive_t0, alive_t0 + 4s).what == action::wait);
    CHECK(a.on_timer(alive_t0, alive_t0 + 5s).what == action::give_up);
}
