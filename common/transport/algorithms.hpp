// Algorithm tables, OpenSSH 9.x default preference lists, the KEXINIT
// message and RFC 4253 §7.1 negotiation.
#pragma once

#include "common/bytes.hpp"
#include "common/crypto/hash.hpp"
#include "common/crypto/key_agreement.hpp"
#include "common/result.hpp"

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

enum class kex_family {
    ecdh,      // curve25519 and NIST ECDH: public values are strings
    dh_fixed,  // MODP group named by the method: public values are mpints
    dh_gex,    // group chosen by the server (RFC 4419)
    hybrid_kem, // a post-quantum KEM with X25519: public values and K are strings
};

struct kex_method {
    std::string_view name;
    kex_family family;
    hash_alg hash;
    bool x25519;          // ecdh family: X25519 rather than a NIST curve
    ecdh_curve curve;     // ecdh family, NIST curve
    const dh_group* (*group)(); // dh_fixed family
    hybrid_kem kem = hybrid_kem::mlkem768_x25519; // hybrid_kem family
};

const kex_method* find_kex_method(std::string_view name) noexcept;
const std::vector<std::string_view>& supported_kex_methods();

// Pseudo-algorithms that ride in the kex list (RFC 8308, OpenSSH strict kex).
inline constexpr std::string_view ext_info_c = "ext-info-c";
inline constexpr std::string_view ext_info_s = "ext-info-s";
inline constexpr std::string_view kex_strict_c = "kex-strict-c-v00@openssh.com";
inline constexpr std::string_view kex_strict_s = "kex-strict-s-v00@openssh.com";

// OpenSSH 9.x defaults restricted to what this build implements.
std::string default_kex_algorithms();
std::string default_host_key_algorithms();
std::string default_ciphers();
std::string default_macs();
// Every host key / signature algorithm this build can verify.
std::string supported_host_key_algorithms();

// OpenSSH's kex_assemble_names: applies a configured algorithm list to the
// defaults. "+a,b" appends to the defaults, "-a*,b" removes matching names,
// "^a,b" puts names first, anything else replaces the defaults. Names may be
// wildcard patterns; the result keeps only names in `all` (no duplicates).
// errc::invalid_argument for an empty result or a '!' pattern.
result<std::string> assemble_algorithm_list(std::string_view spec, std::string_view defaults, std::string_view all);

// True when every name in the list (after a leading '+', '-' or '^') is one
// of `all`: what ssh_config/sshd_config check before accepting a list.
bool algorithm_list_valid(std::string_view spec, std::string_view all);

enum kexinit_list : std::size_t {
    kex_algorithms = 0,
    server_host_key_algorithms,
    encryption_c2s,
    encryption_s2c,
    mac_c2s,
    mac_s2c,
    compression_c2s,
    compression_s2c,
    languages_c2s,
    languages_s2c,
    kexinit_list_count,
};

std::string_view kexinit_list_title(std::size_t list) noexcept; // "cipher", "MAC", ... as OpenSSH says

struct kexinit_message {
    std::array<std::uint8_t, 16> cookie{};
    std::array<std::string, kexinit_list_count> lists;
    bool first_kex_packet_follows = false;
    std::uint32_t reserved = 0;

    bytes encode() const; // the whole payload, message number included
    static result<kexinit_message> decode(byte_span payload);
};

struct negotiated_algorithms {
    std::string kex;
    std::string host_key;
    std::string cipher_c2s, cipher_s2c;
    std::string mac_c2s, mac_s2c; // empty for AEAD ciphers
    std::string compression_c2s, compression_s2c;
};

struct negotiation_failure {
    std::size_t list = 0;   // which kexinit_list found no match
    std::string peer_offer; // what the peer offered there
};

// Negotiates every list. On errc::no_matching_algorithm, `failure` says
// which list and what the peer offered (for OpenSSH's "no matching ... found.
// Their offer: ..." message). `we_are_client` selects which side is "peer".
result<negotiated_algorithms> negotiate_algorithms(const kexinit_message& client, const kexinit_message& server,
                                                   bool we_are_client, negotiation_failure& failure);

// True when the guessed kex and host key algorithms (each side's first
// choice) agree, so a first_kex_packet_follows guess was right (RFC 4253 §7).
bool kex_guess_matches(const kexinit_message& client, const kexinit_message& server);

} // namespace longhaul
