// The text expansions of ssh_config values: %-tokens (ssh_config(5)
// TOKENS), ${ENVIRONMENT} variables and ~ / ~user home directories, with
// OpenSSH's rules and error wording.
#pragma once

#include "common/percent_expand.hpp"

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace longhaul {

// Letter -> replacement (common/percent_expand.hpp, which also defines
// env_lookup and does the expanding).
using token_map = percent_tokens;

env_lookup process_environment(); // ::getenv

// An expansion that ssh treats as fatal. what() holds every line OpenSSH
// prints for it, '\n'-separated (for example "vdollar_percent_expand:
// unknown key %j" then "percent_expand: failed").
class expansion_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// percent_expand(): "%x" for x in `tokens`, "%%" -> "%".
std::string percent_expand(std::string_view s, const token_map& tokens);
// percent_dollar_expand() as ssh's default_client_percent_dollar_expand
// uses it: %-tokens and ${VAR}. An unset variable ends in "invalid
// environment variable expansion".
std::string percent_dollar_expand(std::string_view s, const token_map& tokens, const env_lookup& env);
// dollar_expand(): ${VAR} only. nullopt and `error` set (OpenSSH's message)
// when the text is malformed or a variable is unset; config parsing uses
// this to validate IdentityAgent/ForwardAgent paths.
std::optional<std::string> dollar_expand(std::string_view s, const env_lookup& env, std::string& error);

// Home directory of a named user (getpwnam), nullopt when there is none.
using home_lookup = std::function<std::optional<std::string>(const std::string& user)>;
home_lookup passwd_homes();

// tilde_expand_filename(): "~/x" -> home + "/x", "~user/x" -> user's home
// + "/x"; other paths are returned unchanged. Like OpenSSH, "~name" without
// a slash is read as "~/name". Throws expansion_error for an unknown user
// ("tilde_expand: No such user bob", as OpenSSH 9.2 words it).
std::string tilde_expand(std::string_view path, std::string_view home, const home_lookup& homes);

// The values behind the tokens most client keywords accept (OpenSSH's
// DEFAULT_CLIENT_PERCENT_EXPAND_ARGS): %C %L %i %k %l %n %p %d %h %r %u.
struct connection_tokens {
    std::string conn_hash;   // %C: connection_hash() of %l%h%p%r
    std::string short_host;  // %L: local host name up to the first '.'
    std::string uid;         // %i: local numeric user id
    std::string key_alias;   // %k: HostKeyAlias, else the host as given
    std::string local_host;  // %l: local host name
    std::string host_arg;    // %n: the host as given on the command line
    std::string port;        // %p
    std::string home_dir;    // %d
    std::string remote_host; // %h: the host after HostName
    std::string remote_user; // %r
    std::string local_user;  // %u

    token_map map() const;
};

// %C: lowercase hex SHA-1 of local host, remote host, port and user.
std::string connection_hash(std::string_view local_host, std::string_view remote_host, std::string_view port,
                            std::string_view remote_user);

} // namespace longhaul
