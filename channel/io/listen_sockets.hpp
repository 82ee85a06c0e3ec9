// Listening sockets for forwarding, shared by ssh (-L, -D) and sshd
// (tcpip-forward, streamlocal-forward): the addresses a bind_address names
// (channel/forward/forward_policy: GatewayPorts, "localhost" as both
// loopbacks, "" or "*" as every address), port 0 allocated once and reused
// for the other addresses as OpenSSH does, Unix sockets under a umask; and
// an accept loop on the event loop. Error lines are OpenSSH's ("bind
// [127.0.0.1]:8080: Address already in use"); the caller logs them.
#pragma once

#include "channel/forward/forward_policy.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace longhaul {

struct tcp_listen_result {
    std::vector<int> fds;            // listening, non-blocking, close-on-exec
    int port = 0;                    // the port bound (the allocated one for port 0)
    // One line per address that failed. As OpenSSH logs them: a failure on
    // the last address the name resolved to is an error, the ones before
    // it (IPv6 loopback before IPv4) are only verbose.
    std::vector<std::string> errors;
    std::vector<std::string> verbose;
};

// Binds `port` on every address `where` names and listens.
tcp_listen_result listen_tcp(const forward::bind_address& where, int port);

// A Unix-socket listener at `path`, created under umask `mask`, after
// removing an old socket there if `unlink_first`. -1 with `error` set.
int listen_unix(const std::string& path, unsigned mask, bool unlink_first, std::string& error);

// The numeric address and port of an accepted TCP connection's peer, for
// the originator fields of direct-tcpip and forwarded-tcpip; nullopt for
// a Unix socket.
std::optional<std::pair<std::string, int>> peer_address(int fd);

// One listening descriptor and its accept loop: `on_accept` gets each
// connection (non-blocking, close-on-exec) and owns it.
class fd_listener {
public:
    // Takes `fd`; `unlink_path` (a Unix socket's) is removed at the end.
    fd_listener(boost::asio::io_context& io, int fd, std::string unlink_path, std::function<void(int fd)> on_accept);
    ~fd_listener();
    fd_listener(const fd_listener&) = delete;
    fd_listener& operator=(const fd_listener&) = delete;

    void close();

private:
    void wait();
    struct state;
    static void arm(const std::shared_ptr<state>& st);
    std::shared_ptr<state> state_;
};

} // namespace longhaul
