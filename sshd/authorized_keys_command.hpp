// AuthorizedKeysCommand and AuthorizedPrincipalsCommand: running the
// configured program as its *CommandUser with OpenSSH's tokens,
// environment and checks, and collecting its standard output (bounded in
// size and time). The caller then checks the output like a file:
// check_authorized_keys() named by the command string for keys,
// check_authorized_principals() named "(command)" for principals, as
// OpenSSH's auth2-pubkey.c does.
#pragma once

#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "sshd/sshd_config.hpp"
#include "sshd/user_account.hpp"

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// What both commands share.
struct auth_command_request {
    std::string command;                // as configured
    user_account target;                // the user logging in: %u %U %h
    std::optional<user_account> run_as; // the *CommandUser, from command_user()
    fingerprint_hash fingerprint = fingerprint_hash::sha256;
    std::string connection_id;          // %C: "client-addr client-port server-addr server-port"
    std::string rdomain;                // %D
    std::chrono::milliseconds timeout{30000};
    std::size_t max_output = 16 * 1024 * 1024;
    // When sshd runs as root the child drops to run_as (groups, gid, uid);
    // otherwise it runs with the caller's credentials. The caller decides
    // which account that is (sshd insists on root or the target user).
    bool switch_user = true;
};

struct keys_command_request : auth_command_request {
    public_key key;                   // %t %f %k for a plain key ...
    std::optional<certificate> cert;  // ... or a certificate: %t and %k name it, %f its key
};

struct principals_command_request : auth_command_request {
    std::optional<certificate> cert;  // %t %f %k, and the CA's %T %F %K, %i key ID, %s serial
};

struct auth_command_result {
    std::optional<std::string> output; // stdout of a command that exited 0
    std::string command;               // the expanded command line, for logs
    std::vector<log_message> log;      // "AuthorizedKeysCommand /x failed, status 1", ...
};
using keys_command_result = auth_command_result;

// The account a command runs as: AuthorizedKeysCommandUser or
// AuthorizedPrincipalsCommandUser (`setting` names the command) with %u
// expanded, looked up. nullopt with OpenSSH's error logged: "No user for
// AuthorizedKeysCommand specified, skipping", "AuthorizedKeysCommandUser
// \"x\" not found: ...".
std::optional<user_account> command_user(std::string_view setting, const std::string& configured,
                                         const user_account& target, std::vector<log_message>& log);

// Block until the command exits, times out (killed) or writes too much
// (killed); the sshd monitor calls them from its authentication step.
// Messages follow OpenSSH: "Unsafe AuthorizedKeysCommand \"/x\": bad
// ownership or modes for directory /opt", "AuthorizedPrincipalsCommand /x
// exited on signal 9". A request without run_as runs nothing.
// AuthorizedKeysCommand without arguments is passed the user's name, as
// OpenSSH's is.
auth_command_result run_authorized_keys_command(const keys_command_request& request);
// Runs nothing without a certificate.
auth_command_result run_authorized_principals_command(const principals_command_request& request);

} // namespace longhaul
