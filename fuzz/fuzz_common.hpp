// Helpers shared by the protocol fuzz targets: deterministic randomness (for
// the cores and for OpenSSL, so that a key exchange is a function of the
// input and a crash reproduces from the input alone), fixed host keys, the
// message-sequence decoding, plaintext packet framing, and a client and a
// server transport core wired together in memory. Seed writing and the
// message-sequence encoding: fuzz_seeds.hpp.
#pragma once

#define OPENSSL_SUPPRESS_DEPRECATED 1
#include "common/keys/key_file.hpp"
#include "common/keys/private_key.hpp"
#include "common/random.hpp"
#include "common/transport/packet_codec.hpp"
#include "common/transport/transport.hpp"
#include "common/wire.hpp"
#include "fuzz/fuzz_seeds.hpp"

#include <openssl/evp.h>
#include <openssl/rand.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

namespace longhaul::fuzz {

// LONGHAUL_FUZZ_TRACE=1 prints the transport events a harness sees (to
// check by hand what an input reaches: build-fuzz/fuzz/<target> FILE).
inline bool tracing()
{
    static const bool on = std::getenv("LONGHAUL_FUZZ_TRACE") != nullptr;
    return on;
}

inline void trace_event(const char* who, const transport_event& ev)
{
    if (!tracing())
        return;
    std::fprintf(stderr, "%s: event %d payload %zu [%d] text '%.*s'\n", who, static_cast<int>(ev.type),
                 ev.payload.size(), ev.payload.empty() ? -1 : ev.payload[0], static_cast<int>(ev.text.size()),
                 ev.text.data());
}

// ---------------------------------------------------------------- randomness

// A deterministic random source for the cores (cookies, padding).
class fixed_random final : public random_source {
public:
    explicit fixed_random(std::uint64_t seed = 1) : gen_(seed) {}
    void fill(mutable_byte_span out) override
    {
        for (auto& b : out)
            b = static_cast<std::uint8_t>(gen_());
    }

private:
    std::mt19937_64 gen_;
};

// OpenSSL's RAND_bytes/RAND_priv_bytes (ephemeral kex keys, ECDSA nonces)
// replaced by per-side deterministic streams. A capture run switches the
// stream around each side's calls, so a side draws the same bytes whether its
// peer is real (seed capture) or replayed from the input (fuzzing).
struct openssl_streams {
    std::mt19937_64 gen[3];
    int current = 0;
};

inline openssl_streams& streams()
{
    static openssl_streams s;
    return s;
}

inline int deterministic_bytes(unsigned char* buf, int num)
{
    auto& s = streams();
    for (int i = 0; i < num; ++i)
        buf[i] = static_cast<unsigned char>(s.gen[s.current]());
    return 1;
}

inline int deterministic_status() { return 1; }

inline void install_deterministic_openssl()
{
    static const RAND_METHOD method = {nullptr, deterministic_bytes, nullptr, nullptr, deterministic_bytes,
                                       deterministic_status};
    RAND_set_rand_method(&method);
}

// Called at the start of every input and of every seed capture.
inline void reset_randomness()
{
    auto& s = streams();
    for (int i = 0; i < 3; ++i)
        s.gen[i].seed(0x5eed0000u + static_cast<unsigned>(i));
    s.current = 0;
}

enum side : int { client_side = 0, server_side = 1, harness_side = 2 };

class on_side {
public:
    explicit on_side(side s) : saved_(streams().current) { streams().current = s; }
    ~on_side() { streams().current = saved_; }
    on_side(const on_side&) = delete;
    on_side& operator=(const on_side&) = delete;

private:
    int saved_;
};

// ---------------------------------------------------------------- keys

inline private_key ed25519_from_seed(std::uint8_t salt)
{
    std::uint8_t seed[32];
    for (int i = 0; i < 32; ++i)
        seed[i] = static_cast<std::uint8_t>(i * 7 + 1 + salt);
    EVP_PKEY* p = EVP_PKEY_new_raw_private_key(EVP_PKEY_ED25519, nullptr, seed, sizeof seed);
    auto k = private_key::from_evp(p, "fuzz");
    EVP_PKEY_free(p);
    check(k.has_value());
    return std::move(*k);
}

// tests/data/keys/rsa2048_pem_plain_key (generating one costs seconds at
// every start of a fuzzer).
inline constexpr std::string_view fixture_rsa_key = R"(-----BEGIN RSA PRIVATE KEY-----
MIIEpQIBAAKCAQEA3grh6vsCAH6oMphURDpj6nnJM+TXJO91KcNvHFys39b8nVi5
4Qb3J2dnSB9rMXak+PeObszvDF/CcWTRvMijAzuq4aReI5nR/GDJ7MtwwwOqLuSn
2EvO1DOJXAKX36BZbviwFpguJf5f+MBtOWdsV76F+kQ0Teu/IVzHN0mZwukG4WrV
LnV7qKBoVoQXPpjO6DGx7E5D3alt+MGO7xrwcWKTBhvVsKQWptwD5eWcLxjH0B8t
VmQigJVX4DgDh7wTeyEYwaaNtjkHfN9PCPuuCco3ouC9SwKmwjp/HK2r2OaIONoD
7q/T5DoQ/oUg2FUR6aDPTWzHfOTpfhXQBP0p8QIDAQABAoIBABh0dmFc9+F6EahQ
4qcJD0wZ0bEneRKWVP8eiTREeL3GfdgOl5pTHBF48AUfgLzX5l+NVGCbrZBdU5sN
kZQLPPj0L2PeqIefP2NefZ7Y4Th5RNsZT+sgnkz8yBocJwH4NSFlvm8en6aLl6Jb
/yudWm9ninX/4Qrb9hcEkuRh9M9kilrnw5ymgKBqAt/qkcWPEATaMIMUlQ5TN+uQ
6qB5n670sjcUyT42gi40WQrWeLqzLdvleccb5MNrHFswsoKjCYgUkdkuQ/O0Zm6I
WqlEIy0PZeDYWlhgba4gSbyudyfF9mcba2GLMIQcrZQGgKAyfdBAtRcenjK1o1Ru
o50Zv+ECgYEA7wbvDwwvAP3us0f0+S34tKNP49M85QVOBGVkP/zUywche8vE8/tN
5tUPnia/1PPrJglIoPR3LQT32o+vDt3K5eVTcHAhqeGQDM0llaKIJJ9zRZnGn+uN
ex/di8RFTx6aGuO6swE4ouZixA290DmRi+YgZupJpBwY1RZf8k8t63UCgYEA7c8z
ZzW1BQasMxvX6BRtHb9yvs1Xu2Gs1e9D1hjIO6rusfE9+PBu7cFAivHh6PQ/ap9+
UXybvoiZvO53lmqdQedNe5FtKGy6x15EALO9pZrEXOyUFCAoRrYVdETAd766TBj6
Dv73S6/7+/rrU4DulHUwoWyU8K8vUI3x39jxwQ0CgYEAxA1R42vA2fVt5grtObyl
M7SIAHvwhIB3X0+yjHFaMDTnF90o7F2BpgW3y6ZIzehLRWVz9uDNJ1Xd3Zzgnzb4
Bty0NZMjaW2jc3yIiVVIiZFnQP1CV0UjRIv8cXlIx/53s/p51fz4cVS6Schjmfi+
EptslD0yrbKGA7FYfSzIo0kCgYEA0cc5/Q2vhaOBPASPzTZXmypLOm1BuxZKtN2/
5Zku6RO8RFQe6v6NnEYhfXAqbKkpWBEiCRf2+3jcxYFHFPUvi/dSrnJ27HYdvck2
C7iCzxdbqO05IxfK77Wn70zGy9r/1CkkTR41YBr6GioadSsDSwqlv4BdUoP3JQRS
HbjuafECgYEAmCPSt3E5YC3Gu2rvp6Mm0/A+4hSj47VgJ7svOeqvS1LWTKjeZo2a
b0+R0DQncFTshrTkntDLDr1S0kRJwkGCgG+iXu24TROczZWOGbu7Y1J4pXKFPKtf
WrDKWcuk6HnwAdC3rzqER0hrfbOcs0HGXJHg/2jaOZ6rJZQgcdgaNok=
-----END RSA PRIVATE KEY-----
)";

