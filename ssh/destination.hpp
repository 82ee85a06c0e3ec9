// Destinations as ssh reads them: "[user@]host[:port]", "ssh://" URIs,
// ProxyJump lists, port numbers and the sanity checks ssh applies to host
// and user names that may reach a shell (%h, %r in ProxyCommand).
#pragma once

#include "common/text_parse.hpp"
#include "ssh/client_config.hpp"

#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

struct user_host_port {
    std::optional<std::string> user;
    std::string host;
    int port = -1; // -1 when absent
};

enum class uri_result { ok, not_uri, invalid };
// "ssh://[user[;params]@]host[:port]" with %-decoding of the user name; no
// path allowed. not_uri when `s` does not start with "ssh://". As in OpenSSH
// 9.2 the host must be a plain domain name or address without ':' (so
// bracketed IPv6 literals are rejected in URIs).
uri_result parse_ssh_uri(std::string_view s, user_host_port& out);
// "[user@]host[:port]" and "[user@][v6addr][:port]" (the last '@' splits).
bool parse_user_host_port(std::string_view s, user_host_port& out);

// A ProxyJump / -J value: "none" or a comma list of [user@]host[:port] or
// ssh:// hops. The last hop becomes jump_user/jump_host/jump_port and the
// ones before it jump_extra, as OpenSSH splits them. Stores into `cfg` only
// when `apply` and neither ProxyCommand nor ProxyJump is set yet (first
// value wins); every hop is syntax-checked either way. False when malformed.
bool parse_proxy_jump(std::string_view s, client_config& cfg, bool apply);

// The ProxyCommand ssh runs for ProxyJump: "ssh [-l user] [-p port]
// [-J earlier,hops] [-F config] [-vvv] -W '[%h]:%p' jumphost", with the ssh
// binary named by argv[0] when it is usable (else "ssh"). The %h and %p are
// expanded later, as for any ProxyCommand. Throws std::runtime_error("jumphost
// loop via HOST") when the jump host is the destination itself.
std::string proxy_jump_command(const client_config& cfg, std::string_view argv0,
                               const std::optional<std::string>& config_file, int verbose);

// The checks ssh makes on the destination host and a command-line user:
// no leading '-', no shell metacharacters, whitespace or control characters.
bool valid_hostname(std::string_view host);
bool valid_remote_user(std::string_view user);
// OpenSSH's valid_domain(): letters, digits, '-', '_' and single dots,
// starting with a letter or digit and not ending with '.'.
bool valid_domain(std::string_view name);

// "[host]:port" for non-default ports, the plain (lowercased by caller) host
// otherwise: how known_hosts names a host (put_host_port).
std::string host_with_port(std::string_view host, int port);

} // namespace longhaul
