// The pre-authentication child of one sshd connection (privilege
// separation, issue 12): it runs the transport, the key exchange and user
// authentication on the client's socket inside the sandbox
// (sshd/privsep/sandbox.hpp), and asks the privileged monitor, over a
// socketpair, for what needs root: host key signatures, the user's
// account and Match settings, authorized_keys decisions, the publickey
// signature check, passwords and PAM, group-exchange groups. Once the client is authenticated it
// sends the monitor the transport's state (keys, sequence numbers, unread
// input) and exits; the monitor carries on the connection on the same
// socket.
//
// A poll(2) loop rather than Asio: the child's needs are one socket and
// blocking requests to the monitor, and fewer system calls make a tighter
// seccomp filter.
#pragma once

#include "common/auth/server_auth.hpp"
#include "common/log.hpp"
#include "common/transport/transport.hpp"
#include "sshd/auth_policy.hpp"
#include "sshd/privsep/sandbox.hpp"

#include <cstdint>

namespace longhaul {

struct preauth_child_setup {
    connection_facts facts;
    int read_fd = -1;
    int write_fd = -1;
    int monitor_fd = -1;
    // The monitor's transport configuration with the private host keys
    // taken out (the child gets their public halves and a signer) and its
    // group-exchange provider, which logs through the monitor's logger,
    // replaced by requests to the monitor.
    transport_config transport;
    // The global authentication settings (Match applies once the user is
    // known: the monitor sends them then).
    server_auth_settings settings;
    std::uint64_t timing_secret = 0;
    int login_grace_time = 0; // seconds; 0: none
    log_level level = log_level::info;
    privsep::sandbox_settings sandbox;
};

// Exit statuses of the child, for the monitor.
inline constexpr int preauth_exit_handed_off = 0;
inline constexpr int preauth_exit_closed = 1;  // the connection ended before authentication
inline constexpr int preauth_exit_timeout = 2; // LoginGraceTime passed (the monitor logs it)
inline constexpr int preauth_exit_failed = 255; // the sandbox, the monitor channel or the hand-off failed

// Runs the child to its end; returns its exit status.
int run_preauth_child(preauth_child_setup setup);

} // namespace longhaul
