// A client and a server session layer against each other in memory, over
// two real transport cores: key exchange, password authentication (the
// server's held failure reply included), the hand-off to the connection
// cores, channel types and global requests answered from the tables, and
// the routing of messages that arrive out of place.
#include "channel/session/session_layer.hpp"

#include "common/wire.hpp"
#include "tests/transport/harness.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace longhaul::test;

namespace {

struct recorded {
    connection_event_type type;
    channel_id channel;
    bytes data;
    std::uint32_t code;
    std::string text;
    bool success;
};

// One side: a transport core, its session layer, and what it saw.
struct side {
    side(session_role role, transport_config cfg, random_source& rng, steady_time now)
        : core(std::move(cfg), rng, now), layer(core, role)
    {
    }
    transport core;
    session_layer layer;
    int first_kex = 0;
    bool authenticated = false;
    std::vector<recorded> channel_events;
    std::vector<std::uint32_t> unimplemented;
    std::vector<std::string> auth_logs;
};

class session_pair {
public:
    session_pair()
        : client_rng_(7), server_rng_(8), client(session_role::client, client_config(), client_rng_, now),
          server(session_role::server, server_config(), server_rng_, now)
    {
        client.layer.open_connection({});
    }

    std::string password = "swordfish";
    // Passwords the server accepts.
    std::string server_password = "swordfish";
    steady_time now = std::chrono::steady_clock::time_point{} + std::chrono::hours(1);
    seeded_random client_rng_, server_rng_;
    side client, server;
    int password_checks = 0;

    // Moves bytes and events until nothing moves; time jumps to the next
    // deadline of held output when that is all that is left.
    void run()
    {
        for (int guard = 0; guard < 100000; ++guard) {
            bool progress = move(client.core, server.core) | move(server.core, client.core);
            progress |= drain(client) | drain(server);
            if (progress)
                continue;
            auto due = server.layer.next_deadline();
            if (!due)
                return;
            now = std::max(now, *due);
            drain(server);
        }
        FAIL("the session pair did not settle");
    }

private:
    static transport_config client_config() { return {}; }
    static transport_config server_config()
    {
        transport_config c;
        c.role = transport_role::server;
        c.host_keys = host_keys();
        return c;
    }

    static bool move(transport& from, transport& to)
    {
        auto out = from.output();
        if (out.empty())
            return false;
        bytes piece(out.begin(), out.end());
        from.consume_output(piece.size());
        if (!to.closed())
            to.feed(piece);
        return true;
    }

    bool drain(side& s)
    {
        bool progress = false;
        for (;;) {
            transport_event ev = s.core.poll();
            if (ev.type == transport_event_type::none)
                break;
            progress = true;
            act(s, s.layer.handle(ev, now));
            pump(s);
        }
        pump(s);
        return progress;
    }

    void pump(side& s)
    {
        for (auto e = s.layer.poll(now); e.type != session_event_type::none; e = s.layer.poll(now))
            act(s, e);
    }

    void act(side& s, const session_event& e)
    {
        switch (e.type) {
        case session_event_type::transport:
            if (e.transport->type == transport_event_type::host_key)
                s.core.accept_host_key();
            if (e.transport->type == transport_event_type::unimplemented)
                s.unimplemented.push_back(e.transport->seq);
            break;
        case session_event_type::first_kex:
            ++s.first_kex;
            &s == &client ? start_client() : start_server();
            break;
        case session_event_type::client_auth:
            if (e.client_auth->type == client_auth_event_type::prompt) {
                std::vector<secret_bytes> r;
                r.emplace_back(as_bytes(password));
                client.layer.client_auth_machine()->answer_prompt(std::move(r));
            }
            break;
        case session_event_type::server_auth:
            if (e.server_auth->type == server_auth_event_type::log)
                s.auth_logs.push_back(e.server_auth->text);
            if (e.server_auth->type == server_auth_event_type::check_password) {
                ++password_checks;
                server.layer.server_auth_machine()->answer_password(as_string_view(e.server_auth->password.span()) ==
                                                                    server_password);
            }
            break;
        case session_event_type::authenticated:
            s.authenticated = true;
            if (&s == &server) {
                CHECK(e.server_auth->user == "alice");
                server.layer.open_connection({});
            }
            break;
        case session_event_type::channel: {
            const connection_event& c = e.channel;
            s.channel_events.push_back({c.type, c.channel, to_bytes(c.data), c.code, std::string(c.text), c.success});
            if (c.type == connection_event_type::data)
                s.layer.conn()->consumed(c.channel, c.data.size(), now);
            break;
        }
        default: break;
        }
    }

    void start_client()
    {
        client_auth_config c;
        c.user = "alice";
        c.host = "localhost";
        c.remote_ip = "127.0.0.1";
        c.preferred_authentications = "password";
        client.layer.start_client_auth(std::move(c));
    }

