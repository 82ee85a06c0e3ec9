// The forwarding messages of the connection protocol: the type-specific
// data of CHANNEL_OPEN for direct-tcpip and forwarded-tcpip (RFC 4254
// §7.1-7.2) and for OpenSSH's direct-streamlocal@openssh.com and
// forwarded-streamlocal@openssh.com (PROTOCOL §2.4), and the global
// requests tcpip-forward / cancel-tcpip-forward (with the reply that
// carries the port the server chose for port 0) and
// streamlocal-forward@openssh.com / cancel-streamlocal-forward@openssh.com.
//
// One struct per message with encode()/decode(); `data` is what follows the
// channel type (sender channel, window and packet size are the channel
// core's) or the request name and want_reply. Decoders reject truncation
// and a NUL inside a string (OpenSSH reads them as C strings) as
// errc::malformed, bytes after the message as errc::trailing_data: protocol
// errors (OpenSSH disconnects). Values the protocol allows
// but no host can use are errc::too_large: a host name over 1024 bytes
// (NI_MAXHOST less its NUL, OpenSSH's "Forward host name too long"), a
// socket path that does not fit sockaddr_un with its NUL, a port over 65535.
// OpenSSH refuses such an open or request rather than disconnecting, and so
// should the caller.
#pragma once

#include "common/bytes.hpp"
#include "common/result.hpp"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>

namespace longhaul::forward {

inline constexpr std::string_view direct_tcpip_type = "direct-tcpip";
inline constexpr std::string_view forwarded_tcpip_type = "forwarded-tcpip";
inline constexpr std::string_view direct_streamlocal_type = "direct-streamlocal@openssh.com";
inline constexpr std::string_view forwarded_streamlocal_type = "forwarded-streamlocal@openssh.com";
inline constexpr std::string_view tcpip_forward_name = "tcpip-forward";
inline constexpr std::string_view cancel_tcpip_forward_name = "cancel-tcpip-forward";
inline constexpr std::string_view streamlocal_forward_name = "streamlocal-forward@openssh.com";
inline constexpr std::string_view cancel_streamlocal_forward_name = "cancel-streamlocal-forward@openssh.com";
// Agent forwarding (OpenSSH's PROTOCOL): the session request, with no data,
// and the channel the server opens for each agent connection, with none.
inline constexpr std::string_view agent_request_name = "auth-agent-req@openssh.com";
inline constexpr std::string_view agent_channel_type = "auth-agent@openssh.com";

// NI_MAXHOST (1025) less the NUL.
inline constexpr std::size_t max_forward_host = 1024;
// sizeof(sockaddr_un::sun_path) (108 on Linux) less the NUL.
extern const std::size_t max_socket_path;

// "direct-tcpip": connect to host:port; from originator (the client's peer).
struct direct_tcpip_open {
    std::string host;
    std::uint16_t port = 0;
    std::string originator;
    std::uint16_t originator_port = 0;
    bytes encode() const;
    static result<direct_tcpip_open> decode(byte_span data);
};

// "forwarded-tcpip": a connection arrived on address:port, a listener a
// tcpip-forward request made (`address` as the request named it).
struct forwarded_tcpip_open {
    std::string address;
    std::uint16_t port = 0;
    std::string originator;
    std::uint16_t originator_port = 0;
    bytes encode() const;
    static result<forwarded_tcpip_open> decode(byte_span data);
};

// "direct-streamlocal@openssh.com": connect to the Unix socket `path`.
// OpenSSH's client sends its originator address and port in the reserved
// fields, and its server logs them, so they keep those names.
struct direct_streamlocal_open {
    std::string path;
    std::string originator; // PROTOCOL: "string reserved"
    std::uint16_t originator_port = 0; // PROTOCOL: "uint32 reserved"
    bytes encode() const;
    static result<direct_streamlocal_open> decode(byte_span data);
};

// "forwarded-streamlocal@openssh.com": a connection arrived on the
// listener at `path`.
struct forwarded_streamlocal_open {
    std::string path;
    std::string reserved; // "reserved for future use"; OpenSSH sends ""
    bytes encode() const;
    static result<forwarded_streamlocal_open> decode(byte_span data);
};

// "tcpip-forward" and "cancel-tcpip-forward": address to bind ("" is every
// address, "localhost" what ssh sends when none was given) and port (0:
// the server chooses, tcpip-forward only).
struct tcpip_forward_request {
    std::string address;
    std::uint16_t port = 0;
    bytes encode() const;
    static result<tcpip_forward_request> decode(byte_span data);
};

// REQUEST_SUCCESS data of a tcpip-forward that asked for port 0.
struct tcpip_forward_reply {
    std::uint16_t port = 0;
    bytes encode() const;
    static result<tcpip_forward_reply> decode(byte_span data);
};

// "streamlocal-forward@openssh.com" and its cancel: the socket path.
struct streamlocal_forward_request {
    std::string path;
    bytes encode() const;
    static result<streamlocal_forward_request> decode(byte_span data);
};

// Decoding by name, for a table of channel types and global requests:
// errc::unsupported when `type` / `name` is none of the above.
using forward_open = std::variant<direct_tcpip_open, forwarded_tcpip_open, direct_streamlocal_open,
                                  forwarded_streamlocal_open>;
result<forward_open> decode_forward_open(std::string_view type, byte_span data);

enum class forward_request_kind { tcpip_forward, cancel_tcpip_forward, streamlocal_forward, cancel_streamlocal_forward };
struct forward_request {
    forward_request_kind kind;
    std::variant<tcpip_forward_request, streamlocal_forward_request> body;
};
result<forward_request> decode_forward_request(std::string_view name, byte_span data);

} // namespace longhaul::forward
