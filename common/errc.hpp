// Error values shared by every layer. Parsers of peer bytes return these
// instead of throwing; the transport maps them onto SSH disconnect reasons.
#pragma once

#include <cstdint>
#include <string_view>
#include <system_error>

namespace longhaul {

enum class errc {
    ok = 0,
    incomplete,            // more bytes are needed (streaming input, truncated field)
    malformed,             // an encoding rule was broken
    too_large,             // a length or count exceeds its limit
    trailing_data,         // bytes left after a complete message
    invalid_argument,      // a caller passed something unusable
    unsupported,           // algorithm, key type or feature not implemented
    no_matching_algorithm, // negotiation found nothing in common
    mac_mismatch,          // integrity check failed
    bad_padding,
    bad_packet_length,
    protocol_error,        // message out of place for the current state
    strict_kex_violation,  // RFC 9142-style strict key exchange broken by the peer
    sequence_wrap,         // sequence number would wrap without a rekey
    signature_invalid,
    host_key_rejected,
    key_type_mismatch,
    invalid_format,        // key file or other local file not understood
    passphrase_required,
    wrong_passphrase,
    crypto_error,          // OpenSSL reported a failure
    compression_error,
    bad_version,           // version exchange failed
    peer_disconnected,     // the peer sent SSH_MSG_DISCONNECT
    connection_closed,     // the byte stream ended
    timeout,
    io_error,
    bad_permissions,       // a private file others can read
    security_key_unsupported, // a FIDO security-key private key: signing with one is not implemented yet
    key_length,            // an RSA key shorter than RequiredRSASize (OpenSSH's SSH_ERR_KEY_LENGTH)
};

const std::error_category& longhaul_category() noexcept;
std::error_code make_error_code(errc e) noexcept;
std::string_view to_string(errc e) noexcept;

} // namespace longhaul

template <>
struct std::is_error_code_enum<longhaul::errc> : std::true_type {};