    void start_server()
    {
        server_auth_config c;
        c.remote_ip = "127.0.0.1";
        c.remote_port = 41000;
        c.session_id = to_bytes(server.core.session_id());
        c.host_key_blob = server_host_key_blob(server.core);
        server_auth_policy p;
        p.lookup_user = [](std::string_view u) {
            return user_lookup{u == "alice" ? user_status::valid : user_status::unknown, false, std::nullopt};
        };
        server.layer.start_server_auth(std::move(c), std::move(p));
    }
};

const recorded* last_of(const side& s, connection_event_type t)
{
    for (auto it = s.channel_events.rbegin(); it != s.channel_events.rend(); ++it)
        if (it->type == t)
            return &*it;
    return nullptr;
}

} // namespace

TEST_CASE("session_layer: a client and a server log in, open a session channel and move data")
{
    session_pair p;
    std::vector<channel_id> opened;
    p.server.layer.channel_types().add("session", [&](connection& conn, channel_id id, std::string_view, byte_span) {
        opened.push_back(id);
        conn.accept(id);
    });
    p.run();
    CHECK(p.client.first_kex == 1);
    CHECK(p.server.first_kex == 1);
    REQUIRE(p.client.authenticated);
    REQUIRE(p.server.authenticated);
    CHECK(p.client.layer.authenticated());
    CHECK(p.server.layer.authenticated());
    CHECK(p.password_checks == 1);

    auto id = p.client.layer.conn()->open("session");
    REQUIRE(id.has_value());
    p.run();
    REQUIRE(opened.size() == 1);
    REQUIRE(last_of(p.client, connection_event_type::open_confirmed) != nullptr);

    const bytes payload(100000, 0x5a);
    std::size_t sent = 0;
    for (int i = 0; i < 1000 && sent < payload.size(); ++i) {
        const std::size_t n = std::min(p.client.layer.conn()->send_capacity(*id), payload.size() - sent);
        if (n > 0) {
            REQUIRE(p.client.layer.conn()->send_data(*id, byte_span(payload).subspan(sent, n)).has_value());
            sent += n;
        }
        p.run();
    }
    bytes got;
    for (const auto& e : p.server.channel_events)
        if (e.type == connection_event_type::data && e.channel == opened[0])
            got.insert(got.end(), e.data.begin(), e.data.end());
    CHECK(got == payload);
    CHECK(p.client.unimplemented.empty());
    CHECK(p.server.unimplemented.empty());
}

TEST_CASE("session_layer: channel types and global requests without an entry are refused")
{
    session_pair p;
    p.run();
    REQUIRE(p.server.authenticated);

    // No entry at all: the default refusal, as sshd answers direct-tcpip today.
    auto id = p.client.layer.conn()->open("direct-tcpip");
    REQUIRE(id.has_value());
    p.run();
    const recorded* failed = last_of(p.client, connection_event_type::open_failed);
    REQUIRE(failed != nullptr);
    CHECK(failed->code == static_cast<std::uint32_t>(open_failure_reason::administratively_prohibited));
    CHECK(failed->text == "open failed");
    CHECK(p.server.channel_events.empty()); // the table answered; nothing for the program

    // An unknown handler of the program's own replaces the default.
    std::vector<std::string> refused;
    p.server.layer.channel_types().set_unknown(
        [&](connection& conn, channel_id cid, std::string_view type, byte_span) {
            refused.emplace_back(type);
            conn.reject(cid, open_failure_reason::unknown_channel_type, "no");
        });
    REQUIRE(p.client.layer.conn()->open("x11").has_value());
    p.run();
    CHECK(refused == std::vector<std::string>{"x11"});
    CHECK(last_of(p.client, connection_event_type::open_failed)->code ==
          static_cast<std::uint32_t>(open_failure_reason::unknown_channel_type));

    // Global requests: failure without an entry, the entry's answer with one,
    // replies in request order.
    p.server.layer.global_requests().add("tcpip-forward", [](connection& conn, std::string_view, bool want, byte_span) {
        if (want)
            conn.reply_global(true);
    });
    p.client.layer.conn()->send_global_request("cancel-tcpip-forward", true);
    p.client.layer.conn()->send_global_request("tcpip-forward", true);
    p.run();
    std::vector<bool> replies;
    for (const auto& e : p.client.channel_events)
        if (e.type == connection_event_type::global_reply)
            replies.push_back(e.success);
    CHECK(replies == std::vector<bool>{false, true});
}

TEST_CASE("session_layer: connection messages before authentication are answered UNIMPLEMENTED")
{
    session_pair p;
    p.password = "wrong";
    p.run();
    CHECK_FALSE(p.server.authenticated);
    CHECK(p.password_checks >= 1);
    // A CHANNEL_OPEN sent outside the machines: the server has no connection
    // for an unauthenticated peer.
    bytes open;
    wire_writer(open).u8(msg::channel_open).string("session").u32(0).u32(65536).u32(32768);
    REQUIRE(p.client.core.send(open).has_value());
    p.run();
    CHECK(p.client.unimplemented.size() == 1);
    CHECK(p.server.channel_events.empty());
}

TEST_CASE("session_layer: the server holds a failed password's reply until its minimum delay")
{
    session_pair p;
    p.password = "wrong";
    const auto start = p.now;
    p.run();
    CHECK_FALSE(p.client.authenticated);
    // The pair only moved time forward to release held replies.
    CHECK(p.now > start);
}
