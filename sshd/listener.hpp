// The sshd listener: accepts connections on every ListenAddress, applies
// PerSourcePenalties, MaxStartups (with random early drop) and
// PerSourceMaxStartups, and forks one process per connection. It survives anything a client does: client
// bytes are only ever read in the children.
#pragma once

#include "sshd/penalty_table.hpp"
#include "sshd/source_limit.hpp"

#include <sys/socket.h>
#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <random>
#include <string>
#include <vector>

namespace longhaul {

struct max_startups {
    int start = 10; // begin dropping at this many unauthenticated connections
    int rate = 30;  // ... with this percent probability, rising linearly
    int full = 100; // ... to 100% at this many
};

struct accepted_connection {
    int fd = -1;
    sockaddr_storage peer{};
    sockaddr_storage local{};
    // The child writes one byte here once the user authenticated ('a'), or
    // 'f' when it ends for too many authentication failures; a child that
    // ends before authenticating writes how it ended (the connection_outcome
    // bytes below) just before it exits.
    int startup_fd = -1;
};

// How a connection ended before authentication, as the connection process
// tells the listener over the startup pipe (OpenSSH's sshd-session says it
// with its exit status: EXIT_LOGIN_GRACE, EXIT_AUTH_ATTEMPTED, ...).
namespace connection_outcome {
inline constexpr char no_auth = 'n';      // no authentication attempted
inline constexpr char auth_failed = 'u';  // at least one attempt failed
inline constexpr char invalid_user = 'i'; // ... and the user does not exist
inline constexpr char grace = 'g';        // LoginGraceTime passed
inline constexpr char crash = 'c';        // the pre-authentication child crashed
} // namespace connection_outcome

// The penalty for what the listener saw of a child that never
// authenticated: its last outcome byte (0: none) and its wait status.
penalty_kind penalty_for(char outcome, int wait_status) noexcept;

// Numeric host and port of a socket address.
std::string address_string(const sockaddr_storage& sa);
int address_port(const sockaddr_storage& sa);

// Opens, binds and listens on "host port" (host may be empty for all).
int open_listen_socket(const std::string& host, int port, int family, std::string& error);

class listener {
public:
    using serve_fn = std::function<int(accepted_connection&)>;
    using log_fn = std::function<void(const std::string&)>;

    listener(std::vector<int> listen_fds, max_startups ms, source_limit per_source, penalty_table penalties,
             log_fn log);

    // Accepts until SIGTERM/SIGINT (returns 0) or SIGHUP (returns 1: the caller re-executes).
    // `serve` runs in the forked child; its return value is the child's exit code.
    int run(const serve_fn& serve);

    // MaxStartups decision for `startups` pending connections (exposed for tests).
    static bool should_drop(const max_startups& ms, int startups, std::mt19937& rng);

private:
    struct child {
        int startup_fd = -1;
        std::string block; // source_limit's key while a startup
        sockaddr_storage peer{};
        bool authenticated = false; // 'a' came: no penalty whatever follows
        char outcome = 0;           // the last connection_outcome byte
    };

    void accept_one(int listen_fd, const serve_fn& serve);
    void reap();
    void startup_readable(pid_t pid);
    void end_startup(child& ch);
    void drop(const accepted_connection& c);
    void drop_penalised(const accepted_connection& c, const std::string& reason);

    std::vector<int> listen_fds_;
    max_startups max_startups_;
    source_limit per_source_;
    penalty_table penalties_;
    log_fn log_;
    std::map<pid_t, child> children_;
    int startups_ = 0;
    int signal_fd_ = -1;
    std::mt19937 rng_;
};

} // namespace longhaul
