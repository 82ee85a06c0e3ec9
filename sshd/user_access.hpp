// OpenSSH's allowed_user(): the checks made before any authentication
// method may succeed for an account, in OpenSSH's order and with its log
// lines (fail2ban and similar tools read them): expired and locked accounts
// (UsePAM no), the login shell, DenyUsers, AllowUsers, DenyGroups and
// AllowGroups.
#pragma once

#include "sshd/password_backend.hpp"
#include "sshd/sshd_config.hpp"
#include "sshd/user_account.hpp"

#include <ctime>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

struct user_access {
    bool allowed = true;
    std::vector<log_message> log; // e.g. "User bob from 192.0.2.1 not allowed because listed in DenyUsers"
    std::string user_message;     // "Your account will expire in 2 days.\n"
};

// `config` is the connection's (after Match). `groups`: the names of the
// user's primary and supplementary groups (user_group_names()). `host` is
// the canonical host name with UseDNS, else the address, as OpenSSH logs
// it. `shadow` supplies /etc/shadow facts when UsePAM is no (nullptr skips
// those checks, as with UsePAM yes).
user_access check_user_access(const server_config& config, const user_account& user,
                              const std::vector<std::string>& groups, std::string_view host,
                              std::string_view address, const password_backend* shadow, std::time_t now);

} // namespace longhaul
