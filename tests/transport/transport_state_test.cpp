// The hand-off of an established transport to another process (sshd's
// privilege separation, issue 12): export_state(), the encoding, the import
// constructor, and host key signatures made elsewhere (host_key_signer).
#include "common/transport/transport_state.hpp"

#include "common/crypto/packet_cipher.hpp"
#include "common/transport/messages.hpp"
#include "common/transport/transport.hpp"
#include "common/wire.hpp"
#include "tests/transport/data_exchange.hpp"

#include <algorithm>

using namespace longhaul;
using namespace longhaul::test;

namespace {

constexpr std::uint8_t userauth_request = 50;
constexpr std::uint8_t userauth_success = 52;
constexpr std::uint8_t app_msg = 94;

struct handoff_params {
    std::string cipher, mac;
    bool strict = true;
    std::string compression = "none";
    // How the old server left the client's last bytes: 0 not polled at all,
    // 1 polled once (the packet handed out is not yet released), 2 polled
    // until nothing was left (the partial packet's length peeked).
    int polled = 0;
    std::string host_key_alg = "ssh-ed25519";
};

transport_config base_config(const handoff_params& hp)
{
    transport_config c;
    c.kex_algorithms = "curve25519-sha256";
    c.host_key_algorithms = hp.host_key_alg;
    c.ciphers = hp.cipher;
    if (!hp.mac.empty())
        c.macs = hp.mac;
    c.strict_kex = hp.strict;
    c.compression = hp.compression;
    return c;
}

transport_config server_side(const handoff_params& hp)
{
    auto c = base_config(hp);
    c.role = transport_role::server;
    c.host_keys = host_keys();
    c.server_sig_algs = "ssh-ed25519,rsa-sha2-256";
    return c;
}

bytes message(std::uint8_t type, std::size_t len, std::uint8_t fill)
{
    bytes m(len, fill);
    m[0] = type;
    return m;
}

// Moves everything `from` has queued into `to` without polling `to`.
void deliver(transport& from, transport& to, std::size_t keep_back = 0)
{
    auto out = from.output();
    const std::size_t n = out.size() - std::min(out.size(), keep_back);
    to.feed(out.first(n));
    from.consume_output(n);
}

// Brings a pair through "user authentication" as sshd does: the client's
// request arrives, the server answers SUCCESS and calls user_authenticated()
// (starting zlib@openssh.com), the client takes SUCCESS.
void authenticate(transport_pair& p)
{
    REQUIRE(p.client->send(message(userauth_request, 40, 1)).has_value());
    p.run();
    REQUIRE(p.server_log.payloads.size() == 1);
    REQUIRE(p.server->send(message(userauth_success, 1, 0)).has_value());
    p.server->user_authenticated();
    // SUCCESS still queued: nothing may be handed off yet.
    CHECK(p.server->export_state().error() == errc::incomplete);
    CHECK(p.server->export_refusal() == "output is queued");
    p.run();
    REQUIRE(p.client_log.payloads.size() == 1);
    CHECK(p.client_log.payloads[0][0] == userauth_success);
    p.client->user_authenticated();
}

// The whole hand-off: authenticate, have the client send more than the old
// server processes, export, encode, decode, import, and carry on.
void run_handoff(const handoff_params& hp, std::uint64_t seed)
{
    INFO("cipher=" << hp.cipher << " mac=" << hp.mac << " strict=" << hp.strict
                   << " compression=" << hp.compression << " polled=" << hp.polled << " hostkey=" << hp.host_key_alg);
    auto cc = base_config(hp);
    seeded_random monitor_rng(seed + 7);
    transport_pair p(cc, server_side(hp), seed);
    p.run();
    REQUIRE(p.client->established());
    REQUIRE(p.server->established());
    CHECK(p.server->strict_kex() == hp.strict);
    authenticate(p);

    // What the client sends right after SUCCESS; the old server reads it
    // (the last packet only in part) but does not process all of it.
    std::vector<bytes> early;
    for (std::size_t i = 0; i < 5; ++i)
        early.push_back(message(app_msg, 100 + 700 * i, static_cast<std::uint8_t>(i + 1)));
    for (const auto& m : early)
        REQUIRE(p.client->send(m).has_value());
    deliver(*p.client, *p.server, 13);
    std::size_t processed = 0;
    if (hp.polled > 0) {
        for (;;) {
            auto ev = p.server->poll();
            if (ev.type == transport_event_type::none)
                break;
            REQUIRE(ev.type == transport_event_type::payload);
            CHECK(bytes(ev.payload.begin(), ev.payload.end()) == early[processed]);
            ++processed;
            if (hp.polled == 1)
                break;
        }
        REQUIRE(processed == (hp.polled == 1 ? 1u : 4u));
        if (hp.compression != "none") {
            // The decompressor has history now: it cannot move.
            CHECK(p.server->export_state().error() == errc::unsupported);
            return;
        }
    }

    auto exported = p.server->export_state();
    REQUIRE(exported.has_value());
    CHECK(p.server->export_refusal().empty());
    CHECK(exported->out.compression == (hp.compression != "none"));
    CHECK(exported->in.compression == (hp.compression != "none"));
    CHECK(exported->authenticated);
    CHECK(exported->host_key.has_value());
    CHECK_FALSE(exported->unread_input.empty());
    bytes wire = encode_transport_state(*exported);
    auto decoded = decode_transport_state(wire);
    REQUIRE(decoded.has_value());
    CHECK(encode_transport_state(*decoded) == wire);
    cleanse(wire);

    const auto old_stats = p.server->stats();
    const std::uint32_t old_send_seq = p.server->send_sequence();
    const std::uint32_t old_recv_seq = p.server->receive_sequence();
    const bytes old_session_id(p.server->session_id().begin(), p.server->session_id().end());
    p.server = std::make_unique<transport>(server_side(hp), monitor_rng, p.now, std::move(*decoded));
    REQUIRE_FALSE(p.server->closed());
    CHECK(p.server->established());
    CHECK(p.server->output_size() == 0);
    CHECK(p.server->send_sequence() == old_send_seq);
    CHECK(p.server->receive_sequence() == old_recv_seq);
    CHECK(p.server->stats().bytes_in == old_stats.bytes_in);
    CHECK(p.server->stats().key_exchanges == old_stats.key_exchanges);
    CHECK(bytes(p.server->session_id().begin(), p.server->session_id().end()) == old_session_id);
    CHECK(p.server->strict_kex() == hp.strict);
    CHECK(p.server->peer_extensions() == std::map<std::string, std::string>{});

    // The rest of what the client sent arrives at the new core in order.
    p.server_log.payloads.clear();
    p.run();
    REQUIRE(p.server_log.payloads.size() == early.size() - processed);
    for (std::size_t i = processed; i < early.size(); ++i)
        CHECK(p.server_log.payloads[i - processed] == early[i]);

    // Data both ways, and a re-exchange started by each side.
    auto r = exchange_data(p, 192 * 1024, 2, seed);
    CHECK(r.recv_bytes_c2s == 192 * 1024);
    CHECK(r.recv_bytes_s2c == 192 * 1024);
    CHECK(r.sent_c2s == r.recv_c2s);
    CHECK(r.sent_s2c == r.recv_s2c);
    CHECK(p.client_log.kex_completed == 3);
    CHECK(p.server_log.kex_completed == 3); // the log spans both cores
    CHECK(p.server->stats().key_exchanges == old_stats.key_exchanges + 2);
    CHECK_FALSE(p.client->closed());
    CHECK_FALSE(p.server->closed());
    // The session id stays that of the first exchange.
    CHECK(bytes(p.server->session_id().begin(), p.server->session_id().end()) == old_session_id);
}

std::vector<std::pair<std::string, std::string>> cipher_families()
{
    return {{"chacha20-poly1305@openssh.com", ""},
            {"aes128-gcm@openssh.com", ""},
            {"aes256-gcm@openssh.com", ""},
            {"aes128-ctr", "hmac-sha2-256-etm@openssh.com"},
            {"aes256-ctr", "hmac-sha2-512-etm@openssh.com"},
            {"aes192-ctr", "hmac-sha2-256"},
            {"aes256-ctr", "hmac-sha2-512"}};
}

// A valid state to mutate in the decoder tests.
transport_state sample_state()
{
    handoff_params hp{.cipher = "aes256-ctr", .mac = "hmac-sha2-256"};
    transport_pair p(base_config(hp), server_side(hp), 5);
    p.run();
    REQUIRE(p.client->send(message(app_msg, 300, 3)).has_value());
    deliver(*p.client, *p.server);
    auto s = p.server->export_state();
    REQUIRE(s.has_value());
    return std::move(*s);
}

errc decode_error(const transport_state& s)
{
    return decode_transport_state(encode_transport_state(s)).error();
}

} // namespace

