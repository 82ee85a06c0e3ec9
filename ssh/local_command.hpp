// LocalCommand and the ~C "!command" line: a command run on the local
// machine with $SHELL (else /bin/sh) -c, on ssh's own terminal, waited for,
// as OpenSSH's ssh_local_cmd() runs it. Only with PermitLocalCommand yes;
// the caller checks.
#pragma once

#include "common/log.hpp"
#include "ssh/tokens.hpp"

#include <string>

namespace longhaul {

// The command's exit status; 1 when it did not exit normally (or the
// command is empty), 255 when it could not be started.
int run_local_command(const std::string& command, const env_lookup& env, logger& log);

} // namespace longhaul
