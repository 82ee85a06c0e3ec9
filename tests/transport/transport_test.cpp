// Behaviour of the transport core: version exchange, negotiation failures,
// host key decisions, rekey triggers, compression, strict kex and hostile
// input, each ending in the right event and disconnect reason.
#include "common/transport/transport.hpp"

#include "common/wire.hpp"
#include "tests/transport/data_exchange.hpp"

using namespace longhaul;
using namespace longhaul::test;

namespace {

transport_config client_config() { return {}; }
transport_config server_config()
{
    transport_config c;
    c.host_key_algorithms = supported_host_key_algorithms();
    c.server_sig_algs = "ssh-ed25519,rsa-sha2-512,rsa-sha2-256";
    return c;
}

// An unencrypted binary packet with explicit padding (pre-NEWKEYS framing).
bytes plain_packet(byte_span payload, std::size_t pad)
{
    bytes p;
    wire_writer w(p);
    w.u32(static_cast<std::uint32_t>(1 + payload.size() + pad)).u8(static_cast<std::uint8_t>(pad)).raw(payload);
    p.resize(p.size() + pad, 0);
    return p;
}

bytes plain_packet(byte_span payload)
{
    std::size_t pad = 8 - (5 + payload.size()) % 8;
    if (pad < 4)
        pad += 8;
    return plain_packet(payload, pad);
}

bytes client_kexinit(bool strict)
{
    kexinit_message m;
    m.lists[kex_algorithms] = std::string("curve25519-sha256") + (strict ? ",kex-strict-c-v00@openssh.com" : "");
    m.lists[server_host_key_algorithms] = "ssh-ed25519";
    m.lists[encryption_c2s] = m.lists[encryption_s2c] = "aes128-gcm@openssh.com";
    m.lists[mac_c2s] = m.lists[mac_s2c] = "hmac-sha2-256";
    m.lists[compression_c2s] = m.lists[compression_s2c] = "none";
    return m.encode();
}

// A lone server core fed raw bytes by the test (a hand-written hostile client).
struct raw_server {
    seeded_random rng{9};
    transport t{[] {
                    auto c = server_config();
                    c.role = transport_role::server;
                    c.host_keys = host_keys();
                    return c;
                }(),
                rng, steady_time{}};

    void feed(std::string_view s) { t.feed(as_bytes(s)); }
    void feed(byte_span b) { t.feed(b); }
    transport_event last_event()
    {
        transport_event last;
        for (;;) {
            auto ev = t.poll();
            if (ev.type == transport_event_type::none)
                return last;
            last = ev;
            if (ev.type == transport_event_type::disconnected) {
                text = std::string(ev.text);
                return ev;
            }
        }
    }
    std::string text;
};

} // namespace

TEST_CASE("transport: version exchange, first kex, EXT_INFO and service messages")
{
    transport_pair p(client_config(), server_config());
    p.run();
    REQUIRE(p.client->established());
    CHECK(p.client_log.host_key_events == 1);
    CHECK(p.client->peer_identification().software == "Longhaul_0.1");
    CHECK(p.server->peer_identification().line == "SSH-2.0-Longhaul_0.1");
    REQUIRE(p.client->server_host_key().has_value());
    CHECK(p.client->session_id().size() == 32);
    CHECK(std::equal(p.client->session_id().begin(), p.client->session_id().end(), p.server->session_id().begin()));
    // ext-info-c was offered, so the server sent server-sig-algs.
    CHECK(p.client->peer_extensions().at("server-sig-algs") == "ssh-ed25519,rsa-sha2-512,rsa-sha2-256");
    CHECK(p.client->strict_kex());
    CHECK(p.server->strict_kex());

    const std::uint8_t req[] = {msg::service_request, 0, 0, 0, 1, 'x'};
    REQUIRE(p.client->send(req).has_value());
    p.run();
    REQUIRE(p.server_log.payloads.size() == 1);
    CHECK(p.server_log.payloads[0] == bytes(std::begin(req), std::end(req)));
}

TEST_CASE("transport: no EXT_INFO when the client does not offer ext-info-c")
{
    auto cc = client_config();
    cc.ext_info = false;
    transport_pair p(cc, server_config());
    p.run();
    REQUIRE(p.client->established());
    CHECK(p.client->peer_extensions().empty());
}