TEST_CASE("transport state: hand-off for every cipher family, strict kex on and off, with and without zlib")
{
    std::uint64_t seed = 100;
    for (const auto& [cipher, mac] : cipher_families())
        for (bool strict : {true, false})
            for (const char* compression : {"none", "zlib@openssh.com"})
                run_handoff({.cipher = cipher, .mac = mac, .strict = strict, .compression = compression}, ++seed);
}

TEST_CASE("transport state: hand-off after the old core processed part of the input")
{
    std::uint64_t seed = 200;
    for (const auto& [cipher, mac] : cipher_families())
        for (int polled : {1, 2})
            for (const char* compression : {"none", "zlib@openssh.com"})
                run_handoff({.cipher = cipher, .mac = mac, .compression = compression, .polled = polled}, ++seed);
}

TEST_CASE("transport state: hand-off with an RSA host key, then a rekey that checks it")
{
    run_handoff({.cipher = "aes128-gcm@openssh.com", .host_key_alg = "rsa-sha2-512"}, 300);
}

TEST_CASE("transport state: a client core can be handed off too")
{
    handoff_params hp{.cipher = "chacha20-poly1305@openssh.com", .compression = "zlib@openssh.com"};
    seeded_random rng(9);
    transport_pair p(base_config(hp), server_side(hp), 9);
    p.run();
    authenticate(p);
    REQUIRE(p.server->send(message(app_msg, 500, 4)).has_value());
    deliver(*p.server, *p.client);
    auto s = p.client->export_state();
    REQUIRE(s.has_value());
    CHECK(s->role == transport_role::client);
    CHECK(s->ext_info_received == 1); // server-sig-algs
    auto d = decode_transport_state(encode_transport_state(*s));
    REQUIRE(d.has_value());
    auto cfg = base_config(hp);
    cfg.role = transport_role::client;
    p.client = std::make_unique<transport>(cfg, rng, p.now, std::move(*d));
    CHECK(p.client->peer_extensions().at("server-sig-algs") == "ssh-ed25519,rsa-sha2-256");
    REQUIRE(p.client->server_host_key().has_value());
    p.client_log.payloads.clear();
    p.run();
    REQUIRE(p.client_log.payloads.size() == 1);
    CHECK(p.client_log.payloads[0] == message(app_msg, 500, 4));
    auto r = exchange_data(p, 64 * 1024, 2, 9);
    CHECK(r.sent_c2s == r.recv_c2s);
    CHECK(r.sent_s2c == r.recv_s2c);
    CHECK(p.server_log.kex_completed == 3);
}