// Host keys of three types, the same in every process (the ECDSA key is
// generated from the deterministic OpenSSL stream).
struct fixed_host_keys {
    std::shared_ptr<const private_key> ed25519, ecdsa, rsa;
    std::vector<std::shared_ptr<const private_key>> all() const { return {ed25519, ecdsa, rsa}; }
};

inline const fixed_host_keys& host_keys()
{
    static const fixed_host_keys keys = [] {
        install_deterministic_openssl();
        reset_randomness();
        on_side s(harness_side);
        fixed_host_keys k;
        k.ed25519 = std::make_shared<const private_key>(ed25519_from_seed(0));
        auto e = private_key::generate(key_type::ecdsa_p256, 256);
        check(e.has_value());
        k.ecdsa = std::make_shared<const private_key>(std::move(*e));
        auto r = parse_private_key(fixture_rsa_key, std::nullopt);
        check(r.has_value());
        k.rsa = std::make_shared<const private_key>(std::move(*r));
        return k;
    }();
    return keys;
}

// Unencrypted packets (before the first NEWKEYS), deterministic padding.
inline bytes frame_plain(const std::vector<bytes>& payloads)
{
    fixed_random rng(99);
    packet_sender s(rng);
    for (const auto& p : payloads)
        if (!p.empty() && p.size() <= max_payload_size)
            s.send(p);
    auto d = s.output().data();
    return bytes(d.begin(), d.end());
}

