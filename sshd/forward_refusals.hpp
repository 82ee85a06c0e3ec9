// sshd's answers to remote forwarding requests while they are not served
// (issue 11): tcpip-forward and streamlocal-forward@openssh.com are
// refused with a VERBOSE line. The forwarding work replaces these entries
// with real ones (each kind in its own file, on the cores in
// channel/forward/), as direct_forwarding did for direct-tcpip and
// direct-streamlocal@openssh.com.
#pragma once

#include "channel/channel_types.hpp"
#include "common/log.hpp"

namespace longhaul {

void register_forward_refusals(global_request_table& table, logger& log);

} // namespace longhaul