TEST_CASE("transport state: the importer's RekeyLimit applies, not the exporter's (sshd's Match blocks)")
{
    // The pre-authentication core had no limit of its own; the user's
    // (a Match block's, 256 KiB) comes with the post-authentication core:
    // it re-keys by volume before 1 MiB has gone out, and not before 3/4
    // of the limit. An importer without a limit keeps the cipher's own.
    for (std::uint64_t limit : {std::uint64_t(256 * 1024), std::uint64_t(0)}) {
        CAPTURE(limit);
        handoff_params hp{.cipher = "aes128-gcm@openssh.com"};
        seeded_random rng(11);
        transport_pair p(base_config(hp), server_side(hp), 11);
        p.run();
        authenticate(p);
        auto s = p.server->export_state();
        REQUIRE(s.has_value());
        auto cfg = server_side(hp);
        cfg.rekey_limit_bytes = limit;
        p.server = std::make_unique<transport>(cfg, rng, p.now, std::move(*s));
        REQUIRE_FALSE(p.server->closed());
        bytes payload(16 * 1024, 0x5e);
        payload[0] = app_msg;
        std::size_t sent = 0;
        while (sent < 1024 * 1024 && !p.server->kex_in_progress()) {
            REQUIRE(p.server->send(payload).has_value());
            sent += payload.size();
            deliver(*p.server, *p.client);
        }
        if (limit == 0) {
            CHECK_FALSE(p.server->kex_in_progress());
            continue;
        }
        REQUIRE(p.server->kex_in_progress());
        CHECK(sent >= limit * 3 / 4);
        CHECK(sent <= limit + payload.size());
        p.run();
        CHECK(p.server->stats().key_exchanges == 2);
        CHECK_FALSE(p.server->closed());
    }
}

