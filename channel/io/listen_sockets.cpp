#include "channel/io/listen_sockets.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace longhaul {

namespace asio = boost::asio;

namespace {

// "[127.0.0.1]:8080", as OpenSSH's bind messages print an address.
std::string bracketed(const sockaddr* sa, socklen_t len)
{
    char host[NI_MAXHOST];
    char serv[NI_MAXSERV];
    if (::getnameinfo(sa, len, host, sizeof host, serv, sizeof serv, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return "?";
    return std::string("[") + host + "]:" + serv;
}

int bound_port(int fd)
{
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    if (::getsockname(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0)
        return 0;
    if (ss.ss_family == AF_INET)
        return ntohs(reinterpret_cast<sockaddr_in*>(&ss)->sin_port);
    if (ss.ss_family == AF_INET6)
        return ntohs(reinterpret_cast<sockaddr_in6*>(&ss)->sin6_port);
    return 0;
}

} // namespace

std::optional<std::pair<std::string, int>> peer_address(int fd)
{
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    char host[NI_MAXHOST];
    char serv[NI_MAXSERV];
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) != 0 ||
        (ss.ss_family != AF_INET && ss.ss_family != AF_INET6) ||
        ::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, serv, sizeof serv,
                      NI_NUMERICHOST | NI_NUMERICSERV) != 0)
        return std::nullopt;
    return std::make_pair(std::string(host), std::atoi(serv));
}

tcp_listen_result listen_tcp(const forward::bind_address& where, int port)
{
    tcp_listen_result out;
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = where.wildcard ? AI_PASSIVE : 0;
    if (where.address)
        hints.ai_flags |= AI_ADDRCONFIG;
    addrinfo* res = nullptr;
    const std::string service = std::to_string(port);
    const int gai = ::getaddrinfo(where.address ? where.address->c_str() : nullptr, service.c_str(), &hints, &res);
    if (gai != 0) {
        out.errors.push_back("getaddrinfo(" + where.address.value_or("NULL") + "): " + ::gai_strerror(gai));
        return out;
    }
    for (addrinfo* ai = res; ai != nullptr; ai = ai->ai_next) {
        if (ai->ai_family != AF_INET && ai->ai_family != AF_INET6)
            continue;
        // Port 0: the port the first address got, for the others too.
        if (port == 0 && out.port != 0) {
            if (ai->ai_family == AF_INET)
                reinterpret_cast<sockaddr_in*>(ai->ai_addr)->sin_port = htons(static_cast<std::uint16_t>(out.port));
            else
                reinterpret_cast<sockaddr_in6*>(ai->ai_addr)->sin6_port =
                    htons(static_cast<std::uint16_t>(out.port));
        }
        const int fd = ::socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
        if (fd < 0)
            continue;
        const int one = 1;
        ::setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ai->ai_family == AF_INET6)
            ::setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
            const int err = errno;
            // OpenSSH says nothing of an IPv6 loopback the machine lacks.
            if (!(ai->ai_family == AF_INET6 && err == EADDRNOTAVAIL))
                (ai->ai_next == nullptr ? out.errors : out.verbose)
                    .push_back("bind " + bracketed(ai->ai_addr, ai->ai_addrlen) + ": " + std::strerror(err));
            ::close(fd);
            continue;
        }
        if (out.port == 0)
            out.port = bound_port(fd);
        out.fds.push_back(fd);
    }
    ::freeaddrinfo(res);
    return out;
}

int listen_unix(const std::string& path, unsigned mask, bool unlink_first, std::string& error)
{
    sockaddr_un sun{};
    if (path.size() >= sizeof sun.sun_path) {
        error = "path too long: " + path;
        return -1;
    }
    sun.sun_family = AF_UNIX;
    std::memcpy(sun.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        error = std::string("socket: ") + std::strerror(errno);
        return -1;
    }
    if (unlink_first)
        ::unlink(path.c_str());
    const mode_t old = ::umask(mask);
    const int rc = ::bind(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun);
    const int err = errno;
    ::umask(old);
    if (rc != 0 || ::listen(fd, 128) != 0) {
        error = "bind [" + path + "]: " + std::strerror(rc != 0 ? err : errno);
        ::close(fd);
        return -1;
    }
    return fd;
}

struct fd_listener::state {
    state(asio::io_context& io, int fd) : d(io, fd) {}
    asio::posix::stream_descriptor d;
    std::string path;
    std::function<void(int)> on_accept;
};

fd_listener::fd_listener(asio::io_context& io, int fd, std::string unlink_path, std::function<void(int)> on_accept)
    : state_(std::make_shared<state>(io, fd))
{
    state_->path = std::move(unlink_path);
    state_->on_accept = std::move(on_accept);
    wait();
}

fd_listener::~fd_listener() { close(); }

void fd_listener::close()
{
    if (!state_->d.is_open())
        return;
    boost::system::error_code ignored;
    state_->d.close(ignored); // the listening descriptor is never duplicated
    if (!state_->path.empty())
        ::unlink(state_->path.c_str());
}

void fd_listener::wait() { arm(state_); }

// Static, on the state alone: a callback may destroy the fd_listener.
void fd_listener::arm(const std::shared_ptr<state>& st)
{
    std::weak_ptr<state> weak = st;
    st->d.async_wait(asio::posix::stream_descriptor::wait_read, [weak](const boost::system::error_code& ec) {
        auto s = weak.lock();
        if (!s || ec || !s->d.is_open())
            return;
        for (;;) {
            const int fd = ::accept4(s->d.native_handle(), nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK);
            if (fd < 0)
                break;
            s->on_accept(fd);
            if (!s->d.is_open())
                return; // closed from the callback
        }
        arm(s);
    });
}

} // namespace longhaul
