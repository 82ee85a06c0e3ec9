#include "sshd/direct_forwarding.hpp"

#include "channel/forward/forward_messages.hpp"
#include "channel/io/connect_socket.hpp"
#include "channel/io/socket_channel.hpp"
#include "common/text.hpp"
#include "sshd/forward_settings.hpp"
#include "sshd/server_session.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>


namespace longhaul {

namespace asio = boost::asio;

namespace {

} // namespace

direct_forwarding::direct_forwarding(asio::io_context& io, connection_runner& runner, const session_environment& env)
    : io_(io), runner_(runner), env_(env)
{
}

direct_forwarding::~direct_forwarding() = default;

void direct_forwarding::register_in(channel_type_table& table)
{
    table.add(std::string(forward::direct_tcpip_type),
              [this](connection& conn, channel_id id, std::string_view, byte_span data) { open_tcpip(conn, id, data); });
    table.add(std::string(forward::direct_streamlocal_type),
              [this](connection& conn, channel_id id, std::string_view, byte_span data) {
                  open_streamlocal(conn, id, data);
              });
}

void direct_forwarding::open_tcpip(connection& conn, channel_id id, byte_span data)
{
    auto req = forward::direct_tcpip_open::decode(data);
    if (!req) {
        if (req.error() == errc::too_large) {
            env_.log->error("direct-tcpip: host name or port out of range");
            conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        } else {
            conn.core().disconnect(disconnect_reason::protocol_error, "direct-tcpip: malformed request");
        }
        return;
    }
    const auto& r = *req;
    env_.log->debug("server_request_direct_tcpip: originator " + printable(r.originator) + " port " +
                    std::to_string(r.originator_port) + ", target " + printable(r.host) + " port " +
                    std::to_string(r.port));
    if (!forward::tcp_forwarding_enabled(forwarding_settings_of(env_), forward::forward_direction::local)) {
        env_.log->info(forward::refused_local_forward_log(r.originator, r.originator_port, r.host, r.port));
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    auto lists = open_permission_lists(env_);
    if (!lists || !forward::open_permitted(lists->first, lists->second, r.host, r.port)) {
        env_.log->info(forward::denied_connect_log(env_.facts.remote_address, env_.facts.remote_port, r.host, r.port));
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    connecting_[id] = connect_tcp(io_, r.host, r.port, [this, id](int fd, const connect_failure& f) {
        if (fd < 0)
            failed(id, f.log_line, f.reason);
        else
            connected(id, fd);
    });
}

void direct_forwarding::open_streamlocal(connection& conn, channel_id id, byte_span data)
{
    auto req = forward::direct_streamlocal_open::decode(data);
    if (!req) {
        if (req.error() == errc::too_large) {
            env_.log->error("direct-streamlocal: socket path too long");
            conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        } else {
            conn.core().disconnect(disconnect_reason::protocol_error, "direct-streamlocal: malformed request");
        }
        return;
    }
    const auto& r = *req;
    env_.log->debug("server_request_direct_streamlocal: originator " + printable(r.originator) + " port " +
                    std::to_string(r.originator_port) + ", target " + printable(r.path));
    if (!forward::streamlocal_forwarding_enabled(forwarding_settings_of(env_), forward::forward_direction::local)) {
        env_.log->info(forward::refused_streamlocal_forward_log(r.originator, r.originator_port, r.path));
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    // The socket path is the host of a PermitOpen entry (OpenSSH's
    // channel_connect_to_path, port PORT_STREAMLOCAL).
    auto lists = open_permission_lists(env_);
    if (!lists || !forward::path_open_permitted(lists->first, lists->second, r.path)) {
        env_.log->info(forward::denied_connect_path_log(r.path));
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    connecting_[id] = connect_unix(io_, r.path, [this, id](int fd, const connect_failure& f) {
        if (fd < 0)
            failed(id, f.log_line, f.reason);
        else
            connected(id, fd);
    });
}

void direct_forwarding::forget_pending(channel_id id)
{
    // Not inside the connect's own handler: `pending` owns the objects it
    // runs in. The id may be reused by then; erase only this one.
    auto it = connecting_.find(id);
    if (it == connecting_.end())
        return;
    pending_connect* p = it->second.get();
    asio::post(io_, [this, id, p] {
        auto again = connecting_.find(id);
        if (again != connecting_.end() && again->second.get() == p)
            connecting_.erase(again);
    });
}

void direct_forwarding::connected(channel_id id, int fd)
{
    forget_pending(id);
    connection& conn = runner_.conn();
    if (fd < 0) {
        conn.reject(id, open_failure_reason::connect_failed, "out of file descriptors");
        runner_.flush();
        return;
    }
    auto ch = std::make_shared<socket_channel>(fd);
    ch->on_finished = [this, id, raw = ch.get()] {
        asio::post(io_, [this, id, raw] {
            auto it = channels_.find(id);
            if (it != channels_.end() && it->second.get() == raw)
                channels_.erase(it);
        });
    };
    conn.accept(id);
    runner_.attach(id, ch);
    channels_[id] = ch;
    ch->start();
    runner_.flush();
}

void direct_forwarding::failed(channel_id id, const std::string& log_line, const std::string& reason)
{
    forget_pending(id);
    env_.log->error(log_line);
    runner_.conn().reject(id, open_failure_reason::connect_failed, reason);
    runner_.flush();
}

} // namespace longhaul