TEST_CASE("transport state: export is refused until the core is between packets")
{
    handoff_params hp{.cipher = "aes128-gcm@openssh.com"};
    transport_pair p(base_config(hp), server_side(hp), 11);
    // Before the first exchange.
    CHECK(p.server->export_state().error() == errc::protocol_error);
    p.run();
    REQUIRE(p.server->export_state().has_value());

    // Output queued.
    REQUIRE(p.server->send(message(app_msg, 10, 1)).has_value());
    CHECK(p.server->export_state().error() == errc::incomplete);
    p.run();
    REQUIRE(p.server->export_state().has_value());

    // Mid key exchange, started by either side.
    p.server->request_rekey();
    CHECK(p.server->export_state().error() == errc::protocol_error);
    CHECK(p.server->export_refusal() == "a key exchange is in progress");
    p.run();
    REQUIRE(p.server->export_state().has_value());
    p.client->request_rekey();
    deliver(*p.client, *p.server);
    CHECK(p.server->export_state().has_value()); // KEXINIT only read, not processed
    (void)p.server->poll();
    CHECK(p.server->export_state().error() == errc::protocol_error);
    // Messages held back during the exchange count as queued output.
    REQUIRE(p.server->send(message(app_msg, 10, 2)).has_value());
    CHECK(p.server->queued_size() > 0);
    p.run();
    CHECK(p.server_log.kex_completed == 3);
    REQUIRE(p.server->export_state().has_value());

    // A compression stream with history cannot move.
    {
        handoff_params zp{.cipher = "aes128-gcm@openssh.com", .compression = "zlib@openssh.com"};
        transport_pair z(base_config(zp), server_side(zp), 12);
        z.run();
        authenticate(z);
        REQUIRE(z.server->export_state().has_value());
        REQUIRE(z.server->send(message(app_msg, 100, 5)).has_value());
        z.run();
        CHECK(z.server->export_state().error() == errc::unsupported);
    }

    // Closed, and at the end of input.
    p.server->input_eof();
    CHECK(p.server->export_state().error() == errc::connection_closed);
    p.server->disconnect(disconnect_reason::by_application, "bye");
    CHECK(p.server->export_state().error() == errc::connection_closed);
}

TEST_CASE("transport state: the encoding round-trips and every truncation fails")
{
    auto s = sample_state();
    s.peer_extensions["a@example.com"] = "x";
    s.peer_extensions["server-sig-algs"] = "ssh-ed25519";
    s.ext_info_received = 1;
    bytes wire = encode_transport_state(s);
    auto d = decode_transport_state(wire);
    REQUIRE(d.has_value());
    CHECK(encode_transport_state(*d) == wire);
    CHECK(d->peer_extensions == s.peer_extensions);
    CHECK(d->unread_input == s.unread_input);
    CHECK(d->out.position.seq == s.out.position.seq);
    CHECK(d->in.position.block_offset == s.in.position.block_offset);
    for (std::size_t n = 0; n < wire.size(); ++n) {
        INFO("length " << n);
        CHECK_FALSE(decode_transport_state(byte_span(wire).first(n)).has_value());
    }
    bytes longer = wire;
    longer.push_back(0);
    CHECK(decode_transport_state(longer).error() == errc::trailing_data);
}

