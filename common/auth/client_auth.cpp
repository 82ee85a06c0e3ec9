// The client machine's message loop and method selection (OpenSSH's
// userauth() and authmethod_get()). publickey is in client_pubkey.cpp,
// hostbased in client_hostbased.cpp, password and keyboard-interactive in
// client_interactive.cpp.
#include "common/auth/client_auth.hpp"

#include "common/name_list.hpp"
#include "common/transport/transport.hpp"

namespace longhaul {

namespace {

// The methods this client implements; others in PreferredAuthentications
// (gssapi-with-mic) are passed over.
bool implemented(std::string_view m)
{
    return m == method_publickey || m == method_hostbased || m == method_password || m == method_kbdint;
}

} // namespace

client_auth_session client_auth_session_from(const transport& t)
{
    client_auth_session s;
    s.session_id = to_bytes(t.session_id());
    const auto& ext = t.peer_extensions();
    if (auto it = ext.find("server-sig-algs"); it != ext.end())
        s.server_sig_algs = it->second;
    if (auto it = ext.find("publickey-hostbound@openssh.com"); it != ext.end())
        s.hostbound_offered = it->second == "0";
    if (t.server_host_key())
        s.host_key_blob = t.server_host_key()->blob();
    // A host certificate: OpenSSH's publickey-hostbound names it.
    if (const auto& cert = t.server_host_certificate())
        s.host_key_blob = cert->blob();
    return s;
}

client_auth::client_auth(client_auth_config config, client_auth_session session)
    : config_(std::move(config)), session_(std::move(session))
{
    for (auto m : split_name_list(config_.preferred_authentications))
        preferred_.emplace_back(m);
    ids_.resize(config_.identities.size());
    host_key_tried_.resize(config_.host_keys.size());
}

client_auth_event client_auth::poll()
{
    if (events_.empty())
        return {};
    client_auth_event ev = std::move(events_.front());
    events_.pop_front();
    return ev;
}

void client_auth::start()
{
    if (phase_ != phase::idle)
        return;
    phase_ = phase::service;
    send(service_request{std::string(userauth_service)}.encode());
}

void client_auth::update_session(client_auth_session session) { session_ = std::move(session); }

// --- output helpers ---

void client_auth::send(bytes payload) { send(secret_bytes(payload)); }

void client_auth::send(secret_bytes payload)
{
    client_auth_event ev;
    ev.type = client_auth_event_type::send;
    ev.payload = std::move(payload);
    events_.push_back(std::move(ev));
}

void client_auth::log(auth_log_level level, std::string text)
{
    client_auth_event ev;
    ev.type = client_auth_event_type::log;
    ev.level = level;
    ev.text = std::move(text);
    events_.push_back(std::move(ev));
}

void client_auth::prompt(prompt_kind kind, std::vector<kbdint_prompt> prompts, ask why)
{
    client_auth_event ev;
    ev.type = client_auth_event_type::prompt;
    ev.kind = kind;
    ev.prompts = std::move(prompts);
    events_.push_back(std::move(ev));
    asking_ = why;
    phase_ = phase::asking;
}

void client_auth::disconnect(std::string text)
{
    client_auth_event ev;
    ev.type = client_auth_event_type::disconnect;
    ev.reason = disconnect_reason::protocol_error;
    ev.text = std::move(text);
    events_.push_back(std::move(ev));
    phase_ = phase::closed;
    queued_.clear();
}

// --- input ---

void client_auth::handle(byte_span payload, std::uint32_t seq)
{
    if (phase_ == phase::closed || phase_ == phase::success)
        return;
    if (phase_ == phase::asking || phase_ == phase::signing || phase_ == phase::host_signing) {
        if (queued_.size() >= max_queued_auth_messages) {
            disconnect("too many messages while authenticating");
            return;
        }
        queued_.emplace_back(to_bytes(payload), seq);
        return;
    }
    process(payload, seq);
}

void client_auth::drain_queue()
{
    while (!queued_.empty() && (phase_ == phase::waiting || phase_ == phase::service)) {
        auto [payload, seq] = std::move(queued_.front());
        queued_.pop_front();
        process(payload, seq);
    }
}

void client_auth::process(byte_span payload, std::uint32_t)
{
    if (payload.empty()) {
        disconnect("invalid format");
        return;
    }
    const std::uint8_t type = payload[0];
    const auto bad_message = [&] {
        disconnect("bad message during authentication: type " + std::to_string(type));
    };
    if (type == msg::userauth_banner) {
        handle_banner(payload);
        return;
    }
    if (phase_ == phase::service || phase_ == phase::idle) {
        if (type != msg::service_accept) {
            bad_message();
            return;
        }
        // Some old servers send the message number alone.
        if (payload.size() == 1) {
            log(auth_log_level::debug2, "buggy server: service_accept w/o service");
        } else if (auto acc = service_accept::decode(payload); !acc) {
            disconnect("invalid format");
            return;
        } else {
            log(auth_log_level::debug2, "service_accept: " + sanitize_peer_text(acc->service, false));
        }
        log(auth_log_level::debug1, "SSH2_MSG_SERVICE_ACCEPT received");
        current_ = std::string(method_none);
        send(userauth_request{config_.user, config_.service, current_, userauth_none_data{}}.encode());
        phase_ = phase::waiting;
        return;
    }
    switch (type) {
    case msg::userauth_success: handle_success(payload); return;
    case msg::userauth_failure: handle_failure(payload); return;
    case 60:
        if (current_ == method_publickey)
            handle_pk_ok(payload);
        else if (current_ == method_password)
            handle_passwd_changereq(payload);
        else if (current_ == method_kbdint)
            handle_info_request(payload);
        else
            bad_message();
        return;
    default: bad_message(); return;
    }
}

void client_auth::handle_banner(byte_span payload)
{
    auto b = userauth_banner::decode(payload);
    if (!b) {
        disconnect("invalid format");
        return;
    }
    if (b->message.empty())
        return;
    client_auth_event ev;
    ev.type = client_auth_event_type::banner;
    ev.text = sanitize_peer_text(b->message, true);
    events_.push_back(std::move(ev));
}

void client_auth::handle_success(byte_span payload)
{
    if (!userauth_success::decode(payload)) {
        disconnect("invalid format");
        return;
    }
    method_ = current_;
    phase_ = phase::success;
    queued_.clear();
    if (config_.via_proxy)
        log(auth_log_level::verbose, "Authenticated to " + config_.host + " (via proxy) using \"" + method_ + "\".");
    else
        log(auth_log_level::verbose, "Authenticated to " + config_.host + " ([" + config_.remote_ip +
                                         "]:" + std::to_string(config_.remote_port) + ") using \"" + method_ + "\".");
    client_auth_event ev;
    ev.type = client_auth_event_type::authenticated;
    ev.method = method_;
    events_.push_back(std::move(ev));
}

void client_auth::handle_failure(byte_span payload)
{
    auto f = userauth_failure::decode(payload);
    if (!f) {
        disconnect("invalid format");
        return;
    }
    if (f->partial_success) {
        log(auth_log_level::verbose, "Authenticated using \"" + current_ + "\" with partial success.");
        // Every identity may be offered again for the next method of the list.
        for (auto& s : ids_)
            s.tried = false;
    }
    log(auth_log_level::debug1, "Authentications that can continue: " + sanitize_peer_text(f->methods, false));
    next_method(std::move(f->methods));
}

// --- method selection ---

bool client_auth::method_enabled(std::string_view m) const
{
    if (auto it = disabled_.find(m); it != disabled_.end() && it->second)
        return false;
    if (m == method_publickey)
        return config_.pubkey_authentication;
    if (m == method_hostbased)
        return config_.hostbased_authentication;
    if (m == method_password)
        return config_.password_authentication && !config_.batch_mode;
    if (m == method_kbdint)
        return config_.kbd_interactive_authentication && !config_.batch_mode;
    return false;
}

// OpenSSH's authmethod_get: keep going with the current method while the
// server's list is unchanged; after a new list, start over from the top of
// PreferredAuthentications.
const char* client_auth::pick_method()
{
    const std::string& list = authlist_;
    if (!supported_ || *supported_ != list) {
        supported_ = list;
        preferred_pos_ = 0;
        selected_.reset();
    } else if (selected_ && method_enabled(*selected_)) {
        return selected_->c_str();
    }
    while (preferred_pos_ < preferred_.size()) {
        const std::string& name = preferred_[preferred_pos_++];
        if (!name_list_contains(list, name) || !implemented(name) || !method_enabled(name))
            continue;
        selected_ = name;
        log(auth_log_level::debug1, "Next authentication method: " + name);
        return selected_->c_str();
    }
    selected_.reset();
    return nullptr;
}

void client_auth::next_method(std::optional<std::string> authlist)
{
    if (authlist)
        authlist_ = std::move(*authlist);
    for (;;) {
        const char* m = pick_method();
        if (m == nullptr) {
            log(auth_log_level::debug1, "No more authentication methods to try.");
            fail_all();
            return;
        }
        current_ = m;
        switch (run_method(current_)) {
        case started::sent:
            phase_ = phase::waiting;
            log(auth_log_level::debug2, "we sent a " + current_ + " packet, wait for reply");
            return;
        case started::waiting: return;
        case started::not_sent:
            log(auth_log_level::debug2, "we did not send a packet, disable method");
            disabled_[current_] = true;
            break;
        }
    }
}

client_auth::started client_auth::run_method(std::string_view m)
{
    if (m == method_publickey)
        return run_publickey();
    if (m == method_hostbased)
        return run_hostbased();
    if (m == method_password)
        return run_password();
    if (m == method_kbdint)
        return run_kbdint();
    return started::not_sent;
}

void client_auth::fail_all()
{
    client_auth_event ev;
    ev.type = client_auth_event_type::failed;
    ev.text = config_.user + "@" + config_.host + ": Permission denied (" + sanitize_peer_text(authlist_, false) + ").";
    events_.push_back(std::move(ev));
    phase_ = phase::closed;
    queued_.clear();
}

// --- answers from the program ---

void client_auth::answer_prompt(std::vector<secret_bytes> responses)
{
    if (phase_ != phase::asking)
        return;
    phase_ = phase::waiting;
    prompt_answered(std::move(responses));
    drain_queue();
}

void client_auth::cancel_prompt()
{
    if (phase_ != phase::asking)
        return;
    phase_ = phase::waiting;
    prompt_cancelled();
    drain_queue();
}

} // namespace longhaul
