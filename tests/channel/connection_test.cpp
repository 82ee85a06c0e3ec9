#include "channel/connection.hpp"
#include "channel/window_report.hpp"

#include "common/wire.hpp"
#include "tests/channel/connection_harness.hpp"

using namespace longhaul;
using namespace longhaul::test;
using cet = connection_event_type;

TEST_CASE("connection: open, data both ways, stderr, EOF and CLOSE release the channel")
{
    connection_pair p;
    auto [c, s] = p.open_session();
    CHECK(p.client->info(c).open);
    CHECK(p.server->info(s).type == "session");

    REQUIRE(p.client->send_data(c, as_bytes("to server")).has_value());
    REQUIRE(p.server->send_data(s, as_bytes("to client")).has_value());
    REQUIRE(p.server->send_data(s, as_bytes("err"), extended_data_stderr).has_value());
    p.run();
    CHECK(as_string_view(p.server_received[s]) == "to server");
    CHECK(p.client_received[c] == to_bytes(as_bytes("to clienterr")));
    CHECK(p.client_events[p.client_events.size() - 1].code == extended_data_stderr);

    p.server->send_eof(s);
    p.server->close(s);
    p.run();
    CHECK(p.count(p.client_events, cet::eof) == 1);
    CHECK(p.count(p.client_events, cet::close) == 1);
    CHECK(p.server->exists(s)); // half closed: waiting for the client's CLOSE
    CHECK(p.client->send_capacity(c) == 0);
    p.client->close(c);
    p.run();
    CHECK_FALSE(p.client->exists(c));
    CHECK_FALSE(p.server->exists(s));
    CHECK(p.client->channel_count() == 0);
    CHECK(p.server->channel_count() == 0);
    CHECK_FALSE(p.tp.client->closed());
}

TEST_CASE("connection: a refused open reports reason and text")
{
    connection_pair p;
    auto id = p.client->open("direct-tcpip");
    p.run();
    p.server->reject(p.server_events.back().channel, open_failure_reason::administratively_prohibited, "no\x1b[31m");
    p.run();
    auto e = p.client_events.back();
    CHECK(e.type == cet::open_failed);
    CHECK(e.code == 1);
    CHECK(e.text == "no\\033[31m");
    CHECK_FALSE(p.client->exists(*id));
}

TEST_CASE("connection: the sender never exceeds the window; a slow sink holds it shut")
{
    connection_config cfg;
    cfg.window.initial_window = 64 * 1024;
    connection_pair p(cfg);
    p.auto_consume = false;
    auto [c, s] = p.open_session();
    CHECK(p.client->send_capacity(c) == 64 * 1024);
    bytes chunk(100 * 1024, 7);
    CHECK_FALSE(p.client->send_data(c, chunk).has_value()); // more than the window
    REQUIRE(p.client->send_data(c, byte_span(chunk).first(64 * 1024)).has_value());
    CHECK(p.client->send_capacity(c) == 0);
    p.run();
    CHECK(p.server_received[s].size() == 64 * 1024);
    CHECK(p.client->send_capacity(c) == 0); // nothing consumed: no credit back
    p.server->consumed(s, 4 * 1024, p.tp.now);
    p.run();
    CHECK(p.client->send_capacity(c) == 0); // below the adjust threshold
    p.server->consumed(s, 60 * 1024, p.tp.now);
    p.run();
    CHECK(p.client->send_capacity(c) == 64 * 1024);
    CHECK(p.count(p.client_events, cet::window_opened) >= 1);
}

TEST_CASE("connection: data packets respect the peer's maximum packet size")
{
    connection_config cfg;
    cfg.window.max_packet = 1000;
    connection_pair p(cfg);
    auto [c, s] = p.open_session();
    bytes chunk(5000, 1);
    REQUIRE(p.client->send_data(c, chunk).has_value());
    p.run();
    CHECK(p.count(p.server_events, cet::data) == 5);
    auto room = p.client->prepare_data(c, 99999);
    CHECK(room.size() == 1000);
    REQUIRE(p.client->commit_data(c, 10).has_value());
    p.run();
    CHECK(p.server_received[s].size() == 5010);
}

