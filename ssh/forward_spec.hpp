// Forwarding specifications (-L/-R/-D/-W, LocalForward, RemoteForward,
// DynamicForward). Tunnel device numbers (-w, TunnelDevice) are
// common/text_parse.hpp's parse_tunnel_device.
#pragma once

#include "common/text_parse.hpp"
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

} // namespace longhaul
