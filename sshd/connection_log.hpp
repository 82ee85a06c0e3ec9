// sshd's log lines for the end of a connection (connection_log.cpp).
#pragma once

#include "common/auth/server_auth.hpp"
#include "common/log.hpp"
#include "common/transport/transport.hpp"
#include "sshd/auth_policy.hpp"

#include <string>

namespace longhaul {

// What sshd logs when the connection ends with `ev` (a disconnected
// event): before authentication with `auth`'s wording (nullptr before the
// first request), after it for `authenticated_user`.
void log_disconnect(logger& log, const connection_facts& facts, const transport_event& ev, const server_auth* auth,
                    const std::string* authenticated_user);

} // namespace longhaul
