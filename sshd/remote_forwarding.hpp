// sshd's remote forwarding (ssh -R, issue 11): the global requests
// tcpip-forward / cancel-tcpip-forward and streamlocal-forward@openssh.com /
// cancel-streamlocal-forward@openssh.com as entries of the session layer's
// table. A request is checked as OpenSSH 9.2's server_input_global_request
// checks it (AllowTcpForwarding / AllowStreamLocalForwarding,
// DisableForwarding, the key's no-port-forwarding or restrict, a port 0
// that wants no reply; then PermitListen and permitlisten=), listened for
// where GatewayPorts says, and answered (with the port chosen for port 0).
// Each connection to a listener opens forwarded-tcpip (or
// forwarded-streamlocal@openssh.com) to the client and is carried by a
// socket_channel once the client confirms it. Listeners close with the
// connection (socket files are removed).
#pragma once

#include "channel/channel_types.hpp"
#include "channel/forward/forward_messages.hpp"
#include "channel/io/socket_channel.hpp"

#include <functional>

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace boost::asio {
class io_context;
}

namespace longhaul {

class fd_listener;
struct session_environment;

class remote_forwarding {
public:
    remote_forwarding(boost::asio::io_context& io, connection_runner& runner, const session_environment& env);
    ~remote_forwarding();
    remote_forwarding(const remote_forwarding&) = delete;
    remote_forwarding& operator=(const remote_forwarding&) = delete;

    // Adds the four requests to the table.
    void register_in(global_request_table& table);

    std::size_t listener_count() const noexcept { return forwards_.size(); }

    // Forwards granted on one connection at most: each holds listening
    // descriptors, and the count is the client's to choose.
    static constexpr std::size_t max_forwards = 256;

private:
    // One granted request: its listeners and what forwarded opens carry.
    struct granted_forward {
        std::string address; // as requested (reported in forwarded-tcpip)
        int port = 0;        // as bound (the allocated one for port 0)
        std::string path;    // streamlocal
        std::vector<std::unique_ptr<fd_listener>> listeners;
    };

    void request(connection& conn, std::string_view name, bool want_reply, byte_span data);
    void tcpip_forward(connection& conn, const forward::tcpip_forward_request& r, bool want_reply);
    void streamlocal_forward(connection& conn, const forward::streamlocal_forward_request& r, bool want_reply);
    bool cancel(const std::function<bool(const granted_forward&)>& which);
    bool room_for_another() const;
    void accepted(const granted_forward& f, int fd);

    boost::asio::io_context& io_;
    connection_runner& runner_;
    const session_environment& env_;
    std::vector<std::unique_ptr<granted_forward>> forwards_;
    socket_channel_set channels_;
};

} // namespace longhaul
