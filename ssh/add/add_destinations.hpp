// ssh-add -h and -H: destination constraints as OpenSSH 9.2 builds them.
// "[user@]host" allows the key from this host to `host`;
// "from>[user@]to" allows it through `from` (a host the agent is
// forwarded to) on to `to`. Hosts are named by the keys known_hosts files
// hold for them (plain and @cert-authority; @revoked ignored); "user@"
// alone allows any host for that user.
#pragma once

#include "common/auth/agent_protocol.hpp"

#include <string>
#include <vector>

namespace longhaul::add {

// The known_hosts files -h looks in without -H, as ssh_config's defaults
// (~ is `home`).
std::vector<std::string> default_hostkey_files(const std::string& home);

// Builds the constraints of every -h. OpenSSH's fatal() (add_fatal, 255)
// for a spec with neither user nor host, a user on the "from" side, or a
// host no file has keys for. `home` expands "~/" in the file names.
std::vector<agent::destination_constraint> resolve_destinations(const std::vector<std::string>& specs,
                                                                const std::vector<std::string>& hostkey_files,
                                                                const std::string& home);

} // namespace longhaul::add
