// The SOCKS end of a reverse dynamic forward (ssh -R port, OpenSSH's
// RDYNAMIC channels): the server's forwarded-tcpip open is accepted at
// once, the SOCKS 4, 4a or 5 handshake of the program that connected to
// the server's port arrives as channel data, and the method choice and
// the reply go back the same way. Once the CONNECT request is complete the
// owner decides and connects (`on_request`), then either hands the
// channel to a socket_channel (`succeed`, which also returns the stream
// bytes that followed the handshake) or ends it (`fail`).
//
// Window credit: the handshake's bytes are consumed as they are parsed;
// bytes after it are held, unconsumed, until the socket_channel writes
// them, so a client that talks before the reply is bounded by the window.
#pragma once

#include "channel/forward/socks_server.hpp"
#include "channel/io/connection_runner.hpp"
#include "common/log.hpp"

#include <functional>
#include <optional>

namespace longhaul {

class socks_channel : public channel_handler {
public:
    explicit socks_channel(logger& log) : log_(log) {}

    // The CONNECT request is complete: the owner answers with succeed() or
    // fail(), now or later.
    std::function<void(const forward::socks_request&)> on_request;
    // The channel ended before any connection (a refused handshake, the
    // peer's EOF or close): the owner may forget this handler.
    std::function<void()> on_finished;

    // Sends the success reply and returns the bytes that followed the
    // handshake, for the socket; the caller attaches its socket_channel.
    // nullopt if the channel ended meanwhile (the reply could not go).
    std::optional<bytes> succeed();
    // The peer's EOF came after the request: the socket gets it too.
    bool eof_received() const noexcept { return eof_received_; }
    // Sends the failure reply (SOCKS4 has only "rejected") and ends the channel.
    void fail(forward::socks5_reply code);
    // The program is ending.
    void stop() { stopped_ = true; }

    void on_data(byte_span data, std::uint32_t extended) override;
    void on_eof() override;
    void on_close() override;

private:
    // Sends what the handshake has for the client; false if the peer's
    // window cannot take it (a handshake reply is a few bytes: the window
    // is at least 32 KiB unless the peer is broken).
    bool flush_output();
    void end();

    logger& log_;
    forward::socks_server socks_;
    bytes early_; // stream bytes after the handshake, not consumed yet
    bool requested_ = false;
    bool eof_received_ = false;
    bool ended_ = false;
    bool close_sent_ = false;
    bool stopped_ = false;
};

} // namespace longhaul
