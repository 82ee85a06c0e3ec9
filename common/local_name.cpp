#include "common/local_name.hpp"

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cstddef>
#include <cstring>

namespace longhaul {

namespace {

// ::ffff:a.b.c.d as a.b.c.d, so the lookup sees the IPv4 address.
socklen_t unmap_ipv4(sockaddr_storage& ss, socklen_t len)
{
    if (ss.ss_family != AF_INET6)
        return len;
    const auto& a6 = reinterpret_cast<const sockaddr_in6&>(ss);
    if (!IN6_IS_ADDR_V4MAPPED(&a6.sin6_addr))
        return len;
    sockaddr_in a4{};
    a4.sin_family = AF_INET;
    a4.sin_port = a6.sin6_port;
    std::memcpy(&a4.sin_addr, &a6.sin6_addr.s6_addr[12], sizeof a4.sin_addr);
    std::memset(&ss, 0, sizeof ss);
    std::memcpy(&ss, &a4, sizeof a4);
    return sizeof a4;
}

std::string socket_name(int fd)
{
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
        return {};
    if (ss.ss_family == AF_UNIX) {
        const auto& un = reinterpret_cast<const sockaddr_un&>(ss);
        const std::size_t max = len > offsetof(sockaddr_un, sun_path) ? len - offsetof(sockaddr_un, sun_path) : 0;
        return std::string(un.sun_path, ::strnlen(un.sun_path, std::min(max, sizeof un.sun_path)));
    }
    if (ss.ss_family != AF_INET && ss.ss_family != AF_INET6)
        return {};
    len = unmap_ipv4(ss, len);
    char host[NI_MAXHOST] = {};
    if (::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, nullptr, 0, NI_NAMEREQD) != 0)
        return {};
    return host;
}

} // namespace

std::string local_host_name(int fd)
{
    std::string name = socket_name(fd);
    if (!name.empty())
        return name;
    char host[NI_MAXHOST] = {};
    if (::gethostname(host, sizeof host - 1) != 0)
        return "UNKNOWN";
    return host;
}

} // namespace longhaul
