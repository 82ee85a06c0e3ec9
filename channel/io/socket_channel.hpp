// A channel joined to a connected stream socket (TCP or Unix): what every
// forwarding kind carries once its connection exists (sshd's direct-tcpip
// and forwarded-tcpip, ssh's -L, -R, -D and -W). Bytes flow both ways
// through the descriptor pumps, so the window and the output backpressure
// apply as for a session. Half-closes map onto each other, as OpenSSH's
// channels do: the socket's EOF becomes the channel's EOF, and the
// channel's EOF shuts the socket's write side once the backlog is written.
// The channel closes when both directions are done, or at once when the
// socket fails; the peer's CHANNEL_CLOSE drops what is left.
#pragma once

#include "channel/forward/socks.hpp"
#include "channel/io/connection_runner.hpp"
#include "common/log.hpp"

#include <functional>
#include <map>
#include <memory>

namespace longhaul {

class fd_sink;
class fd_source;

class socket_channel : public channel_handler, public std::enable_shared_from_this<socket_channel> {
public:
    // Takes ownership of `fd`, a connected stream socket.
    explicit socket_channel(int fd);
    // Two descriptors instead (ssh -W: stdin and stdout), both owned: the
    // channel's EOF closes `out_fd` once written.
    socket_channel(int in_fd, int out_fd);
    ~socket_channel() override;
    socket_channel(const socket_channel&) = delete;
    socket_channel& operator=(const socket_channel&) = delete;

    // Starts the pumps: after runner.attach(), once the channel is open
    // (accepted here, or confirmed by the peer: on_open_confirmed does it).
    void start();
    // The program is ending: stop reading and writing and close the
    // socket, with no callback and nothing sent on the channel.
    void stop();
    // The local side went away (a mux client that passed the descriptors
    // has gone): as OpenSSH's chan_read_failed and chan_write_failed, the
    // channel sends its EOF and closes, whatever is queued either way
    // dropped. Before the peer's confirmation it closes on it.
    void abandon();

    // The channel is closed both ways and the socket with it: the owner
    // may forget this handler.
    std::function<void()> on_finished;
    // The peer refused the channel we opened (reason, description).
    std::function<void(std::uint32_t reason, std::string_view text)> on_refused;
    // The peer confirmed the channel we opened, before the pumps start (a
    // SOCKS reply goes out here, and bytes read during the handshake);
    // false closes the channel instead.
    std::function<bool()> before_start;

    void on_open_confirmed(byte_span type_specific) override;
    void on_open_failed(std::uint32_t reason, std::string_view text) override;
    void on_data(byte_span data, std::uint32_t extended) override;
    void on_eof() override;
    void on_close() override;
    void on_writable() override;

private:
    void maybe_close();
    void finish();
    void close_socket();

    int fd_;
    int in_fd_ = -1; // the two-descriptor form
    int out_fd_ = -1;
    std::shared_ptr<fd_source> from_socket_;
    std::shared_ptr<fd_sink> to_socket_;
    bool started_ = false;
    bool read_done_ = false;  // the socket's EOF went out as the channel's
    bool write_done_ = false; // the channel's EOF reached the socket
    bool close_sent_ = false;
    bool closed_by_peer_ = false;
    bool finished_ = false;
    bool abandoned_ = false;
};

class pending_connect;
class socks_channel;

// The forwarded connections one part of a program carries: each attached
// to the runner and kept until its channel is over (its on_finished,
// chained after the caller's), then forgotten on the next turn of the
// event loop, not inside its own callback. A channel id reused meanwhile
// is left alone.
class socket_channel_set {
public:
    explicit socket_channel_set(connection_runner& runner);
    ~socket_channel_set();
    socket_channel_set(const socket_channel_set&) = delete;
    socket_channel_set& operator=(const socket_channel_set&) = delete;

    void add(channel_id id, std::shared_ptr<socket_channel> ch);
    // The peer's open `id` waits for a local connection (sshd's
    // direct-tcpip, ssh's forwarded-tcpip): connects to host:port, or to
    // `path` when it is not empty, on the event loop; then accepts the
    // channel and carries the socket, or refuses it "connect failed" with
    // the system's reason after passing OpenSSH's line to `log_failure`.
    void connect_and_accept(channel_id id, const std::string& host, int port, const std::string& path,
                            std::function<void(const std::string& line)> log_failure);
    // The peer's open `id` accepted and carried by `fd`, a socket already
    // connected (ssh's agent forwarding), which the set takes.
    void accept_connected(channel_id id, int fd);
    // The peer's open `id` is a reverse dynamic forward (ssh -R port):
    // accepted at once, the SOCKS handshake read from the channel
    // (socks_channel); `permit` decides on the CONNECT request (false: the
    // SOCKS reply says "not allowed", after `permit` logged why); then the
    // target is connected as connect_and_accept does and the socket
    // carried, or the SOCKS failure is answered after OpenSSH's line went
    // to `log_failure`.
    void accept_socks(channel_id id, logger& log, std::function<bool(const forward::socks_request&)> permit,
                      std::function<void(const std::string& line)> log_failure);
    // The program is ending: connections in progress abandoned, every
    // socket closed (socket_channel::stop).
    void stop_all();
    std::size_t size() const noexcept { return channels_.size() + connecting_.size() + handshakes_.size(); }

private:
    connection_runner& runner_;
    std::map<channel_id, std::shared_ptr<socket_channel>> channels_;
    std::map<channel_id, std::unique_ptr<pending_connect>> connecting_;
    std::map<channel_id, std::shared_ptr<socks_channel>> handshakes_;
};

} // namespace longhaul
