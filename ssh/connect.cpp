#include "ssh/connect.hpp"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

namespace longhaul {

namespace {

std::string numeric_host(const sockaddr* sa, socklen_t len, int* port)
{
    char host[NI_MAXHOST] = "", serv[NI_MAXSERV] = "";
    getnameinfo(sa, len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV);
    if (port)
        *port = std::atoi(serv);
    return host;
}

// connect() with a deadline: non-blocking connect, poll, then check SO_ERROR.
int connect_with_timeout(int fd, const sockaddr* sa, socklen_t len, std::chrono::seconds timeout)
{
    if (timeout.count() <= 0)
        return ::connect(fd, sa, len) == 0 ? 0 : errno;
    const int flags = fcntl(fd, F_GETFL);
    fcntl(fd, F_SETFL, flags | O_NONBLOCK);
    int rc = ::connect(fd, sa, len);
    int err = rc == 0 ? 0 : errno;
    if (rc != 0 && errno == EINPROGRESS) {
        pollfd p{fd, POLLOUT, 0};
        rc = ::poll(&p, 1, static_cast<int>(timeout.count() * 1000));
        if (rc == 0) {
            err = ETIMEDOUT;
        } else if (rc < 0) {
            err = errno;
        } else {
            socklen_t elen = sizeof err;
            getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &elen);
        }
    }
    fcntl(fd, F_SETFL, flags);
    return err;
}

} // namespace

result<connected_stream> connect_tcp(const connect_params& p, std::string& error)
{
    addrinfo hints{};
    hints.ai_family = p.family;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV | AI_ADDRCONFIG;
    addrinfo* res = nullptr;
    const std::string service = std::to_string(p.port);
    int rc = getaddrinfo(p.host.c_str(), service.c_str(), &hints, &res);
    if (rc == EAI_ADDRFAMILY || rc == EAI_NONAME) {
        hints.ai_flags &= ~AI_ADDRCONFIG; // loopback-only machines
        rc = getaddrinfo(p.host.c_str(), service.c_str(), &hints, &res);
    }
    if (rc != 0) {
        error = "ssh: Could not resolve hostname " + p.host + ": " + gai_strerror(rc);
        return errc::io_error;
    }
    int last_err = 0;
    for (int attempt = 0; attempt < std::max(1, p.attempts); ++attempt) {
        if (attempt > 0)
            std::this_thread::sleep_for(std::chrono::seconds(1));
        for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
            int fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
            if (fd < 0) {
                last_err = errno;
                continue;
            }
            if (!p.bind_address.empty()) {
                addrinfo bh{};
                bh.ai_family = ai->ai_family;
                bh.ai_socktype = SOCK_STREAM;
                bh.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
                addrinfo* b = nullptr;
                if (getaddrinfo(p.bind_address.c_str(), nullptr, &bh, &b) != 0 ||
                    ::bind(fd, b->ai_addr, b->ai_addrlen) != 0) {
                    error = "ssh: bind " + p.bind_address + ": " + std::strerror(errno);
                    if (b)
                        freeaddrinfo(b);
                    ::close(fd);
                    freeaddrinfo(res);
                    return errc::io_error;
                }
                freeaddrinfo(b);
            }
            last_err = connect_with_timeout(fd, ai->ai_addr, ai->ai_addrlen, p.timeout);
            if (last_err == 0) {
                // Always, not only for ttys as OpenSSH does: with Nagle, a
                // WINDOW_ADJUST waits for the ACK of the previous one, a
                // whole round trip, so a download's window is returned late
                // and its throughput halves. The driver already batches
                // writes, so no small segments are gained by Nagle.
                const int one = 1;
                ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                connected_stream s;
                s.fd = fd;
                s.peer_address = numeric_host(ai->ai_addr, ai->ai_addrlen, &s.peer_port);
                freeaddrinfo(res);
                return s;
            }
            ::close(fd);
        }
    }
    freeaddrinfo(res);
    error = "ssh: connect to host " + p.host + " port " + service + ": " +
            (last_err == ETIMEDOUT ? std::string("Connection timed out") : std::strerror(last_err));
    return errc::io_error;
}

result<connected_stream> connect_proxy_command(const std::string& command, std::string& error)
{
    int sv[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) {
        error = std::string("ssh: socketpair: ") + std::strerror(errno);
        return errc::io_error;
    }
    pid_t pid = fork();
    if (pid < 0) {
        error = std::string("ssh: fork: ") + std::strerror(errno);
        ::close(sv[0]);
        ::close(sv[1]);
        return errc::io_error;
    }
    if (pid == 0) {
        // The proxy talks SSH on its stdin/stdout; stderr stays ours.
        dup2(sv[1], 0);
        dup2(sv[1], 1);
        const char* argv[] = {"sh", "-c", command.c_str(), nullptr};
        execv("/bin/sh", const_cast<char* const*>(argv));
        _exit(127);
    }
    ::close(sv[1]);
    connected_stream s;
    s.fd = sv[0];
    s.proxy_pid = pid;
    s.peer_address = "UNKNOWN";
    s.peer_port = 65535;
    return s;
}

} // namespace longhaul