TEST_CASE("connection: requests are answered in order; unsolicited replies are protocol errors")
{
    connection_pair p;
    auto [c, s] = p.open_session();
    p.client->send_request(c, "exec", true, string_request{"ls -l"}.encode());
    p.client->send_request(c, "env", false, env_request{"LANG", "C"}.encode());
    p.client->send_request(c, "shell", true);
    p.run();
    REQUIRE(p.count(p.server_events, cet::request) == 3);
    auto exec = p.server_events[p.server_events.size() - 3];
    CHECK(exec.name == "exec");
    CHECK(exec.want_reply);
    CHECK(string_request::decode(exec.data)->value == "ls -l");
    p.server->reply(s, true);
    p.server->reply(s, false);
    p.server->reply(s, true); // nothing owed: ignored
    p.run();
    REQUIRE(p.count(p.client_events, cet::request_reply) == 2);
    CHECK(p.client_events[p.client_events.size() - 2].success);
    CHECK_FALSE(p.client_events.back().success);

    bytes bogus;
    wire_writer(bogus).u8(msg::channel_success).u32(p.client->info(c).remote_id);
    REQUIRE(p.tp.client->send(bogus).has_value());
    p.run();
    CHECK(p.tp.server_log.disconnected);
    CHECK(p.tp.server_log.disconnect_text == "channel 0: unexpected request reply");
}

TEST_CASE("connection: global requests and replies")
{
    connection_pair p;
    p.client->send_global_request("tcpip-forward", true, as_bytes("x"));
    p.client->send_global_request("keepalive@openssh.com", true);
    p.run();
    REQUIRE(p.count(p.server_events, cet::global_request) == 2);
    const std::uint8_t port[] = {0, 0, 0x1f, 0x90};
    p.server->reply_global(true, port);
    p.server->reply_global(false);
    p.run();
    REQUIRE(p.count(p.client_events, cet::global_reply) == 2);
    CHECK(p.client_events[0].success);
    CHECK(p.client_events[0].data.size() == 4);
    CHECK_FALSE(p.client_events[1].success);
}

TEST_CASE("connection: a peer that ignores the window is disconnected")
{
    connection_config cfg;
    cfg.window.initial_window = 32 * 1024;
    connection_pair p(cfg);
    p.auto_consume = false; // a consuming server would legitimately have granted more credit
    auto [c, s] = p.open_session();
    const std::uint32_t remote = p.client->info(c).remote_id;
    for (int i = 0; i < 3; ++i) {
        bytes m;
        wire_writer w(m);
        w.u8(msg::channel_data).u32(remote).string(bytes(16 * 1024, 0));
        REQUIRE(p.tp.client->send(m).has_value());
    }
    p.run();
    CHECK(p.tp.server_log.disconnected);
    CHECK(p.tp.server_log.reason == disconnect_reason::protocol_error);
    CHECK(p.tp.server_log.disconnect_text == "channel 0: peer ignored channel window");
}

TEST_CASE("connection: malformed and misdirected messages disconnect with a reason")
{
    struct bad {
        bytes msg;
        std::string text;
    };
    auto make = [](auto fn) {
        bytes m;
        wire_writer w(m);
        fn(w);
        return m;
    };
    std::vector<bad> cases = {
        {make([](wire_writer& w) { w.u8(msg::channel_data).u32(77).string("x"); }), "data for nonexistent channel 77"},
        {make([](wire_writer& w) { w.u8(msg::channel_data).u32(0); }), "malformed SSH_MSG_CHANNEL_DATA"},
        {make([](wire_writer& w) { w.u8(msg::channel_window_adjust).u32(0).u32(0xfff00000u); }),
         "channel 0: adjust 4293918720 overflows remote window 2097152"},
        {make([](wire_writer& w) { w.u8(msg::channel_eof).u32(0).u8(1); }), "malformed SSH_MSG_CHANNEL_EOF"},
        {make([](wire_writer& w) { w.u8(msg::request_success); }), "unexpected global request reply"},
        {make([](wire_writer& w) { w.u8(msg::channel_open).string("session"); }), "malformed SSH_MSG_CHANNEL_OPEN"},
    };
    for (auto& b : cases) {
        INFO(b.text);
        connection_pair p;
        auto [c, s] = p.open_session();
        (void)s;
        (void)c;
        // Sent by the server to the client's connection core.
        REQUIRE(p.tp.server->send(b.msg).has_value());
        p.run();
        CHECK(p.tp.client_log.disconnected);
        CHECK(p.tp.client_log.disconnect_local);
        CHECK(p.tp.client_log.disconnect_text == b.text);
    }
}

