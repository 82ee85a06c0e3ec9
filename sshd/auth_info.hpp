// ExposeAuthInfo (sshd_config(5)): a file, named to the sessions by
// SSH_USER_AUTH, that lists the authentication methods that succeeded,
// one line each in the order they completed (AuthenticationMethods may
// require several), as OpenSSH's auth2_update_session_info() writes them:
//
//     publickey ssh-ed25519 AAAAC3...      (the key, or the certificate, in
//     password                              authorized_keys form, no comment)
//     keyboard-interactive/pam
//
// The user's own process makes it after authentication, as OpenSSH's
// prepare_auth_info_file() does (in the privilege-separated child, already
// the user), and removes it when the connection ends.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/random.hpp"
#include "common/result.hpp"

#include <string>
#include <string_view>

namespace longhaul {

// One line with its newline: "method[/submethod][ key]". A certificate,
// when given, is written instead of its key (OpenSSH writes the key it
// was shown).
std::string auth_info_line(std::string_view method, std::string_view submethod, const public_key* key,
                           const certificate* cert);

// "/tmp/sshauth." and 15 characters of [A-Za-z0-9], as OpenSSH's mkstemp
// of "/tmp/sshauth.XXXXXXXXXXXXXXX" makes them (its own mkstemp fills
// every X; glibc's would fill six).
inline constexpr std::string_view auth_info_prefix = "/tmp/sshauth.";
inline constexpr std::size_t auth_info_random_chars = 15;

// Creates a new file from `prefix` and random characters (O_CREAT|O_EXCL
// and O_NOFOLLOW: never a file or link someone else put there, so no race
// in a shared /tmp), mode 0600, owned by the calling process's user, and
// writes `text` to it. The path, or an error with `error` saying why
// (nothing is left behind then).
result<std::string> write_auth_info_file(std::string_view text, random_source& rng, std::string& error,
                                         std::string_view prefix = auth_info_prefix);

} // namespace longhaul
