#include "channel/forward/forward_policy.hpp"

#include "common/text.hpp"

namespace longhaul::forward {

namespace {

bool allows(forwarding_allowed a, forward_direction d) noexcept
{
    switch (a) {
    case forwarding_allowed::yes: return true;
    case forwarding_allowed::no: return false;
    case forwarding_allowed::local: return d == forward_direction::local;
    case forwarding_allowed::remote: return d == forward_direction::remote;
    }
    return false;
}

// printf's %.100s on peer text, made printable after the cut.
std::string cut(std::string_view s, std::size_t n = 100)
{
    return printable(s.substr(0, n));
}

} // namespace

bool tcp_forwarding_enabled(const forwarding_settings& s, forward_direction d) noexcept
{
    return allows(s.tcp, d) && s.key_permits_forwarding && !s.disable_forwarding;
}

bool streamlocal_forwarding_enabled(const forwarding_settings& s, forward_direction d) noexcept
{
    return allows(s.streamlocal, d) && s.key_permits_forwarding && !s.disable_forwarding;
}

bool tcpip_forward_enabled(const forwarding_settings& s, int port, bool want_reply) noexcept
{
    return tcp_forwarding_enabled(s, forward_direction::remote) && !(port == 0 && !want_reply);
}

bind_address forward_bind_address(std::optional<std::string_view> listen_address, bool is_client, gateway_ports gp,
                                  bool old_forward_addr)
{
    bind_address out;
    const bool gateway = gp != gateway_ports::no;
    if (!listen_address) {
        // No address given: GatewayPorts decides.
        out.wildcard = gateway;
        return out;
    }
    const std::string_view a = *listen_address;
    const bool loopback_address = a == "127.0.0.1" || a == "::1";
    if (gateway || is_client) {
        if ((old_forward_addr && a == "0.0.0.0" && !is_client) || a.empty() || a == "*" ||
            (!is_client && gp == gateway_ports::yes)) {
            out.wildcard = true;
            if (!a.empty() && a != "0.0.0.0" && a != "*")
                out.debug_message = "Forwarding listen address \"" + printable(a) + "\" overridden by server GatewayPorts";
        } else if (a != "localhost" || loopback_address) {
            // "localhost" is left to the resolver-free loopback default, so
            // a forward listens on both 127.0.0.1 and ::1.
            out.address = std::string(a);
        }
    } else if (loopback_address) {
        // A specific loopback address is honoured without GatewayPorts: it
        // lets the client prefer IPv4 or IPv6.
        out.address = std::string(a);
    }
    return out;
}

std::string_view remote_forward_bind_host(std::optional<std::string_view> listen_address) noexcept
{
    if (!listen_address)
        return "localhost";
    if (listen_address->empty() || *listen_address == "*")
        return "";
    return *listen_address;
}

bool remote_forward_matches(std::optional<std::string_view> listen_address, int listen_port,
                            std::string_view reported_host, int reported_port) noexcept
{
    return listen_port == reported_port && remote_forward_bind_host(listen_address) == reported_host;
}

std::string refused_local_forward_log(std::string_view originator, int originator_port, std::string_view target,
                                      int target_port)
{
    return "refused local port forward: originator " + printable(originator) + " port " +
           std::to_string(originator_port) + ", target " + printable(target) + " port " + std::to_string(target_port);
}

std::string refused_streamlocal_forward_log(std::string_view originator, int originator_port,
                                            std::string_view target)
{
    return "refused streamlocal port forward: originator " + printable(originator) + " port " +
           std::to_string(originator_port) + ", target " + printable(target);
}

std::string denied_connect_log(std::string_view remote_ip, int remote_port, std::string_view host, int port)
{
    return "Received request from " + cut(remote_ip) + " port " + std::to_string(remote_port) +
           " to connect to host " + cut(host) + " port " + std::to_string(port) + ", but the request was denied.";
}

std::string denied_connect_path_log(std::string_view path)
{
    return "Received request to connect to path " + cut(path) + ", but the request was denied.";
}

std::string denied_remote_forward_log(std::string_view remote_ip, int remote_port, std::string_view listen_host,
                                      int listen_port)
{
    return "Received request from " + cut(remote_ip) + " port " + std::to_string(remote_port) +
           " to remote forward to host " + cut(listen_host) + " port " + std::to_string(listen_port) +
           ", but the request was denied.";
}

std::string denied_remote_streamlocal_log(std::string_view remote_ip, int remote_port, std::string_view path)
{
    return "Received request from " + cut(remote_ip) + " port " + std::to_string(remote_port) +
           " to remote forward to path \"" + cut(path) + "\", but the request was denied.";
}

} // namespace longhaul::forward
