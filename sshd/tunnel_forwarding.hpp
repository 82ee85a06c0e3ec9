// sshd's "tun@openssh.com" channel type (ssh -w): an entry of the session
// layer's channel-type table, checked as OpenSSH 9.2's server_request_tun
// checks it. The mode must be one PermitTunnel allows (yes: both;
// point-to-point or ethernet: that one), else the client gets the debug
// message "Server has rejected tunnel device forwarding"; a key's
// tunnel="N" forces unit N, and a request for another named unit is
// refused. No other key restriction or DisableForwarding applies, as in
// OpenSSH. The device is opened by this (the user's) process: as with
// OpenSSH, that needs root or a persistent device the user owns. A refusal
// is "connect failed: open failed", as OpenSSH 9.2 sends it, with the debug message
// "Failed to open the tunnel device." when the device was the reason. Each
// interface opened is added to SSH_TUNNEL for the sessions started later.
#pragma once

#include "channel/channel_types.hpp"
#include "channel/io/tun_channel.hpp"

#include <map>
#include <memory>
#include <string>

namespace longhaul {

struct session_environment;

class tunnel_forwarding {
public:
    // `env` must outlive this; its tunnel_interfaces grows with each
    // device opened.
    tunnel_forwarding(connection_runner& runner, session_environment& env);
    ~tunnel_forwarding();
    tunnel_forwarding(const tunnel_forwarding&) = delete;
    tunnel_forwarding& operator=(const tunnel_forwarding&) = delete;

    void register_in(channel_type_table& table);
    // The connection is ending: every device closed, nothing sent.
    void stop_all();

private:
    void open(connection& conn, channel_id id, byte_span data);

    connection_runner& runner_;
    session_environment& env_;
    // The runner owns each channel until it closes; these let stop_all()
    // reach the ones still open.
    std::map<channel_id, std::weak_ptr<tun_channel>> channels_;
};

} // namespace longhaul
