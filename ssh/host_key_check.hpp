// Host key verification as ssh does it on every connection: look the key up
// in UserKnownHostsFile and GlobalKnownHostsFile (and, with CheckHostIP, the
// peer address), then accept, ask, add, refuse or continue without the
// features a man in the middle could abuse, per StrictHostKeyChecking, with
// OpenSSH's prompts and warnings word for word.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/random.hpp"
#include "ssh/client_config.hpp"
#include "ssh/known_hosts.hpp"
#include "ssh/ssh_config.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// ssh prints this (fatal) when verify_host_key() refuses the key.
inline constexpr std::string_view host_key_verification_failed = "Host key verification failed.";

// RequiredRSASize for the server's host key (a certificate's certified
// key too): OpenSSH's ssh dies with "Bad server host key: Invalid key
// length" before it looks the key up anywhere. nullopt: the size is fine.
std::optional<std::string> host_key_length_refusal(const client_config& cfg, const public_key& key);

// The host being verified.
struct host_key_target {
    std::string hostname;               // cfg.hostname: the host connected to
    int port = 22;
    std::optional<std::string> address; // numeric peer address; nullopt through a ProxyCommand
    bool loopback = false;              // the peer address is a loopback address
};

// How to ask the user. read_line shows the prompt (which may span lines and
// ends in "? ") on the terminal and returns the answer, echoed as typed;
// nullopt when there is no terminal or input ended (answered as "no").
struct host_key_prompter {
    std::function<std::optional<std::string>(const std::string& prompt)> read_line;
};

struct host_key_verdict {
    bool accepted = false; // false: print host_key_verification_failed and exit 255
    bool trusted = false;  // known, or accepted by the user (UpdateHostKeys may run)
    // When not empty, a fatal error to print instead ("Error: forwarding
    // disabled due to host key check failure").
    std::string fatal;
};

// OpenSSH's verify_host_key()/check_host_key() for a plain (non-certificate)
// key. A key listed in RevokedHostKeys (a key list or a KRL), or any key
// when that file cannot be read or parsed, is refused first, with
// OpenSSH's "Host key ED25519 SHA256:... revoked by file F" or "Error
// checking host key ... in revoked keys file F: REASON". May change `cfg` as OpenSSH changes its options: CheckHostIP off for
// loopback and proxied connections, password/keyboard-interactive
// authentication and all forwarding off after a changed or revoked key that
// StrictHostKeyChecking=no lets through, UpdateHostKeys off when the key is
// not trusted. New keys are added to the first UserKnownHostsFile, hashed
// with HashKnownHosts. Messages go to `log` at OpenSSH's levels.
host_key_verdict verify_host_key(client_config& cfg, const host_key_target& target, const public_key& key,
                                 const config_environment& env, const host_key_prompter& ui, random_source& rng,
                                 const log_sink& log);
// The same when the server presented a host certificate `cert` (nullptr:
// a plain key) certifying `key`, as OpenSSH's verify_host_key and
// check_host_key do: "Server host certificate: ..." at debug level;
// RevokedHostKeys checked for the key, its CA and (in a KRL) the
// certificate; then a @cert-authority entry for the host (or its
// [host]:port name) must hold the CA key and check_host_cert must pass
// (host certificate, valid now, HostKeyAlias or the host name among its
// principals, CASignatureAlgorithms). Otherwise "No matching CA found.
// Retry with plain key" and `key` is checked as a plain key (so
// StrictHostKeyChecking decides, and a new key is filed as a plain one).
host_key_verdict verify_host_key(client_config& cfg, const host_key_target& target, const public_key& key,
                                 const certificate* cert, const config_environment& env, const host_key_prompter& ui,
                                 random_source& rng, const log_sink& log);

// The texts, for callers that build their own flow.

// "The authenticity of host 'NAME (IP)' can't be established." through
// "Are you sure you want to continue connecting (yes/no/[fingerprint])? ".
// `other_names` are other_names_for_key() lines (up to 8 are listed).
std::string unknown_host_prompt(std::string_view host_name, std::string_view ip_name, std::string_view type_label,
                                std::string_view fingerprint, bool other_key_types_known,
                                const std::vector<std::string>& other_names);
// "Warning: Permanently added 'NAMES' (ED25519) to the list of known hosts."
std::string permanently_added_message(std::string_view names, std::string_view type_label);
// The "@@@ WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED! @@@" block through
// the "ssh-keygen -R" hint, one line per element.
std::vector<std::string> changed_host_key_warning(std::string_view type_label, std::string_view fingerprint,
                                                  std::string_view first_user_file, const known_host_entry& offending,
                                                  std::string_view lookup_name);
// The "@@@ WARNING: REVOKED HOST KEY DETECTED! @@@" block.
std::vector<std::string> revoked_host_key_warning(std::string_view type_label, std::string_view host_name);

enum class confirmation { yes, no, again };
// OpenSSH's confirm(): blank or "no" is no, "yes" (any case) or the exact
// fingerprint is yes, anything else asks again with again_prompt().
confirmation parse_confirmation(std::string_view answer, const std::optional<std::string>& fingerprint);
std::string_view again_prompt(bool with_fingerprint) noexcept;

} // namespace longhaul
