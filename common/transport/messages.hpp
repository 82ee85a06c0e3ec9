// SSH message numbers and disconnect reason codes (RFC 4250 §4.1, §4.2.2;
// RFC 4419, RFC 5656, RFC 8308).
#pragma once

#include "common/errc.hpp"

#include <cstdint>
#include <string_view>

namespace longhaul::msg {

inline constexpr std::uint8_t disconnect = 1;
inline constexpr std::uint8_t ignore = 2;
inline constexpr std::uint8_t unimplemented = 3;
inline constexpr std::uint8_t debug = 4;
inline constexpr std::uint8_t service_request = 5;
inline constexpr std::uint8_t service_accept = 6;
inline constexpr std::uint8_t ext_info = 7;
inline constexpr std::uint8_t kexinit = 20;
inline constexpr std::uint8_t newkeys = 21;
// Key exchange method messages share 30..49.
inline constexpr std::uint8_t kexdh_init = 30;  // also KEX_ECDH_INIT
inline constexpr std::uint8_t kexdh_reply = 31; // also KEX_ECDH_REPLY
inline constexpr std::uint8_t kex_dh_gex_group = 31;
inline constexpr std::uint8_t kex_dh_gex_init = 32;
inline constexpr std::uint8_t kex_dh_gex_reply = 33;
inline constexpr std::uint8_t kex_dh_gex_request = 34;
inline constexpr std::uint8_t userauth_request = 50;
inline constexpr std::uint8_t userauth_failure = 51;
inline constexpr std::uint8_t userauth_success = 52;
inline constexpr std::uint8_t userauth_banner = 53;

inline constexpr bool is_kex_method_message(std::uint8_t t) noexcept { return t >= 30 && t <= 49; }
inline constexpr bool is_transport_message(std::uint8_t t) noexcept { return t >= 1 && t <= 49; }

} // namespace longhaul::msg

namespace longhaul {

enum class disconnect_reason : std::uint32_t {
    host_not_allowed_to_connect = 1,
    protocol_error = 2,
    key_exchange_failed = 3,
    reserved = 4,
    mac_error = 5,
    compression_error = 6,
    service_not_available = 7,
    protocol_version_not_supported = 8,
    host_key_not_verifiable = 9,
    connection_lost = 10,
    by_application = 11,
    too_many_connections = 12,
    auth_cancelled_by_user = 13,
    no_more_auth_methods_available = 14,
    illegal_user_name = 15,
};

// The reason sent to the peer when a local error ends the connection.
disconnect_reason disconnect_reason_for(errc e) noexcept;
std::string_view to_string(disconnect_reason r) noexcept;

} // namespace longhaul
