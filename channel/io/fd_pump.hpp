// Moving bytes between local descriptors (pipes, ttys, sockets, regular
// files) and channels, with backpressure both ways:
//
//  fd_source: descriptor -> channel. Reads only what the peer's window and
//  the transport's output queue allow, straight into the next packet.
//  fd_sink:   channel -> descriptor. Returns window credit only for bytes the
//  descriptor actually took, so a slow reader slows the sender.
//
// Descriptors epoll cannot watch (regular files, /dev/null) are always
// ready: they are read and written directly.
#pragma once

#include "channel/io/connection_runner.hpp"

#include <functional>
#include <memory>

namespace longhaul {

// Opens a private non-blocking description of a shared descriptor (stdin,
// stdout of the ssh client) so that O_NONBLOCK does not leak into the
// parent's terminal or pipe; falls back to the descriptor itself (and puts
// it in non-blocking mode, restored by restore_blocking()).
int private_nonblocking_fd(int fd, bool for_write);
void restore_blocking(int fd);

class fd_source : public std::enable_shared_from_this<fd_source> {
public:
    // `extended`: 0 for channel data, 1 to send as stderr.
    fd_source(connection_runner& runner, channel_id id, int fd, std::uint32_t extended, bool owns_fd);
    ~fd_source();

    // Optional transform of the bytes read (escape sequences on a tty).
    std::function<void(byte_span in, bytes& out)> filter;
    // Called once at EOF (or a read error, with `error` set).
    std::function<void(int error)> on_eof;

    void start();
    // Read as much as the window and the output queue allow now.
    void pump();
    // The writer is gone (a session's process exited): read what is left
    // and then report EOF at the first read that would block, instead of
    // waiting for an EOF that other holders of the descriptor may delay.
    void finish_when_drained();
    // Called from the filter: what it has output so far is sent, then the
    // source ends as at EOF (on_eof) and reads no more (ssh's ~&).
    void end_after_filter() noexcept { end_after_filter_ = true; }
    void stop();
    bool finished() const noexcept { return finished_; }
    std::uint64_t bytes_read() const noexcept { return bytes_; }

private:
    void wait_readable();
    void finish(int error);

    connection_runner& runner_;
    channel_id id_;
    int fd_;
    std::uint32_t extended_;
    bool owns_fd_;
    bool pollable_ = true;
    bool waiting_ = false;
    bool finished_ = false;
    bool stopped_ = false;
    bool drain_only_ = false;
    bool end_after_filter_ = false;
    // The last read found the descriptor empty: what arrives next is a
    // request or a keystroke, not the continuation of bulk data.
    bool idle_ = true;
    bytes filtered_;
    std::uint64_t bytes_ = 0;
    struct watcher;
    std::unique_ptr<watcher> watcher_;
};

class fd_sink : public std::enable_shared_from_this<fd_sink> {
public:
    fd_sink(connection_runner& runner, channel_id id, int fd, bool owns_fd);
    ~fd_sink();

    // Called when, after eof(), everything was written and the fd closed.
    std::function<void()> on_drained;
    // Called once if the descriptor stops taking data (EPIPE etc.).
    std::function<void(int error)> on_error;

    // Data from the channel; window credit follows what the fd accepts.
    void write(byte_span data);
    // No more data: close the descriptor once the backlog is written.
    void eof();
    bool drained() const noexcept { return pending_.empty(); }
    std::size_t backlog() const noexcept { return pending_.size(); }
    bool closed() const noexcept { return fd_ < 0; }

private:
    void flush();
    void wait_writable();
    std::size_t write_some(byte_span data, int& error);
    void close_fd();
    void broken(int error);

    connection_runner& runner_;
    channel_id id_;
    int fd_;
    bool owns_fd_;
    bool pollable_ = true;
    bool waiting_ = false;
    bool eof_ = false;
    bool failed_ = false;
    bytes pending_;
    std::size_t pending_off_ = 0;
    struct watcher;
    std::unique_ptr<watcher> watcher_;
};

} // namespace longhaul