// issue 12 (5): a peer may send EXT_INFO once (a server's peer) or twice (a
// client's: after NEWKEYS and before USERAUTH_SUCCESS), as OpenSSH's
// kex_input_ext_info() allows; every further one used to be parsed and its
// names stored, so a client could grow the server's memory without bound.
TEST_CASE("transport: a server takes one EXT_INFO from the client, a second ends the connection")
{
    transport_pair p(client_config(), server_config());
    p.run();
    REQUIRE(p.server->established());
    auto ext_info = [](int first, int count) {
        bytes m;
        wire_writer w(m);
        w.u8(msg::ext_info).u32(static_cast<std::uint32_t>(count));
        for (int i = 0; i < count; ++i)
            w.string("name-" + std::to_string(first + i)).string("v");
        return m;
    };
    REQUIRE(p.client->send(ext_info(0, 100)).has_value());
    p.run();
    CHECK_FALSE(p.server->closed());
    CHECK(p.server->peer_extensions().size() == 100);
    for (int i = 1; i < 5 && !p.server->closed(); ++i) {
        REQUIRE(p.client->send(ext_info(i * 100, 100)).has_value());
        p.run();
    }
    CHECK(p.server->closed());
    CHECK(p.server_log.disconnect_local);
    CHECK(p.server_log.disconnect_text == "too many SSH2_MSG_EXT_INFO messages sent by peer");
    CHECK(p.server->peer_extensions().size() == 100);
}

TEST_CASE("transport: EXT_INFO with 1024 or more entries is refused, as OpenSSH refuses it")
{
    transport_pair p(client_config(), server_config());
    p.run();
    bytes m;
    wire_writer w(m);
    w.u8(msg::ext_info).u32(1024);
    for (int i = 0; i < 1024; ++i)
        w.string("n" + std::to_string(i)).string("");
    REQUIRE(p.client->send(m).has_value());
    p.run();
    CHECK(p.server->closed());
    CHECK(p.server->peer_extensions().empty());
}

TEST_CASE("transport: messages sent before the key exchange completes are held, then delivered in order")
{
    transport_pair p(client_config(), server_config());
    const std::uint8_t a[] = {100, 1};
    const std::uint8_t b[] = {100, 2};
    REQUIRE(p.client->send(a).has_value());
    REQUIRE(p.client->send(b).has_value());
    p.run();
    REQUIRE(p.server_log.payloads.size() == 2);
    CHECK(p.server_log.payloads[0][1] == 1);
    CHECK(p.server_log.payloads[1][1] == 2);
}

TEST_CASE("transport: payloads held during a rekey count in queued_size(), not in output_size()")
{
    transport_pair p(client_config(), server_config());
    p.run();
    p.client->request_rekey();
    const std::size_t wire_before = p.client->output_size();
    bytes payload(1000, 100);
    REQUIRE(p.client->send(payload).has_value());
    auto room = p.client->prepare_payload(500);
    REQUIRE(room.size() == 500);
    room[0] = 100;
    REQUIRE(p.client->commit_payload(500).has_value());
    // Only the KEXINIT is on the wire; the two payloads wait for NEWKEYS.
    CHECK(p.client->output_size() == wire_before);
    CHECK(p.client->queued_size() == wire_before + 1500);
    p.run();
    CHECK(p.client->queued_size() == p.client->output_size());
    REQUIRE(p.server_log.payloads.size() == 2);
    CHECK(p.server_log.payloads[0].size() == 1000);
    CHECK(p.server_log.payloads[1].size() == 500);
}

TEST_CASE("transport: a client accepts text lines before the server's version; a server does not")
{
    seeded_random rng(3);
    transport client(client_config(), rng, steady_time{});
    client.feed(as_bytes("Welcome to the machine\r\nsecond line\nSSH-2.0-OpenSSH_9.2p1 Debian-2\r\n"));
    auto ev = client.poll();
    CHECK(ev.type == transport_event_type::banner_line);
    CHECK(ev.text == "Welcome to the machine");
    ev = client.poll();
    CHECK(ev.text == "second line");
    ev = client.poll();
    CHECK(ev.type == transport_event_type::peer_version);
    CHECK(client.peer_identification().software == "OpenSSH_9.2p1");
    CHECK(client.peer_identification().comments == "Debian-2");

    raw_server s;
    s.feed("GET / HTTP/1.1\r\n");
    auto d = s.last_event();
    CHECK(d.type == transport_event_type::disconnected);
    CHECK(d.error == errc::bad_version);
    CHECK(s.text.find("Bad remote protocol version identification") != std::string::npos);
}

