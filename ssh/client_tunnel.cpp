// ssh -w / Tunnel: the local tun or tap device and its "tun@openssh.com"
// channel, with OpenSSH's client_request_tun_fwd and ssh_tun_confirm
// messages. The channel is opened once the session is authenticated, after
// the port forwards, as ssh_init_forwarding does.
#include "channel/forward/tun_messages.hpp"
#include "ssh/detail/ssh_client.hpp"

#include <unistd.h>

namespace longhaul::detail {

bool ssh_client::start_tunnel()
{
    const tunnel_request mode = cfg_.tunnel.value_or(tunnel_request::no);
    if (mode == tunnel_request::no)
        return true;
    const bool exit_on_failure = cfg_.exit_on_forward_failure.value_or(false);
    const bool point_to_point = mode != tunnel_request::ethernet;
    const std::uint32_t wire_mode = point_to_point ? forward::tun_mode_point_to_point : forward::tun_mode_ethernet;
    const int local = cfg_.tunnel_local.value_or(tun_id_any);
    const int remote = cfg_.tunnel_remote.value_or(tun_id_any);
    log_.debug("Requesting tun unit " + std::to_string(local) + " in mode " + std::to_string(wire_mode));
    auto could_not = [&] {
        log_.error("Could not request tunnel forwarding.");
        if (exit_on_failure) {
            finish(255);
            return false;
        }
        return true;
    };
    std::string ifname, why;
    const int fd = open_tun_device(static_cast<std::uint32_t>(local), point_to_point, ifname, why);
    if (fd < 0) {
        log_.debug("sys_tun_open: " + why);
        log_.error("Tunnel device open failed.");
        return could_not();
    }
    log_.debug("Tunnel forwarding using interface " + ifname);
    const forward::tun_open open{wire_mode, static_cast<std::uint32_t>(remote)};
    auto id = conn_->open(forward::tun_channel_type, open.encode());
    if (!id) {
        ::close(fd);
        return could_not();
    }
    tunnel_ifname_ = ifname;
    tunnel_ = std::make_shared<tun_channel>(fd, point_to_point, log_);
    tunnel_->on_confirmed = [this, cid = *id] {
        log_.debug("ssh_tun_confirm: tunnel forward established, id=" + std::to_string(cid));
    };
    tunnel_->on_refused = [this, cid = *id, exit_on_failure](std::uint32_t reason, std::string_view text) {
        // OpenSSH's order: channel_input_open_failure's line, then
        // ssh_tun_confirm's.
        log_.info(open_failed_line(cid, reason, text));
        log_.error("Tunnel forwarding failed");
        if (exit_on_failure)
            finish(255);
    };
    runner_->attach(*id, tunnel_);
    runner_->flush();
    return true;
}

} // namespace longhaul::detail
