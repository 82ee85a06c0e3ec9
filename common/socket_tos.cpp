#include "common/socket_tos.hpp"

#include <netinet/in.h>
#include <netinet/ip.h>
#include <sys/socket.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstring>

namespace longhaul {

socket_tos_result set_socket_tos(int fd, int tos)
{
    socket_tos_result r;
    if (tos == INT_MAX) // IPQoS none
        return r;
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
        return r;
    int level = 0, option = 0;
    const char* name = nullptr;
    if (ss.ss_family == AF_INET) {
        level = IPPROTO_IP, option = IP_TOS, name = "IP_TOS";
    } else if (ss.ss_family == AF_INET6) {
        level = IPPROTO_IPV6, option = IPV6_TCLASS, name = "IPV6_TCLASS";
    } else {
        return r;
    }
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", static_cast<unsigned>(tos));
    r.done = "set_sock_tos: set socket " + std::to_string(fd) + " " + name + " " + hex;
    if (::setsockopt(fd, level, option, &tos, sizeof tos) != 0)
        r.error = "set_sock_tos: setsockopt socket " + std::to_string(fd) + " " + name + " " + std::to_string(tos) +
                  ": " + std::strerror(errno);
    return r;
}

} // namespace longhaul
