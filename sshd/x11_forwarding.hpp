// sshd's X11 forwarding (ssh -X / -Y): the session request "x11-req"
// answered as OpenSSH 9.2's session_x11_req and session_setup_x11fwd
// answer it. Allowed when X11Forwarding is yes, DisableForwarding is no,
// the key that logged in permits it (no-X11-forwarding, restrict; a
// certificate needs permit-X11-forwarding) and XAuthLocation names a
// file; once per session, before its program starts. The display is the
// first free one from X11DisplayOffset up: TCP port 6000 + N bound on
// every loopback address (X11UseLocalhost yes: DISPLAY=localhost:N.S) or
// every address (no: DISPLAY=hostname:N.S), IPv4 and IPv6 both, as
// x11_create_display_inet binds them, by the process that serves the user.
// Each connection to it opens an "x11" channel to the client (originator
// address and port), carried by a socket_channel; the client checks the
// X11 setup's cookie, so this side passes bytes through. Single-connection
// requests stop listening after the first. The listeners close with the
// session; connections already carried last until they end (they belong
// to the connection's x11_forwarding, as agent connections do).
//
// The cookie reaches the user's xauthority before the program starts
// (session_process: the rc files get "proto cookie" on stdin, or else
// "xauth -q -" gets "remove" and "add" lines), as do_rc_files does it.
#pragma once

#include "channel/io/socket_channel.hpp"

#include <memory>
#include <string>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace longhaul {

class fd_listener;
class x11_forwarding;
struct session_environment;

// One session's forwarded display.
class x11_display {
public:
    x11_display(x11_forwarding& owner, int number, std::uint32_t screen, bool use_localhost,
                std::string protocol, std::string cookie, bool single_connection);
    ~x11_display();
    x11_display(const x11_display&) = delete;
    x11_display& operator=(const x11_display&) = delete;

    // Takes the listening descriptors.
    void listen(boost::asio::io_context& io, std::vector<int> fds);

    int number() const noexcept { return number_; }
    // DISPLAY for the session's programs: "localhost:N.S" or "host:N.S".
    const std::string& display() const noexcept { return display_; }
    // The name xauth files the cookie under: "unix:N.S" for a localhost display.
    const std::string& auth_display() const noexcept { return auth_display_; }
    const std::string& protocol() const noexcept { return protocol_; }
    const std::string& cookie() const noexcept { return cookie_; }

private:
    void accepted(int fd);

    x11_forwarding& owner_;
    int number_;
    std::string display_, auth_display_, protocol_, cookie_;
    bool single_connection_;
    std::vector<std::unique_ptr<fd_listener>> listeners_;
};

// What a connection's sessions share: the channels its displays opened.
class x11_forwarding {
public:
    x11_forwarding(boost::asio::io_context& io, connection_runner& runner, const session_environment& env);
    ~x11_forwarding();
    x11_forwarding(const x11_forwarding&) = delete;
    x11_forwarding& operator=(const x11_forwarding&) = delete;

    // A session's x11-req (its data): the display made for it, or null when
    // refused (logged, and the client told why where OpenSSH tells it).
    // `already` says the session forwards a display: refused.
    std::unique_ptr<x11_display> request(connection& conn, byte_span data, bool already);

    // A connection reached a display: the "x11" channel to the client.
    void open_channel(int fd);
    logger& log() const noexcept;

private:
    boost::asio::io_context& io_;
    connection_runner& runner_;
    const session_environment& env_;
    socket_channel_set channels_;
};

// X11Forwarding, DisableForwarding and the key's no-X11-forwarding or
// restrict, with OpenSSH's log lines (`conn` gets the key's refusal as a
// debug message). Not XAuthLocation's file: request() checks it.
bool x11_forwarding_enabled(const session_environment& env, connection& conn);

} // namespace longhaul
