// The name hostbased authentication gives the client host: OpenSSH's
// get_local_name(), which ssh and ssh-keysign must compute alike for the
// helper to sign.
#pragma once

#include <string>

namespace longhaul {

// For a TCP socket, the name its local address resolves to by reverse
// lookup (an IPv4-mapped IPv6 address looked up as IPv4); for a named
// Unix socket, its path. Otherwise (no name found, a pipe, or an unnamed
// Unix socket as ProxyCommand's socketpair) the host's own name from
// gethostname(), or "UNKNOWN" if even that fails.
std::string local_host_name(int fd);

} // namespace longhaul
