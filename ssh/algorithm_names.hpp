// Algorithm names as the ssh client's configuration and `ssh -Q` see them.
//
// Configuration lists are checked against every name OpenSSH 9.2 knows,
// not only against what this build implements, so that a config written
// for OpenSSH (say "HostKeyAlgorithms +ssh-dss" for an old device) still
// parses; the effective list then keeps only what this build implements,
// and a list left empty fails at negotiation, not at parse time.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// Comma-separated name lists of OpenSSH 9.2 (validation only).
std::string_view openssh_cipher_names() noexcept;
std::string_view openssh_mac_names() noexcept;
std::string_view openssh_kex_names() noexcept;
// Host key / public key / signature algorithm names (`ssh -Q key-sig`).
std::string_view openssh_key_algorithm_names() noexcept;

// What this build implements, in OpenSSH's listing order (wildcards in
// HostKeyAlgorithms and friends expand in this order, as OpenSSH's do).
std::string all_ciphers();
std::string all_macs();
std::string all_kex_algorithms();
std::string all_signature_algorithms(); // CASignatureAlgorithms
std::string all_pubkey_algorithms();    // PubkeyAcceptedAlgorithms: keys and user certificates

// The client's default lists (OpenSSH 9.2's, restricted to this build).
std::string default_client_ciphers();
std::string default_client_macs();
std::string default_client_kex_algorithms();
std::string default_client_key_algorithms(); // HostKey/PubkeyAccepted/HostbasedAccepted
std::string default_ca_signature_algorithms();
std::string default_client_pubkey_algorithms(); // PubkeyAcceptedAlgorithms, certificates first
std::string all_host_key_algorithms();            // HostKeyAlgorithms: keys and host certificates
std::string default_client_host_key_algorithms(); // HostKeyAlgorithms, certificates first

// Validation as OpenSSH's ciphers_valid/mac_valid/kex_names_valid (exact
// names, empty elements skipped, at least one name) and
// sshkey_names_valid2 (wildcards allowed, each must match a known name).
bool cipher_list_valid(std::string_view list);
bool mac_list_valid(std::string_view list);
// For an invalid list, `bad` is the first unknown name (OpenSSH logs
// "Unsupported KEX algorithm \"bad\"" before the line error).
bool kex_list_valid(std::string_view list, std::string& bad);
bool key_algorithm_list_valid(std::string_view list);

// `ssh -Q what`: the lines to print, or nullopt for an unknown query
// (ssh then fails with "Unsupported query \"what\"").
std::optional<std::vector<std::string>> query_algorithms(std::string_view what);

} // namespace longhaul
