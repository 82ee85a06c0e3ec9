// What sshd's forwarding entries (direct_forwarding, remote_forwarding)
// read from the user's settings and the key that logged in: the switches
// as channel/forward's forwarding_settings, and the administrator's and
// the key's permission lists (PermitOpen + permitopen=, PermitListen +
// permitlisten=).
#pragma once

#include "channel/forward/forward_permissions.hpp"
#include "channel/forward/forward_policy.hpp"

#include <optional>
#include <utility>

namespace longhaul {

struct session_environment;

forward::forwarding_settings forwarding_settings_of(const session_environment& env);
// AllowAgentForwarding, DisableForwarding and the key's no-agent-forwarding
// or restrict, as OpenSSH 9.2's session_auth_agent_req reads them.
bool agent_forwarding_enabled(const session_environment& env);

// {administrator's list, key's list}; nullopt (deny, with an error logged)
// if either cannot be read, which sshd -t reports for the configuration.
using permission_lists = std::pair<forward::permission_list, forward::permission_list>;
std::optional<permission_lists> open_permission_lists(const session_environment& env);
std::optional<permission_lists> listen_permission_lists(const session_environment& env);

} // namespace longhaul
