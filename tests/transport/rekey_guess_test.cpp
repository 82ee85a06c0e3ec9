// Re-exchanges that cost the bulk sender as little as the protocol allows: a
// client re-keying sends its kex method's first message with its KEXINIT
// when it can tell the guess is right (first_kex_packet_follows, RFC 4253
// §7), both sides list what the last exchange chose first, and a receiver
// re-keys before the sender's count reaches the limit. Counted in one-way
// trips between two cores, which is what a sender waits for on a long link.
#include "common/transport/transport.hpp"

#include "tests/transport/data_exchange.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

transport_config guess_server_config(std::string kex)
{
    transport_config c;
    c.role = transport_role::server;
    c.host_keys = host_keys();
    c.host_key_algorithms = supported_host_key_algorithms();
    c.kex_algorithms = std::move(kex);
    return c;
}

transport_config guess_client_config(std::string kex, bool guess = true)
{
    transport_config c;
    c.kex_algorithms = std::move(kex);
    c.guess_rekey = guess;
    return c;
}

// One one-way trip: everything `from` has queued reaches `to`, which
// handles it (and may queue its answers). Returns the key exchanges `to`
// completed.
int trip(transport& from, transport& to)
{
    auto out = from.output();
    to.feed(out);
    from.consume_output(out.size());
    int completed = 0;
    for (;;) {
        auto ev = to.poll();
        if (ev.type == transport_event_type::none)
            return completed;
        REQUIRE(ev.type != transport_event_type::disconnected);
        completed += ev.type == transport_event_type::kex_complete;
    }
}

struct pauses {
    int client_trips = 0; // one-way trips before the client may send data again
    int server_trips = 0; // the same for the server
};

// A re-exchange started by the client, trip by trip: how long each side
// may not send data (RFC 4253 §7.1: from its KEXINIT to its NEWKEYS).
pauses client_rekey(transport_pair& p)
{
    p.client->request_rekey();
    REQUIRE(p.client->kex_in_progress());
    pauses r;
    bool server_started = false, server_resumed = false;
    for (int t = 1; t <= 8; ++t) {
        const bool c2s = t % 2 == 1;
        trip(c2s ? *p.client : *p.server, c2s ? *p.server : *p.client);
        server_started |= p.server->kex_in_progress();
        if (!server_resumed && server_started && p.server->may_send_now()) {
            r.server_trips = t - 1; // its KEXINIT left in answer to trip 1
            server_resumed = true;
        }
        if (r.client_trips == 0 && p.client->may_send_now())
            r.client_trips = t;
        if (!p.client->kex_in_progress() && !p.server->kex_in_progress()) {
            p.run();
            return r;
        }
    }
    FAIL("re-exchange did not finish in 8 trips");
    return r;
}

void authenticated(transport_pair& p)
{
    p.run();
    REQUIRE(p.client->established());
    p.client->user_authenticated();
    p.server->user_authenticated();
}

} // namespace

TEST_CASE("rekey guess: the client sends its ephemeral key with KEXINIT; the server never pauses")
{
    for (std::string kex : {"curve25519-sha256", "ecdh-sha2-nistp256", "diffie-hellman-group14-sha256",
                            "diffie-hellman-group-exchange-sha256"}) {
        INFO("kex " << kex);
        transport_pair p(guess_client_config(kex), guess_server_config(kex));
        authenticated(p);
        // Two re-exchanges: the first may find the server listing another host
        // key algorithm first; from then on both name the chosen ones first.
        client_rekey(p);
        const auto r = client_rekey(p);
        CHECK(p.client->stats().kex_guesses_right >= 1);
        CHECK(p.client->stats().kex_guesses_right == p.client->stats().kex_guesses);
        // DH group exchange's first message is the group request: the server
        // answers with the group, not the reply, so it cannot finish at once.
        if (kex == "diffie-hellman-group-exchange-sha256") {
            CHECK(r.client_trips == 4);
            CHECK(r.server_trips == 2);
        } else {
            CHECK(r.client_trips == 2); // one round trip
            CHECK(r.server_trips == 0); // KEXINIT, reply and NEWKEYS in one go
        }
        auto d = exchange_data(p, 64 * 1024, 0, 3);
        CHECK(d.sent_c2s == d.recv_c2s);
        CHECK(d.sent_s2c == d.recv_s2c);
        CHECK(p.client->algorithms().kex == kex);
    }
}

TEST_CASE("rekey guess: without it the client pauses two round trips and the server one")
{
    transport_pair p(guess_client_config("curve25519-sha256", false), guess_server_config("curve25519-sha256"));
    authenticated(p);
    client_rekey(p);
    const auto r = client_rekey(p);
    CHECK(p.client->stats().kex_guesses == 0);
    CHECK(r.client_trips == 4);
    CHECK(r.server_trips == 2);
}

