#include "sshd/privsep/monitor_channel.hpp"

#include "sshd/privsep/monitor_messages.hpp"

#include <poll.h>
#include <sys/uio.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace longhaul::privsep {

std::optional<socket_pair> make_monitor_socketpair()
{
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, fds) != 0)
        return std::nullopt;
    // A datagram must fit the sender's buffer whole (EMSGSIZE otherwise),
    // and the hand-off's can reach max_monitor_message. Root may go past
    // net.core.wmem_max; without root the kernel's cap applies and only a
    // client that floods input behind its last authentication request
    // makes the hand-off too large (its connection then ends).
    const int size = static_cast<int>(2 * max_monitor_message);
    for (int fd : fds)
        if (::setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &size, sizeof size) != 0)
            (void)::setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof size);
    return socket_pair{fds[0], fds[1]};
}

monitor_channel::~monitor_channel() { close(); }

void monitor_channel::close() noexcept
{
    if (fd_ >= 0)
        ::close(fd_);
    fd_ = -1;
}

namespace {

// Milliseconds left until `deadline` for poll(2): -1 without one, 0 past it.
int poll_timeout(std::optional<std::chrono::steady_clock::time_point> deadline)
{
    if (!deadline)
        return -1;
    const auto left = *deadline - std::chrono::steady_clock::now();
    if (left <= std::chrono::steady_clock::duration::zero())
        return 0;
    return static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
}

bool past(std::optional<std::chrono::steady_clock::time_point> deadline)
{
    return deadline && std::chrono::steady_clock::now() >= *deadline;
}

} // namespace

result<void> monitor_channel::send(byte_span message, std::optional<std::chrono::steady_clock::time_point> deadline)
{
    if (fd_ < 0)
        return errc::connection_closed;
    for (;;) {
        // Never blocking in send(): a peer that stops reading fills the
        // buffer, and the wait below has the deadline.
        const ssize_t n = ::send(fd_, message.data(), message.size(), MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n == static_cast<ssize_t>(message.size()))
            return {};
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (past(deadline))
                return errc::timeout;
            pollfd p{fd_, POLLOUT, 0};
            if (::poll(&p, 1, poll_timeout(deadline)) < 0 && errno != EINTR)
                return errc::io_error;
            continue;
        }
        return n < 0 && (errno == EPIPE || errno == ECONNRESET) ? errc::connection_closed : errc::io_error;
    }
}

result<void> monitor_channel::send_with_fds(byte_span message, const std::vector<int>& fds)
{
    if (fd_ < 0)
        return errc::connection_closed;
    if (fds.empty() || fds.size() > max_passed_fds)
        return errc::invalid_argument;
    iovec iov{const_cast<std::uint8_t*>(message.data()), message.size()};
    alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * max_passed_fds)] = {};
    msghdr msg{};
    msg.msg_iov = &iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control;
    msg.msg_controllen = CMSG_SPACE(sizeof(int) * fds.size());
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int) * fds.size());
    std::memcpy(CMSG_DATA(c), fds.data(), sizeof(int) * fds.size());
    for (;;) {
        // Blocking is fine here: a reply the user's process asked for and
        // waits to read.
        const ssize_t n = ::sendmsg(fd_, &msg, MSG_NOSIGNAL);
        if (n == static_cast<ssize_t>(message.size()))
            return {};
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 && (errno == EPIPE || errno == ECONNRESET) ? errc::connection_closed : errc::io_error;
    }
}

result<bytes> monitor_channel::receive(std::optional<std::chrono::steady_clock::time_point> deadline)
{
    std::vector<int> none;
    return receive_with_fds(none, 0, deadline);
}

result<bytes> monitor_channel::receive_with_fds(std::vector<int>& fds, std::size_t max_fds,
                                                std::optional<std::chrono::steady_clock::time_point> deadline)
{
    if (fd_ < 0)
        return errc::connection_closed;
    max_fds = std::min(max_fds, max_passed_fds);
    for (;;) {
        if (past(deadline))
            return errc::timeout;
        pollfd p{fd_, POLLIN, 0};
        const int ready = ::poll(&p, 1, poll_timeout(deadline));
        if (ready < 0 && errno != EINTR)
            return errc::io_error;
        if (ready <= 0)
            continue;
        // The datagram's real length first (MSG_PEEK | MSG_TRUNC), so the
        // buffer fits it and an oversized one is refused rather than read
        // cut short. An empty datagram is never sent: 0 means the peer closed.
        std::uint8_t probe = 0;
        const ssize_t len = ::recv(fd_, &probe, 1, MSG_PEEK | MSG_TRUNC | MSG_DONTWAIT);
        if (len < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK)
                continue;
            return errno == ECONNRESET ? errc::connection_closed : errc::io_error;
        }
        if (len == 0) {
            (void)::recv(fd_, &probe, 1, MSG_DONTWAIT);
            return errc::connection_closed;
        }
        if (static_cast<std::size_t>(len) > max_monitor_message) {
            (void)::recv(fd_, &probe, 1, MSG_DONTWAIT); // drops the datagram (and any descriptors)
            return errc::too_large;
        }
        bytes buf(static_cast<std::size_t>(len));
        iovec iov{buf.data(), buf.size()};
        alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int) * max_passed_fds)] = {};
        msghdr msg{};
        msg.msg_iov = &iov;
        msg.msg_iovlen = 1;
        // Without room for descriptors the kernel closes any that came.
        msg.msg_control = max_fds > 0 ? control : nullptr;
        msg.msg_controllen = max_fds > 0 ? CMSG_SPACE(sizeof(int) * max_fds) : 0;
        const ssize_t n = ::recvmsg(fd_, &msg, MSG_DONTWAIT | MSG_CMSG_CLOEXEC);
        if (n != len)
            return errc::io_error;
        std::vector<int> got;
        for (cmsghdr* c = CMSG_FIRSTHDR(&msg); c != nullptr; c = CMSG_NXTHDR(&msg, c)) {
            if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                continue;
            const std::size_t count = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
            for (std::size_t i = 0; i < count; ++i) {
                int fd = -1;
                std::memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
                got.push_back(fd);
            }
        }
        // Descriptors beyond what the caller takes were closed by the
        // kernel: for receive() that is the point; otherwise the message
        // is not what an honest sender sends.
        if ((max_fds > 0 && (msg.msg_flags & MSG_CTRUNC) != 0) || got.size() > max_fds) {
            for (int fd : got)
                ::close(fd);
            return errc::malformed;
        }
        fds.insert(fds.end(), got.begin(), got.end());
        return buf;
    }
}

} // namespace longhaul::privsep
