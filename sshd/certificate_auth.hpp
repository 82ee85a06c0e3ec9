// User certificates in sshd's publickey authentication, decided as
// OpenSSH's auth2-pubkey.c, auth2-pubkeyfile.c and auth-options.c decide
// them: the options a certificate carries (critical options and
// extensions), cert-authority lines in authorized_keys, AuthorizedPrincipalsFile
// lines, and TrustedUserCAKeys, with OpenSSH 9.2's log lines. Pure
// functions over file contents: sshd's monitor reads the files
// (auth_policy_certificate.cpp) and calls these.
//
// A certificate reaching these functions was parsed with
// certificate::from_blob and its CA signature checked by the caller.
#pragma once

#include "common/keys/certificate.hpp"
#include "sshd/authorized_keys.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// OpenSSH's sshauthopt_from_cert: what a certificate allows. It grants
// only the permit-* extensions it carries (port, agent and X11
// forwarding, pty, user rc); force-command forces a command and
// source-address limits the client addresses (a list of CIDR blocks).
// nullopt, with OpenSSH's error logged, for a critical option this server
// does not understand ("Certificate critical option \"x\" is not
// supported") or a malformed one.
std::optional<authorized_key_options> certificate_options(const certificate& cert, std::vector<log_message>& log);

// The rest of auth_check_authkey_line for a certificate whose CA is on a
// cert-authority line (`line_options`, at `loc`): the line's options, the
// certificate's, their merge (two different forced commands: refused),
// principals= (else the user's name must be a principal) and the validity
// now. On refusal logs OpenSSH's reason at error level and returns nullopt.
std::optional<authorized_key_match> check_certificate_authority_line(const certificate& cert,
                                                                     const authorized_key_options& line_options,
                                                                     const std::string& loc,
                                                                     const authorized_keys_context& ctx,
                                                                     std::vector<log_message>& log);

// A line of an AuthorizedPrincipalsFile that names one of the certificate's
// principals, with the line's options ("[options] principal"; '#' starts a
// comment anywhere on a line).
struct principals_match {
    std::string location; // "file:line"
    authorized_key_options options;
};

// auth_process_principals: the first line naming a principal of `cert`
// (every line is read), nullopt when none does. Lines with bad options are
// logged ("<loc>: bad principals options: <reason>") and skipped.
std::optional<principals_match> check_authorized_principals(std::string_view contents, std::string_view source,
                                                            const certificate& cert, std::vector<log_message>& log);

// Whether `ca` is one of the plain public keys listed in a TrustedUserCAKeys
// file (lines "keytype base64 [comment]"; others are skipped).
bool ca_key_listed(std::string_view contents, const public_key& ca);

// user_cert_trusted_ca once the CA is known to be listed in `ca_keys_path`:
// with `use_principals` (AuthorizedPrincipalsFile or -Command configured)
// `principal` must have been found, else the user's name must be among the
// certificate's principals (a certificate without any is refused); then
// the validity, the certificate's options ("cert"), the principals line's
// ("principals") and their merge.
//   VERBOSE "Accepted certificate ID \"alice\" (serial 42) signed by
//            ED25519 CA SHA256:... via /etc/ssh/user_ca.pub"
//   ERROR   "Certificate does not contain an authorized principal", ...
authorized_keys_result check_trusted_user_ca(const certificate& cert, std::string_view ca_keys_path,
                                             bool use_principals, const std::optional<principals_match>& principal,
                                             const authorized_keys_context& ctx);

// A publickey blob as sshd's monitor gets it from the pre-authentication
// child, parsed by the monitor itself: a certificate (`key` is then its
// certified key), a plain key, or neither (both empty).
struct presented_key {
    std::optional<certificate> cert;
    std::optional<public_key> key;
};
presented_key parse_presented_key(byte_span blob);

// Whether PubkeyAcceptedAlgorithms (`accepted`) has an algorithm for this
// key type: a certificate algorithm of that type when `cert`, else a plain
// signature algorithm (mm_answer_keyallowed's check before any file is read).
bool key_type_accepted(std::string_view accepted, key_type type, bool cert);

} // namespace longhaul
