#include "channel/session/session_layer.hpp"

#include "channel/messages.hpp"

#include <algorithm>

namespace longhaul {

namespace {

bool is_auth_message(std::uint8_t type) noexcept
{
    return type == msg::service_request || type == msg::service_accept || (type >= 50 && type < 80);
}

bool is_userauth_message(std::uint8_t type) noexcept { return type >= 50 && type < 80; }

} // namespace

session_layer::session_layer(transport& t, session_role role) : transport_(t), role_(role) {}

session_layer::~session_layer() = default;

void session_layer::start_client_auth(client_auth_config cfg)
{
    client_auth_ = std::make_unique<client_auth>(std::move(cfg), client_auth_session_from(transport_));
    client_auth_->start();
}

void session_layer::start_server_auth(server_auth_config cfg, server_auth_policy policy)
{
    server_auth_ = std::make_unique<server_auth>(std::move(cfg), std::move(policy));
}

connection& session_layer::open_connection(connection_config cfg)
{
    conn_ = std::make_unique<connection>(transport_, cfg);
    return *conn_;
}

session_event session_layer::handle(const transport_event& ev, steady_time now)
{
    session_event out;
    switch (ev.type) {
    case transport_event_type::none: return out;
    case transport_event_type::payload: return route(ev, now);
    case transport_event_type::kex_complete:
        if (!kex_done_) {
            kex_done_ = true;
            out.type = session_event_type::first_kex;
            return out;
        }
        break; // a rekey: the program may report it
    case transport_event_type::ext_info:
        // server-sig-algs and friends change what the client may offer;
        // poll() goes on with the machine.
        if (client_auth_)
            client_auth_->update_session(client_auth_session_from(transport_));
        return out;
    default: break;
    }
    out.type = session_event_type::transport;
    out.transport = &ev;
    return out;
}

session_event session_layer::route(const transport_event& ev, steady_time now)
{
    session_event out;
    if (ev.payload.empty())
        return out; // the transport never hands out an empty payload
    const std::uint8_t type = ev.payload[0];
    if (is_auth_message(type)) {
        if (role_ == session_role::client) {
            if (client_auth_)
                client_auth_->handle(ev.payload, ev.seq); // it ignores them once finished
            else
                transport_.send_unimplemented(ev.seq);
        } else if (authenticated_) {
            // A second authentication after success is ignored, as sshd does.
            if (!is_userauth_message(type))
                transport_.send_unimplemented(ev.seq);
        } else if (server_auth_) {
            request_time_ = now;
            server_auth_->handle(ev.payload, ev.seq);
        } else {
            transport_.send_unimplemented(ev.seq);
        }
        return out;
    }
    if (!msg::is_connection_message(type) || !authenticated_ || !conn_) {
        // Nothing but authentication before authentication.
        transport_.send_unimplemented(ev.seq);
        return out;
    }
    connection_event e = conn_->handle(ev.payload, now);
    switch (e.type) {
    case connection_event_type::none: break;
    case connection_event_type::open_request: channel_types_.open(*conn_, e); break;
    case connection_event_type::global_request: global_requests_.handle(*conn_, e); break;
    default:
        out.type = session_event_type::channel;
        out.channel = e;
        break;
    }
    return out;
}

session_event session_layer::poll(steady_time now)
{
    return role_ == session_role::client ? poll_client() : poll_server(now);
}

session_event session_layer::poll_client()
{
    session_event out;
    if (!client_auth_)
        return out;
    for (;;) {
        client_auth_event ev = client_auth_->poll();
        switch (ev.type) {
        case client_auth_event_type::none: return out;
        case client_auth_event_type::send: (void)transport_.send(ev.payload); continue;
        case client_auth_event_type::authenticated:
            authenticated_ = true;
            transport_.user_authenticated();
            out.type = session_event_type::authenticated;
            break;
        case client_auth_event_type::disconnect:
            transport_.disconnect(ev.reason, ev.text);
            out.type = session_event_type::client_auth;
            break;
        default: out.type = session_event_type::client_auth; break;
        }
        client_event_ = std::move(ev);
        out.client_auth = &client_event_;
        return out;
    }
}

session_event session_layer::poll_server(steady_time now)
{
    session_event out;
    if (release_held(now)) {
        out.type = session_event_type::auth_disconnect;
        return out;
    }
    if (!server_auth_ || authenticated_)
        return out;
    for (;;) {
        server_auth_event ev = server_auth_->poll();
        switch (ev.type) {
        case server_auth_event_type::none: return out;
        case server_auth_event_type::send:
        case server_auth_event_type::disconnect:
            hold(std::move(ev));
            if (release_held(now)) {
                out.type = session_event_type::auth_disconnect;
                return out;
            }
            continue;
        case server_auth_event_type::unimplemented: transport_.send_unimplemented(ev.seq); continue;
        case server_auth_event_type::authenticated:
            authenticated_ = true;
            // Anything held (the SUCCESS) goes out now, before the keys change use.
            for (auto& h : held_)
                h.at = now;
            (void)release_held(now);
            transport_.user_authenticated();
            out.type = session_event_type::authenticated;
            break;
        default: out.type = session_event_type::server_auth; break;
        }
        server_event_ = std::move(ev);
        out.server_auth = &server_event_;
        return out;
    }
}

void session_layer::hold(server_auth_event ev)
{
    auto at = request_time_ + ev.min_elapsed;
    if (!held_.empty())
        at = std::max(at, held_.back().at);
    held_.push_back({at, std::move(ev)});
}

// Sends what is due; true when that was the machine's DISCONNECT.
bool session_layer::release_held(steady_time now)
{
    while (!held_.empty() && held_.front().at <= now) {
        server_auth_event ev = std::move(held_.front().ev);
        held_.pop_front();
        if (ev.type == server_auth_event_type::send) {
            (void)transport_.send(ev.payload);
        } else {
            transport_.disconnect(ev.reason, ev.text);
            return true;
        }
    }
    return false;
}

std::optional<steady_time> session_layer::next_deadline() const
{
    if (held_.empty())
        return std::nullopt;
    return held_.front().at;
}

} // namespace longhaul
