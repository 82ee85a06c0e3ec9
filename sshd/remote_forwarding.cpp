#include "sshd/remote_forwarding.hpp"

#include "channel/forward/forward_messages.hpp"
#include "channel/io/listen_sockets.hpp"
#include "channel/io/socket_channel.hpp"
#include "common/text.hpp"
#include "sshd/forward_settings.hpp"
#include "sshd/server_session.hpp"

#include <boost/asio/io_context.hpp>

#include <unistd.h>


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

} // namespace

remote_forwarding::remote_forwarding(asio::io_context& io, connection_runner& runner, const session_environment& env)
    : io_(io), runner_(runner), env_(env), channels_(runner)
{
}

remote_forwarding::~remote_forwarding() = default;

void remote_forwarding::register_in(global_request_table& table)
{
    for (std::string_view name : {forward::tcpip_forward_name, forward::cancel_tcpip_forward_name,
                                  forward::streamlocal_forward_name, forward::cancel_streamlocal_forward_name})
        table.add(std::string(name), [this](connection& c, std::string_view n, bool want_reply, byte_span d) {
            request(c, n, want_reply, d);
        });
}

namespace {

void answer(connection& conn, bool want_reply, bool ok, byte_span data = {})
{
    if (want_reply)
        conn.reply_global(ok, data);
}

} // namespace

void remote_forwarding::request(connection& conn, std::string_view name, bool want_reply, byte_span data)
{
    auto reply = [&](bool ok) { answer(conn, want_reply, ok); };
    auto req = forward::decode_forward_request(name, data);
    if (!req) {
        // A value no host can use (a name or path too long) is refused, as
        // OpenSSH refuses it; a malformed request ends the connection.
        if (req.error() != errc::too_large)
            return conn.core().disconnect(disconnect_reason::protocol_error, std::string(name) + ": malformed request");
        env_.log->error(std::string(name) + ": listen address or path too long");
        return reply(false);
    }
    using kind = forward::forward_request_kind;
    switch (req->kind) {
    case kind::tcpip_forward:
        return tcpip_forward(conn, std::get<forward::tcpip_forward_request>(req->body), want_reply);
    case kind::streamlocal_forward:
        return streamlocal_forward(conn, std::get<forward::streamlocal_forward_request>(req->body), want_reply);
    case kind::cancel_tcpip_forward: {
        const auto& r = std::get<forward::tcpip_forward_request>(req->body);
        env_.log->debug("server_input_global_request: cancel-tcpip-forward addr " + printable(r.address) + " port " +
                        std::to_string(r.port));
        return reply(cancel([&](const granted_forward& f) {
            return f.path.empty() && f.address == r.address && f.port == r.port;
        }));
    }
    case kind::cancel_streamlocal_forward: {
        const auto& r = std::get<forward::streamlocal_forward_request>(req->body);
        return reply(cancel([&](const granted_forward& f) { return !f.path.empty() && f.path == r.path; }));
    }
    }
}

bool remote_forwarding::cancel(const std::function<bool(const granted_forward&)>& which)
{
    for (auto it = forwards_.begin(); it != forwards_.end(); ++it) {
        if (which(**it)) {
            forwards_.erase(it); // closes its listeners; connections in flight go on
            return true;
        }
    }
    return false;
}

bool remote_forwarding::room_for_another() const
{
    if (forwards_.size() < max_forwards)
        return true;
    env_.log->error("remote forwarding refused: " + std::to_string(max_forwards) +
                    " forwards are listening on this connection already");
    return false;
}

void remote_forwarding::tcpip_forward(connection& conn, const forward::tcpip_forward_request& r, bool want_reply)
{
    env_.log->debug("server_input_global_request: tcpip-forward listen " + printable(r.address) + " port " +
                    std::to_string(r.port));
    if (!forward::tcpip_forward_enabled(forwarding_settings_of(env_), r.port, want_reply) || !room_for_another()) {
        conn.core().send_debug(false, forward::port_forwarding_disabled_debug);
        return answer(conn, want_reply, false);
    }
    auto lists = listen_permission_lists(env_);
    if (!lists || !forward::listen_permitted(lists->first, lists->second, r.address, r.port)) {
        env_.log->info(forward::denied_remote_forward_log(env_.facts.remote_address, env_.facts.remote_port,
                                                          r.address, r.port));
        conn.core().send_debug(false, forward::port_forwarding_refused_debug);
        return answer(conn, want_reply, false);
    }
    // OpenSSH's channel_fwd_bind_addr, without its SSH_OLD_FORWARD_ADDR
    // quirk ("0.0.0.0" read as every address): no peer that old is left.
    const auto where = forward::forward_bind_address(std::optional<std::string_view>(r.address), false,
                                                     gateway(env_.config->gateway_ports));
    if (where.debug_message)
        conn.core().send_debug(false, *where.debug_message);
    auto bound = listen_tcp(where, r.port);
    for (const auto& e : bound.verbose)
        env_.log->verbose(printable(e));
    for (const auto& e : bound.errors)
        env_.log->error(printable(e));
    if (bound.fds.empty()) {
        env_.log->error("channel_setup_fwd_listener_tcpip: cannot listen to port: " + std::to_string(r.port));
        return answer(conn, want_reply, false);
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
        return answer(conn, want_reply, true, forward::tcpip_forward_reply{static_cast<std::uint16_t>(bound.port)}.encode());
    }
    answer(conn, want_reply, true);
}

void remote_forwarding::streamlocal_forward(connection& conn, const forward::streamlocal_forward_request& r,
                                            bool want_reply)
{
    env_.log->debug("server_input_global_request: streamlocal-forward listen path " + printable(r.path));
    if (!forward::streamlocal_forwarding_enabled(forwarding_settings_of(env_), forward::forward_direction::remote) ||
        !room_for_another()) {
        conn.core().send_debug(false, forward::streamlocal_forwarding_disabled_debug);
        return answer(conn, want_reply, false);
    }
    std::string error;
    const int fd = listen_unix(r.path, static_cast<unsigned>(env_.config->stream_local_bind_mask),
                               env_.config->stream_local_bind_unlink, error);
    if (fd < 0) {
        env_.log->error(printable(error));
        env_.log->error("channel_setup_fwd_listener_streamlocal: cannot listen to path: " + printable(r.path));
        return answer(conn, want_reply, false);
    }
    auto f = std::make_unique<granted_forward>();
    f->path = r.path;
    const granted_forward* raw = f.get();
    f->listeners.push_back(std::make_unique<fd_listener>(io_, fd, r.path, [this, raw](int c) { accepted(*raw, c); }));
    forwards_.push_back(std::move(f));
    answer(conn, want_reply, true);
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
        const auto [host, port] = peer_address(fd).value_or(std::make_pair(std::string("127.0.0.1"), 0));
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
    ch->on_refused = [this, cid = *id](std::uint32_t reason, std::string_view text) {
        env_.log->debug("channel " + std::to_string(cid) + ": open failed: reason " + std::to_string(reason) + ": " +
                        printable(text));
    };
    channels_.add(*id, ch);
    runner_.flush();
}

} // namespace longhaul
