// ssh_config(5): reading ~/.ssh/config and /etc/ssh/ssh_config (or -F),
// with Host and Match blocks, Include, first-value-wins precedence, %
// tokens and OpenSSH's defaults, and `ssh -G` output.
//
// Errors follow OpenSSH: a bad line is reported through the log sink
// ("file line N: ...") and counted, reading goes on, and at the end of the
// file load_client_config() throws ssh_config_error("file: terminating, N bad
// configuration options"). Problems OpenSSH treats as fatal at once (an
// unreadable -F file, Include recursion, a failed Match exec) throw
// ssh_config_error right away. The ssh program prints what() and exits 255.
#pragma once

#include "ssh/client_config.hpp"
#include "common/log.hpp"
#include "ssh/tokens.hpp"

#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace longhaul {

// Reading the configuration logs through a log_sink (common/log.hpp):
// what OpenSSH would log (errors, warnings, debug lines).

class ssh_config_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Who is asking and where the files are; tests and the fuzzer inject
// their own. from_system() fills it from getpwuid(getuid()) and
// gethostname(), as ssh does.
struct config_environment {
    std::string home_dir;       // the user's home directory (passwd, not $HOME)
    std::string local_user;     // %u, Match localuser
    std::string uid = "0";      // %i
    std::string local_hostname; // %l (%L is the part before the first '.')
    std::string user_config;    // "~/.ssh/config", expanded
    std::string user_dir;       // "~/.ssh": relative Include paths in user files
    std::string system_config = "/etc/ssh/ssh_config";
    std::string system_dir = "/etc/ssh"; // relative Include paths in system files
    bool check_permissions = true; // "Bad owner or permissions" on user config and Included files
    bool allow_exec = true;        // run Match exec commands ($SHELL -c, else /bin/sh -c)
    bool allow_include = true;     // follow Include (off when fuzzing)
    env_lookup getenv = process_environment();
    home_lookup homes = passwd_homes();

    static config_environment from_system();
    // For tests: everything under `home`, system config `system_config`.
    static config_environment for_home(std::string home, std::string user, std::string system_config);
};

// What load_client_config() needs from the command line besides the
// options already in the client_config.
struct config_request {
    std::string host_arg;                   // the destination host as given
    std::optional<std::string> config_file; // -F; "none" reads no file
    bool have_command = false;              // a remote command was given
};

// Applies one -o option line to `cfg` (first value wins, as for files).
// Errors are logged through `log` (as "command-line line 0: ...") and
// false is returned; ssh then exits 255. Host, Match and Include are
// refused here, as OpenSSH refuses them.
bool apply_option_line(client_config& cfg, std::string_view line, const config_environment& env, const log_sink& log);

// Reads the configuration files into `cfg`, which already holds the
// command-line values, runs the second pass when a "Match final" or
// CanonicalizeHostname asks for it, fills the defaults and finishes the
// values as ssh does before it connects or prints -G: the HostName
// (%h-expanded, lowercased unless an address) replaces cfg.hostname, the
// user and port are filled in, HostKeyAlias is lowercased, RemoteCommand,
// ControlPath, IdentityAgent, ForwardAgent paths, UserKnownHostsFile and
// forwarding socket paths are ~/%/${} expanded and "none" known-hosts lists
// are emptied. IdentityFile and CertificateFile stay as configured: expand
// them with expand_identity_path() when loading keys. Throws ssh_config_error.
void load_client_config(client_config& cfg, const config_request& request, const config_environment& env,
                        const log_sink& log);

// OpenSSH's fill_default_options(): defaults for every unset value and the
// algorithm lists assembled (+, -, ^) against this build's algorithms.
// Called by load_client_config(); throws ssh_config_error when a list comes out
// empty ("fill_default_options: ciphers: invalid argument").
void fill_default_options(client_config& cfg);

// The %-token values of a loaded configuration (%C %L %i %k %l %n %p %d %h %r %u).
connection_tokens make_connection_tokens(const client_config& cfg, const config_environment& env);
// IdentityFile / CertificateFile: ~ then % tokens and ${VAR}, as ssh does
// when it loads the keys. Throws expansion_error.
std::string expand_identity_path(std::string_view path, const client_config& cfg, const config_environment& env);

// ProxyCommand with its tokens (%h %n %p %r, %%) expanded. ssh runs it as
// `$SHELL -c "exec <command>"`. Throws expansion_error.
std::string expand_proxy_command(const client_config& cfg);
// LocalCommand: the client tokens plus %T, the tunnel interface name ("NONE"
// without one). Throws expansion_error.
std::string expand_local_command(const client_config& cfg, const config_environment& env, std::string_view tunnel);

// Settings of a loaded configuration that this ssh does not carry out yet,
// one line each ("GSSAPIAuthentication yes: not supported yet, ...").
// Logged at debug1: Debian's own ssh_config sets GSSAPIAuthentication.
std::vector<std::string> unsupported_settings(const client_config& cfg);

// `ssh -G`: lowercase "keyword value" lines in OpenSSH's order and formats,
// each ending in '\n', for a loaded configuration.
std::string dump_config(const client_config& cfg);

} // namespace longhaul
