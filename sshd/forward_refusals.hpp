// sshd's answers to forwarding requests while forwarding is not served
// (issue 11): tcpip-forward and streamlocal-forward@openssh.com are
// refused with a VERBOSE line, as before the tables existed. The
// forwarding work replaces these entries with real ones (each kind in its
// own file, on the cores in channel/forward/); direct-tcpip and the other
// channel types have no entry, so the table's unknown handler refuses them.
#pragma once

#include "channel/channel_types.hpp"
#include "common/log.hpp"

namespace longhaul {

void register_forward_refusals(global_request_table& table, logger& log);

} // namespace longhaul
