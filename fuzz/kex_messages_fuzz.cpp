// Fuzzes key exchange messages as each side sees them.
//
// The first input byte picks the mode (mod 5), the second is a selector;
// the rest is the input:
//   0  a KEXINIT payload: decoded, re-encoded, negotiated against this
//      build's client and server proposals (the chosen names must be
//      implemented and offered by both sides)
//   1  a sequence of method messages (ECDH/DH replies, GEX group and reply)
//      into a key_exchange run as the client, for method x host key
//      algorithm `selector`, after its start()
//   2  the same into a key_exchange run as the server (ECDH/DH init, GEX
//      request and init)
//   3  a client transport core (configuration `selector`: one kex method,
//      one host key algorithm) fed a server's version line and then the
//      sequence as unencrypted packets: KEXINIT, replies, NEWKEYS, strict
//      kex, first_kex_packet_follows, anything out of place
//   4  the same with a server core fed a client's packets
// Messages in a sequence: split_messages() in fuzz_common.hpp. Randomness,
// OpenSSL's included, is deterministic per side and per input, so a real
// peer's messages captured once (the seeds) replay exactly: the client's
// ephemeral key is the same, so the captured server signature verifies and
// the fuzzer starts from a complete, valid exchange.
// Seeds: LONGHAUL_FUZZ_WRITE_SEEDS=DIR (fuzz/make_corpora.sh).
#include "fuzz/fuzz_common.hpp"

#include "common/name_list.hpp"
#include "common/transport/key_exchange.hpp"
#include "common/transport/transport.hpp"

using namespace longhaul;
using namespace longhaul::fuzz;

