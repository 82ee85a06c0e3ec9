// The ssh command line, parsed as OpenSSH 9.2's ssh parses it: BSD getopt
// (clustered flags, "-p22" and "-p 22", "--", no reordering), options
// accepted again after the destination, "[user@]host" and
// "ssh://[user@]host[:port]" destinations, then the remote command words.
//
// Flags and -o lines land in client_options::config with OpenSSH's
// precedence among themselves (some flags overwrite, -p/-l/-o set only
// what is still unset); load_client_config() then fills in the files.
#pragma once

#include "ssh/client_config.hpp"
#include "common/log.hpp"
#include "ssh/ssh_config.hpp"

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace longhaul {

// Print what() (when not empty) and then usage_text() to stderr; exit 255.
class usage_error : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// Print what() (one or more lines) to stderr; exit 255. `logged` says how
// OpenSSH prints it: through its logger (fatal()/error(), lines ending in
// "\r\n" on stderr and silenced by -q) or with fprintf ("\n", always).
class command_line_error : public std::runtime_error {
public:
    explicit command_line_error(const std::string& what, bool logged = true) : std::runtime_error(what), logged_(logged) {}
    bool logged() const noexcept { return logged_; }

private:
    bool logged_;
};

// OpenSSH's usage text, ending in '\n'.
std::string_view usage_text() noexcept;

enum class command_line_action {
    connect, // the usual case (also with -G: see dump_config)
    version, // -V: print the version to stderr and exit 0
    query,   // -Q: print query_lines, one per line, and exit 0
};

enum class mux_command { none, check, forward, exit, stop, cancel, proxy }; // -O

struct client_options {
    command_line_action action = command_line_action::connect;
    std::vector<std::string> query_lines; // -Q result (query_algorithms())

    std::string host;                       // the destination host as given
    std::vector<std::string> command_words; // remote command words, as given
    std::string command;                    // the words joined by single spaces
    bool have_command() const { return !command_words.empty(); }

    std::optional<std::string> config_file; // -F
    bool dump_config = false;               // -G
    int verbose = 0;                        // number of effective -v
    bool use_syslog = false;                // -y
    std::optional<std::string> log_file;    // -E
    mux_command mux = mux_command::none;    // -O
    std::vector<std::string> option_lines;  // -o lines, in order (already applied)

    // Option letters seen, in order (with repeats): lets the caller refuse
    // features it does not have yet (-L -R -D -W -J -M -S -O -A -X -Y -w -I).
    std::string flags_seen;
    bool saw(char flag) const { return flags_seen.find(flag) != std::string::npos; }

    // The command line's share of the configuration.
    client_config config;

    // Printed to stderr as they are, whatever the log level (OpenSSH writes
    // them with fprintf): "Warning: Identity file x not accessible: ...".
    std::vector<std::string> warnings;
    // Messages from -o lines, to print according to the log level.
    std::vector<std::pair<log_level, std::string>> log_messages;

    // What load_client_config() needs besides `config`.
    config_request request() const { return {host, config_file, have_command()}; }
};

// `args` excludes argv[0]. `env` gives the home directory for -i ~ paths.
// Throws usage_error or command_line_error.
client_options parse_command_line(const std::vector<std::string>& args, const config_environment& env);
client_options parse_command_line(int argc, const char* const* argv, const config_environment& env);

} // namespace longhaul
