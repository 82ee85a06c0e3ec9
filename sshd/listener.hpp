// The sshd listener: accepts connections on every ListenAddress, applies
// MaxStartups (with random early drop) and per-source penalties, and forks
// one process per connection. It survives anything a client does: client
// bytes are only ever read in the children.
#pragma once

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

// sshd_config PerSourcePenalties, reduced to what the listener needs.
struct source_penalties {
    bool enabled = false;
    std::chrono::seconds noauth{1};    // connection ended without authenticating
    std::chrono::seconds authfail{5};  // too many authentication failures
    std::chrono::seconds max{600};
    std::vector<std::string> exempt; // address/CIDR patterns
};

struct accepted_connection {
    int fd = -1;
    sockaddr_storage peer{};
    sockaddr_storage local{};
    // The child writes one byte here once the user authenticated ('a'), or
    // 'f' when it ends for too many authentication failures.
    int startup_fd = -1;
};

// Numeric host and port of a socket address.
std::string address_string(const sockaddr_storage& sa);
int address_port(const sockaddr_storage& sa);

// Opens, binds and listens on "host port" (host may be empty for all).
int open_listen_socket(const std::string& host, int port, int family, std::string& error);

class listener {
public:
    using serve_fn = std::function<int(accepted_connection&)>;
    using log_fn = std::function<void(const std::string&)>;

    listener(std::vector<int> listen_fds, max_startups ms, source_penalties penalties, log_fn log);

    // Accepts until SIGTERM/SIGINT (returns 0) or SIGHUP (returns 1: the caller re-executes).
    // `serve` runs in the forked child; its return value is the child's exit code.
    int run(const serve_fn& serve);

    // MaxStartups decision for `startups` pending connections (exposed for tests).
    static bool should_drop(const max_startups& ms, int startups, std::mt19937& rng);

private:
    struct child {
        int startup_fd = -1;
        std::string source;
        bool authenticated = false;
        bool auth_failed = false;
    };

    void accept_one(int listen_fd, const serve_fn& serve);
    void reap();
    void startup_readable(pid_t pid);
    bool penalised(const std::string& source);
    void penalise(const std::string& source, std::chrono::seconds d);

    std::vector<int> listen_fds_;
    max_startups max_startups_;
    source_penalties penalties_;
    log_fn log_;
    std::map<pid_t, child> children_;
    int startups_ = 0;
    int signal_fd_ = -1;
    std::mt19937 rng_;
    std::map<std::string, std::chrono::steady_clock::time_point> penalty_until_;
};

} // namespace longhaul