TEST_CASE("transport: protocol 1.x, overlong lines and control bytes in the version are refused")
{
    {
        raw_server s;
        s.feed("SSH-1.5-old\r\n");
        auto d = s.last_event();
        CHECK(d.reason == disconnect_reason::protocol_version_not_supported);
    }
    {
        raw_server s;
        s.feed("SSH-2.0-" + std::string(9000, 'a'));
        auto d = s.last_event();
        CHECK(d.type == transport_event_type::disconnected);
        CHECK(s.text == "banner line too long");
    }
    {
        raw_server s;
        s.feed(std::string_view("SSH-2.0-a\0b\r\n", 13));
        CHECK(s.last_event().error == errc::bad_version);
    }
}

TEST_CASE("transport: the stream ending mid-banner or mid-packet is a clean connection_closed")
{
    {
        raw_server s;
        s.feed("SSH-2.0-x");
        s.t.input_eof();
        auto d = s.last_event();
        CHECK(d.error == errc::connection_closed);
        CHECK_FALSE(d.text.empty());
    }
    {
        raw_server s;
        s.feed("SSH-2.0-x\r\n");
        auto pkt = plain_packet(client_kexinit(true));
        s.feed(byte_span(pkt).first(pkt.size() / 2));
        s.t.input_eof();
        auto d = s.last_event();
        CHECK(d.error == errc::connection_closed);
    }
}

TEST_CASE("transport: oversize, undersize and misaligned packet lengths end the connection")
{
    for (std::uint32_t len : {0x00100000u, 0xffffffffu, 3u, 4u, 13u}) {
        raw_server s;
        s.feed("SSH-2.0-x\r\n");
        bytes b;
        wire_writer(b).u32(len).u8(4);
        b.resize(64, 0);
        s.feed(b);
        auto d = s.last_event();
        CHECK(d.error == errc::bad_packet_length);
        CHECK(d.reason == disconnect_reason::protocol_error);
        CHECK(s.text == "Bad packet length " + std::to_string(len) + ".");
    }
}

TEST_CASE("transport: padding shorter than 4 bytes or swallowing the payload is refused")
{
    const std::uint8_t ignore_msg[16] = {msg::ignore};
    // Payload lengths chosen so that the packet stays 8-byte aligned and only the padding rule breaks.
    for (auto [pad, payload_len] : {std::pair<std::size_t, std::size_t>{2, 9}, {3, 8}}) {
        raw_server s;
        s.feed("SSH-2.0-x\r\n");
        s.feed(plain_packet(byte_span(ignore_msg).first(payload_len), pad));
        auto d = s.last_event();
        CHECK(d.error == errc::bad_padding);
    }
    {
        raw_server s;
        s.feed("SSH-2.0-x\r\n");
        bytes b;
        wire_writer(b).u32(12).u8(11); // padding covers everything: no message number
        b.resize(16, 0);
        s.feed(b);
        CHECK(s.last_event().error == errc::bad_padding);
    }
}

TEST_CASE("transport: strict kex rejects a packet injected before KEXINIT (Terrapin)")
{
    const std::uint8_t ignore_msg[] = {msg::ignore, 0, 0, 0, 0};
    {
        raw_server s;
        s.feed("SSH-2.0-x\r\n");
        s.feed(plain_packet(ignore_msg));
        s.feed(plain_packet(client_kexinit(true)));
        auto d = s.last_event();
        CHECK(d.error == errc::strict_kex_violation);
        CHECK(s.text == "strict KEX violation: KEXINIT was not the first packet");
    }
    {
        // Without strict kex the same IGNORE is legal.
        raw_server s;
        s.feed("SSH-2.0-x\r\n");
        s.feed(plain_packet(ignore_msg));
        s.feed(plain_packet(client_kexinit(false)));
        auto ev = s.last_event();
        CHECK(ev.type != transport_event_type::disconnected);
        CHECK_FALSE(s.t.closed());
        CHECK_FALSE(s.t.strict_kex());
    }
}

