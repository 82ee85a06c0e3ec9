// A forward (-L, -R, -D) on the mux protocol's OPEN_FWD / CLOSE_FWD, both
// ways, as OpenSSH's ssh writes and reads them: the mux client's
// mux_client_forward() (an unset bind address as "", an empty one as "*",
// a socket path in the host field with port PORT_STREAMLOCAL), the
// master's mux_master_process_open_fwd() checks, and format_forward()'s
// description for the log. Pure: no sockets, no state.
#pragma once

#include "ssh/client_config.hpp"
#include "ssh/mux/mux_messages.hpp"

#include <optional>
#include <string>

namespace longhaul {

// -D is a local forward whose target is "socks".
mux::fwd_kind mux_forward_kind(const forward_spec& f, bool remote);

// The request a mux client sends for `f` (`type` OPEN_FWD or CLOSE_FWD).
mux::forward_request mux_forward_request(mux::msg type, mux::fwd_kind kind, const forward_spec& f);

// The forward a master reads from `r`; nullopt when OpenSSH's master
// refuses it as "Invalid forwarding request", with its log line's reason
// in `why` ("invalid listen port 70000", "missing connect host", ...).
std::optional<forward_spec> forward_of_mux_request(const mux::forward_request& r, std::string& why);

// format_forward(): "local forward LOCALHOST:8080 -> host:80", "dynamic
// forward LOCALHOST:1080 -> *", "remote forward LOCALHOST:0 -> host:22".
std::string describe_mux_forward(mux::fwd_kind kind, const forward_spec& f, bool gateway_ports);

} // namespace longhaul
