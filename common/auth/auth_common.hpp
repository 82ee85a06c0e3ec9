// Pieces shared by the client and server authentication machines: log
// levels and lines, algorithm choice for publickey signatures, and making
// peer text safe for a terminal or a log.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/log.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

// Input either side holds while the program answers a question (a prompt,
// a signature); a peer has no reason to send more than a few messages
// without waiting for replies.
inline constexpr std::size_t max_queued_auth_messages = 64;

// OpenSSH's log levels, in the order LogLevel enables them. The machines
// produce lines at a level; the program decides what is shown (ssh -v shows
// debug1, sshd's default LogLevel INFO hides verbose and below).
enum class auth_log_level { error, info, verbose, debug1, debug2, debug3 };

std::string_view to_string(auth_log_level level) noexcept;
// The program logger's level for a machine's log line.
log_level to_log_level(auth_log_level level) noexcept;

// OpenSSH 9.x's default PubkeyAcceptedAlgorithms restricted to the key
// types this build implements (no certificates, no security keys).
std::string default_pubkey_accepted_algorithms();

// The signature algorithm to use for `key` (OpenSSH's key_sig_algorithm):
// for RSA keys when the server sent server-sig-algs, the first RSA entry of
// `accepted` the server also lists; otherwise the key's own name if
// `accepted` holds it. nullopt when there is none (the key is skipped).
std::optional<std::string> choose_signature_algorithm(const public_key& key, std::string_view accepted,
                                                      const std::optional<std::string>& server_sig_algs);

// Whether `accepted` allows some signature algorithm for the key's type
// (RSA keys are allowed by rsa-sha2-512 or rsa-sha2-256 as well as ssh-rsa).
bool key_type_allowed(const public_key& key, std::string_view accepted);

// "ED25519 SHA256:...", as OpenSSH's logs name a key.
std::string describe_key(const public_key& key);
// A user certificate as sshd's logs name it: "ED25519-CERT SHA256:<key>
// ID alice@example (serial 42) CA ED25519 SHA256:<CA>".
std::string describe_certificate(const certificate& cert);

// One authentication attempt as sshd's auth_log() writes it: "Accepted
// publickey for alice from 192.0.2.1 port 50000 ssh2: ED25519 SHA256:...".
struct auth_attempt_record {
    std::string_view verdict; // Accepted, Failed, Partial, Postponed
    std::string_view method;
    std::string_view submethod; // "pam" for keyboard-interactive/pam
    std::string_view user;
    bool valid_user = true;
    std::string_view remote_ip;
    int remote_port = 0;
    const public_key* key = nullptr;
    const certificate* cert = nullptr; // when set, named instead of `key`
    std::string_view note;             // after the key: ", client user ..."
};
std::string auth_attempt_line(const auth_attempt_record& a);
// sshd raises the line from VERBOSE to INFO for a success, an invalid user,
// a password, or once half of MaxAuthTries have failed.
auth_log_level auth_attempt_level(const auth_attempt_record& a, bool authenticated, int failures, int max_auth_tries);

// What a failed hostbased attempt's line adds after the key, as OpenSSH's
// monitor records it: 'client user "alice", client host "client.example"'
// (the host without its trailing dot; both made printable, at most 100
// bytes).
std::string hostbased_failure_note(std::string_view client_user, std::string_view client_host);

// The methods PermitRootLogin prohibit-password and forced-commands-only
// take (publickey, hostbased), as OpenSSH's auth_root_allowed().
bool key_based_method(std::string_view method) noexcept;

// "Invalid user bob from 192.0.2.1 port 50000"
std::string invalid_user_line(std::string_view user, std::string_view remote_ip, int remote_port);
// "ROOT LOGIN REFUSED FROM 192.0.2.1 port 50000"
std::string root_refused_line(std::string_view remote_ip, int remote_port);

// Peer-supplied text made safe to print: printable ASCII, tab, CR, LF (when
// keep_newlines) and well-formed UTF-8 characters outside the C0/C1 control
// ranges pass; every other byte becomes \ooo. What OpenSSH's fmprintf does
// for banners and prompts in a UTF-8 locale.
std::string sanitize_peer_text(std::string_view s, bool keep_newlines);

// First `n` bytes of `s` (OpenSSH's "%.100s" in log formats).
inline std::string_view truncated(std::string_view s, std::size_t n) noexcept { return s.substr(0, n); }

} // namespace longhaul
