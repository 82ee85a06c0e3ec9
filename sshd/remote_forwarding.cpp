#include "sshd/remote_forwarding.hpp"

#include "channel/forward/forward_messages.hpp"
#include "channel/io/listen_sockets.hpp"
#include "channel/io/socket_channel.hpp"
#include "common/text.hpp"
#include "sshd/forward_settings.hpp"
#include "sshd/server_session.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>

#include <netdb.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cstdlib>

namespace longhaul {

namespace asio = boost::asio;

namespace {

forward::gateway_ports gateway(gateway_ports_mode m)
{
    switch (m) {
    case gateway_ports_mode::no: return forward::gateway_ports::no;
    case gateway_ports_mode::yes: return forward::gateway_ports::yes;
    case gateway_ports_mode::client_specified: return forward::gateway_ports::client_specified;
    }
    return forward::gateway_ports::no;
}

// The numeric address and port of a connection's peer (TCP), for the
// originator fields of forwarded-tcpip.
std::pair<std::string, int> peer_of(int fd)
{
    sockaddr_storage ss{};
    socklen_t len = sizeof ss;
    char host[NI_MAXHOST];
    char serv[NI_MAXSERV];
    if (::getpeername(fd, reinterpret_cast<sockaddr*>(&ss), &len) == 0 &&
        ::getnameinfo(reinterpret_cast<sockaddr*>(&ss), len, host, sizeof host, serv, sizeof serv,
                      NI_NUMERICHOST | NI_NUMERICSERV) == 0)
        return {host, std::atoi(serv)};
    return {"127.0.0.1", 0};
}

} // namespace

remote_forwarding::remote_forwarding(asio::io_context& io, connection_runner& runner, const session_environment& env)
    : io_(io), runner_(runner), env_(env)
{
}

remote_forwarding::~remote_forwarding() = default;

void remote_forwarding::register_in(global_request_table& table)
{
    table.add(std::string(forward::tcpip_forward_name),
              [this](connection& c, std::string_view, bool r, byte_span d) { tcpip_forward(c, r, d); });
    table.add(std::string(forward::cancel_tcpip_forward_name),
              [this](connection& c, std::string_view, bool r, byte_span d) { cancel_tcpip_forward(c, r, d); });
    table.add(std::string(forward::streamlocal_forward_name),
              [this](connection& c, std::string_view, bool r, byte_span d) { streamlocal_forward(c, r, d); });
    table.add(std::string(forward::cancel_streamlocal_forward_name),
              [this](connection& c, std::string_view, bool r, byte_span d) { cancel_streamlocal_forward(c, r, d); });
}

void remote_forwarding::tcpip_forward(connection& conn, bool want_reply, byte_span data)
{
    auto req = forward::tcpip_forward_request::decode(data);
    if (!req && req.error() != errc::too_large) {
        conn.core().disconnect(disconnect_reason::protocol_error, "tcpip-forward: malformed request");
        return;
    }
    auto reply = [&](bool ok, byte_span d = {}) {
        if (want_reply)
            conn.reply_global(ok, d);
    };
    if (!req) {
        env_.log->error("tcpip-forward: listen host name too long");
        return reply(false);
    }
    const auto& r = *req;
    env_.log->debug("server_input_global_request: tcpip-forward listen " + printable(r.address) + " port " +
                    std::to_string(r.port));
    if (!forward::tcpip_forward_enabled(forwarding_settings_of(env_), r.port, want_reply)) {
        conn.core().send_debug(false, forward::port_forwarding_disabled_debug);
        return reply(false);
    }
    auto lists = listen_permission_lists(env_);
    if (!lists || !forward::listen_permitted(lists->first, lists->second, r.address, r.port)) {
        env_.log->info(forward::denied_remote_forward_log(env_.facts.remote_address, env_.facts.remote_port,
                                                          r.address, r.port));
        conn.core().send_debug(false, forward::port_forwarding_refused_debug);
        return reply(false);
    }
    // OpenSSH's channel_fwd_bind_addr, with its SSH_OLD_FORWARD_ADDR
    // reading of "0.0.0.0" for every client (no peer this old is left).
    const auto where = forward::forward_bind_address(std::optional<std::string_view>(r.address), false,
                                                     gateway(env_.config->gateway_ports));
    if (where.debug_message)
        conn.core().send_debug(false, *where.debug_message);
    auto bound = listen_tcp(where, r.port);
    for (const auto& e : bound.errors)
        env_.log->error(printable(e));
    if (bound.fds.empty()) {
        env_.log->error("channel_setup_fwd_listener_tcpip: cannot listen to port: " + std::to_string(r.port));
        return reply(false);
    }
    auto f = std::make_unique<granted_forward>();
    f->address = r.address;
    f->port = bound.port;
    const granted_forward* raw = f.get();
    for (int fd : bound.fds)
        f->listeners.push_back(std::make_unique<fd_listener>(io_, fd, std::string(), [this, raw](int c) {
            accepted(*raw, c);
        }));
    forwards_.push_back(std::move(f));
    if (r.port == 0) {
        env_.log->debug("Allocated listen port " + std::to_string(bound.port));
        return reply(true, forward::tcpip_forward_reply{static_cast<std::uint16_t>(bound.port)}.encode());
    }
    reply(true);
}

void remote_forwarding::cancel_tcpip_forward(connection& conn, bool want_reply, byte_span data)
{
    auto req = forward::tcpip_forward_request::decode(data);
    if (!req && req.error() != errc::too_large) {
        conn.core().disconnect(disconnect_reason::protocol_error, "cancel-tcpip-forward: malformed request");
        return;
    }
    bool found = false;
    if (req) {
        env_.log->debug("server_input_global_request: cancel-tcpip-forward addr " + printable(req->address) +
                        " port " + std::to_string(req->port));
        for (auto it = forwards_.begin(); it != forwards_.end(); ++it) {
            if ((*it)->path.empty() && (*it)->address == req->address && (*it)->port == req->port) {
                forwards_.erase(it); // closes its listeners; connections in flight go on
                found = true;
                break;
            }
        }
    }
    if (want_reply)
        conn.reply_global(found);
}

void remote_forwarding::streamlocal_forward(connection& conn, bool want_reply, byte_span data)
{
    auto req = forward::streamlocal_forward_request::decode(data);
    if (!req && req.error() != errc::too_large) {
        conn.core().disconnect(disconnect_reason::protocol_error, "streamlocal-forward: malformed request");
        return;
    }
    auto reply = [&](bool ok) {
        if (want_reply)
            conn.reply_global(ok);
    };
    if (!req) {
        env_.log->error("streamlocal-forward: socket path too long");
        return reply(false);
    }
    env_.log->debug("server_input_global_request: streamlocal-forward listen path " + printable(req->path));
    if (!forward::streamlocal_forwarding_enabled(forwarding_settings_of(env_), forward::forward_direction::remote)) {
        conn.core().send_debug(false, forward::streamlocal_forwarding_disabled_debug);
        return reply(false);
    }
    std::string error;
    const int fd = listen_unix(req->path, static_cast<unsigned>(env_.config->stream_local_bind_mask),
                               env_.config->stream_local_bind_unlink, error);
    if (fd < 0) {
        env_.log->error(printable(error));
        env_.log->error("channel_setup_fwd_listener_streamlocal: cannot listen to path: " + printable(req->path));
        return reply(false);
    }
    auto f = std::make_unique<granted_forward>();
    f->path = req->path;
    const granted_forward* raw = f.get();
    f->listeners.push_back(std::make_unique<fd_listener>(io_, fd, req->path, [this, raw](int c) { accepted(*raw, c); }));
    forwards_.push_back(std::move(f));
    reply(true);
}

void remote_forwarding::cancel_streamlocal_forward(connection& conn, bool want_reply, byte_span data)
{
    auto req = forward::streamlocal_forward_request::decode(data);
    if (!req && req.error() != errc::too_large) {
        conn.core().disconnect(disconnect_reason::protocol_error, "cancel-streamlocal-forward: malformed request");
        return;
    }
    bool found = false;
    if (req) {
        for (auto it = forwards_.begin(); it != forwards_.end(); ++it) {
            if (!(*it)->path.empty() && (*it)->path == req->path) {
                forwards_.erase(it);
                found = true;
                break;
            }
        }
    }
    if (want_reply)
        conn.reply_global(found);
}

void remote_forwarding::accepted(const granted_forward& f, int fd)
{
    bytes data;
    std::string_view type;
    if (!f.path.empty()) {
        forward::forwarded_streamlocal_open o;
        o.path = f.path;
        data = o.encode();
        type = forward::forwarded_streamlocal_type;
    } else {
        const auto [host, port] = peer_of(fd);
        forward::forwarded_tcpip_open o;
        o.address = f.address;
        o.port = static_cast<std::uint16_t>(f.port);
        o.originator = host;
        o.originator_port = static_cast<std::uint16_t>(port);
        data = o.encode();
        type = forward::forwarded_tcpip_type;
    }
    auto id = runner_.conn().open(type, data);
    if (!id) {
        ::close(fd);
        return;
    }
    auto ch = std::make_shared<socket_channel>(fd);
    const channel_id cid = *id;
    ch->on_refused = [this, cid](std::uint32_t reason, std::string_view text) {
        env_.log->debug("channel " + std::to_string(cid) + ": open failed: reason " + std::to_string(reason) + ": " +
                        printable(text));
    };
    ch->on_finished = [this, cid, raw = ch.get()] {
        asio::post(io_, [this, cid, raw] {
            auto it = channels_.find(cid);
            if (it != channels_.end() && it->second.get() == raw)
                channels_.erase(it);
        });
    };
    runner_.attach(cid, ch);
    channels_[cid] = ch;
    runner_.flush();
}

} // namespace longhaul
