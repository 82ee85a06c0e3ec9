// Inactivity timeouts in the connection core (sshd's ChannelTimeout): the
// core notes data moving on each channel and reports the open channels
// idle past their timeout; closing them is the program's part.
#include "channel/connection.hpp"

#include "common/wire.hpp"
#include "tests/channel/connection_harness.hpp"

using namespace longhaul;
using namespace longhaul::test;
using namespace std::chrono_literals;
using cet = connection_event_type;

namespace {

// The server gives "direct-tcpip" 2 s and "session" 10 s, nothing else.
connection_config idle_server_timeouts()
{
    connection_config cfg;
    cfg.idle_timeout_for = [](std::string_view type) -> std::chrono::milliseconds {
        if (type == "direct-tcpip")
            return 2s;
        if (type == "session")
            return 10s;
        return 0ms;
    };
    return cfg;
}

// Opens `type` from the client; the server accepts it.
std::pair<channel_id, channel_id> idle_open(connection_pair& p, std::string_view type)
{
    auto id = p.client->open(type);
    REQUIRE(id);
    p.run();
    REQUIRE(p.server_events.back().type == cet::open_request);
    const channel_id s = p.server_events.back().channel;
    p.server->accept(s);
    p.run();
    return {*id, s};
}

// Advances the shared clock by `step` and asks the server's core.
std::vector<channel_id> idle_after(connection_pair& p, std::chrono::milliseconds step)
{
    p.tp.now += step;
    return p.server->idle_expired(p.tp.now);
}

} // namespace

TEST_CASE("connection idle: a channel with no data either way is reported once, after its type's timeout")
{
    connection_pair p({}, idle_server_timeouts());
    auto [c, s] = idle_open(p, "direct-tcpip");
    CHECK(p.server->idle_timeout(s) == 2s);
    CHECK(p.client->idle_timeout(c) == 0ms); // the client was given no timeouts
    // The first look starts the clock; periodic looks (200 ms, the
    // runner's tick) report it once 2 s have passed, never before.
    CHECK(idle_after(p, 0ms).empty());
    for (int i = 0; i < 9; ++i)
        CHECK(idle_after(p, 200ms).empty());
    CHECK(idle_after(p, 200ms) == std::vector<channel_id>{s});
    // Reported once: closing it is the program's part.
    CHECK(idle_after(p, 5s).empty());
    CHECK(p.server->exists(s));
    CHECK(p.client->idle_expired(p.tp.now).empty());
}

TEST_CASE("connection idle: data either way restarts the clock; a busy channel is never reported")
{
    connection_pair p({}, idle_server_timeouts());
    auto [c, s] = idle_open(p, "direct-tcpip");
    CHECK(idle_after(p, 0ms).empty());
    // A byte every 1.5 s, alternately from each side, for 30 s.
    for (int i = 0; i < 20; ++i) {
        p.tp.now += 1500ms;
        if (i % 2 == 0)
            REQUIRE(p.client->send_data(c, as_bytes("x")));
        else
            REQUIRE(p.server->send_data(s, as_bytes("y")));
        p.run();
        CHECK(p.server->idle_expired(p.tp.now).empty());
    }
    // Then silence: 2 s after the last look that saw data.
    CHECK(idle_after(p, 1900ms).empty());
    CHECK(idle_after(p, 100ms) == std::vector<channel_id>{s});
}

TEST_CASE("connection idle: channels are timed by their own type; zero or no rule means none")
{
    connection_pair p({}, idle_server_timeouts());
    auto [c1, tcp] = idle_open(p, "direct-tcpip");
    auto [c2, session] = idle_open(p, "session");
    auto [c3, other] = idle_open(p, "x11");
    (void)c1, (void)c2, (void)c3;
    CHECK(p.server->idle_timeout(other) == 0ms);
    CHECK(idle_after(p, 0ms).empty());
    CHECK(idle_after(p, 2s) == std::vector<channel_id>{tcp});
    CHECK(idle_after(p, 7s).empty());
    CHECK(idle_after(p, 1s) == std::vector<channel_id>{session});
    CHECK(idle_after(p, 1h).empty()); // x11: no timeout
}

TEST_CASE("connection idle: a session named by its request keeps its last data, as OpenSSH's channel_set_xtype")
{
    connection_pair p({}, idle_server_timeouts());
    auto [c, s] = idle_open(p, "session");
    CHECK(idle_after(p, 0ms).empty());
    CHECK(idle_after(p, 3s).empty());
    // "session:command" is given 4 s: 3 s have passed already.
    p.server->set_idle_timeout(s, 4s);
    CHECK(idle_after(p, 900ms).empty());
    CHECK(idle_after(p, 100ms) == std::vector<channel_id>{s});
    // And set to zero, a channel is never reported.
    auto [c2, s2] = idle_open(p, "session");
    (void)c, (void)c2;
    p.server->set_idle_timeout(s2, 0ms);
    CHECK(idle_after(p, 0ms).empty());
    CHECK(idle_after(p, 1h).empty());
}

TEST_CASE("connection idle: only channels open both ways count; a closing one is not reported")
{
    connection_config client_cfg = idle_server_timeouts();
    connection_pair p(client_cfg, idle_server_timeouts());
    // Opened by the client and not yet confirmed: its clock has not started.
    auto pending = p.client->open("direct-tcpip");
    REQUIRE(pending);
    CHECK(p.client->idle_timeout(*pending) == 2s);
    p.tp.now += 0ms;
    CHECK(p.client->idle_expired(p.tp.now).empty());
    p.tp.now += 1h;
    CHECK(p.client->idle_expired(p.tp.now).empty());
    p.run();
    const channel_id s = p.server_events.back().channel;
    p.server->accept(s);
    p.run();
    CHECK(p.client->idle_expired(p.tp.now).empty()); // the clock starts now
    p.tp.now += 2s;
    CHECK(p.client->idle_expired(p.tp.now) == std::vector<channel_id>{*pending});
    // The server's side, closed by the program before its timeout passed.
    CHECK(idle_after(p, 0ms).empty());
    p.server->close(s);
    CHECK(idle_after(p, 1h).empty());
}
