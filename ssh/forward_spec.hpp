// Forwarding specifications (-L/-R/-D/-W, LocalForward, RemoteForward,
// DynamicForward) and tunnel device numbers (-w, TunnelDevice).
#pragma once

#include "ssh/client_config.hpp"
#include "ssh/tokens.hpp"

#include <string>
#include <string_view>

namespace longhaul {

// OpenSSH's parse_forward(): "[listen_host:]port:host:hostport",
// "listen_path:host:hostport", "port:path", "path:path", and with `dynamic`
// "[listen_host:]port" (connect side "socks"). Fields may be [bracketed]
// (IPv6) and a backslash escapes the next character; a '/' makes a field a
// Unix socket path. ${VAR} is expanded first. `remote` permits listen port 0.
bool parse_forward(std::string_view spec, bool dynamic, bool remote, forward_spec& out, const env_lookup& env);

// OpenSSH's a2tun(): "N", "any", "local:remote". Returns the local id
// (tun_id_any, a number, or tun_id_error) and stores the remote id.
int parse_tunnel_device(std::string_view s, int& remote);

} // namespace longhaul
