// authorized_keys: finding the line that authorises a presented public key
// and evaluating its options as OpenSSH's auth-options.c and
// auth2-pubkeyfile.c do, with OpenSSH's log lines. The same code serves
// files and AuthorizedKeysCommand output. cert-authority lines never match
// a plain key; they authorise user certificates signed by their key
// (certificate_auth.hpp).
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "sshd/sshd_config.hpp"
#include "sshd/user_account.hpp"

#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// What an authorized_keys line's options allow (OpenSSH's sshauthopt).
struct authorized_key_options {
    bool restricted = false; // "restrict"
    bool permit_port_forwarding = true;
    bool permit_agent_forwarding = true;
    bool permit_x11_forwarding = true;
    bool permit_pty = true;
    bool permit_user_rc = true;
    bool cert_authority = false;
    bool no_touch_required = false; // security keys
    bool verify_required = false;
    std::optional<std::string> force_command;  // command="..."
    std::optional<std::string> principals;     // principals="..." (certificates)
    std::optional<std::string> required_from;  // from="..."
    std::optional<std::string> required_from_cert; // a certificate's source-address
    std::optional<std::uint64_t> valid_before; // expiry-time="...", seconds since the epoch
    std::vector<std::string> environment;      // environment="NAME=value", first per name
    std::vector<std::string> permit_open;      // permitopen="host:port"
    std::vector<std::string> permit_listen;    // permitlisten="[host:]port" ("*:" added to a bare port)
    std::optional<int> force_tunnel_device;    // tunnel="n"
};

// Parses an options field (sshauthopt_parse). On failure `reason` holds
// OpenSSH's words ("unknown key option", "multiple \"command\" clauses",
// "invalid expires time", "invalid environment string", ...).
result<authorized_key_options> parse_authorized_key_options(std::string_view options, std::string& reason);

// OpenSSH's addr_match_cidr_list, for a certificate's source-address: 1
// when `address` is in one of the comma-separated CIDR blocks, 0 when not,
// -1 when the list is not one of CIDR blocks (empty `address`: syntax only).
int match_cidr_list(std::string_view address, std::string_view list);

// expiry-time values: YYYYMMDD[HHMM[SS]] in local time, or UTC with a "Z"
// (or "UTC") suffix.
std::optional<std::uint64_t> parse_expiry_time(std::string_view s);

// The facts the checks depend on.
struct authorized_keys_context {
    std::string user;           // account name, for log lines
    std::string remote_address; // "192.0.2.1"
    std::string remote_host;    // the canonical name with UseDNS, else the address (as OpenSSH)
    std::time_t now = 0;        // expiry-time is compared with this
    fingerprint_hash fingerprint = fingerprint_hash::sha256; // for log lines
    // PermitUserEnvironment: whether environment= is honoured, and which names.
    bool permit_user_environment = false;
    std::string permit_user_environment_patterns; // empty: every name
};

struct authorized_key_match {
    std::string location; // "file:line" (or "command:line" for AuthorizedKeysCommand)
    authorized_key_options options;
    // environment= entries that PermitUserEnvironment lets through, "NAME=value".
    std::vector<std::string> environment;
};

struct authorized_keys_result {
    std::optional<authorized_key_match> match; // the first line that authorises the key
    std::vector<log_message> log;              // in order, at OpenSSH's levels
};

// Scans `contents` (a whole authorized_keys file or command output) named
// `source` for `key`. Every line is read, as OpenSSH does, and refused
// lines (from= mismatch, expiry, bad options) are logged and skipped:
//   INFO  "<source>:<n>: Authentication tried for alice with correct key but
//          not from a permitted host (host=h, ip=1.2.3.4, required=10.0.0.0/8)."
//   ERROR "Refused by key options"
//   VERBOSE "Accepted key ED25519 SHA256:... found at <source>:<n>"
authorized_keys_result check_authorized_keys(std::string_view contents, std::string_view source,
                                             const public_key& key, const authorized_keys_context& ctx);
// The same for a user certificate (auth_check_authkey_line): a line counts
// when it is marked cert-authority and its key is the certificate's CA;
// then the line's options, the certificate's options, principals= (else
// the user's name must be a principal) and the validity are checked, and
// the options merged. The certificate's CA signature is the caller's to
// check first.
//   VERBOSE "Accepted certificate ID \"alice\" (serial 42) signed by CA
//            ED25519 SHA256:... found at <source>:<n>"
//   ERROR   "Certificate invalid: expired" (and OpenSSH's other reasons)
authorized_keys_result check_authorized_keys(std::string_view contents, std::string_view source,
                                             const certificate& cert, const authorized_keys_context& ctx);

// OpenSSH's auth_authorise_keyopts: whether options found for a key (a
// line's, a principals line's or a certificate's) let this connection in:
// expiry-time, principals= only with cert-authority, cert-authority only
// where `allow_cert_authority`, from= and a certificate's source-address.
// Logs as OpenSSH does, with `loc` ("file:line", "cert", "principals").
bool authorise_key_options(const authorized_key_options& opts, bool allow_cert_authority, std::string_view loc,
                           const authorized_keys_context& ctx, std::vector<log_message>& log);

// The options of two keys that both authenticated the user
// (AuthenticationMethods publickey,publickey), merged as OpenSSH's
// sshauthopt_merge(): permissions only if both keys grant them, the
// earliest expiry, one forced command (two different ones fail with
// "forced command options do not match"), and from=, environment=,
// permitopen=, permitlisten= and tunnel= from the primary (first) key when
// it has them. nullopt, with `error` set, when they cannot be merged.
std::optional<authorized_key_match> merge_key_options(const authorized_key_match& primary,
                                                      const authorized_key_match& additional, std::string& error);

// The environment= entries PermitUserEnvironment allows (session setup).
std::vector<std::string> permitted_user_environment(const std::vector<std::string>& environment, bool permit,
                                                    std::string_view patterns);

// AuthorizedKeysFile tokens: %h (home), %u (user), %U (uid), %%; a relative
// result is taken from the home directory. "none" entries are to be skipped
// by the caller. On an unknown token `error` says so.
result<std::string> expand_authorized_keys_path(std::string_view pattern, const user_account& user, std::string& error);

// The authorized keys files of a user in order: each AuthorizedKeysFile
// entry expanded, "none" skipped. Entries that fail to expand are logged.
std::vector<std::string> authorized_keys_paths(const server_config& config, const user_account& user,
                                               std::vector<log_message>& log);

} // namespace longhaul