TEST_CASE("connection: data after EOF is a protocol error")
{
    connection_pair p;
    auto [c, s] = p.open_session();
    const std::uint32_t remote = p.client->info(c).remote_id;
    p.client->send_eof(c);
    bytes m;
    wire_writer(m).u8(msg::channel_data).u32(remote).string("late");
    REQUIRE(p.tp.client->send(m).has_value());
    p.run();
    CHECK(p.tp.server_log.disconnect_text == "channel " + std::to_string(s) + ": data after EOF");
}

TEST_CASE("connection: a thousand channels open, carry data and close")
{
    // Every window comes out of the budget: a thousand 2 MiB windows need 2 GiB.
    connection_config cfg;
    cfg.window.budget = 4ull << 30;
    connection_pair p(cfg);
    std::vector<channel_id> ids;
    for (int i = 0; i < 1000; ++i)
        ids.push_back(*p.client->open("session"));
    p.on_event = [&](bool at_server, const connection_event& e) {
        if (at_server && e.type == cet::open_request)
            p.server->accept(e.channel);
        if (at_server && e.type == cet::close)
            p.server->close(e.channel);
    };
    p.run();
    CHECK(p.count(p.client_events, cet::open_confirmed) == 1000);
    for (auto id : ids)
        REQUIRE(p.client->send_data(id, as_bytes("hello")).has_value());
    p.run();
    CHECK(p.server_received.size() == 1000);
    for (auto id : ids)
        p.client->close(id);
    p.run();
    CHECK(p.client->channel_count() == 0);
    CHECK(p.server->channel_count() == 0);
}

TEST_CASE("connection: 64 MiB through one channel, byte exact, with rekeys")
{
    connection_pair p;
    auto [c, s] = p.open_session();
    hasher sent(hash_alg::sha256), got(hash_alg::sha256);
    std::uint64_t received = 0;
    p.on_event = [&](bool at_server, const connection_event& e) {
        if (at_server && e.type == cet::data) {
            got.update(e.data);
            received += e.data.size();
        }
    };
    std::mt19937_64 gen(5);
    const std::uint64_t total = 64ull << 20;
    std::uint64_t sent_bytes = 0;
    int rekeys = 0;
    while (sent_bytes < total) {
        std::size_t cap = p.client->send_capacity(c);
        if (cap == 0) {
            p.run();
            p.server_received.clear();
            continue;
        }
        auto room = p.client->prepare_data(c, std::min<std::uint64_t>(total - sent_bytes, 65536));
        for (auto& b : room)
            b = static_cast<std::uint8_t>(gen());
        sent.update(room);
        REQUIRE(p.client->commit_data(c, room.size()).has_value());
        sent_bytes += room.size();
        if (sent_bytes % (16 << 20) < room.size() && rekeys < 3) {
            p.tp.server->request_rekey();
            ++rekeys;
        }
    }
    p.run();
    CHECK(received == total);
    CHECK(sent.finish() == got.finish());
}

namespace {
// The server answers every global request it gets (a failure), as OpenSSH
// does for one it does not know: the RTT probes' answers.
void answer_global_requests(connection_pair& p)
{
    p.on_event = [&p](bool at_server, const connection_event& e) {
        if (at_server && e.type == cet::global_request && e.want_reply)
            p.server->reply_global(false);
    };
}
} // namespace

