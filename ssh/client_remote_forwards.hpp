// ssh's remote forwarding (-R and RemoteForward, issue 11): a
// tcpip-forward (or streamlocal-forward@openssh.com) request per forward,
// the server's forwarded-tcpip / forwarded-streamlocal@openssh.com opens
// matched to their forward as OpenSSH matches them (the bind host as sent,
// the allocated port for port 0), the local target connected on the event
// loop and the connection carried by a socket_channel. OpenSSH's messages:
// "Allocated port N for remote forward to host:port", "Warning: remote
// port forwarding failed for listen port N" (with ExitOnForwardFailure an
// "Error: ..." and status 255). Reverse dynamic forwarding (-R port with
// no target): the server's opens speak SOCKS 4, 4a or 5 on the channel
// (socket_channel_set::accept_socks) and go where the request says, if
// PermitRemoteOpen allows it.
#pragma once

#include "channel/channel_types.hpp"
#include "channel/forward/forward_permissions.hpp"
#include "channel/io/socket_channel.hpp"
#include "common/log.hpp"
#include "ssh/client_config.hpp"

#include <functional>
#include <map>
#include <memory>
#include <vector>

namespace longhaul {


class client_remote_forwards {
public:
    // Sends a global request; with `want_reply`, `on_reply` gets the reply.
    using request_sender = std::function<void(std::string_view name, const bytes& data, bool want_reply,
                                              std::function<void(bool, byte_span)> on_reply)>;

    // `permit_remote_open`: ssh_config's PermitRemoteOpen values.
    client_remote_forwards(connection_runner& runner, logger& log, request_sender send,
                           const std::vector<std::string>& permit_remote_open);
    ~client_remote_forwards();
    client_remote_forwards(const client_remote_forwards&) = delete;
    client_remote_forwards& operator=(const client_remote_forwards&) = delete;

    // forwarded-tcpip and forwarded-streamlocal@openssh.com.
    void register_in(channel_type_table& table);
    // How a request reports itself: ssh's own forwards as OpenSSH's
    // ssh_confirm_remote_forward ("Warning: ...", or "Error: ..." with
    // ExitOnForwardFailure; "Allocated port N ..." for port 0), a mux
    // client's as its master does (debug lines: the mux client says it).
    enum class reporting { own, own_exit_on_failure, mux };
    // Asks the server for the forward; `on_result` (may be empty) gets
    // whether it was granted and, for a port 0 request, the port the
    // server allocated (else 0).
    void request(const forward_spec& spec, reporting how, std::function<void(bool ok, int allocated_port)> on_result);
    // ~C -KR: cancels the forward that `key` names ([bind_address:]port,
    // the allocated port for one asked with port 0, or a socket path), as
    // OpenSSH's channel_request_rforward_cancel: cancel-tcpip-forward (or
    // cancel-streamlocal-forward@openssh.com) without a reply wanted, and
    // the server's later opens for it refused. Connections already
    // forwarded carry on. False when no granted forward matched.
    bool cancel(const forward_spec& key);
    // A mux client's CLOSE_FWD: cancels the granted forward asked for
    // exactly as `spec` (the allocated port found for a port 0 request).
    bool cancel_requested(const forward_spec& spec);
    // The port the server allocated for the granted forward asked for
    // exactly as `spec` (port 0), if there is one.
    std::optional<int> allocated_port(const forward_spec& spec) const;
    // The client is ending: connections in progress abandoned, forwarded
    // sockets closed.
    void stop();

private:
    struct granted {
        forward_spec spec;
        int allocated_port = 0; // the server's port for a port 0 request
        bool active = false;
    };
    bool cancel_granted(std::vector<std::unique_ptr<granted>>::iterator it, int port);
    void open(connection& conn, channel_id id, std::string_view type, byte_span data);

    logger& log_;
    request_sender send_;
    forward::permission_list permit_remote_open_;
    std::vector<std::unique_ptr<granted>> forwards_;
    socket_channel_set channels_;
};

} // namespace longhaul
