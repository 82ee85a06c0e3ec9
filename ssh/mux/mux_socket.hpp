// The Unix-socket side of multiplexing, below the protocol: connecting to
// and creating ControlPath sockets, whole-frame blocking I/O for the mux
// client, descriptor passing (SCM_RIGHTS, one descriptor and one byte per
// sendmsg, as OpenSSH's mm_send_fd/mm_receive_fd), and the peer's uid.
#pragma once

#include "common/result.hpp"
#include "ssh/mux/mux_messages.hpp"

#include <csignal>
#include <string>
#include <sys/types.h>

namespace longhaul::mux {

// A connected control socket, owned (closed on destruction), in blocking mode.
class control_socket {
public:
    control_socket() = default;
    explicit control_socket(int fd) noexcept : fd_(fd) {}
    control_socket(control_socket&& o) noexcept : interrupt_(o.interrupt_), fd_(o.release()), error_(o.error_) {}
    control_socket& operator=(control_socket&& o) noexcept;
    ~control_socket();

    // connect(2) to `path`; on failure fd() is -1 and error() the errno
    // (ENAMETOOLONG for a path sockaddr_un cannot hold).
    static control_socket connect_to(const std::string& path);

    bool valid() const noexcept { return fd_ >= 0; }
    int fd() const noexcept { return fd_; }
    int error() const noexcept { return error_; }
    int release() noexcept;

    // Whole frames; errc::io_error with error() set, or
    // errc::connection_closed at EOF (EPIPE when writing).
    result<void> send(const message& m);
    result<message> receive();
    // One descriptor with one NUL byte.
    result<void> send_fd(int fd);
    // A receive interrupted by a signal while *flag is set fails with
    // errc::io_error and error() EINTR (ssh's SIGINT/SIGTERM/SIGHUP while
    // it waits for a session to end); other interruptions are retried.
    void interrupt_on(const volatile std::sig_atomic_t* flag) noexcept { interrupt_ = flag; }

private:
    const volatile std::sig_atomic_t* interrupt_ = nullptr;
    int fd_ = -1;
    int error_ = 0;
};

// sockaddr_un's path capacity, its NUL included.
std::size_t max_socket_path();

// Creates the listening socket at `path` as OpenSSH's master does: bound to
// a unique temporary name beside it under umask 0177 (mode 0600), then
// hard-linked into place, which fails if `path` exists, and the temporary
// name removed. Returns the listening descriptor (non-blocking,
// close-on-exec), or -1 with `error` the errno (EEXIST: the path exists).
int listen_control_path(const std::string& path, int& error);

// The effective uid of the process at the other end, or -1.
long peer_uid(int fd);

// Non-blocking receive of one byte carrying one descriptor: the
// descriptor, -1 with errno EAGAIN when nothing has arrived yet, or -1
// with another errno (EPROTO: a byte came without a descriptor; 0: EOF).
int receive_fd(int fd);

} // namespace longhaul::mux