TEST_CASE("connection: without a TCP RTT the core measures one with keepalive probes, answered as any peer would")
{
    connection_pair p;
    std::vector<std::uint64_t> samples;
    p.client->on_rtt_sample = [&](std::uint64_t us, std::uint64_t tcp) {
        samples.push_back(us);
        CHECK(tcp == 0);
    };
    answer_global_requests(p);
    auto [c, s] = p.open_session();
    (void)s;
    CHECK(p.client->rtt_us() == 0);
    // A program's own request is in flight when the probe goes out: replies
    // come back in order and each goes to its owner.
    p.client->send_global_request("keepalive@openssh.com", true);
    p.client->tick(p.tp.now);
    p.tp.now += std::chrono::milliseconds(40);
    p.run();
    REQUIRE(samples.size() == 1);
    CHECK(samples[0] == 40'000);
    CHECK(p.client->rtt_us() == 40'000);
    // Only the program's request was reported.
    CHECK(p.count(p.client_events, cet::global_reply) == 1);
    CHECK(p.count(p.server_events, cet::global_request) == 2);

    // No data moves: no more probes, even long after.
    p.tp.now += std::chrono::seconds(30);
    p.client->tick(p.tp.now);
    p.run();
    CHECK(samples.size() == 1);
    // Data moves: the next probe follows the early schedule.
    REQUIRE(p.client->send_data(c, as_bytes("x")));
    p.client->tick(p.tp.now);
    p.tp.now += std::chrono::milliseconds(20);
    p.run();
    REQUIRE(samples.size() == 2);
    CHECK(p.client->probe().srtt_us() == (7 * 40'000 + 20'000) / 8);
    // The policy's clock is the smallest recent sample: probes queue behind bulk data.
    CHECK(p.client->rtt_us() == 20'000);
    CHECK(p.client->probe().min_us() == 20'000);
}

TEST_CASE("connection: behind a relay (a jump host) the SSH round trip wins over the socket's")
{
    connection_pair p;
    answer_global_requests(p);
    auto [c, s] = p.open_session();
    (void)s;
    // The socket goes to the hop beside this sshd: 60 us.
    p.client->set_rtt(std::chrono::microseconds(60));
    CHECK(p.client->rtt_us() == 60);
    // With TCP's estimate the first probe waits a second after the first tick.
    p.client->tick(p.tp.now);
    p.run();
    CHECK(p.client->probe().samples() == 0);
    p.tp.now += std::chrono::microseconds(connection::first_cross_check_delay_us);
    p.client->tick(p.tp.now);
    p.tp.now += std::chrono::milliseconds(100);
    p.run();
    REQUIRE(p.client->probe().samples() == 1);
    CHECK(p.client->rtt_us() == 100'000);
    // The window policy's path round trip is the probes' too: not the hop's
    // microseconds from before, which would read as a standing queue.
    CHECK(p.client->path_rtt_us() == 100'000);
    // A direct connection: the probe (queued behind a little data) is close
    // to TCP's figure, and TCP's, the finer one, stays.
    p.client->set_rtt(std::chrono::microseconds(90'000));
    CHECK(p.client->rtt_us() == 90'000);
    // Only a hop nearby makes a relay: a probe two and a half times a long
    // TCP round trip is one answered behind a bulk sender's queues (an scp
    // upload's slow start at 200 ms: 505 ms against TCP's 201 ms).
    p.client->set_rtt(std::chrono::microseconds(35'000));
    CHECK(p.client->rtt_us() == 35'000);
    p.client->set_rtt(std::chrono::microseconds(9'000));
    CHECK(p.client->rtt_us() == 100'000);
}

TEST_CASE("connection: a TCP RTT wins, and the probes only cross-check it")
{
    connection_pair p;
    answer_global_requests(p);
    auto [c, s] = p.open_session();
    (void)s;
    p.client->set_rtt(std::chrono::microseconds(100'000));
    CHECK(p.client->rtt_us() == 100'000);
    std::uint64_t tcp_seen = 0;
    p.client->on_rtt_sample = [&](std::uint64_t, std::uint64_t tcp) { tcp_seen = tcp; };
    p.client->tick(p.tp.now);
    p.tp.now += std::chrono::microseconds(connection::first_cross_check_delay_us);
    p.client->tick(p.tp.now);
    p.tp.now += std::chrono::milliseconds(120);
    p.run();
    CHECK(tcp_seen == 100'000);
    CHECK(p.client->rtt_us() == 100'000);
    CHECK(p.client->probe().srtt_us() == 120'000);
    // Within the cross-check interval no second probe, however busy.
    for (int i = 0; i < 10; ++i) {
        REQUIRE(p.client->send_data(c, as_bytes("x")));
        p.tp.now += std::chrono::milliseconds(200);
        p.client->tick(p.tp.now);
        p.run();
    }
    CHECK(p.client->probe().samples() == 1);
}

TEST_CASE("connection: random loss is read from samples spanning three round trips, not a fixed second")
{
    // n samples in a row in which TCP counted more packets out of order
    // leave n - 2 whole periods between the first growth and the last: at
    // least three round trips (a slow start's overshoot recovers within
    // them), and no more samples than that needs.
    for (std::uint64_t rtt_ms = 0; rtt_ms <= 500; rtt_ms += 5) {
        const int n = connection::random_loss_samples(rtt_ms * 1000);
        CAPTURE(rtt_ms);
        CHECK(n >= 3);
        CHECK((n - 2) * connection::sample_period_us >= 3 * rtt_ms * 1000);
        CHECK((n - 3) * connection::sample_period_us < std::max<std::uint64_t>(3 * rtt_ms * 1000, 1));
    }
    CHECK(connection::random_loss_samples(50'000) == 3);   // 600 ms where it was 1 s
    CHECK(connection::random_loss_samples(100'000) == 4);
    CHECK(connection::random_loss_samples(200'000) == 5);  // as before
    CHECK(connection::random_loss_samples(10'000'000) == 10); // bounded
}

TEST_CASE("connection: the summary of a released channel counts time blocked by the peer's window")
{
    connection_config cfg;
    cfg.window.initial_window = 64 * 1024;
    connection_pair p(cfg);
    std::vector<channel_summary> released;
    p.client->on_channel_released = [&](const channel_summary& s) { released.push_back(s); };
    p.auto_consume = false;
    auto [c, s] = p.open_session();
    bytes chunk(64 * 1024, 7);
    REQUIRE(p.client->send_data(c, chunk));
    CHECK(p.client->send_capacity(c) == 0);
    p.run();
    p.tp.now += std::chrono::milliseconds(250);
    p.server->consumed(s, chunk.size(), p.tp.now); // credit goes back after 250 ms
    p.run();
    CHECK(p.client->send_capacity(c) > 0);
    p.client->close(c);
    p.run();
    p.server->close(s);
    p.run();
    REQUIRE(released.size() == 1);
    CHECK(released[0].type == "session");
    CHECK(released[0].bytes_out == chunk.size());
    CHECK(released[0].send_blocked_us == 250'000);
    const std::string line = describe_channel_summary(released[0]);
    CHECK(line.find("channel 0 (session) summary: in 0 bytes, out 65536 bytes") == 0);
    CHECK(line.find("send blocked by peer window 0.25 s") != std::string::npos);
}

TEST_CASE("connection: a channel the connection's end cuts off still reports its summary")
{
    connection_pair p;
    std::vector<channel_summary> released;
    p.server->on_channel_released = [&](const channel_summary& s) { released.push_back(s); };
    auto [c, s] = p.open_session();
    REQUIRE(p.client->send_data(c, as_bytes("partial upload")));
    p.run();
    // No close from the client: its end of the connection went away.
    p.server->report_open_channels();
    REQUIRE(released.size() == 1);
    CHECK(released[0].id == s);
    CHECK(released[0].bytes_in == 14);
    CHECK(p.server->exists(s)); // reported, not released
    // What ssh's ~# lists: the same summaries, without releasing anything.
    const auto open = p.server->open_channels();
    REQUIRE(open.size() == 1);
    CHECK(open[0].id == s);
    CHECK(open[0].type == "session");
    CHECK(open[0].bytes_in == 14);
    // Closed channels are not reported again.
    p.client->close(c);
    p.run();
    p.server->close(s);
    p.run();
    REQUIRE(released.size() == 2);
    p.server->report_open_channels();
    CHECK(released.size() == 2);
    CHECK(p.server->open_channels().empty());
}

TEST_CASE("window_report: the words of the -v lines")
{
    window_change c{2 * 1024 * 1024, 8 * 1024 * 1024, window_change::reason::window_limited, 3 * 1024 * 1024, 100'400};
    CHECK(describe_window_change(0, c, 256 << 20) ==
          "channel 0: window 2.0 MiB -> 8.0 MiB: window-limited, 3.0 MiB per 100.4 ms round trip");
    c.why = window_change::reason::budget;
    c.to = c.from;
    CHECK(describe_window_change(3, c, 256 << 20) ==
          "channel 3: window 2.0 MiB stays: connection budget of 256.0 MiB in use, 3.0 MiB per 100.4 ms round trip");
    c.why = window_change::reason::idle;
    c.to = 2 * 1024 * 1024;
    c.from = 32 * 1024 * 1024;
    CHECK(describe_window_change(1, c, 0) == "channel 1: window 32.0 MiB -> 2.0 MiB: idle, growth returned");
    c.why = window_change::reason::spare_bound;
    c.to = 7 * 1024 * 1024;
    CHECK(describe_window_change(1, c, 0) == "channel 1: window 32.0 MiB -> 7.0 MiB: spare credit bounded (the peer "
                                             "buffers what it holds), 3.0 MiB per 100.4 ms round trip");
}

TEST_CASE("connection: the window policy follows the peer's kind of sender from the first channel")
{
    // The client says it is OpenSSH: the server's windows bound the credit
    // that sender may hold; the client's, facing Longhaul's sshd, do not.
    transport_config openssh;
    openssh.software_version = "OpenSSH_9.2p1";
    connection_pair p({}, {}, openssh);
    CHECK(p.server->config().window.max_spare == 0); // nothing is known before a channel exists
    p.open_session();
    CHECK(p.server->config().window.max_spare == openssh_max_spare);
    CHECK(p.client->config().window.max_spare == 0);
    // An HPN-SSH peer is not bounded.
    transport_config hpn;
    hpn.software_version = "OpenSSH_10.2p1_hpn18.8.0";
    connection_pair q({}, {}, hpn);
    q.open_session();
    CHECK(q.server->config().window.max_spare == 0);
}

TEST_CASE("connection: on a path under a millisecond channels open with 128 KiB, on a longer one with 2 MiB")
{
    connection_pair p;
    // Loopback: TCP's round trip 400 us, its minimum 50 us, on both sides.
    p.client->set_rtt(std::chrono::microseconds(400), std::chrono::microseconds(50));
    p.server->set_rtt(std::chrono::microseconds(400), std::chrono::microseconds(50));
    auto [c, s] = p.open_session();
    CHECK(p.client->window(c).initial() == short_path_initial_window);
    CHECK(p.server->window(s).initial() == short_path_initial_window);
    // What each side may send is what the other opened with.
    CHECK(p.server->send_capacity(s) == short_path_initial_window);
    CHECK(p.client->send_capacity(c) == short_path_initial_window);

    connection_pair q;
    q.client->set_rtt(std::chrono::microseconds(30'000), std::chrono::microseconds(25'000));
    auto [c2, s2] = q.open_session();
    CHECK(q.client->window(c2).initial() == 2 * 1024 * 1024);
    CHECK(q.server->send_capacity(s2) == 2 * 1024 * 1024);
    // The server has no round trip yet: OpenSSH's 2 MiB.
    CHECK(q.server->window(s2).initial() == 2 * 1024 * 1024);
}

TEST_CASE("connection: on a short path a channel uses only part of an OpenSSH peer's fixed window")
{
    // The client says it is OpenSSH (its 2 MiB windows never move); the
    // server knows a path under a millisecond.
    transport_config openssh;
    openssh.software_version = "OpenSSH_9.2p1";
    // The stand-in peer is Longhaul's core: with a 1 MiB window it returns
    // credit in 128 KiB steps, within the limit (as OpenSSH's 96 KiB are).
    connection_config peer;
    peer.window.initial_window = 1024 * 1024;
    connection_pair p(peer, connection_config{}, openssh);
    p.server->set_rtt(std::chrono::microseconds(400), std::chrono::microseconds(50));
    p.auto_consume = false;
    auto [c, s] = p.open_session();
    CHECK(p.server->info(s).remote_window == 1024 * 1024);
    // A lone channel has no other channel's data to make room for.
    CHECK(p.server->send_capacity(s) == 1024 * 1024);
    p.open_session();
    CHECK(p.server->send_capacity(s) == short_path_send_floor);
    bytes chunk(short_path_send_floor, 7);
    REQUIRE(p.server->send_data(s, chunk).has_value());
    CHECK(p.server->send_capacity(s) == 0); // the rest of the window waits for the peer
    p.run();
    // The peer writes it out and returns the credit: room again.
    p.client->consumed(c, chunk.size(), p.tp.now);
    p.run();
    CHECK(p.server->send_capacity(s) == short_path_send_floor);

    // The same peer on a 30 ms path, and a Longhaul peer on the short one:
    // the whole window.
    connection_pair q({}, {}, openssh);
    q.server->set_rtt(std::chrono::microseconds(30'000), std::chrono::microseconds(25'000));
    auto [c2, s2] = q.open_session();
    q.open_session();
    CHECK(q.server->send_capacity(s2) == 2 * 1024 * 1024);
    connection_pair r;
    r.server->set_rtt(std::chrono::microseconds(400), std::chrono::microseconds(50));
    auto [c3, s3] = r.open_session();
    r.open_session();
    CHECK(r.server->send_capacity(s3) == r.server->info(s3).remote_window);
    CHECK(r.server->send_capacity(s3) > short_path_send_floor);
}

TEST_CASE("window_report: the metrics file's columns")
{
    channel_metrics m;
    m.time_s = 1700000000.25;
    m.id = 2;
    m.bytes_in = 1000;
    m.window = 4 << 20;
    m.rtt_us = 100'400;
    m.stats.active_us = 1'500'000;
    m.stats.window_limited_us = 250'000;
    m.tcp_cwnd_bytes = 14480;
    const std::string line = metrics_line(m);
    CHECK(line.rfind("1700000000.250 2 1000 0 4194304 0 0 0 100.4 0.0 0.0 ", 0) == 0);
    CHECK(line.find(" 1.500 0.250 ") != std::string::npos);
    // As many columns as the header names.
    auto words = [](const std::string& s) {
        std::size_t n = 0;
        for (std::size_t i = 0; i < s.size(); ++i)
            n += s[i] != ' ' && (i == 0 || s[i - 1] == ' ');
        return n;
    };
    CHECK(words(metrics_header()) == words(line) + 1); // "#" starts the header
}

TEST_CASE("connection: the window budget caps the peer's channels, initial windows included")
{
    connection_config server_cfg;
    server_cfg.window.budget = 7ull << 20; // three 2 MiB windows and a 1 MiB one
    connection_pair p({}, server_cfg);
    p.on_event = [&](bool at_server, const connection_event& e) {
        if (at_server && e.type == cet::open_request)
            p.server->accept(e.channel);
    };
    for (int i = 0; i < 6; ++i)
        REQUIRE(p.client->open("session").has_value());
    p.run();
    CHECK(p.server->channel_count() == 4);
    CHECK(p.server->budget().used() == 7ull << 20);
    CHECK(p.server->window(3).initial() == 1u << 20);
    // The rest were refused for lack of resources, and the connection lives on.
    CHECK(p.count(p.server_events, cet::open_request) == 4);
    REQUIRE(p.count(p.client_events, cet::open_failed) == 2);
    CHECK(p.client_events.back().code == static_cast<std::uint32_t>(open_failure_reason::resource_shortage));
    CHECK_FALSE(p.tp.server_log.disconnected);
    // A channel that ends gives its window back: the next open succeeds.
    p.on_event = [&](bool at_server, const connection_event& e) {
        if (at_server && e.type == cet::open_request)
            p.server->accept(e.channel);
        if (at_server && e.type == cet::close)
            p.server->close(e.channel);
    };
    p.client->close(0);
    p.run();
    CHECK(p.server->budget().used() == 5ull << 20);
    REQUIRE(p.client->open("session").has_value());
    p.run();
    CHECK(p.server->channel_count() == 4);
    CHECK(p.count(p.client_events, cet::open_failed) == 2);
}

TEST_CASE("connection: max_channels caps the channel table")
{
    connection_config server_cfg;
    server_cfg.max_channels = 3;
    connection_pair p({}, server_cfg);
    p.on_event = [&](bool at_server, const connection_event& e) {
        if (at_server && e.type == cet::open_request)
            p.server->accept(e.channel);
    };
    for (int i = 0; i < 5; ++i)
        REQUIRE(p.client->open("session").has_value());
    p.run();
    CHECK(p.server->channel_count() == 3);
    CHECK(p.count(p.server_events, cet::open_request) == 3);
    CHECK(p.count(p.client_events, cet::open_failed) == 2);
    CHECK_FALSE(p.tp.server_log.disconnected);
}

TEST_CASE("connection: unanswered want_reply requests are bounded")
{
    connection_config server_cfg;
    server_cfg.max_requests_owed = 4;
    {
        connection_pair p({}, server_cfg);
        for (int i = 0; i < 4; ++i)
            p.client->send_global_request("keepalive@openssh.com", true);
        p.run();
        CHECK(p.server->global_replies_owed() == 4);
        CHECK_FALSE(p.tp.server_log.disconnected);
        p.server->reply_global(false); // answering makes room
        p.client->send_global_request("keepalive@openssh.com", true);
        p.client->send_global_request("keepalive@openssh.com", false); // no reply owed: not counted
        p.run();
        CHECK_FALSE(p.tp.server_log.disconnected);
        p.client->send_global_request("keepalive@openssh.com", true);
        p.run();
        CHECK(p.tp.server_log.disconnected);
        CHECK(p.tp.server_log.disconnect_text == "too many global requests awaiting a reply");
    }
    {
        connection_pair p({}, server_cfg);
        auto [c, s] = p.open_session();
        for (int i = 0; i < 5; ++i)
            p.client->send_request(c, "env", true, env_request{"A", "b"}.encode());
        p.run();
        CHECK(p.tp.server_log.disconnected);
        CHECK(p.tp.server_log.disconnect_text == "channel " + std::to_string(s) + ": too many requests awaiting a reply");
    }
}

TEST_CASE("connection: unknown extended data is discarded and returns no credit by itself")
{
    connection_pair p;
    auto [c, s] = p.open_session();
    const std::uint32_t remote = p.client->info(c).remote_id;
    const std::uint32_t credit_before = p.server->window(s).credit();
    const std::size_t server_events_before = p.server_events.size();
    bytes m;
    wire_writer(m).u8(msg::channel_extended_data).u32(remote).u32(7).string(bytes(30000, 'x'));
    REQUIRE(p.tp.client->send(m).has_value());
    p.run();
    CHECK(p.server_events.size() == server_events_before); // nothing reported
    CHECK(p.server->window(s).credit() == credit_before - 30000);
    CHECK(p.server->window(s).backlog() == 0);
    CHECK(p.count(p.client_events, cet::window_opened) == 0); // no WINDOW_ADJUST for junk
    CHECK_FALSE(p.tp.server_log.disconnected);
}
