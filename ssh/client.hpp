// The ssh client's connection: connect (TCP or ProxyCommand), key
// exchange with host key verification, user authentication, then the
// session (or nothing with -N), until the remote side exits.
#pragma once

#include "common/log.hpp"
#include "ssh/client_config.hpp"
#include "ssh/options.hpp"
#include "ssh/ssh_config.hpp"

#include <string>

namespace longhaul {

struct client_invocation {
    client_config* cfg = nullptr;
    const config_environment* env = nullptr;
    logger* log = nullptr;
    std::string command;    // remote command ("" for a shell)
    bool have_command = false;
    bool subsystem = false; // -s: command is a subsystem name
    bool tty = false;       // a pty is asked for (decide_tty)
    mux_command mux = mux_command::none; // -O
};

// Whether the session asks for a pty, as OpenSSH's main() decides it
// before connecting: -t/RequestTTY yes, or a shell (no command, no
// RemoteCommand) unless -T/RequestTTY no; never for -O commands or
// SessionType none; and, unless forced (-tt/RequestTTY force), not when
// stdin is not a terminal or is /dev/null (-n, -f), which is said at
// info level: "Pseudo-terminal will not be allocated because stdin is not a
// terminal." when one would have been asked for.
bool decide_tty(const client_config& cfg, bool have_command, mux_command mux, logger& log);

// Returns the process exit status: the remote program's, or 255.
int run_client(client_invocation& inv);

} // namespace longhaul
