// sshd's "direct-tcpip" and "direct-streamlocal@openssh.com" channel types
// (ssh -L, -D, -W and ProxyJump through this server): entries of the
// session layer's channel-type table. Each open is checked as OpenSSH 9.2's
// server_request_direct_tcpip / _streamlocal check it: the kind of
// forwarding enabled (AllowTcpForwarding / AllowStreamLocalForwarding,
// DisableForwarding, the key's no-port-forwarding or restrict), then the
// target against PermitOpen and the key's permitopen=, with OpenSSH's log
// lines for each refusal. A permitted target is connected without blocking
// the connection (name lookup and connect run on the event loop); the
// channel is confirmed once connected, or refused "connect failed" with
// the system's reason, and then carries the socket (socket_channel).
#pragma once

#include "channel/channel_types.hpp"
#include "channel/io/socket_channel.hpp"

namespace longhaul {

struct session_environment;

class direct_forwarding {
public:
    // `env` (the user's settings, the key that logged in, the log) must
    // outlive this.
    direct_forwarding(connection_runner& runner, const session_environment& env);
    ~direct_forwarding();
    direct_forwarding(const direct_forwarding&) = delete;
    direct_forwarding& operator=(const direct_forwarding&) = delete;

    // Adds the two entries to the table.
    void register_in(channel_type_table& table);

    // Forwarded connections open now (connected or connecting).
    std::size_t active() const noexcept { return channels_.size(); }

private:
    void open_tcpip(connection& conn, channel_id id, byte_span data);
    void open_streamlocal(connection& conn, channel_id id, byte_span data);

    const session_environment& env_;
    socket_channel_set channels_;
};

} // namespace longhaul
