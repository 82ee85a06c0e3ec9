#include "sshd/direct_forwarding.hpp"

#include "channel/forward/forward_messages.hpp"
#include "common/text.hpp"
#include "sshd/forward_settings.hpp"
#include "sshd/server_session.hpp"

namespace longhaul {

namespace {

// The open's data decoded, or nullopt once it is answered: a value no host
// can use (errc::too_large) is refused with a log line, as OpenSSH refuses
// it; a malformed message is a protocol error, and the connection ends.
template <class Open>
std::optional<Open> decode_open(connection& conn, channel_id id, byte_span data, logger& log, std::string_view what)
{
    auto req = Open::decode(data);
    if (req)
        return std::move(*req);
    if (req.error() == errc::too_large) {
        log.error(std::string(what) + ": target out of range");
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
    } else {
        conn.core().disconnect(disconnect_reason::protocol_error, std::string(what) + ": malformed request");
    }
    return std::nullopt;
}

void refuse(connection& conn, channel_id id)
{
    conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
}

} // namespace

direct_forwarding::direct_forwarding(connection_runner& runner, const session_environment& env)
    : env_(env), channels_(runner)
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
    auto req = decode_open<forward::direct_tcpip_open>(conn, id, data, *env_.log, forward::direct_tcpip_type);
    if (!req)
        return;
    const auto& r = *req;
    env_.log->debug("server_request_direct_tcpip: originator " + printable(r.originator) + " port " +
                    std::to_string(r.originator_port) + ", target " + printable(r.host) + " port " +
                    std::to_string(r.port));
    if (!forward::tcp_forwarding_enabled(forwarding_settings_of(env_), forward::forward_direction::local)) {
        env_.log->info(forward::refused_local_forward_log(r.originator, r.originator_port, r.host, r.port));
        return refuse(conn, id);
    }
    auto lists = open_permission_lists(env_);
    if (!lists || !forward::open_permitted(lists->first, lists->second, r.host, r.port)) {
        env_.log->info(forward::denied_connect_log(env_.facts.remote_address, env_.facts.remote_port, r.host, r.port));
        return refuse(conn, id);
    }
    channels_.connect_and_accept(id, r.host, r.port, "", [this](const std::string& line) { env_.log->error(line); });
}

void direct_forwarding::open_streamlocal(connection& conn, channel_id id, byte_span data)
{
    auto req = decode_open<forward::direct_streamlocal_open>(conn, id, data, *env_.log, forward::direct_streamlocal_type);
    if (!req)
        return;
    const auto& r = *req;
    env_.log->debug("server_request_direct_streamlocal: originator " + printable(r.originator) + " port " +
                    std::to_string(r.originator_port) + ", target " + printable(r.path));
    if (!forward::streamlocal_forwarding_enabled(forwarding_settings_of(env_), forward::forward_direction::local)) {
        env_.log->info(forward::refused_streamlocal_forward_log(r.originator, r.originator_port, r.path));
        return refuse(conn, id);
    }
    // The socket path is the host of a PermitOpen entry (OpenSSH's
    // channel_connect_to_path, port PORT_STREAMLOCAL).
    auto lists = open_permission_lists(env_);
    if (!lists || !forward::path_open_permitted(lists->first, lists->second, r.path)) {
        env_.log->info(forward::denied_connect_path_log(r.path));
        return refuse(conn, id);
    }
    channels_.connect_and_accept(id, "", 0, r.path, [this](const std::string& line) { env_.log->error(line); });
}

} // namespace longhaul
