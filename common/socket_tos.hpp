// IPQoS: the DSCP/TOS byte on a TCP socket, as OpenSSH's set_sock_tos()
// (IP_TOS for IPv4, IPV6_TCLASS for IPv6; nothing for other sockets or for
// the value "none").
#pragma once

#include <optional>
#include <string>

namespace longhaul {

// What OpenSSH logs at debug3 ("set socket 3 IP_TOS 0x48"), and the error
// line when the kernel refuses; both empty when nothing was to be done.
struct socket_tos_result {
    std::string done;
    std::optional<std::string> error;
};
socket_tos_result set_socket_tos(int fd, int tos);

} // namespace longhaul