TEST_CASE("transport: strict kex rejects any non-kex message during the initial exchange")
{
    const std::uint8_t ignore_msg[] = {msg::ignore, 0, 0, 0, 0};
    const std::uint8_t debug_msg[] = {msg::debug, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    const std::uint8_t unknown_msg[] = {9};
    for (byte_span m : {byte_span(ignore_msg), byte_span(debug_msg), byte_span(unknown_msg)}) {
        raw_server s;
        s.feed("SSH-2.0-x\r\n");
        s.feed(plain_packet(client_kexinit(true)));
        s.feed(plain_packet(m));
        auto d = s.last_event();
        CHECK(d.error == errc::strict_kex_violation);
        CHECK(s.text.starts_with("strict KEX violation: unexpected packet type"));
    }
}

TEST_CASE("transport: strict kex resets sequence numbers at NEWKEYS")
{
    transport_pair p(client_config(), server_config());
    p.run();
    REQUIRE(p.client->established());
    // After NEWKEYS the client has sent nothing yet; the server sent only EXT_INFO.
    CHECK(p.client->send_sequence() == 0);
    CHECK(p.server->send_sequence() == 1);
    CHECK(p.server->receive_sequence() == 0);
    CHECK(p.client->receive_sequence() == 1);

    auto cc = client_config();
    cc.strict_kex = false;
    transport_pair q(cc, server_config());
    q.run();
    REQUIRE(q.client->established());
    CHECK_FALSE(q.server->strict_kex());
    CHECK(q.client->send_sequence() == 3); // KEXINIT, ECDH_INIT, NEWKEYS
}

TEST_CASE("transport: a corrupted packet is a MAC error for every kind of cipher")
{
    for (auto [cipher, mac] : {std::pair<const char*, const char*>{"chacha20-poly1305@openssh.com", ""},
                               {"aes256-gcm@openssh.com", ""},
                               {"aes128-ctr", "hmac-sha2-256-etm@openssh.com"},
                               {"aes192-ctr", "hmac-sha1"}}) {
        const char* const shown[] = {cipher, mac}; // clang 14 cannot capture a structured binding in INFO's lambda
        INFO(shown[0] << " " << shown[1]);
        auto cc = client_config();
        cc.ciphers = cipher;
        if (*mac)
            cc.macs = mac;
        transport_pair p(cc, server_config());
        p.run();
        REQUIRE(p.client->established());
        p.tamper = [](bool to_server, bytes& chunk) {
            if (to_server && chunk.size() > 20)
                chunk[chunk.size() - 20] ^= 0x40;
        };
        const std::uint8_t data[64] = {100};
        REQUIRE(p.client->send(data).has_value());
        p.run();
        CHECK(p.server_log.disconnected);
        CHECK(p.server_log.error == errc::mac_mismatch);
        CHECK(p.server_log.reason == disconnect_reason::mac_error);
        CHECK(p.server_log.disconnect_text == "Corrupted MAC on input.");
        CHECK(p.server_log.payloads.empty());
        // The client is told why (the DISCONNECT itself is under the server's intact keys).
        CHECK(p.client_log.disconnected);
        CHECK_FALSE(p.client_log.disconnect_local);
        CHECK(p.client_log.reason == disconnect_reason::mac_error);
    }
}

TEST_CASE("transport: negotiation failure names the list and the peer's offer")
{
    auto cc = client_config();
    cc.ciphers = "aes128-ctr";
    auto sc = server_config();
    sc.ciphers = "aes256-gcm@openssh.com";
    transport_pair p(cc, sc);
    p.run();
    CHECK(p.client_log.disconnected);
    CHECK(p.client_log.error == errc::no_matching_algorithm);
    CHECK(p.client_log.disconnect_text == "no matching cipher found. Their offer: aes256-gcm@openssh.com");
    CHECK(p.server_log.disconnected);
    CHECK(p.server_log.reason == disconnect_reason::key_exchange_failed);
}

TEST_CASE("transport: a rejected host key sends HOST_KEY_NOT_VERIFIABLE")
{
    transport_pair p(client_config(), server_config());
    p.auto_accept_host_key = false;
    p.run();
    REQUIRE(p.client_log.host_key_events == 1);
    CHECK_FALSE(p.client->established());
    p.client->reject_host_key("Host key verification failed.");
    p.run();
    CHECK(p.client_log.disconnected);
    CHECK(p.client_log.error == errc::host_key_rejected);
    CHECK(p.server_log.disconnected);
    CHECK(p.server_log.reason == disconnect_reason::host_key_not_verifiable);
    CHECK(p.server_log.disconnect_text == "Host key verification failed.");
}

TEST_CASE("transport: unknown transport messages get UNIMPLEMENTED, upper-layer ones are delivered")
{
    transport_pair p(client_config(), server_config());
    p.run();
    const std::uint8_t unknown[] = {15};
    const std::uint8_t upper[] = {200, 1, 2};
    const std::uint32_t seq = p.client->send_sequence();
    REQUIRE(p.client->send(unknown).has_value());
    REQUIRE(p.client->send(upper).has_value());
    p.run();
    REQUIRE(p.client_log.unimplemented.size() == 1);
    CHECK(p.client_log.unimplemented[0] == seq);
    REQUIRE(p.server_log.payloads.size() == 1);
    CHECK(p.server_log.payloads[0][0] == 200);
    CHECK_FALSE(p.server->closed());
}

TEST_CASE("transport: a peer that answers KEXINIT with UNIMPLEMENTED ends the connection cleanly")
{
    transport_pair p(client_config(), server_config());
    p.run();
    // Play a peer that refuses re-exchange: swallow the client's KEXINIT and answer UNIMPLEMENTED.
    const std::uint32_t seq = p.client->send_sequence();
    p.client->request_rekey();
    p.client->consume_output(p.client->output_size());
    bytes m;
    wire_writer(m).u8(msg::unimplemented).u32(seq);
    REQUIRE(p.server->send(m).has_value());
    p.run();
    CHECK(p.client_log.disconnected);
    CHECK(p.client_log.disconnect_text == "peer refused key re-exchange (SSH_MSG_UNIMPLEMENTED for KEXINIT)");
}

TEST_CASE("transport: DISCONNECT and DEBUG from the peer")
{
    transport_pair p(client_config(), server_config());
    p.run();
    p.server->send_debug(true, "hello\x1b[2J");
    p.run();
    p.server->disconnect(disconnect_reason::by_application, "bye");
    p.run();
    CHECK(p.client_log.disconnected);
    CHECK_FALSE(p.client_log.disconnect_local);
    CHECK(p.client_log.error == errc::peer_disconnected);
    CHECK(p.client_log.reason == disconnect_reason::by_application);
    CHECK(p.client_log.disconnect_text == "bye");
    CHECK(p.server_log.disconnect_local);
    CHECK(p.server_log.error == errc::ok);
}

TEST_CASE("transport: rekey by data volume (RekeyLimit) in each direction")
{
    auto cc = client_config();
    cc.rekey_limit_bytes = 256 * 1024;
    transport_pair p(cc, server_config());
    p.run();
    p.client->user_authenticated();
    p.server->user_authenticated();
    auto r = exchange_data(p, 2 * 1024 * 1024, 0, 11);
    CHECK(r.sent_c2s == r.recv_c2s);
    CHECK(r.sent_s2c == r.recv_s2c);
    // 2 MiB each way against a 256 KiB limit: at least 8 re-exchanges.
    CHECK(p.client_log.kex_completed >= 8);
    CHECK(p.server_log.kex_completed == p.client_log.kex_completed);
}

TEST_CASE("transport: rekey by time (RekeyLimit default 10s)")
{
    auto cc = client_config();
    cc.rekey_interval = std::chrono::seconds(10);
    transport_pair p(cc, server_config());
    p.run();
    // No rekey before user authentication, as with OpenSSH.
    CHECK_FALSE(p.client->next_deadline().has_value());
    p.client->advance_time(p.now + std::chrono::seconds(30));
    p.run();
    CHECK(p.client_log.kex_completed == 1);
    p.client->user_authenticated();
    p.server->user_authenticated();
    REQUIRE(p.client->next_deadline().has_value());
    CHECK(*p.client->next_deadline() == p.now + std::chrono::seconds(10));
    p.client->advance_time(p.now + std::chrono::seconds(9));
    p.run();
    CHECK(p.client_log.kex_completed == 1);
    p.client->advance_time(p.now + std::chrono::seconds(31));
    p.run();
    CHECK(p.client_log.kex_completed == 2);
    CHECK(p.server_log.kex_completed == 2);
    CHECK(*p.client->next_deadline() == p.now + std::chrono::seconds(41));
}

TEST_CASE("transport: either side may start a rekey, and both at once converge")
{
    transport_pair p(client_config(), server_config());
    p.run();
    p.server->request_rekey();
    p.run();
    CHECK(p.client_log.kex_completed == 2);
    p.client->request_rekey();
    p.server->request_rekey();
    p.run();
    CHECK(p.client_log.kex_completed == 3);
    CHECK(p.server_log.kex_completed == 3);
    CHECK_FALSE(p.client->closed());
}

TEST_CASE("transport: zlib compresses at once, zlib@openssh.com only after authentication")
{
    for (const char* method : {"zlib", "zlib@openssh.com"}) {
        INFO(method);
        auto cc = client_config();
        auto sc = server_config();
        cc.compression = sc.compression = method;
        transport_pair p(cc, sc);
        p.run();
        REQUIRE(p.client->established());
        bytes zeros(32 * 1024, 0);
        zeros[0] = 100;
        auto before = p.client->stats().bytes_out;
        REQUIRE(p.client->send(zeros).has_value());
        p.run();
        auto first = p.client->stats().bytes_out - before;
        if (std::string_view(method) == "zlib") {
            CHECK(first < 1024);
        } else {
            CHECK(first > zeros.size());
            p.client->user_authenticated();
            p.server->user_authenticated();
            before = p.client->stats().bytes_out;
            REQUIRE(p.client->send(zeros).has_value());
            p.run();
            CHECK(p.client->stats().bytes_out - before < 1024);
        }
        REQUIRE(p.server_log.payloads.size() >= 1);
        CHECK(p.server_log.payloads.back() == zeros);
        // Compression state survives a rekey.
        p.client->request_rekey();
        p.run();
        auto r = exchange_data(p, 256 * 1024, 1, 3);
        CHECK(r.sent_c2s == r.recv_c2s);
    }
}

TEST_CASE("transport: the handshake survives any split of the byte stream")
{
    for (std::size_t chunk : {1u, 2u, 3u, 7u, 16u, 61u, 255u, 4096u}) {
        INFO("chunk " << chunk);
        transport_pair p(client_config(), server_config(), chunk);
        p.run(chunk);
        CHECK(p.client->established());
        CHECK(p.server->established());
        const std::uint8_t m[] = {100, 9, 9, 9};
        REQUIRE(p.client->send(m).has_value());
        p.client->request_rekey();
        p.run(chunk);
        CHECK(p.server_log.payloads.size() == 1);
        CHECK(p.server_log.kex_completed == 2);
    }
}

TEST_CASE("transport: a DH group outside the client's bounds is refused")
{
    auto cc = client_config();
    auto sc = server_config();
    cc.kex_algorithms = sc.kex_algorithms = "diffie-hellman-group-exchange-sha256";
    sc.gex_groups = [](std::uint32_t, std::uint32_t, std::uint32_t) -> std::optional<dh_group> {
        dh_group g = modp_group14();
        g.p.erase(g.p.begin()); // a 2040-bit prime-sized value: below the 2048-bit floor
        return g;
    };
    transport_pair p(cc, sc);
    p.run();
    CHECK(p.client_log.disconnected);
    CHECK(p.client_log.disconnect_text.find("outside 2048..8192") != std::string::npos);
}

TEST_CASE("algorithms: +, - and ^ modify the defaults as OpenSSH's kex_assemble_names does")
{
    const std::string all = "a,b,c,d,x-1,x-2";
    const std::string def = "a,b,c";
    CHECK(assemble_algorithm_list("", def, all).value() == "a,b,c");
    CHECK(assemble_algorithm_list("+d", def, all).value() == "a,b,c,d");
    CHECK(assemble_algorithm_list("+b", def, all).value() == "a,b,c");
    CHECK(assemble_algorithm_list("-b", def, all).value() == "a,c");
    CHECK(assemble_algorithm_list("^d,c", def, all).value() == "d,c,a,b");
    CHECK(assemble_algorithm_list("x-*", def, all).value() == "x-1,x-2");
    CHECK(assemble_algorithm_list("d,unknown", def, all).value() == "d");
    CHECK_FALSE(assemble_algorithm_list("unknown", def, all));
    CHECK_FALSE(assemble_algorithm_list("!a", def, all));
    CHECK(algorithm_list_valid("+aes128-ctr", default_ciphers()));
    CHECK_FALSE(algorithm_list_valid("aes128-cbc", default_ciphers()));
}
