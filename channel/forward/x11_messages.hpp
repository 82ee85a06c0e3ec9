// X11 forwarding's messages and rules with no I/O (RFC 4254 §6.3): the
// session request "x11-req" and the "x11" channel's open data, the checks
// OpenSSH 9.2 makes on them (session.c's xauth_valid_string), the client's
// reading of $DISPLAY (clientloop.c's client_x11_display_valid and
// channels.c's x11_connect_display / x11_request_forwarding_with_spoofing),
// and the server's search for a free display number
// (x11_create_display_inet). Decoders fail as forward_messages' do:
// errc::malformed for truncation or a NUL in a string, errc::trailing_data
// for bytes after the message, errc::too_large for a string longer than
// any X11 authorization entry (the caller refuses the request).
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul::forward {

inline constexpr std::string_view x11_request_name = "x11-req";
inline constexpr std::string_view x11_channel_type = "x11";
// The TCP port of display N is 6000 + N; OpenSSH tries displays up to 999.
inline constexpr int x11_base_port = 6000;
inline constexpr int x11_max_displays = 1000;
// Xauthority entries store the protocol name and data with 16-bit lengths;
// OpenSSH reads both into 512-byte buffers on the client. Anything longer
// cannot be a real cookie, and a bound keeps a session's memory small.
inline constexpr std::size_t max_x11_auth_field = 1024;
// The protocol every X server and xauth knows.
inline constexpr std::string_view x11_default_protocol = "MIT-MAGIC-COOKIE-1";

// "x11-req": the cookie is hex text, as xauth prints it.
struct x11_request {
    bool single_connection = false;
    std::string auth_protocol;
    std::string auth_cookie;
    std::uint32_t screen = 0;
    bytes encode() const;
    static result<x11_request> decode(byte_span data);
};

// "x11" channel open: where the X client connected from.
struct x11_open {
    std::string originator;
    std::uint16_t originator_port = 0;
    bytes encode() const;
    static result<x11_open> decode(byte_span data);
};

// OpenSSH's xauth_valid_string: letters, digits and ".:/-_" only, so the
// value is safe on xauth's command line and in its input.
bool xauth_valid_string(std::string_view s) noexcept;

// OpenSSH's client_x11_display_valid: letters, digits and ":/.-_"; the
// first other character is returned in `bad`.
bool x11_display_valid(std::string_view display, char& bad) noexcept;

// The screen number x11-req carries: the digits after the '.' that follows
// the ':' of $DISPLAY, 0..400, else 0 (OpenSSH's strtonum there).
std::uint32_t x11_screen_of(std::string_view display) noexcept;

// Where a $DISPLAY points, as x11_connect_display reads it: "unix:N[.S]",
// ":N[.S]" and "::N[.S]" are the local socket of display N; "host:N[.S]"
// is TCP port 6000 + N on host.
struct x11_display_target {
    bool local_socket = false;
    std::string host; // TCP only
    unsigned display = 0;
    int port() const noexcept { return x11_base_port + static_cast<int>(display); }
};
// nullopt with OpenSSH's error line in `error`.
std::optional<x11_display_target> parse_x11_display(std::string_view display, std::string& error);

// The display name xauth files its entry under for $DISPLAY: a
// "localhost:N" display is FamilyLocal, listed as "unix:N" (OpenSSH's
// client_x11_get_proto); anything else as it is.
std::string x11_xauth_display_name(std::string_view display);

// The first display from `offset` below x11_max_displays for which
// `try_bind` succeeds (it binds every address the display needs, or none);
// nullopt when none does (OpenSSH: "Failed to allocate internet-domain X11
// display socket.").
std::optional<int> first_free_x11_display(int offset, const std::function<bool(int display)>& try_bind);

} // namespace longhaul::forward
