// Algorithm lists in sshd_config (Ciphers, MACs, KexAlgorithms,
// HostKeyAlgorithms, PubkeyAcceptedAlgorithms, ...): validated against every
// name OpenSSH 9.2 knows, so that an existing configuration loads, then
// assembled with OpenSSH's defaults and "+ - ^" rules and, for the lists
// this server negotiates, narrowed to what this build implements.
#pragma once

#include "common/result.hpp"

#include <string>
#include <string_view>

namespace longhaul {

enum class sshd_algorithm_list {
    cipher,
    mac,
    kex,
    key,    // HostKeyAlgorithms, PubkeyAcceptedAlgorithms, HostbasedAcceptedAlgorithms
    ca_sig, // CASignatureAlgorithms
};

// OpenSSH 9.2's default for the list.
std::string_view openssh_default_algorithms(sshd_algorithm_list kind) noexcept;
// Every name OpenSSH 9.2 accepts in the list, in OpenSSH's order (wildcards
// expand in this order).
std::string_view openssh_all_algorithms(sshd_algorithm_list kind) noexcept;

// OpenSSH's check before accepting a configured list: a "-" list is not
// checked; otherwise each name (after a leading '+' or '^') must be known.
// Key lists may hold wildcard patterns that match some known name.
bool sshd_algorithm_spec_valid(sshd_algorithm_list kind, std::string_view spec);

// The list OpenSSH would use for `spec` (empty: the default).
// invalid_argument when nothing remains.
result<std::string> sshd_assemble_algorithms(sshd_algorithm_list kind, std::string_view spec);

// Keeps the names this build implements, in order (cipher, mac, kex; key
// lists keep the signature algorithms the transport can verify).
std::string sshd_supported_only(sshd_algorithm_list kind, std::string_view list);

// HostKeyAlgorithms as `sshd -T` shows it: the assembled list in its order,
// less what this server cannot serve (security-key host keys): the plain
// algorithms sshd_supported_only() keeps and the host certificate ones.
std::string sshd_shown_host_key_algorithms(std::string_view list);

// PubkeyAcceptedAlgorithms narrowed to what sshd verifies in user
// authentication: the plain signature algorithms of sshd_supported_only(),
// the security keys (sk-ssh-ed25519, sk-ecdsa-sha2-nistp256), and the user
// certificate algorithms of those key types (Ed25519, ECDSA, security
// keys, RSA with rsa-sha2-256/512, and ssh-rsa-cert-v01@openssh.com only
// where the list names it, as OpenSSH's default does not).
std::string sshd_supported_pubkey_algorithms(std::string_view list);

// The server-sig-algs extension (RFC 8308): the plain signature algorithms
// of that list.
std::string sshd_server_sig_algs(std::string_view pubkey_accepted);

} // namespace longhaul
