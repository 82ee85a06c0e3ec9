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
    bool tty_requested_explicitly = false;
    mux_command mux = mux_command::none; // -O
};

// Returns the process exit status: the remote program's, or 255.
int run_client(client_invocation& inv);

} // namespace longhaul
