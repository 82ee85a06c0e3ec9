// One end of the socketpair between sshd's pre-authentication child and
// its monitor: whole messages (SOCK_SEQPACKET datagrams) sent and received
// with waits that can have a deadline.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <chrono>
#include <optional>
#include <vector>

namespace longhaul::privsep {

// A connected SOCK_SEQPACKET pair, close-on-exec; nullopt with errno set.
struct socket_pair {
    int monitor_end = -1;
    int child_end = -1;
};
std::optional<socket_pair> make_monitor_socketpair();

// The most descriptors one message carries (a pty's master and slave).
inline constexpr std::size_t max_passed_fds = 2;

class monitor_channel {
public:
    // Takes ownership of `fd`.
    explicit monitor_channel(int fd) noexcept : fd_(fd) {}
    ~monitor_channel();
    monitor_channel(const monitor_channel&) = delete;
    monitor_channel& operator=(const monitor_channel&) = delete;

    int fd() const noexcept { return fd_; }
    // errc::connection_closed when the other end is gone, errc::timeout
    // when it has not made room for the message by `deadline`.
    result<void> send(byte_span message, std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
    // The next message. errc::connection_closed at the other end's exit,
    // errc::timeout past `deadline`, errc::too_large for a datagram over
    // max_monitor_message (dropped).
    result<bytes> receive(std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
    // send() with descriptors attached (SCM_RIGHTS); the caller keeps its
    // copies. Only the root parent passes descriptors (to the user's
    // process); receive() drops any that come with a message.
    result<void> send_with_fds(byte_span message, const std::vector<int>& fds);
    // receive() that also takes up to `max_fds` attached descriptors
    // (close-on-exec), appended to `fds`; a message with more is refused
    // (errc::malformed) and its descriptors closed.
    result<bytes> receive_with_fds(std::vector<int>& fds, std::size_t max_fds,
                                   std::optional<std::chrono::steady_clock::time_point> deadline = std::nullopt);
    // Closes the descriptor now.
    void close() noexcept;

private:
    int fd_;
};

} // namespace longhaul::privsep
