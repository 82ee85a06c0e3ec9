#include "common/transport/algorithms.hpp"

#include "common/crypto/packet_cipher.hpp"
#include "common/match.hpp"
#include "common/name_list.hpp"
#include "common/transport/host_key_algorithms.hpp"
#include "common/transport/messages.hpp"
#include "common/wire.hpp"

#include <algorithm>

namespace longhaul {

namespace {

constexpr kex_method kex_methods[] = {
    // First, as in OpenSSH 9.9 and 10: post-quantum (OpenSSH 10.1+ clients
    // warn about a server that offers no such method). Their X25519 half is
    // built in (hybrid_kem_agreement.cpp): the ecdh fields do not apply.
    {"mlkem768x25519-sha256", kex_family::hybrid_kem, hash_alg::sha256, true, ecdh_curve::p256, nullptr,
     hybrid_kem::mlkem768_x25519},
    {"sntrup761x25519-sha512", kex_family::hybrid_kem, hash_alg::sha512, true, ecdh_curve::p256, nullptr,
     hybrid_kem::sntrup761_x25519},
    {"sntrup761x25519-sha512@openssh.com", kex_family::hybrid_kem, hash_alg::sha512, true, ecdh_curve::p256, nullptr,
     hybrid_kem::sntrup761_x25519},
    {"curve25519-sha256", kex_family::ecdh, hash_alg::sha256, true, ecdh_curve::p256, nullptr},
    {"curve25519-sha256@libssh.org", kex_family::ecdh, hash_alg::sha256, true, ecdh_curve::p256, nullptr},
    {"ecdh-sha2-nistp256", kex_family::ecdh, hash_alg::sha256, false, ecdh_curve::p256, nullptr},
    {"ecdh-sha2-nistp384", kex_family::ecdh, hash_alg::sha384, false, ecdh_curve::p384, nullptr},
    {"ecdh-sha2-nistp521", kex_family::ecdh, hash_alg::sha512, false, ecdh_curve::p521, nullptr},
    {"diffie-hellman-group-exchange-sha256", kex_family::dh_gex, hash_alg::sha256, false, ecdh_curve::p256, nullptr},
    {"diffie-hellman-group16-sha512", kex_family::dh_fixed, hash_alg::sha512, false, ecdh_curve::p256,
     [] { return &modp_group16(); }},
    {"diffie-hellman-group18-sha512", kex_family::dh_fixed, hash_alg::sha512, false, ecdh_curve::p256,
     [] { return &modp_group18(); }},
    {"diffie-hellman-group14-sha256", kex_family::dh_fixed, hash_alg::sha256, false, ecdh_curve::p256,
     [] { return &modp_group14(); }},
};

} // namespace

const kex_method* find_kex_method(std::string_view name) noexcept
{
    for (const auto& m : kex_methods)
        if (m.name == name)
            return &m;
    return nullptr;
}

const std::vector<std::string_view>& supported_kex_methods()
{
    static const std::vector<std::string_view> names = [] {
        std::vector<std::string_view> v;
        for (const auto& m : kex_methods)
            v.push_back(m.name);
        return v;
    }();
    return names;
}

std::string default_kex_algorithms() { return join_name_list(supported_kex_methods()); }

std::string default_host_key_algorithms()
{
    return "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256";
}

std::string supported_host_key_algorithms() { return default_host_key_algorithms() + ",ssh-rsa"; }

std::string default_ciphers() { return join_name_list(supported_ciphers()); }
std::string default_macs() { return join_name_list(supported_macs()); }

namespace {

// Appends names not already present.
void append_unique(std::vector<std::string_view>& out, std::string_view list)
{
    for (auto n : split_name_list(list))
        if (std::find(out.begin(), out.end(), n) == out.end())
            out.push_back(n);
}

} // namespace

result<std::string> assemble_algorithm_list(std::string_view spec, std::string_view defaults, std::string_view all)
{
    if (spec.empty())
        return std::string(defaults);
    const char op = spec[0];
    if (op == '-') {
        std::vector<std::string_view> kept;
        for (auto n : split_name_list(defaults))
            if (match_pattern_list(n, spec.substr(1), false) != list_match::positive)
                kept.push_back(n);
        return join_name_list(kept);
    }
    std::vector<std::string_view> wanted;
    if (op == '+') {
        append_unique(wanted, defaults);
        append_unique(wanted, spec.substr(1));
    } else if (op == '^') {
        append_unique(wanted, spec.substr(1));
        append_unique(wanted, defaults);
    } else {
        append_unique(wanted, spec);
    }
    // Each entry may be a pattern: expand it against everything supported, in that order.
    std::vector<std::string_view> out;
    const auto supported = split_name_list(all);
    for (auto pattern : wanted) {
        if (pattern[0] == '!')
            return errc::invalid_argument;
        for (auto n : supported)
            if (match_pattern(n, pattern) && std::find(out.begin(), out.end(), n) == out.end())
                out.push_back(n);
    }
    if (out.empty())
        return errc::invalid_argument;
    return join_name_list(out);
}

bool algorithm_list_valid(std::string_view spec, std::string_view all)
{
    if (!spec.empty() && (spec[0] == '+' || spec[0] == '-' || spec[0] == '^'))
        spec.remove_prefix(1);
    auto names = split_name_list(spec);
    if (names.empty())
        return false;
    for (auto n : names)
        if (!name_list_contains(all, n))
            return false;
    return true;
}

std::string_view kexinit_list_title(std::size_t list) noexcept
{
    switch (list) {
    case kex_algorithms: return "key exchange method";
    case server_host_key_algorithms: return "host key type";
    case encryption_c2s:
    case encryption_s2c: return "cipher";
    case mac_c2s:
    case mac_s2c: return "MAC";
    case compression_c2s:
    case compression_s2c: return "compression method";
    default: return "language";
    }
}

bytes kexinit_message::encode() const
{
    bytes out;
    wire_writer w(out);
    w.u8(msg::kexinit).raw(cookie);
    for (const auto& l : lists)
        w.string(l);
    w.boolean(first_kex_packet_follows).u32(reserved);
    return out;
}

result<kexinit_message> kexinit_message::decode(byte_span payload)
{
    wire_reader r(payload);
    kexinit_message m;
    if (r.u8() != msg::kexinit)
        return errc::protocol_error;
    auto cookie = r.raw(16);
    if (r.ok())
        std::copy(cookie.begin(), cookie.end(), m.cookie.begin());
    for (auto& l : m.lists)
        l = std::string(r.name_list());
    m.first_kex_packet_follows = r.boolean();
    m.reserved = r.u32();
    // RFC 4253 leaves room for nothing after "reserved"; OpenSSH ignores extra bytes, so do we.
    r.rest();
    if (auto f = r.finish(); !f)
        return f.error() == errc::incomplete ? errc::malformed : f.error();
    return m;
}

namespace {

// The first client algorithm the server also lists, limited to names this
// build implements (so a peer's pseudo-algorithm can never be "chosen").
std::optional<std::string_view> choose(std::string_view client, std::string_view server, bool (*known)(std::string_view))
{
    auto server_names = split_name_list(server);
    for (auto c : split_name_list(client)) {
        if (known != nullptr && !known(c))
            continue;
        for (auto s : server_names)
            if (c == s)
                return c;
    }
    return std::nullopt;
}

bool is_kex(std::string_view n) { return find_kex_method(n) != nullptr; }
bool is_cipher(std::string_view n) { return find_cipher(n) != nullptr; }
bool is_mac(std::string_view n) { return find_mac(n) != nullptr; }
bool is_compression(std::string_view n) { return n == "none" || n == "zlib" || n == "zlib@openssh.com"; }
bool is_host_key(std::string_view n)
{
    return name_list_contains(supported_host_key_algorithms(), n) || supported_certificate_host_key_algorithm(n);
}

} // namespace

result<negotiated_algorithms> negotiate_algorithms(const kexinit_message& client, const kexinit_message& server,
                                                   bool we_are_client, negotiation_failure& failure)
{
    negotiated_algorithms out;
    const kexinit_message& peer = we_are_client ? server : client;
    auto pick = [&](std::size_t list, bool (*known)(std::string_view), std::string& dst) {
        auto c = choose(client.lists[list], server.lists[list], known);
        if (!c) {
            failure.list = list;
            failure.peer_offer = peer.lists[list];
            return false;
        }
        dst = std::string(*c);
        return true;
    };
    if (!pick(kex_algorithms, is_kex, out.kex) || !pick(server_host_key_algorithms, is_host_key, out.host_key) ||
        !pick(encryption_c2s, is_cipher, out.cipher_c2s) || !pick(encryption_s2c, is_cipher, out.cipher_s2c))
        return errc::no_matching_algorithm;
    // An AEAD cipher makes the MAC lists irrelevant; they need not even match.
    if (!find_cipher(out.cipher_c2s)->aead && !pick(mac_c2s, is_mac, out.mac_c2s))
        return errc::no_matching_algorithm;
    if (!find_cipher(out.cipher_s2c)->aead && !pick(mac_s2c, is_mac, out.mac_s2c))
        return errc::no_matching_algorithm;
    if (!pick(compression_c2s, is_compression, out.compression_c2s) ||
        !pick(compression_s2c, is_compression, out.compression_s2c))
        return errc::no_matching_algorithm;
    return out;
}

bool kex_guess_matches(const kexinit_message& client, const kexinit_message& server)
{
    for (auto list : {kex_algorithms, server_host_key_algorithms}) {
        auto c = split_name_list(client.lists[list]);
        auto s = split_name_list(server.lists[list]);
        if (c.empty() || s.empty() || c.front() != s.front())
            return false;
    }
    return true;
}

} // namespace longhaul
