#include "ssh/mux/mux_socket.hpp"

#include "common/temp_name.hpp"

#include <cerrno>
#include <cstring>
#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

namespace longhaul::mux {

namespace {

bool fill_address(const std::string& path, sockaddr_un& sun)
{
    std::memset(&sun, 0, sizeof sun);
    sun.sun_family = AF_UNIX;
    if (path.size() >= sizeof sun.sun_path)
        return false;
    std::memcpy(sun.sun_path, path.data(), path.size());
    return true;
}

bool write_all(int fd, const std::uint8_t* p, std::size_t n, int& error)
{
    while (n > 0) {
        const ssize_t w = ::send(fd, p, n, MSG_NOSIGNAL);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            error = errno;
            return false;
        }
        p += w;
        n -= static_cast<std::size_t>(w);
    }
    return true;
}

// 0: done; 1: EOF; -1: error (errno).
int read_all(int fd, std::uint8_t* p, std::size_t n, const volatile std::sig_atomic_t* interrupt)
{
    while (n > 0) {
        const ssize_t r = ::read(fd, p, n);
        if (r == 0)
            return 1;
        if (r < 0) {
            if (errno == EINTR && (interrupt == nullptr || *interrupt == 0))
                continue;
            return -1;
        }
        p += r;
        n -= static_cast<std::size_t>(r);
    }
    return 0;
}

} // namespace

control_socket& control_socket::operator=(control_socket&& o) noexcept
{
    if (this != &o) {
        interrupt_ = o.interrupt_;
        if (fd_ >= 0)
            ::close(fd_);
        error_ = o.error_;
        fd_ = o.release();
    }
    return *this;
}

control_socket::~control_socket()
{
    if (fd_ >= 0)
        ::close(fd_);
}

int control_socket::release() noexcept
{
    const int fd = fd_;
    fd_ = -1;
    return fd;
}

control_socket control_socket::connect_to(const std::string& path)
{
    control_socket s;
    sockaddr_un sun{};
    if (!fill_address(path, sun)) {
        s.error_ = ENAMETOOLONG;
        return s;
    }
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        s.error_ = errno;
        return s;
    }
    if (::connect(fd, reinterpret_cast<const sockaddr*>(&sun), sizeof sun) != 0) {
        s.error_ = errno;
        ::close(fd);
        return s;
    }
    s.fd_ = fd;
    return s;
}

result<void> control_socket::send(const message& m)
{
    const bytes f = frame(m);
    if (!write_all(fd_, f.data(), f.size(), error_))
        return error_ == EPIPE ? errc::connection_closed : errc::io_error;
    return {};
}

result<message> control_socket::receive()
{
    frame_reader fr;
    std::uint8_t buf[4096];
    while (!fr.complete()) {
        const std::size_t n = std::min(fr.wanted(), sizeof buf);
        const int r = read_all(fd_, buf, n, interrupt_);
        if (r == 1)
            return errc::connection_closed;
        if (r < 0) {
            error_ = errno;
            return errno == ECONNRESET ? errc::connection_closed : errc::io_error;
        }
        if (auto fed = fr.feed(byte_span(buf, n)); !fed)
            return fed.error();
    }
    return decode(fr.body());
}

result<void> control_socket::send_fd(int fd)
{
    std::uint8_t byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))] = {};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    cmsghdr* c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(c), &fd, sizeof fd);
    for (;;) {
        const ssize_t n = ::sendmsg(fd_, &mh, MSG_NOSIGNAL);
        if (n == 1)
            return {};
        if (n < 0 && errno == EINTR)
            continue;
        error_ = n < 0 ? errno : EIO;
        return errc::io_error;
    }
}

std::size_t max_socket_path()
{
    return sizeof(sockaddr_un{}.sun_path);
}

int listen_control_path(const std::string& path, int& error)
{
    // A random suffix, as OpenSSH's "<path>.XXXXXXXXXXXXXXXX": the bind
    // happens under a name nobody else uses, and link() makes the final
    // name appear atomically, or fail if it exists.
    const std::string tmp = fill_temp_template(path + ".XXXXXXXXXXXXXXXX", 0);
    sockaddr_un sun{};
    if (!fill_address(tmp, sun) || !fill_address(path, sun)) {
        error = ENAMETOOLONG;
        return -1;
    }
    (void)fill_address(tmp, sun);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) {
        error = errno;
        return -1;
    }
    const mode_t old = ::umask(0177);
    const int b = ::bind(fd, reinterpret_cast<const sockaddr*>(&sun), sizeof sun);
    const int bind_errno = errno;
    ::umask(old);
    if (b != 0 || ::listen(fd, 64) != 0) {
        error = b != 0 ? bind_errno : errno;
        ::close(fd);
        ::unlink(tmp.c_str());
        return -1;
    }
    if (::link(tmp.c_str(), path.c_str()) != 0) {
        error = errno;
        ::unlink(tmp.c_str());
        ::close(fd);
        return -1;
    }
    ::unlink(tmp.c_str());
    return fd;
}

long peer_uid(int fd)
{
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0)
        return -1;
    return static_cast<long>(cred.uid);
}

int receive_fd(int fd)
{
    std::uint8_t byte = 0;
    iovec iov{&byte, 1};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * 4)] = {};
    msghdr mh{};
    mh.msg_iov = &iov;
    mh.msg_iovlen = 1;
    mh.msg_control = control;
    mh.msg_controllen = sizeof control;
    ssize_t n;
    do {
        n = ::recvmsg(fd, &mh, MSG_CMSG_CLOEXEC | MSG_DONTWAIT);
    } while (n < 0 && errno == EINTR);
    if (n < 0)
        return -1;
    if (n == 0) {
        errno = 0;
        return -1;
    }
    // Every descriptor that came is taken, so that none leaks; one is used.
    int got = -1;
    for (cmsghdr* c = CMSG_FIRSTHDR(&mh); c != nullptr; c = CMSG_NXTHDR(&mh, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
            continue;
        const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (std::size_t i = 0; i < count; ++i) {
            int d;
            std::memcpy(&d, CMSG_DATA(c) + i * sizeof(int), sizeof d);
            if (got < 0)
                got = d;
            else
                ::close(d);
        }
    }
    if (got < 0 || (mh.msg_flags & MSG_CTRUNC) != 0) {
        if (got >= 0)
            ::close(got);
        errno = EPROTO;
        return -1;
    }
    return got;
}

} // namespace longhaul::mux