TEST_CASE("transport state: the decoder rejects what the core could not have exported")
{
    const auto good = sample_state();
    REQUIRE(decode_transport_state(encode_transport_state(good)).has_value());
    auto check = [&](std::string_view what, errc expected, auto&& mutate) {
        INFO(what);
        auto s = good;
        mutate(s);
        CHECK(decode_error(s) == expected);
        CHECK(validate_transport_state(s).error() == expected);
    };
    check("unknown cipher", errc::unsupported, [](transport_state& s) { s.algorithms.cipher_s2c = "rot13"; });
    check("none cipher", errc::unsupported, [](transport_state& s) { s.algorithms.cipher_c2s = "none"; });
    check("unknown mac", errc::unsupported, [](transport_state& s) { s.algorithms.mac_c2s = "crc32"; });
    check("unknown kex", errc::unsupported, [](transport_state& s) { s.algorithms.kex = "kex-of-the-month"; });
    check("unknown compression", errc::unsupported,
          [](transport_state& s) { s.algorithms.compression_c2s = "lz4"; });
    check("short key", errc::invalid_argument,
          [](transport_state& s) { s.out.keys.enc_key = secret_bytes(byte_span(s.out.keys.enc_key).first(16)); });
    check("short iv", errc::invalid_argument, [](transport_state& s) { s.in.keys.iv = secret_bytes(8); });
    check("wrong mac key size", errc::invalid_argument,
          [](transport_state& s) { s.in.keys.mac_key = secret_bytes(20); });
    check("mac key for an AEAD cipher", errc::invalid_argument, [](transport_state& s) {
        s.algorithms.cipher_c2s = "aes256-gcm@openssh.com";
        s.algorithms.mac_c2s = "";
        s.in.keys.iv = secret_bytes(12);
    });
    check("oversized key", errc::too_large, [](transport_state& s) { s.in.keys.enc_key = secret_bytes(65); });
    check("empty session id", errc::invalid_argument, [](transport_state& s) { s.session_id.clear(); });
    check("oversized session id", errc::too_large, [](transport_state& s) { s.session_id.assign(65, 1); });
    check("bad peer identification", errc::invalid_argument,
          [](transport_state& s) { s.peer_identification = "SSH-1.5-old"; });
    check("identification with a line break", errc::invalid_argument,
          [](transport_state& s) { s.local_identification = "SSH-2.0-x\r\nSSH-2.0-y"; });
    check("oversized identification", errc::too_large,
          [](transport_state& s) { s.peer_identification = "SSH-2.0-" + std::string(9000, 'x'); });
    check("host key of another type", errc::invalid_argument,
          [](transport_state& s) { s.algorithms.host_key = "rsa-sha2-256"; });
    check("no host key", errc::invalid_argument, [](transport_state& s) { s.host_key.reset(); });
    check("compression flag without compression", errc::invalid_argument,
          [](transport_state& s) { s.out.compression = true; });
    check("zlib@openssh.com not started after authentication", errc::invalid_argument, [](transport_state& s) {
        s.algorithms.compression_c2s = "zlib@openssh.com";
        s.authenticated = true;
    });
    check("too many EXT_INFO", errc::invalid_argument, [](transport_state& s) { s.ext_info_received = 2; });
    check("oversized extension value", errc::too_large,
          [](transport_state& s) { s.peer_extensions["x"] = std::string(64 * 1024 + 1, 'v'); });
    check("too many extension bytes", errc::too_large, [](transport_state& s) {
        for (int i = 0; i < 9; ++i)
            s.peer_extensions["x" + std::to_string(i)] = std::string(64 * 1024, 'v');
    });
    check("too many extensions", errc::too_large, [](transport_state& s) {
        for (std::size_t i = 0; i <= max_state_extensions; ++i)
            s.peer_extensions[std::to_string(i)] = "";
    });
    check("oversized unread input", errc::too_large,
          [](transport_state& s) { s.unread_input.assign(max_transport_input + 1, 0); });

    // Damage the encoding itself.
    const bytes wire = encode_transport_state(good);
    {
        bytes b = wire;
        b[4] ^= 0x20; // the tag
        CHECK(decode_transport_state(b).error() == errc::malformed);
    }
    {
        bytes b = wire;
        const std::size_t version_at = 4 + std::string_view("longhaul-transport-state").size();
        b[version_at + 3] ^= 3; // any other version
        CHECK(decode_transport_state(b).error() == errc::bad_version);
    }
    {
        bytes b = wire;
        const std::size_t role_at = 4 + std::string_view("longhaul-transport-state").size() + 4;
        b[role_at] = 7;
        CHECK(decode_transport_state(b).error() == errc::malformed);
    }
    {
        // A length field far beyond the input.
        bytes b = wire;
        const std::size_t local_id_at = 4 + std::string_view("longhaul-transport-state").size() + 4 + 1;
        store_u32(b.data() + local_id_at, 0xfffffff0u);
        CHECK_FALSE(decode_transport_state(b).has_value());
    }
    {
        // An extension count far beyond the bound, with nothing behind it.
        bytes b;
        wire_writer w(b);
        w.string("longhaul-transport-state").u32(transport_state_version).u8(1);
        w.string(good.local_identification).string(good.peer_identification);
        const auto& a = good.algorithms;
        w.string(a.kex).string(a.host_key).string(a.cipher_c2s).string(a.cipher_s2c).string(a.mac_c2s);
        w.string(a.mac_s2c).string(a.compression_c2s).string(a.compression_s2c).string(good.session_id);
        w.u8(1).u8(0).u8(0).u32(0xffffffffu);
        CHECK(decode_transport_state(b).error() == errc::too_large);
    }
    CHECK(decode_transport_state({}).error() == errc::incomplete);
}

