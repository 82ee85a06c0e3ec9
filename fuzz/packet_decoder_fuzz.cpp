// libFuzzer target for everything that decodes peer bytes in the transport
// and connection layers.
//
// The first input byte picks the mode (mod 9), the second is a selector;
// the rest is the peer's bytes:
//   0  a server core fed a client's byte stream (version, packets)
//   1  a client core fed a server's stream after a fixed version line
//   2  packet opening under cipher x MAC combination `selector` with fixed
//      (zero) keys
//   3  the first reply of kex method `selector`, as a client sees it
//   4  KEXINIT decoding
//   5  a sequence of connection-protocol messages into a connection core
//   6  real keys, plaintext chosen by the fuzzer: a client and a server core
//      run a key exchange in memory (cipher x MAC `selector`, options in the
//      next byte, see pair_from()), then the client core seals each message
//      of the sequence and the server core opens it: the fuzzer's plaintext
//      reaches the server's transport (KEXINIT, NEWKEYS, IGNORE, EXT_INFO...
//      under real keys, so rekeys can start) and a connection core
//   7  the same, but the sealed byte stream is mutated first: a count byte
//      and (uint16 offset, xor byte) triples come before the sequence, so
//      MAC, length and padding failures under real keys are covered
//   8  mode 6 the other way round: the server core seals, the client core
//      (with a session channel it opened) opens
// Messages in a sequence: see split_messages() in fuzz_common.hpp.
// Randomness, OpenSSL's included, is deterministic per input.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh) writes real
// handshakes, sealed packets, kex replies and channel sequences.
#include "fuzz/fuzz_channel.hpp"
#include "fuzz/fuzz_common.hpp"

#include "common/crypto/packet_cipher.hpp"
#include "common/transport/key_exchange.hpp"
#include "common/transport/packet_codec.hpp"
#include "common/transport/transport.hpp"
#include "channel/connection.hpp"
#include "common/wire.hpp"

#include <cstddef>
#include <cstdint>

using namespace longhaul;
using namespace longhaul::fuzz;

