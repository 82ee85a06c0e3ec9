#include "sshd/tunnel_forwarding.hpp"

#include "channel/forward/tun_messages.hpp"
#include "sshd/server_session.hpp"

#include <climits>

namespace longhaul {

namespace {

// PermitTunnel's modes as OpenSSH's SSH_TUNMODE_* bits.
std::uint32_t permitted_modes(tunnel_mode m)
{
    switch (m) {
    case tunnel_mode::yes: return forward::tun_mode_point_to_point | forward::tun_mode_ethernet;
    case tunnel_mode::point_to_point: return forward::tun_mode_point_to_point;
    case tunnel_mode::ethernet: return forward::tun_mode_ethernet;
    case tunnel_mode::no: break;
    }
    return 0;
}

// OpenSSH's server_input_channel_open answers every tunnel refusal with
// its default reason, which is "connect failed" (what Debian's ssh prints:
// "channel 0: open failed: connect failed: open failed").
void refuse_tunnel(connection& conn, channel_id id)
{
    conn.reject(id, open_failure_reason::connect_failed, "open failed");
}

} // namespace

tunnel_forwarding::tunnel_forwarding(connection_runner& runner, session_environment& env)
    : runner_(runner), env_(env)
{
}

tunnel_forwarding::~tunnel_forwarding() = default;

void tunnel_forwarding::register_in(channel_type_table& table)
{
    table.add(std::string(forward::tun_channel_type),
              [this](connection& conn, channel_id id, std::string_view, byte_span data) { open(conn, id, data); });
}

void tunnel_forwarding::open(connection& conn, channel_id id, byte_span data)
{
    auto req = forward::tun_open::decode(data);
    if (!req) {
        // OpenSSH's sshpkt_fatal on a short message.
        conn.core().disconnect(disconnect_reason::protocol_error,
                               std::string(forward::tun_channel_type) + ": malformed request");
        return;
    }
    logger& log = *env_.log;
    const std::uint32_t mode = req->mode;
    if (mode != forward::tun_mode_point_to_point && mode != forward::tun_mode_ethernet) {
        conn.core().send_debug(false, "Unsupported tunnel device mode.");
        return refuse_tunnel(conn, id);
    }
    if ((permitted_modes(env_.config->permit_tunnel) & mode) == 0) {
        conn.core().send_debug(false, "Server has rejected tunnel device forwarding");
        return refuse_tunnel(conn, id);
    }
    auto failed = [&] {
        conn.core().send_debug(false, "Failed to open the tunnel device.");
        refuse_tunnel(conn, id);
    };
    std::uint32_t unit = req->unit;
    if (unit > static_cast<std::uint32_t>(INT_MAX)) {
        log.debug("server_request_tun: invalid tun");
        return failed();
    }
    if (env_.key && env_.key->options.force_tunnel_device) {
        const auto forced = static_cast<std::uint32_t>(*env_.key->options.force_tunnel_device);
        if (unit != forward::tun_unit_any && unit != forced)
            return failed();
        unit = forced;
    }
    std::string ifname, why;
    const bool point_to_point = mode == forward::tun_mode_point_to_point;
    const int fd = open_tun_device(unit, point_to_point, ifname, why);
    if (fd < 0) {
        log.debug("sys_tun_open: " + why);
        return failed();
    }
    log.debug("Tunnel forwarding using interface " + ifname);
    auto ch = std::make_shared<tun_channel>(fd, point_to_point, log);
    conn.accept(id);
    runner_.attach(id, ch);
    channels_[id] = ch;
    std::erase_if(channels_, [](const auto& e) { return e.second.expired(); });
    ch->start();
    runner_.flush();
    // What OpenSSH's session.c exports as SSH_TUNNEL: every interface this
    // connection opened, comma-separated.
    env_.tunnel_interfaces += (env_.tunnel_interfaces.empty() ? "" : ",") + ifname;
}

void tunnel_forwarding::stop_all()
{
    for (auto& [id, weak] : channels_)
        if (auto ch = weak.lock())
            ch->stop();
    channels_.clear();
}

} // namespace longhaul
