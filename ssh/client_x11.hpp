// ssh's X11 forwarding (-X, -Y, ForwardX11): OpenSSH 9.2's
// client_x11_get_proto, x11_request_forwarding_with_spoofing and
// client_request_x11. Before the session's requests, prepare() reads
// $DISPLAY and the display's cookie (ForwardX11Trusted: `xauth list`;
// untrusted: a cookie `xauth generate`s with ForwardX11Timeout, which the
// X server's SECURITY extension confines) and makes a random fake cookie
// of the same length for the x11-req: the server only ever sees the fake
// one. Each "x11" channel the server opens is joined to a new connection
// to the local display (":N" the socket /tmp/.X11-unix/XN, "host:N" TCP
// port 6000 + N); the X client's connection setup must carry the fake
// cookie, which is replaced by the real one before the first byte reaches
// the display (channel/forward/x11_setup), else the channel is closed
// unused. Opens are refused when forwarding was not asked for (OpenSSH's
// break-in warning) and, untrusted, once ForwardX11Timeout has passed.
#pragma once

#include "channel/channel_types.hpp"
#include "channel/forward/x11_messages.hpp"
#include "common/bytes.hpp"
#include "common/log.hpp"

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

namespace longhaul {

class connection_runner;
class x11_client_channel;
struct client_config;

class client_x11_forwarding {
public:
    client_x11_forwarding(connection_runner& runner, logger& log);
    ~client_x11_forwarding();
    client_x11_forwarding(const client_x11_forwarding&) = delete;
    client_x11_forwarding& operator=(const client_x11_forwarding&) = delete;

    // The session's x11-req when ForwardX11 is on and $DISPLAY and xauth
    // give a cookie; nullopt otherwise (logged as OpenSSH logs it: the
    // session goes on without X11).
    std::optional<forward::x11_request> prepare(const client_config& cfg);
    // "x11".
    void register_in(channel_type_table& table);
    // The client is ending: forwarded X11 connections closed.
    void stop();

private:
    void open(connection& conn, channel_id id, byte_span data);
    void finished(channel_id id, const x11_client_channel* raw);

    connection_runner& runner_;
    logger& log_;
    bool enabled_ = false; // ForwardX11
    std::string display_;  // $DISPLAY when the request was made
    std::string protocol_;
    bytes real_cookie_, fake_cookie_;
    std::optional<std::chrono::steady_clock::time_point> refuse_after_;
    std::map<channel_id, std::shared_ptr<x11_client_channel>> channels_;
};

// Connects to the local display $DISPLAY names, as OpenSSH's
// x11_connect_display: a blocking connect, OpenSSH's error line in `error`
// on failure (-1).
int connect_x11_display(const std::string& display, std::string& error, logger& log);

} // namespace longhaul
