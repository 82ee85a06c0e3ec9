#include "sshd/remote_hostname.hpp"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstring>

namespace longhaul {

namespace {

bool is_ipv6(const std::string& address) { return address.find(':') != std::string::npos; }

} // namespace

host_resolver system_resolver()
{
    host_resolver r;
    r.reverse = [](const std::string& address) -> std::optional<std::string> {
        sockaddr_storage ss{};
        socklen_t len = 0;
        if (is_ipv6(address)) {
            auto* s6 = reinterpret_cast<sockaddr_in6*>(&ss);
            s6->sin6_family = AF_INET6;
            if (inet_pton(AF_INET6, address.c_str(), &s6->sin6_addr) != 1)
                return std::nullopt;
            len = sizeof *s6;
        } else {
            auto* s4 = reinterpret_cast<sockaddr_in*>(&ss);
            s4->sin_family = AF_INET;
            if (inet_pton(AF_INET, address.c_str(), &s4->sin_addr) != 1)
                return std::nullopt;
            len = sizeof *s4;
        }
        char host[NI_MAXHOST];
        if (getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, nullptr, 0, NI_NAMEREQD) != 0)
            return std::nullopt;
        return std::string(host);
    };
    r.forward = [](const std::string& name, bool ipv6) -> std::optional<std::vector<std::string>> {
        addrinfo hints{};
        hints.ai_family = ipv6 ? AF_INET6 : AF_INET;
        hints.ai_socktype = SOCK_STREAM;
        addrinfo* res = nullptr;
        if (getaddrinfo(name.c_str(), nullptr, &hints, &res) != 0)
            return std::nullopt;
        std::vector<std::string> out;
        for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
            char h[NI_MAXHOST];
            if (getnameinfo(ai->ai_addr, ai->ai_addrlen, h, sizeof h, nullptr, 0, NI_NUMERICHOST) == 0)
                out.emplace_back(h);
        }
        freeaddrinfo(res);
        return out;
    };
    return r;
}

remote_host_name lookup_remote_hostname(const std::string& address, const host_resolver& resolver)
{
    remote_host_name out;
    out.host = address;
    auto name = resolver.reverse(address);
    if (!name)
        return out;
    const bool ipv6 = is_ipv6(address);
    // A PTR record may hold anything, a numeric address too: that would
    // pass for whatever address it names.
    unsigned char scratch[sizeof(in6_addr)];
    if (inet_pton(AF_INET, name->c_str(), scratch) == 1 || inet_pton(AF_INET6, name->c_str(), scratch) == 1) {
        out.log.push_back({syslog_level::info, "Nasty PTR record \"" + *name + "\" is set up for " + address + ", ignoring"});
        return out;
    }
    // Names are compared lower-case (patterns are matched that way).
    std::string lower = *name;
    for (auto& c : lower)
        if (c >= 'A' && c <= 'Z')
            c = static_cast<char>(c - 'A' + 'a');
    // Whoever controls the address's reverse zone chooses the PTR name;
    // only a forward lookup of that name, which the name's owner controls,
    // listing the address again makes the name the client's.
    auto addresses = resolver.forward(lower, ipv6);
    if (!addresses) {
        out.log.push_back({syslog_level::info, "reverse mapping checking getaddrinfo for " + lower.substr(0, 700) + " [" +
                                                   address + "] failed."});
        return out;
    }
    for (const auto& a : *addresses)
        if (a == address) {
            out.host = lower;
            return out;
        }
    out.log.push_back({syslog_level::info, "Address " + address.substr(0, 100) + " maps to " + lower.substr(0, 600) +
                                               ", but this does not map back to the address."});
    return out;
}

} // namespace longhaul