// Splits the plaintext packets at the front of a stream (before NEWKEYS)
// into payloads; stops after a NEWKEYS or at anything that does not frame.
inline std::vector<bytes> unframe_plain(byte_span stream)
{
    std::vector<bytes> out;
    while (stream.size() >= 5) {
        const std::uint32_t len = load_u32(stream.data());
        const std::uint8_t pad = stream[4];
        if (len < 5 || len > max_packet_length || stream.size() < 4 + std::size_t(len) || pad + 1u >= len)
            break;
        out.emplace_back(stream.begin() + 5, stream.begin() + 5 + (len - 1 - pad));
        stream = stream.subspan(4 + len);
        if (!out.back().empty() && out.back()[0] == 21)
            break;
    }
    return out;
}

// ---------------------------------------------------------------- two cores in memory

struct pair_options {
    std::string kex = "curve25519-sha256";
    std::string host_key = "ssh-ed25519";
    std::string cipher = "aes128-ctr";
    std::string mac = "hmac-sha2-256";
    std::string compression = "none";
    bool strict = true;
    std::uint64_t rekey_limit = 0; // both sides' RekeyLimit bytes (0: the cipher's default)
};

// A client and a server core; bytes move between them only when asked. Each
// side's calls run on its own OpenSSL stream.
class core_pair {
public:
    explicit core_pair(const pair_options& o, gex_group_provider groups = {})
        : client_rng_(11), server_rng_(22)
    {
        transport_config c;
        c.role = transport_role::client;
        c.kex_algorithms = o.kex;
        c.host_key_algorithms = o.host_key;
        c.ciphers = o.cipher;
        c.macs = o.mac.empty() ? default_macs() : o.mac;
        c.compression = o.compression;
        c.strict_kex = o.strict;
        c.rekey_limit_bytes = o.rekey_limit;
        transport_config s = c;
        s.role = transport_role::server;
        s.host_keys = host_keys().all();
        s.server_sig_algs = "ssh-ed25519,ecdsa-sha2-nistp256,rsa-sha2-512,rsa-sha2-256";
        s.gex_groups = std::move(groups);
        {
            on_side g(client_side);
            client = std::make_unique<transport>(std::move(c), client_rng_, now);
        }
        {
            on_side g(server_side);
            server = std::make_unique<transport>(std::move(s), server_rng_, now);
        }
    }

    // Moves everything `from` has queued into `to`; returns the bytes moved.
    static bytes take_output(transport& from)
    {
        auto out = from.output();
        bytes b(out.begin(), out.end());
        from.consume_output(b.size());
        return b;
    }

