// The client's host name for UseDNS, as OpenSSH's get_remote_hostname():
// from, `user@host` patterns, AllowUsers/DenyUsers and Match Host test it,
// so a client that controls the reverse DNS of its address must not be
// able to choose it. The resolver is injectable so tests never depend on
// the machine's DNS or /etc/hosts.
#pragma once

#include "sshd/sshd_config.hpp"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace longhaul {

struct host_resolver {
    // The PTR name of a numeric address (getnameinfo with NI_NAMEREQD);
    // nullopt when it has none.
    std::function<std::optional<std::string>(const std::string& address)> reverse;
    // The numeric addresses `name` resolves to in the address's family
    // (getaddrinfo); nullopt when the lookup fails.
    std::function<std::optional<std::vector<std::string>>(const std::string& name, bool ipv6)> forward;
};

// getnameinfo / getaddrinfo.
host_resolver system_resolver();

struct remote_host_name {
    std::string host;             // the name, or the address when it cannot be trusted
    std::vector<log_message> log; // OpenSSH's lines when a name is refused
};

// `address` is the peer's numeric address (as getnameinfo NI_NUMERICHOST
// writes it).
remote_host_name lookup_remote_hostname(const std::string& address, const host_resolver& resolver);

} // namespace longhaul
