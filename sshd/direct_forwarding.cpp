#include "sshd/direct_forwarding.hpp"

#include "channel/forward/forward_messages.hpp"
#include "channel/forward/forward_permissions.hpp"
#include "channel/forward/forward_policy.hpp"
#include "channel/io/socket_channel.hpp"
#include "common/text.hpp"
#include "sshd/server_session.hpp"

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/local/stream_protocol.hpp>
#include <boost/asio/post.hpp>

#include <fcntl.h>

namespace longhaul {

namespace asio = boost::asio;

struct direct_forwarding::pending {
    explicit pending(asio::io_context& io) : resolver(io), tcp(io), local(io) {}
    asio::ip::tcp::resolver resolver;
    asio::ip::tcp::socket tcp;
    asio::local::stream_protocol::socket local;
};

namespace {

forward::forwarding_allowed allowed(forwarding_mode m)
{
    switch (m) {
    case forwarding_mode::no: return forward::forwarding_allowed::no;
    case forwarding_mode::yes: return forward::forwarding_allowed::yes;
    case forwarding_mode::local: return forward::forwarding_allowed::local;
    case forwarding_mode::remote: return forward::forwarding_allowed::remote;
    }
    return forward::forwarding_allowed::no;
}

forward::forwarding_settings settings_of(const session_environment& env)
{
    forward::forwarding_settings s;
    s.tcp = allowed(env.config->allow_tcp_forwarding);
    s.streamlocal = allowed(env.config->allow_stream_local_forwarding);
    s.disable_forwarding = env.config->disable_forwarding;
    s.key_permits_forwarding = !env.key || env.key->options.permit_port_forwarding;
    return s;
}

// PermitOpen and the key's permitopen=; nullopt (deny) if either cannot
// be read, which sshd -t would have reported for the configuration.
std::optional<std::pair<forward::permission_list, forward::permission_list>> open_lists(const session_environment& env)
{
    std::string why;
    auto admin = forward::parse_permission_list(env.config->permit_open, forward::permission_kind::open,
                                                "PermitOpen", why);
    static const std::vector<std::string> none_given;
    auto user = forward::parse_permission_list(env.key ? env.key->options.permit_open : none_given,
                                               forward::permission_kind::open, "permitopen", why);
    if (!admin || !user) {
        env.log->error("forwarding permissions unreadable: " + why);
        return std::nullopt;
    }
    return std::make_pair(std::move(*admin), std::move(*user));
}

// The descriptor of a connected Asio socket, for the pumps. Released, not
// duplicated and closed: closing one of two descriptors of a socket leaves
// its epoll registration behind (Asio skips EPOLL_CTL_DEL when closing),
// and a later descriptor given the same number could not be watched.
template <class Socket>
int take_fd(Socket& s)
{
    boost::system::error_code ec;
    const int fd = s.release(ec);
    return ec ? -1 : fd;
}

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
    if (!forward::tcp_forwarding_enabled(settings_of(env_), forward::forward_direction::local)) {
        env_.log->info(forward::refused_local_forward_log(r.originator, r.originator_port, r.host, r.port));
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    auto lists = open_lists(env_);
    if (!lists || !forward::open_permitted(lists->first, lists->second, r.host, r.port)) {
        env_.log->info(forward::denied_connect_log(env_.facts.remote_address, env_.facts.remote_port, r.host, r.port));
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    auto p = std::make_unique<pending>(io_);
    pending& pr = *p;
    connecting_[id] = std::move(p);
    const std::string host = r.host;
    const int port = r.port;
    pr.resolver.async_resolve(
        host, std::to_string(port), asio::ip::tcp::resolver::numeric_service,
        [this, id, host, port, &pr](const boost::system::error_code& ec, asio::ip::tcp::resolver::results_type res) {
            if (ec) {
                // OpenSSH's words; gai_strerror's text is what Asio's message holds.
                failed(id, "connect_to " + printable(host) + ": unknown host (" + ec.message() + ")",
                       ec.message());
                return;
            }
            asio::async_connect(pr.tcp, res,
                                [this, id, host, port, &pr](const boost::system::error_code& ec2,
                                                            const asio::ip::tcp::endpoint&) {
                                    if (ec2) {
                                        failed(id,
                                               "connect_to " + printable(host) + " port " + std::to_string(port) +
                                                   ": failed.",
                                               ec2.message());
                                        return;
                                    }
                                    connected(id, take_fd(pr.tcp));
                                });
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
    if (!forward::streamlocal_forwarding_enabled(settings_of(env_), forward::forward_direction::local)) {
        env_.log->info(forward::refused_streamlocal_forward_log(r.originator, r.originator_port, r.path));
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    // The socket path is the host of a PermitOpen entry (OpenSSH's
    // channel_connect_to_path, port PORT_STREAMLOCAL).
    auto lists = open_lists(env_);
    if (!lists || !forward::path_open_permitted(lists->first, lists->second, r.path)) {
        env_.log->info(forward::denied_connect_path_log(r.path));
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    auto p = std::make_unique<pending>(io_);
    pending& pr = *p;
    connecting_[id] = std::move(p);
    const std::string path = r.path;
    pr.local.async_connect(asio::local::stream_protocol::endpoint(path),
                           [this, id, path, &pr](const boost::system::error_code& ec) {
                               if (ec) {
                                   failed(id, "connect_to path " + printable(path) + ": " + ec.message(), ec.message());
                                   return;
                               }
                               connected(id, take_fd(pr.local));
                           });
}

void direct_forwarding::forget_pending(channel_id id)
{
    // Not inside the connect's own handler: `pending` owns the objects it
    // runs in. The id may be reused by then; erase only this one.
    auto it = connecting_.find(id);
    if (it == connecting_.end())
        return;
    pending* p = it->second.get();
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
