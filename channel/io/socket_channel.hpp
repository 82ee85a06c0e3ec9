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

#include "channel/io/connection_runner.hpp"

#include <functional>
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
};

} // namespace longhaul
