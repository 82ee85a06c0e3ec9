// The master's side of multiplexing, on the event loop: the listening
// ControlPath socket (accepting only the same user or root, as OpenSSH's
// master) and one control_client per mux client connection, which sends
// the master's HELLO, checks the client's, reads frames without reading
// ahead, collects the descriptors NEW_SESSION (3) and NEW_STDIO_FWD (2)
// pass after themselves, and hands each request up. What a request does
// is the ssh client's business (ssh/client_mux.cpp).
#pragma once

#include "common/log.hpp"
#include "ssh/mux/mux_messages.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::mux {

// Descriptors received from a client; closed on destruction unless released.
class passed_fds {
public:
    passed_fds() = default;
    passed_fds(passed_fds&& o) noexcept : fds_(std::move(o.fds_)) { o.fds_.clear(); }
    passed_fds& operator=(passed_fds&& o) noexcept;
    ~passed_fds();
    void add(int fd) { fds_.push_back(fd); }
    std::size_t size() const noexcept { return fds_.size(); }
    int operator[](std::size_t i) const noexcept { return fds_[i]; }
    // Ownership moves to the caller.
    std::vector<int> release() noexcept;

private:
    std::vector<int> fds_;
};

class control_client : public std::enable_shared_from_this<control_client> {
public:
    control_client(boost::asio::io_context& io, int fd, std::uint32_t id, logger& log);
    ~control_client();

    // A request after the HELLO exchange, with the descriptors it passed.
    std::function<void(const message& m, passed_fds fds)> on_request;
    // The client went away or broke the protocol; called once.
    std::function<void()> on_closed;

    void start();
    void send(const message& m);
    // Written at once, best effort, ahead of anything queued: the master's
    // reply to TERMINATE, which it sends just before it exits.
    void send_now(const message& m);
    // While paused no further request is read (OpenSSH's mux_pause: a
    // session's reply is pending).
    void pause() noexcept { paused_ = true; }
    void resume();
    // Closes once what was sent is written.
    void close_after_output();
    void close();
    std::uint32_t id() const noexcept { return id_; }
    bool closed() const noexcept { return closed_; }

private:
    void wait_readable();
    void on_readable();
    bool read_frame();   // false: wait for more, or closed
    bool read_fds();
    void dispatch();
    void write_next();

    boost::asio::posix::stream_descriptor sock_;
    std::uint32_t id_;
    logger& log_;
    frame_reader reader_;
    bool hello_seen_ = false;
    bool paused_ = false;
    bool waiting_ = false;
    bool closed_ = false;
    bool close_when_written_ = false;
    bool writing_ = false;
    // A request whose descriptors are still arriving.
    std::optional<message> pending_;
    std::size_t fds_wanted_ = 0;
    passed_fds fds_;
    std::deque<bytes> out_;
};

class master_listener {
public:
    master_listener(boost::asio::io_context& io, int listen_fd, std::string path, logger& log);
    ~master_listener(); // stop()

    std::function<void(std::shared_ptr<control_client>)> on_client;
    void start();
    // Stops accepting, closes the socket and removes the path (once).
    void stop();
    bool listening() const noexcept { return listening_; }
    const std::string& path() const noexcept { return path_; }

private:
    void accept_next();

    boost::asio::io_context& io_;
    boost::asio::posix::stream_descriptor sock_;
    std::string path_;
    logger& log_;
    bool listening_ = true;
    std::uint32_t next_id_ = 0;
};

} // namespace longhaul::mux
