#include "sshd/privsep/monitor_channel.hpp"

#include "sshd/privsep/monitor_messages.hpp"

#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

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

result<void> monitor_channel::send(byte_span message)
{
    if (fd_ < 0)
        return errc::connection_closed;
    for (;;) {
        const ssize_t n = ::send(fd_, message.data(), message.size(), MSG_NOSIGNAL);
        if (n == static_cast<ssize_t>(message.size()))
            return {};
        if (n < 0 && errno == EINTR)
            continue;
        return n < 0 && (errno == EPIPE || errno == ECONNRESET) ? errc::connection_closed : errc::io_error;
    }
}

result<bytes> monitor_channel::receive(std::optional<std::chrono::steady_clock::time_point> deadline)
{
    if (fd_ < 0)
        return errc::connection_closed;
    for (;;) {
        int timeout_ms = -1;
        if (deadline) {
            const auto left = *deadline - std::chrono::steady_clock::now();
            if (left <= std::chrono::steady_clock::duration::zero())
                return errc::timeout;
            timeout_ms = static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count());
        }
        pollfd p{fd_, POLLIN, 0};
        const int ready = ::poll(&p, 1, timeout_ms);
        if (ready < 0 && errno != EINTR)
            return errc::io_error;
        if (ready <= 0)
            continue;
        bytes buf(max_monitor_message);
        // MSG_TRUNC: the datagram's real length, so an oversized one is
        // refused rather than read cut short.
        const ssize_t n = ::recv(fd_, buf.data(), buf.size(), MSG_TRUNC);
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return errno == ECONNRESET ? errc::connection_closed : errc::io_error;
        }
        if (n == 0)
            return errc::connection_closed; // an empty datagram is never sent: the peer closed
        if (static_cast<std::size_t>(n) > buf.size())
            return errc::too_large;
        buf.resize(static_cast<std::size_t>(n));
        return buf;
    }
}

} // namespace longhaul::privsep