namespace {

constexpr int mode_count = 9;

const std::shared_ptr<const private_key>& host_key() { return host_keys().ed25519; }

void drive(transport& t, byte_span data)
{
    // Feed in two pieces so split handling is exercised too.
    const std::size_t cut = data.size() / 2;
    for (byte_span piece : {data.first(cut), data.subspan(cut)}) {
        t.feed(piece);
        for (int i = 0; i < 10000; ++i) {
            auto ev = t.poll();
            trace_event(t.role() == transport_role::client ? "client" : "server", ev);
            if (ev.type == transport_event_type::none || ev.type == transport_event_type::disconnected)
                break;
            if (ev.type == transport_event_type::host_key)
                t.accept_host_key();
        }
    }
    t.input_eof();
    for (int i = 0; i < 10000 && t.poll().type != transport_event_type::none; ++i) {
    }
}

transport_config core_config(transport_role role)
{
    transport_config cfg;
    cfg.role = role;
    if (role == transport_role::server)
        cfg.host_keys = {host_key()};
    return cfg;
}

void fuzz_core(transport_role role, byte_span data)
{
    // The victim draws from its role's OpenSSL stream, as in the seed capture.
    on_side s(role == transport_role::server ? server_side : client_side);
    fixed_random rng;
    transport t(core_config(role), rng, steady_time{});
    if (role == transport_role::client)
        t.feed(as_bytes("SSH-2.0-OpenSSH_9.2p1\r\n"));
    drive(t, data);
}

std::unique_ptr<packet_cipher> zero_key_cipher(std::uint8_t selector, cipher_direction dir)
{
    const auto& combos = cipher_mac_combos();
    const auto& [cipher, mac] = combos[selector % combos.size()];
    const cipher_info* ci = find_cipher(cipher);
    direction_keys keys;
    keys.iv = secret_bytes(ci->iv_size);
    keys.enc_key = secret_bytes(ci->key_size);
    if (!mac.empty())
        keys.mac_key = secret_bytes(find_mac(mac)->key_size);
    auto pc = make_packet_cipher(cipher, mac, keys, dir);
    return pc ? std::move(*pc) : nullptr;
}

void fuzz_open(std::uint8_t selector, byte_span data)
{
    auto pc = zero_key_cipher(selector, cipher_direction::open);
    if (!pc)
        return;
    packet_receiver rx;
    rx.set_cipher(std::move(pc));
    byte_buffer in;
    in.append(data);
    for (int i = 0; i < 64; ++i) {
        auto r = rx.next(in);
        if (!r || !*r)
            break;
    }
}

kex_context reply_context()
{
    kex_context ctx;
    ctx.v_c = "SSH-2.0-a";
    ctx.v_s = "SSH-2.0-b";
    ctx.host_key_algorithm = "ssh-ed25519";
    ctx.we_need = ctx.dh_need = 16;
    return ctx;
}

// Methods cheap enough to run per input (group16/18 share group14's code).
const std::vector<std::string_view>& reply_methods()
{
    static const std::vector<std::string_view> m = [] {
        std::vector<std::string_view> v;
        for (auto name : supported_kex_methods())
            if (name.find("group16") == std::string_view::npos && name.find("group18") == std::string_view::npos)
                v.push_back(name);
        return v;
    }();
    return m;
}

std::uint8_t reply_number(const kex_method& m)
{
    return m.family == kex_family::dh_gex ? msg::kex_dh_gex_group : msg::kexdh_reply;
}

void fuzz_kex_reply(std::uint8_t selector, byte_span data)
{
    const auto& methods = reply_methods();
    const kex_method* m = find_kex_method(methods[selector % methods.size()]);
    auto k = key_exchange::client(*m, reply_context());
    if (!k)
        return;
    std::vector<bytes> out;
    if (!(*k)->start(out))
        return;
    // The reply message: the method's expected number, then the fuzzer's bytes.
    bytes reply{reply_number(*m)};
    reply.insert(reply.end(), data.begin(), data.end());
    (void)(*k)->handle(reply, out);
}

// A sequence of connection-protocol messages (uint16 length, then the
// message) into a connection core: opens, data, window adjusts, requests in
// any order, against whatever channels the earlier messages created.
void fuzz_connection(byte_span data)
{
    fixed_random rng;
    transport_config cfg;
    transport t(cfg, rng, steady_time{});
    connection c(t);
    steady_time now{};
    for (int i = 0; i < 256 && data.size() >= 2; ++i) {
        const std::size_t len = std::min<std::size_t>((std::size_t(data[0]) << 8 | data[1]), data.size() - 2);
        byte_span m = data.subspan(2, len);
        data = data.subspan(2 + len);
        if (m.empty())
            continue;
        bytes msg(m.begin(), m.end());
        msg[0] = static_cast<std::uint8_t>(80 + msg[0] % 21); // 80..100
        auto ev = c.handle(msg, now);
        // Exercise the replies a program would give.
        if (ev.type == connection_event_type::open_request)
            (i & 1) ? c.accept(ev.channel) : c.reject(ev.channel, open_failure_reason::connect_failed, "no");
        else if (ev.type == connection_event_type::data)
            c.consumed(ev.channel, ev.data.size(), now);
        else if (ev.type == connection_event_type::request && ev.want_reply)
            c.reply(ev.channel, true);
        else if (ev.type == connection_event_type::close)
            c.close(ev.channel);
        if (t.closed())
            break;
        now += std::chrono::milliseconds(3);
    }
}

// ---------------------------------------------------------------- real keys

// Modes 6..8: the options byte is pair_from()'s (fuzz_common.hpp).

// One side's upper layer: payloads 80..127 into a connection core.
struct upper_layer {
    explicit upper_layer(transport& t) : conn(t) {}
    void on_event(const transport_event& ev, steady_time now)
    {
        if (ev.type != transport_event_type::payload || ev.payload.empty())
            return;
        if (!msg::is_connection_message(ev.payload[0]))
            return;
        auto cev = conn.handle(ev.payload, now);
        answer_connection_event(conn, cev, ++count, now);
        check_channels(conn);
    }
    connection conn;
    std::uint32_t count = 0;
};

// Mode 6 and 8: `to_server` says which core seals the fuzzer's messages.
void fuzz_sealed(std::uint8_t selector, byte_span rest, bool to_server)
{
    if (rest.empty())
        return;
    const std::uint8_t options = rest[0];
    auto p = established_pair(selector, options);
    transport& tx = to_server ? *p->client : *p->server;
    transport& rx = to_server ? *p->server : *p->client;
    const side tx_side = to_server ? client_side : server_side;
    const side rx_side = to_server ? server_side : client_side;
    upper_layer up(rx);
    if (!to_server) {
        // The client opened a session; the fuzzer (the server) answers it.
        on_side s(client_side);
        (void)up.conn.open("session");
        p->deliver(*p->client, *p->server, server_side, nullptr);
    }
    auto handler = [&](const transport_event& ev) { up.on_event(ev, p->now); };
    for (const auto& m : split_messages(rest.subspan(1))) {
        if (!m.empty()) {
            on_side s(tx_side);
            (void)tx.send(m);
        }
        p->deliver(tx, rx, rx_side, handler);
        if (options & 4)
            p->deliver(rx, tx, tx_side, nullptr);
        if (rx.closed())
            break;
        p->now += std::chrono::milliseconds(7);
        on_side s(rx_side);
        up.conn.tick(p->now);
    }
    on_side s(rx_side);
    rx.input_eof();
    core_pair::drain(rx, handler);
}

// Mode 7: count byte, count x (offset hi, offset lo, xor), then the sequence.
void fuzz_mutated(std::uint8_t selector, byte_span rest)
{
    if (rest.size() < 2)
        return;
    const std::uint8_t options = rest[0];
    const std::size_t count = rest[1] % 16;
    rest = rest.subspan(2);
    if (rest.size() < 3 * count)
        return;
    const byte_span edits = rest.first(3 * count);
    rest = rest.subspan(3 * count);
    auto p = established_pair(selector, options);
    {
        on_side s(client_side);
        for (const auto& m : split_messages(rest))
            if (!m.empty())
                (void)p->client->send(m);
    }
    bytes stream = core_pair::take_output(*p->client);
    if (!stream.empty())
        for (std::size_t i = 0; i < count; ++i) {
            const std::size_t off = (std::size_t(edits[3 * i]) << 8 | edits[3 * i + 1]) % stream.size();
            stream[off] ^= edits[3 * i + 2] == 0 ? 0x01 : edits[3 * i + 2];
        }
    upper_layer up(*p->server);
    auto handler = [&](const transport_event& ev) { up.on_event(ev, p->now); };
    on_side s(server_side);
    const std::size_t cut = stream.size() / 2;
    for (byte_span piece : {byte_span(stream).first(cut), byte_span(stream).subspan(cut)}) {
        if (p->server->closed())
            break;
        p->server->feed(piece);
        core_pair::drain(*p->server, handler);
    }
    p->server->input_eof();
    core_pair::drain(*p->server, handler);
}

// ---------------------------------------------------------------- seeds

bytes kexinit_payload(transport_role role)
{
    kexinit_message m;
    for (std::size_t i = 0; i < 16; ++i)
        m.cookie[i] = static_cast<std::uint8_t>(i);
    m.lists[kex_algorithms] = default_kex_algorithms() + (role == transport_role::client
                                                               ? ",ext-info-c,kex-strict-c-v00@openssh.com"
                                                               : ",kex-strict-s-v00@openssh.com");
    m.lists[server_host_key_algorithms] = default_host_key_algorithms();
    m.lists[encryption_c2s] = m.lists[encryption_s2c] = default_ciphers();
    m.lists[mac_c2s] = m.lists[mac_s2c] = default_macs();
    m.lists[compression_c2s] = m.lists[compression_s2c] = "none,zlib@openssh.com";
    return m.encode();
}

bytes channel_message(std::uint8_t type, std::initializer_list<std::uint32_t> words, std::vector<std::string> strings = {})
{
    bytes m{type};
    wire_writer w(m);
    for (auto x : words)
        w.u32(x);
    for (const auto& s : strings)
        w.string(s);
    return m;
}

bytes channel_open(std::string_view type, std::uint32_t sender, std::uint32_t window, std::uint32_t max_packet)
{
    bytes m;
    wire_writer(m).u8(msg::channel_open).string(type).u32(sender).u32(window).u32(max_packet);
    return m;
}

bytes channel_request(std::uint32_t recipient, std::string_view name, bool want_reply, byte_span data)
{
    bytes m;
    wire_writer(m).u8(msg::channel_request).u32(recipient).string(name).boolean(want_reply).raw(data);
    return m;
}

// What a client sends after authentication: a session with a pty, env,
// a command, data both ways, window adjusts, EOF and CLOSE.
std::vector<bytes> client_session_messages()
{
    pty_request pty;
    pty.term = "xterm";
    pty.cols = 80;
    pty.rows = 24;
    pty.modes = encode_terminal_modes({{1, 3}, {53, 1}});
    env_request env{"LANG", "C.UTF-8"};
    string_request cmd{"echo hi"};
    window_change_request wc{100, 40, 0, 0};
    bytes global;
    wire_writer(global).u8(msg::global_request).string("keepalive@openssh.com").boolean(true);
    return {
        channel_open("session", 0, 2 * 1024 * 1024, 32768),
        channel_request(0, "pty-req", true, pty.encode()),
        channel_request(0, "env", false, env.encode()),
        channel_request(0, "exec", true, cmd.encode()),
        channel_message(msg::channel_data, {0}, {"hello"}),
        channel_message(msg::channel_window_adjust, {0, 65536}),
        channel_request(0, "window-change", false, wc.encode()),
        global,
        channel_message(msg::channel_eof, {0}),
        channel_message(msg::channel_close, {0}),
    };
}

// What a server sends a client that opened session channel 0.
std::vector<bytes> server_session_messages()
{
    exit_status_request st{3};
    bytes confirm;
    wire_writer(confirm).u8(msg::channel_open_confirmation).u32(0).u32(0).u32(2 * 1024 * 1024).u32(32768);
    bytes ext;
    wire_writer(ext).u8(msg::channel_extended_data).u32(0).u32(1).string("err");
    return {
        confirm,
        channel_message(msg::channel_data, {0}, {"output"}),
        ext,
        channel_message(msg::channel_window_adjust, {0, 1 << 20}),
        channel_request(0, "exit-status", false, st.encode()),
        channel_message(msg::channel_eof, {0}),
        channel_message(msg::channel_close, {0}),
    };
}

// Transport messages under real keys: IGNORE, DEBUG, a rekey's KEXINIT and
// ECDH_INIT, NEWKEYS, an unknown number.
std::vector<bytes> transport_messages()
{
    bytes ignore;
    wire_writer(ignore).u8(msg::ignore).string("padding");
    bytes debug;
    wire_writer(debug).u8(msg::debug).boolean(true).string("hello").string("");
    bytes unimpl;
    wire_writer(unimpl).u8(msg::unimplemented).u32(3);
    bytes ecdh_init;
    {
        bytes pub(32, 9);
        wire_writer(ecdh_init).u8(msg::kexdh_init).string(pub);
    }
    return {ignore, debug, unimpl, kexinit_payload(transport_role::client), ecdh_init, bytes{msg::newkeys},
            bytes{0xc0, 1, 2}};
}

void write_seeds(const std::string& dir)
{
    int n = 0;
    auto put = [&](const bytes& b) { write_seed(dir, "seed-" + std::to_string(n++), b); };

    // Modes 0 and 1: a whole real connection (key exchange, then encrypted
    // messages), each side's stream as the other core (with the same
    // deterministic randomness as in fuzzing) will see it.
    for (int role = 0; role < 2; ++role) {
        reset_randomness();
        fixed_random crng, srng;
        transport_config cc = core_config(transport_role::client);
        transport_config sc = core_config(transport_role::server);
        if (role == 1)
            sc.software_version = "OpenSSH_9.2p1"; // the fixed line the client victim is fed
        std::unique_ptr<transport> c, s;
        {
            on_side g(client_side);
            c = std::make_unique<transport>(cc, crng, steady_time{});
        }
        {
            on_side g(server_side);
            s = std::make_unique<transport>(sc, srng, steady_time{});
        }
        bytes c_stream, s_stream;
        bool sent_after = false;
        for (int round = 0; round < 32; ++round) {
            bytes a = core_pair::take_output(*c);
            c_stream.insert(c_stream.end(), a.begin(), a.end());
            {
                on_side g(server_side);
                s->feed(a);
                core_pair::drain(*s, nullptr);
            }
            bytes b = core_pair::take_output(*s);
            s_stream.insert(s_stream.end(), b.begin(), b.end());
            {
                on_side g(client_side);
                c->feed(b);
                core_pair::drain(*c, nullptr);
            }
            if (c->established() && s->established() && !sent_after) {
                sent_after = true;
                on_side g(client_side);
                bytes sr;
                wire_writer(sr).u8(msg::service_request).string("ssh-userauth");
                (void)c->send(sr);
                for (const auto& m : client_session_messages())
                    (void)c->send(m);
                on_side h(server_side);
                (void)s->send(bytes{msg::service_accept, 0, 0, 0, 12, 's', 's', 'h', '-', 'u', 's', 'e', 'r', 'a', 'u', 't', 'h'});
                for (const auto& m : server_session_messages())
                    (void)s->send(m);
            }
        }
        if (role == 0) {
            put(with_prefix({0, 0}, c_stream));
        } else {
            // The client victim already has the version line.
            const auto eol = std::find(s_stream.begin(), s_stream.end(), '\n');
            put(with_prefix({1, 0}, byte_span(s_stream).subspan(static_cast<std::size_t>(eol - s_stream.begin()) + 1)));
        }
    }

    // Mode 2: packets sealed with zero keys under every combination.
    const auto& combos = cipher_mac_combos();
    for (std::size_t i = 0; i < combos.size() && i < 256; ++i) {
        fixed_random rng;
        packet_sender tx(rng);
        auto pc = zero_key_cipher(static_cast<std::uint8_t>(i), cipher_direction::seal);
        if (!pc)
            continue;
        tx.set_cipher(std::move(pc));
        tx.send(kexinit_payload(transport_role::client));
        tx.send(bytes{msg::ignore, 0, 0, 0, 0});
        auto d = tx.output().data();
        put(with_prefix({2, static_cast<std::uint8_t>(i)}, bytes(d.begin(), d.end())));
    }

    // Mode 3: each method's real first reply to the client's deterministic start.
    const auto& methods = reply_methods();
    for (std::size_t i = 0; i < methods.size(); ++i) {
        reset_randomness();
        const kex_method* m = find_kex_method(methods[i]);
        std::vector<bytes> out;
        std::unique_ptr<key_exchange> client;
        {
            on_side g(client_side);
            auto k = key_exchange::client(*m, reply_context());
            check(k.has_value() && (*k)->start(out).has_value());
            client = std::move(*k);
        }
        on_side g(server_side);
        auto srv = key_exchange::server(*m, reply_context(), *host_key(),
                                        [](std::uint32_t, std::uint32_t, std::uint32_t) -> std::optional<dh_group> {
                                            return modp_group14();
                                        });
        check(srv.has_value());
        std::vector<bytes> replies;
        for (const auto& msg_out : out)
            (void)(*srv)->handle(msg_out, replies);
        if (!replies.empty() && !replies[0].empty())
            put(with_prefix({3, static_cast<std::uint8_t>(i)}, byte_span(replies[0]).subspan(1)));
    }

    // Mode 4: KEXINITs of both roles.
    put(with_prefix({4, 0}, kexinit_payload(transport_role::client)));
    put(with_prefix({4, 0}, kexinit_payload(transport_role::server)));

    // Mode 5: a session's messages, uint16-length framed.
    {
        bytes b{5, 0};
        for (const auto& m : client_session_messages()) {
            b.push_back(static_cast<std::uint8_t>(m.size() >> 8));
            b.push_back(static_cast<std::uint8_t>(m.size()));
            bytes mm = m;
            mm[0] = static_cast<std::uint8_t>(mm[0] - 80); // the harness maps x to 80 + x % 21
            b.insert(b.end(), mm.begin(), mm.end());
        }
        put(b);
    }

    // Modes 6..8 under a few combinations and options.
    const auto to_server = join_messages(client_session_messages());
    const auto to_client = join_messages(server_session_messages());
    const auto transport_seq = join_messages(transport_messages());
    for (std::uint8_t sel : {std::uint8_t(0), std::uint8_t(5), std::uint8_t(combos.size() - 1)})
        for (std::uint8_t opt : {std::uint8_t(0), std::uint8_t(1), std::uint8_t(4 | 8), std::uint8_t(16 | 2)}) {
            put(with_prefix({6, sel, opt}, to_server));
            put(with_prefix({8, sel, opt}, to_client));
        }
    put(with_prefix({6, 1, 4}, transport_seq));
    put(with_prefix({6, 1, 0}, transport_seq));
    bytes mutated{7, 2, 0, 3, 0, 10, 0x80, 0, 40, 1, 1, 0, 0xff};
    mutated.insert(mutated.end(), to_server.begin(), to_server.end());
    put(mutated);
    bytes unmutated{7, 3, 0, 0};
    unmutated.insert(unmutated.end(), to_server.begin(), to_server.end());
    put(unmutated);
}

} // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***)
{
    install_deterministic_openssl();
    (void)host_keys();
    maybe_write_seeds(write_seeds);
    return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size)
{
    if (size < 2)
        return 0;
    reset_randomness();
    const std::uint8_t mode = data[0];
    const std::uint8_t selector = data[1];
    byte_span rest(data + 2, size - 2);
    switch (mode % mode_count) {
    case 0: fuzz_core(transport_role::server, rest); break;
    case 1: fuzz_core(transport_role::client, rest); break;
    case 2: fuzz_open(selector, rest); break;
    case 3: fuzz_kex_reply(selector, rest); break;
    case 4: (void)kexinit_message::decode(rest); break;
    case 5: fuzz_connection(rest); break;
    case 6: fuzz_sealed(selector, rest, true); break;
    case 7: fuzz_mutated(selector, rest); break;
    case 8: fuzz_sealed(selector, rest, false); break;
    }
    return 0;
}
