// The ~C command line (ssh(1) ESCAPE CHARACTERS, OpenSSH's process_cmdline):
// one line typed at the "ssh> " prompt, parsed here without side effects;
// ssh/client.cpp carries it out. Forwards are added with -L, -R and -D
// (OpenSSH's forwarding syntax, the leading '-' optional) and cancelled
// with -KL, -KR and -KD [bind_address:]port (or a socket path); "!command"
// runs a local command when PermitLocalCommand allows it; h, H or ? lists
// the commands.
#pragma once

#include "ssh/client_config.hpp"
#include "ssh/tokens.hpp"

#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

struct escape_command {
    enum class kind {
        none,          // an empty line: nothing to do
        help,          // the lines of escape_command_help()
        local_command, // `text` is the command to run
        add_forward,   // `direction` and `spec`
        cancel_forward,
        error, // `text` is OpenSSH's message ("Invalid command." ...)
    };
    enum class direction { local, remote, dynamic };

    kind what = kind::none;
    direction dir = direction::local;
    forward_spec spec;
    std::string text;
};

escape_command parse_escape_command(std::string_view line, bool permit_local_command, const env_lookup& env);

// What "help" prints, one line each, as OpenSSH logs them.
std::vector<std::string> escape_command_help(bool permit_local_command);

} // namespace longhaul