namespace {

// Group16/18 run group14's code with bigger numbers; left out for speed.
const std::vector<std::string>& methods()
{
    static const std::vector<std::string> m = [] {
        std::vector<std::string> v;
        for (auto name : supported_kex_methods())
            if (name.find("group16") == std::string_view::npos && name.find("group18") == std::string_view::npos)
                v.emplace_back(name);
        return v;
    }();
    return m;
}

const std::vector<std::string>& host_key_algs()
{
    static const std::vector<std::string> h = {"ssh-ed25519", "ecdsa-sha2-nistp256", "rsa-sha2-512", "rsa-sha2-256",
                                               "ssh-rsa"};
    return h;
}

const private_key& key_for(std::string_view alg)
{
    if (alg == "ssh-ed25519")
        return *host_keys().ed25519;
    if (alg.starts_with("ecdsa"))
        return *host_keys().ecdsa;
    return *host_keys().rsa;
}

std::optional<dh_group> fixed_groups(std::uint32_t min, std::uint32_t, std::uint32_t max)
{
    if (min > 2048 || max < 2048)
        return std::nullopt;
    return modp_group14();
}

// ---------------------------------------------------------------- mode 0

kexinit_message proposal(transport_role role)
{
    kexinit_message m;
    m.lists[kex_algorithms] = default_kex_algorithms() + (role == transport_role::client
                                                               ? ",ext-info-c,kex-strict-c-v00@openssh.com"
                                                               : ",kex-strict-s-v00@openssh.com");
    m.lists[server_host_key_algorithms] = default_host_key_algorithms();
    m.lists[encryption_c2s] = m.lists[encryption_s2c] = default_ciphers();
    m.lists[mac_c2s] = m.lists[mac_s2c] = default_macs();
    m.lists[compression_c2s] = m.lists[compression_s2c] = "none,zlib@openssh.com";
    return m;
}

void check_choice(const negotiated_algorithms& a, const kexinit_message& c, const kexinit_message& s)
{
    auto both = [&](std::size_t list, const std::string& name) {
        check(name_list_contains(c.lists[list], name) && name_list_contains(s.lists[list], name));
    };
    check(find_kex_method(a.kex) != nullptr);
    both(kex_algorithms, a.kex);
    both(server_host_key_algorithms, a.host_key);
    both(encryption_c2s, a.cipher_c2s);
    both(encryption_s2c, a.cipher_s2c);
    check(find_cipher(a.cipher_c2s) != nullptr && find_cipher(a.cipher_s2c) != nullptr);
    if (!find_cipher(a.cipher_c2s)->aead) {
        both(mac_c2s, a.mac_c2s);
        check(find_mac(a.mac_c2s) != nullptr);
    }
    if (!find_cipher(a.cipher_s2c)->aead) {
        both(mac_s2c, a.mac_s2c);
        check(find_mac(a.mac_s2c) != nullptr);
    }
    both(compression_c2s, a.compression_c2s);
    both(compression_s2c, a.compression_s2c);
}

void fuzz_kexinit(byte_span payload)
{
    auto m = kexinit_message::decode(payload);
    if (!m)
        return;
    auto again = kexinit_message::decode(m->encode());
    check(again.has_value() && again->encode() == m->encode());
    negotiation_failure nf;
    const auto server = proposal(transport_role::server);
    if (auto a = negotiate_algorithms(*m, server, false, nf))
        check_choice(*a, *m, server);
    else
        check(nf.list < kexinit_list_count);
    const auto client = proposal(transport_role::client);
    if (auto a = negotiate_algorithms(client, *m, true, nf))
        check_choice(*a, client, *m);
    (void)kex_guess_matches(*m, server);
}

// ---------------------------------------------------------------- modes 1, 2

kex_context method_context(const std::string& host_key_alg)
{
    kex_context ctx;
    ctx.v_c = "SSH-2.0-OpenSSH_9.2p1";
    ctx.v_s = "SSH-2.0-Longhaul_0.1";
    ctx.i_c = proposal(transport_role::client).encode();
    ctx.i_s = proposal(transport_role::server).encode();
    ctx.host_key_algorithm = host_key_alg;
    ctx.we_need = ctx.dh_need = 16;
    return ctx;
}

struct method_choice {
    const kex_method* method;
    std::string host_key;
};

method_choice choose_method(std::uint8_t selector)
{
    const auto& m = methods();
    const auto& h = host_key_algs();
    return {find_kex_method(m[selector % m.size()]), h[(selector / m.size()) % h.size()]};
}

void fuzz_method_client(std::uint8_t selector, byte_span rest)
{
    const auto c = choose_method(selector);
    on_side s(client_side);
    auto k = key_exchange::client(*c.method, method_context(c.host_key));
    check(k.has_value());
    std::vector<bytes> out;
    check((*k)->start(out).has_value());
    for (const auto& m : split_messages(rest, 16)) {
        auto r = (*k)->handle(m, out);
        if (!r)
            return;
        if (*r) {
            // Only our own host key can have signed this (nobody else can sign).
            const auto& hk = (*k)->outcome().host_key;
            check(hk.has_value() && *hk == key_for(c.host_key).public_part());
            check(!(*k)->outcome().exchange_hash.empty());
            return;
        }
    }
}

void fuzz_method_server(std::uint8_t selector, byte_span rest)
{
    const auto c = choose_method(selector);
    on_side s(server_side);
    auto k = key_exchange::server(*c.method, method_context(c.host_key), key_for(c.host_key), fixed_groups);
    check(k.has_value());
    std::vector<bytes> out;
    check((*k)->start(out).has_value());
    for (const auto& m : split_messages(rest, 16)) {
        auto r = (*k)->handle(m, out);
        if (!r || *r)
            return;
    }
}

// ---------------------------------------------------------------- modes 3, 4

constexpr std::string_view peer_version = "SSH-2.0-OpenSSH_9.2p1";

struct core_choice {
    std::string kex, host_key;
};

const std::vector<std::string>& core_kex()
{
    static const std::vector<std::string> k = {"curve25519-sha256", "curve25519-sha256@libssh.org",
                                               "ecdh-sha2-nistp256", "ecdh-sha2-nistp384",
                                               "ecdh-sha2-nistp521", "diffie-hellman-group14-sha256",
                                               "diffie-hellman-group-exchange-sha256", "mlkem768x25519-sha256",
                                               "sntrup761x25519-sha512@openssh.com"};
    return k;
}

core_choice choose_core(std::uint8_t selector)
{
    const auto& k = core_kex();
    const auto& h = host_key_algs();
    return {k[selector % k.size()], h[(selector / k.size()) % (h.size() - 1)]};
}

transport_config core_config(transport_role role, const core_choice& c, bool strict = true)
{
    transport_config cfg;
    cfg.role = role;
    cfg.kex_algorithms = c.kex;
    cfg.host_key_algorithms = c.host_key;
    cfg.ciphers = "aes128-ctr";
    cfg.macs = "hmac-sha2-256";
    cfg.strict_kex = strict;
    cfg.software_version = "OpenSSH_9.2p1"; // what each side is fed as its peer's line
    if (role == transport_role::server) {
        cfg.host_keys = host_keys().all();
        cfg.gex_groups = fixed_groups;
        cfg.server_sig_algs = "ssh-ed25519,rsa-sha2-512";
    }
    return cfg;
}

void fuzz_core(transport_role role, std::uint8_t selector, byte_span rest)
{
    const auto c = choose_core(selector);
    on_side s(role == transport_role::client ? client_side : server_side);
    fixed_random rng(role == transport_role::client ? 11 : 22);
    transport t(core_config(role, c), rng, steady_time{});
    t.feed(as_bytes(std::string(peer_version) + "\r\n"));
    const bytes stream = frame_plain(split_messages(rest, 32));
    t.feed(stream);
    const public_key& ours = key_for(c.host_key).public_part();
    auto handler = [&](const transport_event& ev) {
        // The client accepted a host key: only ours can have signed the exchange.
        if (ev.type == transport_event_type::host_key)
            check(*ev.host_key == ours);
    };
    core_pair::drain(t, handler);
    t.input_eof();
    core_pair::drain(t, handler);
}

// ---------------------------------------------------------------- seeds

// OpenSSH 9.2's default proposals, as its ssh and sshd send them.
kexinit_message openssh_proposal(bool client)
{
    kexinit_message m;
    m.lists[kex_algorithms] = std::string(
        "sntrup761x25519-sha512@openssh.com,curve25519-sha256,curve25519-sha256@libssh.org,ecdh-sha2-nistp256,"
        "ecdh-sha2-nistp384,ecdh-sha2-nistp521,diffie-hellman-group-exchange-sha256,diffie-hellman-group16-sha512,"
        "diffie-hellman-group18-sha512,diffie-hellman-group14-sha256") +
                                  (client ? ",ext-info-c,kex-strict-c-v00@openssh.com" : ",kex-strict-s-v00@openssh.com");
    m.lists[server_host_key_algorithms] =
        client ? "ssh-ed25519-cert-v01@openssh.com,ecdsa-sha2-nistp256-cert-v01@openssh.com,ssh-ed25519,"
                 "ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256"
               : "rsa-sha2-512,rsa-sha2-256,ecdsa-sha2-nistp256,ssh-ed25519";
    m.lists[encryption_c2s] = m.lists[encryption_s2c] =
        "chacha20-poly1305@openssh.com,aes128-ctr,aes192-ctr,aes256-ctr,aes128-gcm@openssh.com,aes256-gcm@openssh.com";
    m.lists[mac_c2s] = m.lists[mac_s2c] =
        "umac-64-etm@openssh.com,umac-128-etm@openssh.com,hmac-sha2-256-etm@openssh.com,hmac-sha2-512-etm@openssh.com,"
        "hmac-sha1-etm@openssh.com,umac-64@openssh.com,umac-128@openssh.com,hmac-sha2-256,hmac-sha2-512,hmac-sha1";
    m.lists[compression_c2s] = m.lists[compression_s2c] = client ? "none,zlib@openssh.com,zlib" : "none,zlib@openssh.com";
    return m;
}

// A real exchange between two cores of configuration `selector`: returns the
// unencrypted payloads each side sent (up to and including NEWKEYS).
std::pair<std::vector<bytes>, std::vector<bytes>> capture_exchange(std::uint8_t selector, bool client_strict,
                                                                   bool server_strict)
{
    reset_randomness();
    const auto c = choose_core(selector);
    fixed_random crng(11), srng(22);
    transport_config cc = core_config(transport_role::client, c, client_strict);
    transport_config sc = core_config(transport_role::server, c, server_strict);
    std::unique_ptr<transport> client, server;
    {
        on_side g(client_side);
        client = std::make_unique<transport>(cc, crng, steady_time{});
    }
    {
        on_side g(server_side);
        server = std::make_unique<transport>(sc, srng, steady_time{});
    }
    bytes c_stream, s_stream;
    for (int round = 0; round < 16; ++round) {
        bytes a = core_pair::take_output(*client);
        c_stream.insert(c_stream.end(), a.begin(), a.end());
        {
            on_side g(server_side);
            server->feed(a);
            core_pair::drain(*server, nullptr);
        }
        bytes b = core_pair::take_output(*server);
        s_stream.insert(s_stream.end(), b.begin(), b.end());
        {
            on_side g(client_side);
            client->feed(b);
            core_pair::drain(*client, nullptr);
        }
        if (a.empty() && b.empty())
            break;
    }
    check(client->established() && server->established());
    auto skip_version = [](const bytes& s) {
        const auto eol = std::find(s.begin(), s.end(), '\n');
        return byte_span(s).subspan(static_cast<std::size_t>(eol - s.begin()) + 1);
    };
    return {unframe_plain(skip_version(c_stream)), unframe_plain(skip_version(s_stream))};
}

void write_seeds(const std::string& dir)
{
    int n = 0;
    auto put = [&](const bytes& b) { write_seed(dir, "seed-" + std::to_string(n++), b); };

    // Mode 0: this build's and OpenSSH's proposals.
    for (bool client : {true, false}) {
        put(with_prefix({0, 0}, proposal(client ? transport_role::client : transport_role::server).encode()));
        put(with_prefix({0, 0}, openssh_proposal(client).encode()));
    }
    auto guess = openssh_proposal(true);
    guess.first_kex_packet_follows = true;
    put(with_prefix({0, 0}, guess.encode()));

    // Modes 1 and 2: a real run of each method and host key algorithm; the
    // client's seed holds the server's replies, the server's the client's.
    const std::size_t combos = methods().size() * host_key_algs().size();
    for (std::size_t sel = 0; sel < combos && sel < 256; ++sel) {
        reset_randomness();
        const auto c = choose_method(static_cast<std::uint8_t>(sel));
        std::unique_ptr<key_exchange> client, server;
        std::vector<bytes> to_server, to_client, sent_by_client, sent_by_server;
        {
            on_side g(client_side);
            client = std::move(*key_exchange::client(*c.method, method_context(c.host_key)));
            check(client->start(to_server).has_value());
        }
        {
            on_side g(server_side);
            server = std::move(*key_exchange::server(*c.method, method_context(c.host_key), key_for(c.host_key),
                                                     fixed_groups));
            check(server->start(to_client).has_value());
        }
        bool done = false;
        for (int round = 0; round < 4 && !done; ++round) {
            std::vector<bytes> next_to_client, next_to_server;
            for (const auto& m : to_server) {
                sent_by_client.push_back(m);
                on_side g(server_side);
                (void)server->handle(m, next_to_client);
            }
            for (const auto& m : to_client) {
                sent_by_server.push_back(m);
            }
            for (const auto& m : next_to_client) {
                sent_by_server.push_back(m);
                on_side g(client_side);
                auto r = client->handle(m, next_to_server);
                done = r && *r;
            }
            to_server = std::move(next_to_server);
            to_client.clear();
        }
        check(done);
        const auto s8 = static_cast<std::uint8_t>(sel);
        put(with_prefix({1, s8}, join_messages(sent_by_server)));
        put(with_prefix({2, s8}, join_messages(sent_by_client)));
    }

    // Modes 3 and 4: real exchanges of every core configuration; some with
    // strict kex off, and one with first_kex_packet_follows and a wrong guess.
    const std::size_t cores = core_kex().size() * (host_key_algs().size() - 1);
    for (std::size_t sel = 0; sel < cores && sel < 256; ++sel) {
        const auto s8 = static_cast<std::uint8_t>(sel);
        auto [from_client, from_server] = capture_exchange(s8, true, true);
        put(with_prefix({3, s8}, join_messages(from_server)));
        put(with_prefix({4, s8}, join_messages(from_client)));
        if (sel % core_kex().size() == 0) {
            // The peer without strict kex (the victim always offers it).
            auto s2 = capture_exchange(s8, true, false).second;
            auto c2 = capture_exchange(s8, false, true).first;
            put(with_prefix({3, s8}, join_messages(s2)));
            put(with_prefix({4, s8}, join_messages(c2)));
            // A guessed (wrong) kex packet after the client's KEXINIT, then
            // the real exchange: the server must drop the guess.
            auto k = kexinit_message::decode(c2.front());
            check(k.has_value());
            k->first_kex_packet_follows = true;
            k->lists[kex_algorithms] = "ecdh-sha2-nistp521," + k->lists[kex_algorithms];
            std::vector<bytes> guessed = {k->encode(), bytes{msg::kexdh_init, 0, 0, 0, 1, 4}};
            guessed.insert(guessed.end(), c2.begin() + 1, c2.end());
            put(with_prefix({4, s8}, join_messages(guessed)));
        }
    }
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
    const std::uint8_t selector = data[1];
    const byte_span rest(data + 2, size - 2);
    switch (data[0] % 5) {
    case 0: fuzz_kexinit(rest); break;
    case 1: fuzz_method_client(selector, rest); break;
    case 2: fuzz_method_server(selector, rest); break;
    case 3: fuzz_core(transport_role::client, selector, rest); break;
    case 4: fuzz_core(transport_role::server, selector, rest); break;
    }
    return 0;
}