TEST_CASE("rekey guess: the client guesses only what the server's last KEXINIT listed first")
{
    // The server prefers ECDH, the client (whose order decides) X25519: the
    // first re-exchange cannot guess; the server's answer lists X25519
    // first, so the second does.
    transport_pair p(guess_client_config("curve25519-sha256,ecdh-sha2-nistp256"),
                     guess_server_config("ecdh-sha2-nistp256,curve25519-sha256"));
    authenticated(p);
    CHECK(p.client->algorithms().kex == "curve25519-sha256");
    const auto first = client_rekey(p);
    CHECK(p.client->stats().kex_guesses == 0);
    CHECK(first.client_trips == 4);
    const auto second = client_rekey(p);
    CHECK(p.client->stats().kex_guesses == 1);
    CHECK(p.client->stats().kex_guesses_right == 1);
    CHECK(second.client_trips == 2);
    CHECK(p.client->algorithms().kex == "curve25519-sha256");
}

TEST_CASE("rekey guess: a wrong guess is dropped by the server and the negotiated method runs")
{
    // A server whose offer changed since the last exchange (here: a core
    // handed the connection, configured without X25519): the client's
    // guess names X25519, the negotiation picks ECDH.
    seeded_random rng(77);
    transport_pair p(guess_client_config("curve25519-sha256,ecdh-sha2-nistp256"),
                     guess_server_config("curve25519-sha256,ecdh-sha2-nistp256"));
    authenticated(p);
    auto state = p.server->export_state();
    REQUIRE(state.has_value());
    p.server = std::make_unique<transport>(guess_server_config("ecdh-sha2-nistp256"), rng, p.now, std::move(*state));
    REQUIRE(p.server->established());
    const auto r = client_rekey(p);
    CHECK(p.client->stats().kex_guesses == 1);
    CHECK(p.client->stats().kex_guesses_right == 0);
    CHECK(r.client_trips == 4);
    CHECK(p.client->algorithms().kex == "ecdh-sha2-nistp256");
    CHECK(p.server->algorithms().kex == "ecdh-sha2-nistp256");
    auto d = exchange_data(p, 64 * 1024, 0, 5);
    CHECK(d.sent_c2s == d.recv_c2s);
    CHECK(d.sent_s2c == d.recv_s2c);
    CHECK_FALSE(p.client->closed());
    CHECK_FALSE(p.server->closed());
}

TEST_CASE("rekey guess: the receiver re-keys a sixteenth before the limit, ahead of the sender")
{
    auto cc = guess_client_config("curve25519-sha256");
    auto sc = guess_server_config("curve25519-sha256");
    cc.rekey_limit_bytes = sc.rekey_limit_bytes = 1024 * 1024;
    transport_pair p(cc, sc);
    authenticated(p);
    // The client sends in 16 KiB packets; after each, the server has read
    // it (in flight: nothing). The server's in-count reaches 15/16 of the
    // limit first and starts the exchange before the client's out-count
    // reaches the limit.
    const bytes msg(16 * 1024, 0x5e);
    bytes payload = msg;
    payload[0] = 94; // SSH_MSG_CHANNEL_DATA's number: an upper-layer message
    bool server_started = false;
    for (int i = 0; i < 80 && !server_started; ++i) {
        REQUIRE(p.client->send(payload).has_value());
        trip(*p.client, *p.server);
        server_started = p.server->kex_in_progress();
        if (server_started)
            CHECK_FALSE(p.client->kex_in_progress()); // the client had not started
    }
    REQUIRE(server_started);
    p.run();
    CHECK(p.server->stats().key_exchanges == 2);
    CHECK(p.client->stats().key_exchanges == 2);
    CHECK_FALSE(p.client->kex_in_progress());
    CHECK_FALSE(p.server->closed());
}

TEST_CASE("rekey guess: a client answering the server's KEXINIT does not guess")
{
    transport_pair p(guess_client_config("curve25519-sha256"), guess_server_config("curve25519-sha256"));
    authenticated(p);
    for (int i = 0; i < 3; ++i) {
        p.server->request_rekey();
        // The server's KEXINIT reaches the client, which answers with its
        // own and its key at once: the server waits one round trip.
        CHECK(trip(*p.server, *p.client) == 0);
        CHECK(p.client->kex_in_progress());
        trip(*p.client, *p.server);
        CHECK(p.server->may_send_now());
        p.run();
    }
    CHECK(p.client->stats().kex_guesses == 0);
    CHECK(p.client->stats().key_exchanges == 4);
    CHECK(p.server->stats().key_exchanges == 4);
}
