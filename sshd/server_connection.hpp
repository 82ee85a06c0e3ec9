// One client connection inside its own sshd process: the transport with the
// host keys, user authentication (pre-auth runs as root; see
// docs/ARCHITECTURE.md for the privilege-separation plan), then a fork:
// the root parent keeps the PAM session and waits; the child becomes the
// user and runs the channels and sessions.
#pragma once

#include "common/keys/private_key.hpp"
#include "common/log.hpp"
#include "sshd/auth_policy.hpp"
#include "sshd/moduli_provider.hpp"
#include "sshd/sshd_config.hpp"

#include <memory>
#include <string>
#include <vector>

namespace longhaul {

// Prepared once by the daemon and inherited by every connection process.
struct server_context {
    const sshd_config* config = nullptr;
    std::vector<std::shared_ptr<const private_key>> host_keys;
    std::shared_ptr<const moduli_groups> moduli;
    logger* log = nullptr;
    std::string pam_service = "sshd";
    // A Match block's LogLevel applies to the connection once the user is
    // known; false when -d or -q fixed the level on the command line.
    bool log_level_from_config = true;
};

// Serves one connection to completion; returns the process exit status.
// `startup_fd` (or -1) gets 'a' once the user authenticated and 'f' when
// authentication failed for good, for the listener's MaxStartups and
// PerSourceMaxStartups accounting.
int serve_connection(const server_context& ctx, int read_fd, int write_fd, int startup_fd, connection_facts facts);

} // namespace longhaul
