// One client connection inside its own sshd process: a sandboxed child
// runs the transport and user authentication while this process, as its
// privileged monitor, keeps the host keys and decides the login
// (docs/ARCHITECTURE.md, "Privilege separation"); then this process takes
// the connection over and, for a PAM session of another user, forks: the
// root parent keeps the PAM session and waits; the child becomes the user
// and runs the channels and sessions.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/private_key.hpp"
#include "common/log.hpp"
#include "sshd/auth_policy.hpp"
#include "sshd/login_record.hpp"
#include "sshd/moduli_provider.hpp"
#include "sshd/privsep/sandbox.hpp"
#include "sshd/sshd_config.hpp"

#include <memory>
#include <string>
#include <vector>

namespace longhaul {

// Prepared once by the daemon and inherited by every connection process
// (whose pre-authentication child drops the private host keys from it).
struct server_context {
    const sshd_config* config = nullptr;
    std::vector<std::shared_ptr<const private_key>> host_keys;
    // HostCertificate: certificates of keys in host_keys (public, so every
    // process of the connection keeps them).
    std::vector<certificate> host_certificates;
    // HostKeyAgent: host keys only the agent at host_key_agent_socket can
    // sign with (public halves, after the private ones in the offer).
    std::vector<public_key> agent_host_keys;
    std::string host_key_agent_socket;
    std::shared_ptr<const moduli_groups> moduli;
    logger* log = nullptr;
    std::string pam_service = "sshd";
    // A Match block's LogLevel applies to the connection once the user is
    // known; false when -d or -q fixed the level on the command line.
    bool log_level_from_config = true;
    // Where the pre-authentication child is confined (privsep user,
    // /run/sshd when started as root).
    privsep::sandbox_settings sandbox;
    // sshd -u: the longest host name utmp records (longer: the address).
    unsigned utmp_length = default_utmp_length;
};

// Serves one connection to completion; returns the process exit status.
// `startup_fd` (or -1) gets 'a' once the user authenticated and 'f' when
// authentication failed for good, for the listener's MaxStartups and
// PerSourceMaxStartups accounting.
int serve_connection(server_context& ctx, int read_fd, int write_fd, int startup_fd, connection_facts facts);

} // namespace longhaul