TEST_CASE("transport state: an unusable state leaves the imported core closed, sending nothing")
{
    seeded_random rng(3);
    const steady_time now{};
    handoff_params hp{.cipher = "aes256-ctr", .mac = "hmac-sha2-256"};
    {
        auto s = sample_state();
        s.algorithms.cipher_c2s = "rot13";
        transport t(server_side(hp), rng, now, std::move(s));
        CHECK(t.closed());
        CHECK(t.output_size() == 0);
        auto ev = t.poll();
        CHECK(ev.type == transport_event_type::disconnected);
        CHECK(ev.error == errc::unsupported);
        CHECK(ev.local);
    }
    {
        auto cfg = base_config(hp);
        cfg.role = transport_role::client;
        transport t(cfg, rng, now, sample_state());
        CHECK(t.closed());
        CHECK(t.poll().error == errc::invalid_argument);
        CHECK(t.output_size() == 0);
    }
}

TEST_CASE("transport state: host key signatures from a signer elsewhere")
{
    const auto& keys = host_keys();
    auto signer_config = [&](int* calls, std::string* last_alg) {
        transport_config sc;
        sc.role = transport_role::server;
        sc.host_key_algorithms = supported_host_key_algorithms();
        for (const auto& k : keys)
            sc.host_public_keys.push_back(k->public_part());
        sc.host_key_signer = [&keys, calls, last_alg](const public_key& key, std::string_view alg,
                                                      byte_span data) -> result<bytes> {
            ++*calls;
            *last_alg = std::string(alg);
            for (const auto& k : keys)
                if (k->public_part() == key)
                    return k->sign(alg, data);
            return errc::invalid_argument;
        };
        return sc;
    };

    for (const char* alg : {"ssh-ed25519", "rsa-sha2-512", "ecdsa-sha2-nistp256"}) {
        INFO(alg);
        int calls = 0;
        std::string last_alg;
        transport_config cc;
        cc.host_key_algorithms = alg;
        transport_pair p(cc, signer_config(&calls, &last_alg), 21);
        p.run();
        REQUIRE(p.client->established());
        CHECK(calls == 1);
        CHECK(last_alg == alg);
        REQUIRE(p.server->server_host_key().has_value());
        CHECK(*p.server->server_host_key() == *p.client->server_host_key());
        p.server->request_rekey();
        p.run();
        CHECK(calls == 2);
        CHECK(p.client_log.kex_completed == 2);
    }

    // Only the keys listed are offered, whatever host_keys holds.
    {
        int calls = 0;
        std::string last_alg;
        auto sc = signer_config(&calls, &last_alg);
        sc.host_public_keys = {keys[0]->public_part()}; // ed25519
        transport_config cc;
        cc.host_key_algorithms = "ecdsa-sha2-nistp256";
        transport_pair p(cc, sc, 22);
        p.run();
        CHECK(p.client_log.disconnected);
        CHECK(p.server_log.error == errc::no_matching_algorithm);
        CHECK(calls == 0);
    }

    // A signer that fails, answers nothing or signs with another key ends
    // the exchange cleanly on both sides, found by the server.
    for (int mode : {0, 1, 2}) {
        INFO("mode " << mode);
        int calls = 0;
        std::string last_alg;
        auto sc = signer_config(&calls, &last_alg);
        sc.host_key_signer = [&calls, &keys, mode](const public_key&, std::string_view,
                                                   byte_span data) -> result<bytes> {
            ++calls;
            if (mode == 0)
                return errc::io_error;
            if (mode == 1)
                return bytes{};
            return keys[4]->sign("rsa-sha2-512", data); // not the key asked for
        };
        transport_config cc;
        cc.host_key_algorithms = "ssh-ed25519";
        transport_pair p(cc, sc, 23);
        p.run();
        CHECK(calls == 1);
        CHECK_FALSE(p.client->established());
        CHECK(p.server->closed());
        CHECK(p.server_log.disconnected);
        CHECK(p.server_log.disconnect_local);
        CHECK(p.server_log.error == (mode == 0 ? errc::io_error : errc::signature_invalid));
        CHECK(p.client_log.disconnected);
        CHECK(p.client_log.error == errc::peer_disconnected);
    }
}
