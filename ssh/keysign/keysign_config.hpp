// What ssh-keysign reads from ssh_config: only the system file (never the
// user's, nor a file the user's directory supplies through a relative
// Include), for the empty host name, as OpenSSH's ssh-keysign reads it
// after it has given up root.
#pragma once

#include "common/keys/fingerprint.hpp"
#include "common/log.hpp"
#include "ssh/ssh_config.hpp"

namespace longhaul {

struct keysign_settings {
    bool enabled = false; // EnableSSHKeysign
    fingerprint_hash fingerprint = fingerprint_hash::sha256;
};

// The environment ssh-keysign reads the configuration in: `system_config`
// and its directory for relative Includes, no user file.
config_environment keysign_environment(std::string system_config = "/etc/ssh/ssh_config");

// Reads env.system_config. A file that is missing leaves EnableSSHKeysign
// off; one with errors throws ssh_config_error, as ssh would.
keysign_settings read_keysign_settings(const config_environment& env, const log_sink& log);

} // namespace longhaul
