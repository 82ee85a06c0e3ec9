// The messages of OpenSSH's connection multiplexing protocol (PROTOCOL.mux,
// version 4), spoken over ControlPath's Unix socket between a master and
// its mux clients. Sans-I/O: one struct per message, a variant of them all,
// encode()/decode() of a message body, and the framing (uint32 length,
// then the body, whose first uint32 is the type).
//
// The wire differs from PROTOCOL.mux's prose in two places, as OpenSSH's
// ssh sends them: NEW_SESSION's flags are uint32s (not bytes) and
// NEW_STDIO_FWD's port is a uint32 (not a string).
//
// Decoders bound everything: a body is at most max_message bytes, a string
// at most what is left of it, NEW_SESSION's environment at most
// max_environment entries and HELLO's extensions at most max_extensions.
// A short body is errc::malformed, bytes after a fixed-size message
// errc::trailing_data, an unknown type errc::unsupported, a count over its
// bound errc::too_large. Strings are C strings to OpenSSH: a NUL inside
// one is malformed.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace longhaul::mux {

inline constexpr std::uint32_t protocol_version = 4;
// Largest body either side accepts (OpenSSH's own bound on a mux packet).
inline constexpr std::size_t max_message = 256 * 1024;
inline constexpr std::size_t max_environment = 4096;
inline constexpr std::size_t max_extensions = 64;

enum class msg : std::uint32_t {
    hello = 0x00000001,
    new_session = 0x10000002,
    alive_check = 0x10000004,
    terminate = 0x10000005,
    open_fwd = 0x10000006,
    close_fwd = 0x10000007,
    new_stdio_fwd = 0x10000008,
    stop_listening = 0x10000009,
    proxy = 0x1000000f,
    ok = 0x80000001,
    permission_denied = 0x80000002,
    failure = 0x80000003,
    exit_message = 0x80000004,
    alive = 0x80000005,
    session_opened = 0x80000006,
    remote_port = 0x80000007,
    tty_alloc_fail = 0x80000008,
    proxy_ok = 0x8000000f,
};

// OPEN_FWD / CLOSE_FWD forwarding types, and the port that marks a host
// field as a Unix socket path.
enum class fwd_kind : std::uint32_t { local = 1, remote = 2, dynamic = 3 };
inline constexpr std::uint32_t port_streamlocal = 0xfffffffe;
// NEW_SESSION's escape char when there is none.
inline constexpr std::uint32_t no_escape_char = 0xffffffff;

struct hello {
    std::uint32_t version = protocol_version;
    std::vector<std::pair<std::string, std::string>> extensions;
    bool operator==(const hello&) const = default;
};

struct new_session {
    std::uint32_t request_id = 0;
    std::string reserved;
    bool want_tty = false;
    bool want_x11 = false;
    bool want_agent = false;
    bool subsystem = false;
    std::uint32_t escape_char = no_escape_char;
    std::string term;
    std::string command;
    std::vector<std::string> env; // "NAME=value"
    bool operator==(const new_session&) const = default;
};

// ALIVE_CHECK, TERMINATE, STOP_LISTENING and PROXY: a request id alone.
struct simple_request {
    msg type = msg::alive_check;
    std::uint32_t request_id = 0;
    bool operator==(const simple_request&) const = default;
};

// OPEN_FWD and CLOSE_FWD.
struct forward_request {
    msg type = msg::open_fwd;
    std::uint32_t request_id = 0;
    std::uint32_t kind = static_cast<std::uint32_t>(fwd_kind::local);
    std::string listen_host;
    std::uint32_t listen_port = 0;
    std::string connect_host;
    std::uint32_t connect_port = 0;
    bool operator==(const forward_request&) const = default;
};

struct stdio_forward {
    std::uint32_t request_id = 0;
    std::string reserved;
    std::string host;
    std::uint32_t port = 0;
    bool operator==(const stdio_forward&) const = default;
};

// OK and PROXY's reply: the client's request id alone.
struct status_reply {
    msg type = msg::ok;
    std::uint32_t request_id = 0;
    bool operator==(const status_reply&) const = default;
};

// PERMISSION_DENIED and FAILURE.
struct error_reply {
    msg type = msg::failure;
    std::uint32_t request_id = 0;
    std::string reason;
    bool operator==(const error_reply&) const = default;
};

struct exit_message {
    std::uint32_t session_id = 0;
    std::uint32_t status = 0;
    bool operator==(const exit_message&) const = default;
};

struct alive {
    std::uint32_t request_id = 0;
    std::uint32_t pid = 0;
    bool operator==(const alive&) const = default;
};

struct session_opened {
    std::uint32_t request_id = 0;
    std::uint32_t session_id = 0;
    bool operator==(const session_opened&) const = default;
};

struct remote_port {
    std::uint32_t request_id = 0;
    std::uint32_t port = 0;
    bool operator==(const remote_port&) const = default;
};

struct tty_alloc_fail {
    std::uint32_t session_id = 0;
    bool operator==(const tty_alloc_fail&) const = default;
};

using message = std::variant<hello, new_session, simple_request, forward_request, stdio_forward, status_reply,
                             error_reply, exit_message, alive, session_opened, remote_port, tty_alloc_fail>;

msg type_of(const message& m) noexcept;

// The body (type first), without the length.
bytes encode(const message& m);
// The body with its uint32 length in front, ready to write.
bytes frame(const message& m);
// A body as read from the socket (after its length).
result<message> decode(byte_span body);

// Reassembles one frame from a stream that must not be read ahead: a
// NEW_SESSION is followed on the socket by descriptors, each sent with one
// byte of its own, which a greedy read would swallow. wanted() is how many
// bytes complete the length or the body; feed() takes at most that many.
class frame_reader {
public:
    std::size_t wanted() const noexcept;
    // errc::too_large for a length over max_message, errc::malformed for a
    // length under 4 (a body holds its type at least).
    result<void> feed(byte_span data);
    bool complete() const noexcept { return have_length_ && body_.size() == length_; }
    byte_span body() const noexcept { return body_; }
    void reset() noexcept;

private:
    std::uint8_t header_[4] = {};
    std::size_t header_len_ = 0;
    bool have_length_ = false;
    std::uint32_t length_ = 0;
    bytes body_;
};

} // namespace longhaul::mux
