// ssh-agent's command line and what it prints (OpenSSH 9.2's main()):
// pure functions, so that messages and statuses are unit-tested.
#pragma once

#include "common/keys/fingerprint.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul::agent {

struct agent_options {
    bool csh = false;         // -c, or $SHELL ending in "csh"
    bool sh = false;          // -s
    bool debug = false;       // -d: foreground, debug log on stderr
    bool foreground = false;  // -D
    bool kill = false;        // -k
    std::string bind_address; // -a (empty: a private directory in $TMPDIR)
    fingerprint_hash hash = fingerprint_hash::sha256; // -E
    long long lifetime = 0;   // -t seconds (0: keys kept until removed)
    // -P: the patterns a provider's canonical path must match (security-key
    // providers and PKCS#11 modules alike).
    std::optional<std::string> allowed_providers;
    // -O no-restrict-websafe: security keys of web origins may sign any
    // data; -O allow-remote-pkcs11: providers may be named over a forwarded
    // (session-bound) connection.
    bool no_restrict_websafe = false;
    bool allow_remote_pkcs11 = false;
    std::vector<std::string> command; // command [arg ...]
};

struct agent_usage_error {
    std::string message; // for stderr, lines ending in newlines
    int status = 1;
};

struct agent_parse_result {
    std::optional<agent_options> options;
    agent_usage_error error;
};

// args: argv without the program name; shell: $SHELL, if set.
agent_parse_result parse_agent_args(const std::vector<std::string>& args, const char* shell);

// The lines that set the variables: SSH_AUTH_SOCK, then SSH_AGENT_PID
// when `pid` is given (not with -d/-D), then "echo Agent pid N;".
std::string environment_lines(bool csh, const std::string& socket, const std::string* pid, long echo_pid);
// -k's lines after killing `pid`.
std::string kill_lines(bool csh, long pid);
// SSH_AGENT_PID checked as strtonum(value, 2, INT_MAX): the pid, or the
// message to print (exit status 1).
struct agent_pid_check {
    long pid = 0;
    std::string error;
};
agent_pid_check parse_agent_pid(const char* value);

// "$TMPDIR/ssh-XXXXXXXXXXXX" (/tmp without TMPDIR) for mkdtemp.
std::string socket_dir_template(const char* tmpdir);

} // namespace longhaul::agent
