// SOCKS vocabulary shared by the server-side handshake (socks_server.hpp)
// and the programs: the request a client made, and the reply encoders.
//
// Replies follow OpenSSH's channels.c where it sends them: SOCKS4 answers
// 0x5A with port and address zero; SOCKS5 answers with a bound address of
// 0.0.0.0:0 (ATYP IPv4), since the real one lives on the far side of the
// SSH connection. OpenSSH only ever sends the success reply (it closes the
// client's socket on any failure); Longhaul also answers failures with the
// RFC 1928 code, so a client learns at once why it failed.
#pragma once

#include "common/bytes.hpp"

#include <cstdint>
#include <string>
#include <string_view>

namespace longhaul::forward {

enum class socks_version : std::uint8_t { v4 = 4, v5 = 5 };

// RFC 1928 §6, the REP field.
enum class socks5_reply : std::uint8_t {
    succeeded = 0x00,
    general_failure = 0x01,
    not_allowed = 0x02, // connection not allowed by ruleset
    network_unreachable = 0x03,
    host_unreachable = 0x04,
    connection_refused = 0x05,
    ttl_expired = 0x06,
    command_not_supported = 0x07,
    address_type_not_supported = 0x08,
};

// SOCKS4 CD values of a reply.
inline constexpr std::uint8_t socks4_granted = 0x5a;
inline constexpr std::uint8_t socks4_rejected = 0x5b;

// SOCKS5 authentication methods (RFC 1928 §3).
inline constexpr std::uint8_t socks5_no_auth = 0x00;
inline constexpr std::uint8_t socks5_no_acceptable_methods = 0xff;

enum class socks_address_type { ipv4, ipv6, domain };

// A CONNECT request, the only command forwarding serves.
struct socks_request {
    socks_version version = socks_version::v5;
    // SOCKS4: ipv4; SOCKS4a: domain; SOCKS5: as the client sent it.
    socks_address_type address_type = socks_address_type::ipv4;
    // The target as direct-tcpip carries it: dotted quad, inet_ntop's IPv6
    // text ("::1", "2001:db8::5"), or the name as sent.
    std::string host;
    std::uint16_t port = 0;
    // SOCKS4's user id (never used for anything but a debug line).
    std::string user;
};

// The 8-byte SOCKS4 reply: VN 0, CD granted/rejected, port and address 0.
bytes encode_socks4_reply(bool granted);
// The SOCKS5 method selection (RFC 1928 §3): VER 5, METHOD.
bytes encode_socks5_method(std::uint8_t method);
// The 10-byte SOCKS5 reply: VER 5, REP, RSV 0, ATYP IPv4, 0.0.0.0, port 0.
bytes encode_socks5_reply(socks5_reply code);
// The reply for `version`: SOCKS4 has only granted (succeeded) and
// rejected (every failure code).
bytes encode_socks_reply(socks_version version, socks5_reply code);

// The SOCKS5 code that best explains a failed channel open: the
// SSH_OPEN_* reason of the CHANNEL_OPEN_FAILURE and its description
// (OpenSSH's server puts strerror() or gai_strerror() text there).
socks5_reply socks5_reply_for_open_failure(std::uint32_t reason, std::string_view description);

std::string_view to_string(socks5_reply code) noexcept;

} // namespace longhaul::forward
