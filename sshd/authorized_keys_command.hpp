// AuthorizedKeysCommand: running the configured program as
// AuthorizedKeysCommandUser with OpenSSH's tokens, environment and checks,
// and collecting its standard output (bounded in size and time). The
// output is then checked like a file with check_authorized_keys(), named
// by the command string.
#pragma once

#include "common/keys/public_key.hpp"
#include "sshd/sshd_config.hpp"
#include "sshd/user_account.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <vector>

namespace longhaul {

struct keys_command_request {
    std::string command;              // AuthorizedKeysCommand as configured
    user_account target;              // the user logging in: %u %U %h
    std::optional<user_account> run_as; // AuthorizedKeysCommandUser (nullopt: not configured)
    public_key key;                   // %t %f %k
    fingerprint_hash fingerprint = fingerprint_hash::sha256;
    std::string connection_id;        // %C: "client-addr client-port server-addr server-port"
    std::string rdomain;              // %D
    std::chrono::milliseconds timeout{30000};
    std::size_t max_output = 16 * 1024 * 1024;
    // When sshd runs as root the child drops to run_as (groups, gid, uid);
    // otherwise it runs with the caller's credentials. The caller decides
    // which account that is (sshd insists on root or the target user).
    bool switch_user = true;
};

struct keys_command_result {
    std::optional<std::string> output; // stdout of a command that exited 0
    std::string command;               // the expanded command line, for logs
    // check_authorized_keys() names lines after request.command (the
    // configured string), as OpenSSH's log lines do.
    std::vector<log_message> log;      // "AuthorizedKeysCommand /x failed, status 1", ...
};

// Blocks until the command exits, times out (killed) or writes too much
// (killed); the sshd connection process calls it from its authentication
// step. Messages follow OpenSSH: "No user for AuthorizedKeysCommand
// specified, skipping", "Unsafe AuthorizedKeysCommand \"/x\": bad
// ownership or modes for directory /opt", "AuthorizedKeysCommand /x
// exited on signal 9".
keys_command_result run_authorized_keys_command(const keys_command_request& request);

} // namespace longhaul
