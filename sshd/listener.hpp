// The sshd listener: accepts connections on every ListenAddress, applies
// MaxStartups (with random early drop) and PerSourceMaxStartups, and forks
// one process per connection. It survives anything a client does: client
// bytes are only ever read in the children.
#pragma once

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

    listener(std::vector<int> listen_fds, max_startups ms, source_limit per_source, log_fn log);

    // Accepts until SIGTERM/SIGINT (returns 0) or SIGHUP (returns 1: the caller re-executes).
    // `serve` runs in the forked child; its return value is the child's exit code.
    int run(const serve_fn& serve);

    // MaxStartups decision for `startups` pending connections (exposed for tests).
    static bool should_drop(const max_startups& ms, int startups, std::mt19937& rng);

private:
    struct child {
        int startup_fd = -1;
        std::string block; // source_limit's key while a startup
    };

    void accept_one(int listen_fd, const serve_fn& serve);
    void reap();
    void startup_readable(pid_t pid);
    void end_startup(child& ch);
    void drop(const accepted_connection& c);

    std::vector<int> listen_fds_;
    max_startups max_startups_;
    source_limit per_source_;
    log_fn log_;
    std::map<pid_t, child> children_;
    int startups_ = 0;
    int signal_fd_ = -1;
    std::mt19937 rng_;
};

} // namespace longhaul
