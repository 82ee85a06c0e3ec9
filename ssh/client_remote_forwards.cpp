#include "ssh/client_remote_forwards.hpp"

#include "channel/forward/forward_messages.hpp"
#include "channel/forward/forward_policy.hpp"
#include "channel/io/socket_channel.hpp"
#include "common/text.hpp"


namespace longhaul {

namespace {

std::optional<std::string_view> listen_host_of(const forward_spec& s)
{
    return s.listen_host ? std::optional<std::string_view>(*s.listen_host) : std::nullopt;
}

// "host:port" or the path, as OpenSSH names a forward's target.
std::string target_of(const forward_spec& s)
{
    if (s.connect_path)
        return printable(*s.connect_path);
    return printable(s.connect_host.value_or("")) + ":" + std::to_string(s.connect_port);
}

} // namespace

client_remote_forwards::client_remote_forwards(connection_runner& runner, logger& log, request_sender send,
                                               const std::vector<std::string>& permit_remote_open)
    : log_(log), send_(std::move(send)), channels_(runner)
{
    // The config reader refused malformed entries already (as OpenSSH's
    // does); should one get here anyway, nothing is permitted.
    std::string why;
    auto list = forward::parse_permission_list(permit_remote_open, forward::permission_kind::open,
                                               "PermitRemoteOpen", why);
    permit_remote_open_ = list ? *list : forward::permission_list{forward::permission_list::mode::none, {}};
}

client_remote_forwards::~client_remote_forwards() = default;

void client_remote_forwards::register_in(channel_type_table& table)
{
    auto h = [this](connection& conn, channel_id id, std::string_view type, byte_span data) {
        open(conn, id, type, data);
    };
    table.add(std::string(forward::forwarded_tcpip_type), h);
    table.add(std::string(forward::forwarded_streamlocal_type), h);
}

void client_remote_forwards::request(const forward_spec& spec, reporting how,
                                     std::function<void(bool, int)> on_result)
{
    auto g = std::make_unique<granted>();
    g->spec = spec;
    granted* raw = g.get();
    forwards_.push_back(std::move(g));
    bytes data;
    std::string_view name;
    std::string what;
    if (spec.listen_path) {
        data = forward::streamlocal_forward_request{*spec.listen_path}.encode();
        name = forward::streamlocal_forward_name;
        what = "listen path " + printable(*spec.listen_path);
        log_.debug("Remote connections from " + printable(*spec.listen_path) + " forwarded to local address " +
                   target_of(spec));
    } else {
        forward::tcpip_forward_request r;
        r.address = std::string(forward::remote_forward_bind_host(listen_host_of(spec)));
        r.port = static_cast<std::uint16_t>(spec.listen_port);
        data = r.encode();
        name = forward::tcpip_forward_name;
        what = "listen port " + std::to_string(spec.listen_port);
        log_.debug("Remote connections from " + printable(spec.listen_host.value_or("LOCALHOST")) + ":" +
                   std::to_string(spec.listen_port) + " forwarded to local address " + target_of(spec));
    }
    send_(name, data, true, [this, raw, what, how, on_result](bool ok, byte_span reply) {
        auto failed = [&](const std::string& detail) {
            // OpenSSH's ssh_confirm_remote_forward, or its mux master's
            // mux_confirm_remote_forward.
            if (how == reporting::own_exit_on_failure)
                log_.error("Error: remote port forwarding failed for " + what + detail);
            else if (how == reporting::own)
                log_.info("Warning: remote port forwarding failed for " + what + detail);
            else
                log_.error("mux_confirm_remote_forward: remote port forwarding failed for " + what + detail);
            raw->active = false;
            if (on_result)
                on_result(false, 0);
        };
        if (!ok)
            return failed("");
        raw->active = true;
        if (!raw->spec.listen_path && raw->spec.listen_port == 0) {
            auto r = forward::tcpip_forward_reply::decode(reply);
            if (!r)
                return failed(": malformed reply");
            raw->allocated_port = r->port;
            const std::string line =
                "Allocated port " + std::to_string(r->port) + " for remote forward to " + target_of(raw->spec);
            if (how == reporting::mux)
                log_.debug("Allocated port " + std::to_string(r->port) + " for mux remote forward to " +
                           target_of(raw->spec));
            else
                log_.info(line);
        }
        if (on_result)
            on_result(true, raw->allocated_port);
    });
}

bool client_remote_forwards::cancel(const forward_spec& key)
{
    auto matches = [&](const granted& g) {
        if (!g.active)
            return false;
        if (key.listen_path || g.spec.listen_path)
            return key.listen_path == g.spec.listen_path;
        const int port = g.spec.listen_port == 0 ? g.allocated_port : g.spec.listen_port;
        return port == key.listen_port && g.spec.listen_host == key.listen_host;
    };
    for (auto it = forwards_.begin(); it != forwards_.end(); ++it)
        if (matches(**it))
            return cancel_granted(it, key.listen_port);
    return false;
}

bool client_remote_forwards::cancel_requested(const forward_spec& spec)
{
    for (auto it = forwards_.begin(); it != forwards_.end(); ++it) {
        const granted& g = **it;
        if (g.active && g.spec == spec)
            return cancel_granted(it, g.spec.listen_port == 0 ? g.allocated_port : g.spec.listen_port);
    }
    return false;
}

std::optional<int> client_remote_forwards::allocated_port(const forward_spec& spec) const
{
    for (const auto& g : forwards_)
        if (g->active && g->spec == spec && g->spec.listen_port == 0)
            return g->allocated_port;
    return std::nullopt;
}

// cancel-tcpip-forward (or the streamlocal one) for `port`, without a reply
// wanted, and the server's later opens for it refused.
bool client_remote_forwards::cancel_granted(std::vector<std::unique_ptr<granted>>::iterator it, int port)
{
    const granted& g = **it;
    if (g.spec.listen_path) {
        send_(forward::cancel_streamlocal_forward_name, forward::streamlocal_forward_request{*g.spec.listen_path}.encode(),
              false, nullptr);
    } else {
        forward::tcpip_forward_request r;
        r.address = std::string(forward::remote_forward_bind_host(listen_host_of(g.spec)));
        r.port = static_cast<std::uint16_t>(port);
        send_(forward::cancel_tcpip_forward_name, r.encode(), false, nullptr);
    }
    forwards_.erase(it);
    return true;
}

void client_remote_forwards::open(connection& conn, channel_id id, std::string_view type, byte_span data)
{
    auto decoded = forward::decode_forward_open(type, data);
    if (!decoded) {
        conn.core().disconnect(disconnect_reason::protocol_error, std::string(type) + ": malformed open");
        return;
    }
    const granted* match = nullptr;
    if (auto* t = std::get_if<forward::forwarded_tcpip_open>(&*decoded)) {
        log_.debug("client_request_forwarded_tcpip: listen " + printable(t->address) + " port " +
                   std::to_string(t->port) + ", originator " + printable(t->originator) + " port " +
                   std::to_string(t->originator_port));
        for (const auto& g : forwards_) {
            const int port = g->spec.listen_port == 0 ? g->allocated_port : g->spec.listen_port;
            if (g->active && !g->spec.listen_path &&
                forward::remote_forward_matches(listen_host_of(g->spec), port, t->address, t->port)) {
                match = g.get();
                break;
            }
        }
        if (match == nullptr)
            log_.error("WARNING: Server requests forwarding for unknown listen_port " + std::to_string(t->port));
    } else if (auto* s = std::get_if<forward::forwarded_streamlocal_open>(&*decoded)) {
        for (const auto& g : forwards_)
            if (g->active && g->spec.listen_path && *g->spec.listen_path == s->path) {
                match = g.get();
                break;
            }
        if (match == nullptr)
            log_.error("WARNING: Server requests forwarding for unknown path " + printable(s->path));
    }
    if (match == nullptr) {
        conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
        return;
    }
    auto log_failure = [this](const std::string& line) { log_.error(line); };
    if (!match->spec.connect_path && (!match->spec.connect_host || match->spec.is_dynamic())) {
        // OpenSSH's rdynamic_connect_finish: PermitRemoteOpen decides.
        channels_.accept_socks(
            id, log_,
            [this](const forward::socks_request& r) {
                if (forward::open_list_permits(permit_remote_open_, r.host, r.port))
                    return true;
                log_.debug("rdynamic_connect_finish: requested forward not permitted");
                return false;
            },
            log_failure);
        return;
    }
    const forward_spec& t = match->spec;
    channels_.connect_and_accept(id, t.connect_host.value_or(""), t.connect_port, t.connect_path.value_or(""),
                                 log_failure);
}

void client_remote_forwards::stop() { channels_.stop_all(); }

} // namespace longhaul
