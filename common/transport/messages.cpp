#include "common/transport/messages.hpp"

namespace longhaul {

disconnect_reason disconnect_reason_for(errc e) noexcept
{
    switch (e) {
    case errc::mac_mismatch: return disconnect_reason::mac_error;
    case errc::compression_error: return disconnect_reason::compression_error;
    case errc::no_matching_algorithm:
    case errc::signature_invalid:
    case errc::crypto_error:
    case errc::unsupported: return disconnect_reason::key_exchange_failed;
    case errc::host_key_rejected: return disconnect_reason::host_key_not_verifiable;
    case errc::bad_version: return disconnect_reason::protocol_version_not_supported;
    case errc::connection_closed:
    case errc::io_error:
    case errc::timeout: return disconnect_reason::connection_lost;
    default: return disconnect_reason::protocol_error;
    }
}

std::string_view to_string(disconnect_reason r) noexcept
{
    switch (r) {
    case disconnect_reason::host_not_allowed_to_connect: return "host not allowed to connect";
    case disconnect_reason::protocol_error: return "protocol error";
    case disconnect_reason::key_exchange_failed: return "key exchange failed";
    case disconnect_reason::reserved: return "reserved";
    case disconnect_reason::mac_error: return "MAC error";
    case disconnect_reason::compression_error: return "compression error";
    case disconnect_reason::service_not_available: return "service not available";
    case disconnect_reason::protocol_version_not_supported: return "protocol version not supported";
    case disconnect_reason::host_key_not_verifiable: return "host key not verifiable";
    case disconnect_reason::connection_lost: return "connection lost";
    case disconnect_reason::by_application: return "disconnected by application";
    case disconnect_reason::too_many_connections: return "too many connections";
    case disconnect_reason::auth_cancelled_by_user: return "authentication cancelled by user";
    case disconnect_reason::no_more_auth_methods_available: return "no more authentication methods available";
    case disconnect_reason::illegal_user_name: return "illegal user name";
    }
    return "unknown reason";
}

} // namespace longhaul
