// Running ssh-keysign for one hostbased signature, as OpenSSH's
// ssh_keysign(): the helper gets the connection on descriptor 3, one
// request on its stdin, and answers one reply on its stdout before it
// exits 0. What goes wrong is logged in OpenSSH's words ("ssh_keysign:
// no reply", "ssh_keysign: exited with status 255", ...).
#pragma once

#include "common/bytes.hpp"
#include "common/log.hpp"

#include <chrono>
#include <optional>
#include <string>

namespace longhaul {

// Where ssh finds the helper: OpenSSH's _PATH_SSH_KEY_SIGN as Debian
// installs it, set at build time (LONGHAUL_SSH_KEYSIGN).
std::string ssh_keysign_path();

// The signature blob ssh-keysign made over `data`, or nullopt (logged).
// A helper that has not answered within `timeout` is killed.
std::optional<bytes> run_ssh_keysign(const std::string& program, int connection_fd, byte_span data, logger& log,
                                     std::chrono::milliseconds timeout = std::chrono::seconds(60));

} // namespace longhaul
