#include "channel/forward/socks.hpp"

namespace longhaul::forward {

bytes encode_socks4_reply(bool granted)
{
    // VN is 0 in a reply (not 4); DSTPORT and DSTIP are ignored by clients.
    return bytes{0x00, granted ? socks4_granted : socks4_rejected, 0, 0, 0, 0, 0, 0};
}

bytes encode_socks5_method(std::uint8_t method)
{
    return bytes{0x05, method};
}

bytes encode_socks5_reply(socks5_reply code)
{
    return bytes{0x05, static_cast<std::uint8_t>(code), 0x00, 0x01, 0, 0, 0, 0, 0, 0};
}

bytes encode_socks_reply(socks_version version, socks5_reply code)
{
    if (version == socks_version::v4)
        return encode_socks4_reply(code == socks5_reply::succeeded);
    return encode_socks5_reply(code);
}

socks5_reply socks5_reply_for_open_failure(std::uint32_t reason, std::string_view description)
{
    switch (reason) {
    case 1: // SSH_OPEN_ADMINISTRATIVELY_PROHIBITED: PermitOpen and friends
        return socks5_reply::not_allowed;
    case 2: { // SSH_OPEN_CONNECT_FAILED: strerror() or gai_strerror() text
        auto has = [&](std::string_view s) { return description.find(s) != std::string_view::npos; };
        if (has("refused"))
            return socks5_reply::connection_refused;
        if (has("Network is unreachable"))
            return socks5_reply::network_unreachable;
        // No route, timeouts, unknown names: the target cannot be reached.
        return socks5_reply::host_unreachable;
    }
    default: // unknown channel type, resource shortage, anything else
        return socks5_reply::general_failure;
    }
}

std::string_view to_string(socks5_reply code) noexcept
{
    switch (code) {
    case socks5_reply::succeeded: return "succeeded";
    case socks5_reply::general_failure: return "general SOCKS server failure";
    case socks5_reply::not_allowed: return "connection not allowed by ruleset";
    case socks5_reply::network_unreachable: return "network unreachable";
    case socks5_reply::host_unreachable: return "host unreachable";
    case socks5_reply::connection_refused: return "connection refused";
    case socks5_reply::ttl_expired: return "TTL expired";
    case socks5_reply::command_not_supported: return "command not supported";
    case socks5_reply::address_type_not_supported: return "address type not supported";
    }
    return "unknown reply";
}

} // namespace longhaul::forward