    // Runs until both cores are established (true) or nothing moves (false).
    bool establish()
    {
        for (int round = 0; round < 64; ++round) {
            bool moved = false;
            moved |= deliver(*client, *server, server_side, nullptr);
            moved |= deliver(*server, *client, client_side, nullptr);
            if (client->established() && server->established() && client->output().empty() &&
                server->output().empty())
                return true;
            if (!moved || client->closed() || server->closed())
                return false;
        }
        return false;
    }

    // Moves `from`'s output into `to` and polls `to` until it has nothing to
    // say; payload events go to `on_event` (events of a client accept the
    // host key first).
    bool deliver(transport& from, transport& to, side to_side, const std::function<void(const transport_event&)>& on_event)
    {
        bytes b = take_output(from);
        if (to.closed())
            return false;
        on_side g(to_side);
        if (!b.empty())
            to.feed(b);
        return drain(to, on_event) || !b.empty();
    }

    static bool drain(transport& t, const std::function<void(const transport_event&)>& on_event)
    {
        bool any = false;
        for (int i = 0; i < 4096; ++i) {
            transport_event ev = t.poll();
            if (ev.type == transport_event_type::none)
                break;
            any = true;
            trace_event(t.role() == transport_role::client ? "client" : "server", ev);
            if (ev.type == transport_event_type::host_key)
                t.accept_host_key();
            if (on_event)
                on_event(ev);
            if (ev.type == transport_event_type::disconnected)
                break;
        }
        return any;
    }

    steady_time now{};
    std::unique_ptr<transport> client, server;

private:
    fixed_random client_rng_, server_rng_;
};

// The cipher x MAC combinations this build implements (AEAD ciphers once).
inline const std::vector<std::pair<std::string, std::string>>& cipher_mac_combos()
{
    static const auto combos = [] {
        std::vector<std::pair<std::string, std::string>> v;
        for (auto c : supported_ciphers()) {
            if (find_cipher(c)->aead)
                v.emplace_back(std::string(c), "");
            else
                for (auto m : supported_macs())
                    v.emplace_back(std::string(c), std::string(m));
        }
        return v;
    }();
    return combos;
}

// The options byte of the targets that run over real keys:
//   bits 0-1  compression: none, zlib@openssh.com, zlib, none
//   bit 2     also deliver the receiver's output back, so the sealing core
//             answers what the receiver starts (a rekey, a reply)
//   bit 3     ecdh-sha2-nistp256 instead of curve25519-sha256
//   bit 4     strict kex off
//   bit 5     RekeyLimit 32 KiB on both sides (rekeys in the middle)
// and `selector` picks the cipher x MAC combination.
inline pair_options pair_from(std::uint8_t selector, std::uint8_t options)
{
    pair_options o;
    const auto& combos = cipher_mac_combos();
    const auto& [cipher, mac] = combos[selector % combos.size()];
    o.cipher = cipher;
    o.mac = mac;
    static const char* const compressions[] = {"none", "zlib@openssh.com", "zlib", "none"};
    o.compression = compressions[options & 3];
    o.kex = (options & 8) ? "ecdh-sha2-nistp256" : "curve25519-sha256";
    o.strict = (options & 16) == 0;
    o.rekey_limit = (options & 32) ? 32 * 1024 : 0;
    return o;
}

// A pair through its first key exchange, and with `authenticated` both
// sides past user authentication (zlib@openssh.com on, automatic rekeying
// allowed). Two Longhaul cores with the same single algorithms must agree:
// anything else is a finding.
inline std::unique_ptr<core_pair> established_pair(std::uint8_t selector, std::uint8_t options,
                                                   bool authenticated = true)
{
    auto p = std::make_unique<core_pair>(pair_from(selector, options));
    check(p->establish());
    if (!authenticated)
        return p;
    {
        on_side s(client_side);
        p->client->user_authenticated();
    }
    {
        on_side s(server_side);
        p->server->user_authenticated();
    }
    return p;
}

} // namespace longhaul::fuzz
