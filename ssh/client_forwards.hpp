// ssh's local forwarding (issue 11): -W (stdio forwarding), -L and
// LocalForward (TCP or Unix-socket listeners, to host:port or a socket path
// on the server's side), -D and DynamicForward (a SOCKS 4/4a/5 server whose
// CONNECT requests become channels; the handshake is channel/forward's
// socks_server). Each accepted connection opens a direct-tcpip (or
// direct-streamlocal@openssh.com) channel and is carried by a
// socket_channel once the server confirms it, so forwarded channels get the
// same window policy as sessions. Listeners bind as OpenSSH's ssh binds
// them (GatewayPorts, "localhost" as both loopbacks, "*" as every address;
// StreamLocalBindMask and StreamLocalBindUnlink for sockets), and the
// messages are OpenSSH's ("bind [127.0.0.1]:8080: Address already in use",
// "channel 2: open failed: connect failed: Connection refused").
#pragma once

#include "channel/forward/forward_policy.hpp"
#include "channel/io/connection_runner.hpp"
#include "channel/io/socket_channel.hpp"
#include "ssh/client_config.hpp"

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace longhaul {

// OpenSSH's channel_input_open_failure line: "channel N: open failed:
// administratively prohibited: open failed" (reason2txt and the text).
std::string open_failed_line(channel_id id, std::uint32_t reason, std::string_view text);

class fd_listener;

class client_forwards {
public:
    struct settings {
        bool gateway_ports = false;             // GatewayPorts
        unsigned stream_local_bind_mask = 0177; // StreamLocalBindMask
        bool stream_local_bind_unlink = false;  // StreamLocalBindUnlink
    };

    client_forwards(connection_runner& runner, logger& log, settings s);
    ~client_forwards();
    client_forwards(const client_forwards&) = delete;
    client_forwards& operator=(const client_forwards&) = delete;

    // -W host:port: stdin and stdout to a channel to host:port. on_done(0)
    // once the channel has closed both ways; on_done(255) after "stdio
    // forwarding failed" if the server refused it.
    bool start_stdio(const std::string& host, int port, std::function<void(int status)> on_done);
    // A stdio forward on descriptors of its own (a mux client's NEW_STDIO_FWD;
    // both taken): a channel to host:port (a socket path for
    // port_streamlocal). `on_open` gets the server's answer (false after
    // OpenSSH's "open failed" line), `on_closed` runs once the channel has
    // closed both ways. Null, with the descriptors closed, when no channel
    // could be opened.
    std::shared_ptr<socket_channel> open_stdio(int in, int out, const std::string& host, int port,
                                               std::function<void(bool opened)> on_open,
                                               std::function<void()> on_closed);
    // -L / -D: the listeners of one forward. False, with OpenSSH's lines
    // logged, when nothing could listen.
    bool listen(const forward_spec& spec);
    // ~C -KL / -KD: closes the listeners of the forward that `key` names
    // ([bind_address:]port, or a socket path; `dynamic` picks -D forwards,
    // else -L ones), as OpenSSH's channel_cancel_lport_listener does.
    // Connections already forwarded carry on. False when none matched.
    bool cancel(const forward_spec& key, bool dynamic);

    // ~&: every -L and -D listener closed (OpenSSH's
    // channel_stop_listening); connections already forwarded carry on.
    void stop_listening();

    std::size_t listener_count() const noexcept { return listeners_.size(); }
    // The client is ending: listeners, handshakes and forwarded sockets
    // closed, so nothing keeps the event loop running.
    void stop();

private:
    struct socks_handshake;
    // Where a -L / -D forward's listeners bind (GatewayPorts applied).
    forward::bind_address bind_address_of(const forward_spec& spec) const;
    void accepted(const forward_spec& spec, int fd);
    // Opens the channel for `fd` (direct-streamlocal when `path` is set);
    // `on_open(ok)` runs when the server answers, before the socket is
    // carried (a SOCKS reply goes out there).
    void open_for(int fd, const std::string& host, int port, const std::string& path,
                  std::function<bool(channel_id, bool ok, std::uint32_t reason)> on_open);
    void start_socks(int fd);

    connection_runner& runner_;
    logger& log_;
    settings settings_;
    struct listener {
        forward_spec spec;
        std::unique_ptr<fd_listener> socket;
    };
    std::vector<listener> listeners_;
    socket_channel_set channels_;
    std::map<socks_handshake*, std::shared_ptr<socks_handshake>> handshakes_;
};

} // namespace longhaul
