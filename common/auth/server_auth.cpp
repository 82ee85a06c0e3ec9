// The request loop of the server machine: the ssh-userauth service, user
// set-up, method dispatch, and sshd's userauth_finish (root policy,
// AuthenticationMethods, logging, MaxAuthTries, replies). The methods
// themselves are in server_methods.cpp.
#include "common/auth/server_auth.hpp"

#include "common/crypto/hash.hpp"
#include "common/text.hpp"
#include "common/transport/transport.hpp"
#include "common/wire.hpp"

#include <algorithm>

namespace longhaul {

namespace {

// OpenSSH disconnects after this many requests whatever MaxAuthTries says.
constexpr int max_requests = 1024;

} // namespace

bytes server_host_key_blob(const transport& t)
{
    // The key the first exchange was signed with, which the core keeps
    // whether it held the private key or a signer elsewhere did.
    const auto& key = t.server_host_key();
    // A host certificate was presented: OpenSSH binds to it, not the key.
    if (const auto& cert = t.server_host_certificate(); cert && key)
        return cert->blob();
    return key ? key->blob() : bytes{};
}

server_auth::server_auth(server_auth_config config, server_auth_policy policy)
    : config_(std::move(config)), policy_(std::move(policy)), settings_(config_.settings)
{
}

server_auth_event server_auth::poll()
{
    if (events_.empty())
        return {};
    server_auth_event ev = std::move(events_.front());
    events_.pop_front();
    return ev;
}

// --- output helpers ---

void server_auth::send(bytes payload, std::chrono::microseconds min_elapsed)
{
    server_auth_event ev;
    ev.type = server_auth_event_type::send;
    ev.payload = std::move(payload);
    ev.min_elapsed = min_elapsed;
    events_.push_back(std::move(ev));
}

void server_auth::log(auth_log_level level, std::string text)
{
    server_auth_event ev;
    ev.type = server_auth_event_type::log;
    ev.level = level;
    // Lines carry names the client chose; like sshd's logger, escape
    // anything that is not printable ASCII so nobody forges log lines.
    ev.text = printable(text);
    events_.push_back(std::move(ev));
}

std::string server_auth::connection_id() const
{
    std::string id;
    if (user_set_up_) {
        id = valid_ ? "authenticating user " : "invalid user ";
        id += user_;
        id += ' ';
    }
    id += config_.remote_ip;
    id += " port ";
    id += std::to_string(config_.remote_port);
    return id;
}

std::string server_auth::connection_closed_line() const
{
    return "Connection closed by " + connection_id() + " [preauth]";
}

std::string server_auth::disconnected_line() const { return "Disconnected from " + connection_id() + " [preauth]"; }

// sshd's ssh_packet_disconnect: log, DISCONNECT with the text, close.
void server_auth::disconnect(disconnect_reason reason, std::string text, bool log_it)
{
    if (log_it)
        log(auth_log_level::info,
            "Disconnecting " + connection_id() + ": " + std::string(truncated(text, 100)) + " [preauth]");
    server_auth_event ev;
    ev.type = server_auth_event_type::disconnect;
    ev.reason = reason;
    ev.text = std::move(text);
    events_.push_back(std::move(ev));
    if (kbdint_active_)
        stop_kbdint();
    state_ = state::closed;
    queued_.clear();
}

// sshd's auth_maxtries_exceeded.
void server_auth::too_many_failures()
{
    log(auth_log_level::error, "maximum authentication attempts exceeded for " +
                                   std::string(valid_ ? "" : "invalid user ") + std::string(truncated(user_, 100)) +
                                   " from " + std::string(truncated(config_.remote_ip, 200)) + " port " +
                                   std::to_string(config_.remote_port) + " ssh2 [preauth]");
    max_tries_exceeded_ = true;
    disconnect(disconnect_reason::protocol_error, "Too many authentication failures");
}

// A message that does not decode. OpenSSH dies with "ssh_dispatch_run_fatal:
// Connection from ...: invalid format"; this says so in a DISCONNECT too.
void server_auth::protocol_failure(std::string text)
{
    log(auth_log_level::error, "ssh_dispatch_run_fatal: Connection from " + connection_id() + ": " + text + " [preauth]");
    disconnect(disconnect_reason::protocol_error, std::move(text), false);
}

void server_auth::unimplemented(std::uint32_t seq)
{
    server_auth_event ev;
    ev.type = server_auth_event_type::unimplemented;
    ev.seq = seq;
    events_.push_back(std::move(ev));
}

std::chrono::microseconds server_auth::failure_delay() const
{
    // 5 ms plus 0..4.3 ms derived from the user name and a server secret,
    // as OpenSSH's user_specific_delay.
    const std::string seed = std::to_string(config_.timing_secret) + user_;
    const bytes h = digest(hash_alg::sha512, as_bytes(seed));
    const std::uint32_t v = load_u32(h.data());
    return std::chrono::microseconds(5000 + v / 1000000);
}

// --- input ---

void server_auth::handle(byte_span payload, std::uint32_t seq)
{
    if (state_ == state::closed)
        return;
    if (state_ == state::password_check || state_ == state::kbdint_query) {
        if (queued_.size() >= max_queued_auth_messages) {
            protocol_failure("too many messages while authenticating");
            return;
        }
        queued_.emplace_back(secret_bytes(payload), seq);
        return;
    }
    process(payload, seq);
}

void server_auth::drain_queue()
{
    while (!queued_.empty() && state_ != state::password_check && state_ != state::kbdint_query &&
           state_ != state::closed) {
        auto [payload, seq] = std::move(queued_.front());
        queued_.pop_front();
        process(payload.span(), seq);
    }
}

void server_auth::process(byte_span payload, std::uint32_t seq)
{
    if (payload.empty()) {
        protocol_failure("invalid format");
        return;
    }
    const std::uint8_t type = payload[0];
    if (state_ == state::authenticated) {
        // RFC 4252 §5.1: requests after success are ignored.
        if (type != msg::userauth_request)
            unimplemented(seq);
        return;
    }
    switch (type) {
    case msg::service_request: handle_service_request(payload); return;
    case msg::userauth_request:
        if (state_ == state::service) {
            unimplemented(seq);
            return;
        }
        handle_request(payload);
        return;
    case msg::userauth_info_response: handle_info_response(payload, seq); return;
    default: unimplemented(seq); return;
    }
}

void server_auth::handle_service_request(byte_span payload)
{
    auto req = service_request::decode(payload);
    if (!req) {
        protocol_failure("invalid format");
        return;
    }
    if (req->service != userauth_service) {
        log(auth_log_level::debug1, "bad service request " + req->service);
        disconnect(disconnect_reason::service_not_available, "bad service request " + req->service);
        return;
    }
    send(service_accept{req->service}.encode());
    if (state_ == state::service)
        state_ = state::ready;
}

bool server_auth::setup_user(const std::string& user, const std::string& service)
{
    user_lookup found;
    if (policy_.lookup_user)
        found = policy_.lookup_user(user);
    user_ = user;
    service_ = service;
    valid_ = found.status == user_status::valid && service == connection_service;
    is_root_ = valid_ && found.is_root;
    if (found.status == user_status::unknown && !config_.verdicts_logged_by_monitor)
        log(auth_log_level::info, invalid_user_line(user, config_.remote_ip, config_.remote_port));
    if (found.settings)
        settings_ = *found.settings;
    user_set_up_ = true;

    if (!settings_.banner.empty())
        send(userauth_banner{settings_.banner, ""}.encode());

    std::vector<std::string> skipped;
    lists_.setup(settings_.authentication_methods, [this](std::string_view m) { return method_enabled(m); },
                 &skipped);
    for (const auto& l : skipped)
        log(auth_log_level::info, "Authentication methods list \"" + l + "\" contains disabled method, skipping [preauth]");
    if (lists_.exhausted()) {
        log(auth_log_level::error, "No AuthenticationMethods left after eliminating disabled methods [preauth]");
        disconnect(disconnect_reason::protocol_error, "no authentication methods enabled");
        return false;
    }
    return true;
}

bool server_auth::method_enabled(std::string_view method) const
{
    if (method == method_none)
        return none_enabled_;
    if (method == method_publickey)
        return settings_.pubkey_authentication;
    if (method == method_password)
        return settings_.password_authentication;
    if (method == method_kbdint)
        return settings_.kbd_interactive_authentication;
    if (method == method_hostbased)
        return settings_.hostbased_authentication;
    return false; // gssapi-with-mic: not implemented
}

void server_auth::handle_request(byte_span payload)
{
    auto req = userauth_request::decode(payload);
    if (!req) {
        protocol_failure("invalid format");
        return;
    }
    std::string user = req->user;
    if (auto colon = user.find(':'); colon != std::string::npos)
        user.resize(colon); // ":style" selects a BSD auth style; there is none here
    log(auth_log_level::debug1,
        "userauth-request for user " + user + " service " + req->service + " method " + req->method + " [preauth]");

    if (attempts_ >= max_requests) {
        too_many_failures();
        return;
    }
    if (attempts_++ == 0) {
        if (!setup_user(user, req->service))
            return;
    } else if (user != user_ || req->service != service_) {
        disconnect(disconnect_reason::protocol_error, "Change of username or service not allowed: (" + user_ + "," +
                                                          service_ + ") -> (" + user + "," + req->service + ")");
        return;
    }
    if (kbdint_active_)
        stop_kbdint();

    current_ = attempt{};
    // The hostbound variant is a synonym of publickey for lists and logs.
    const bool hostbound = req->method == method_publickey_hostbound;
    current_.method = hostbound ? std::string(method_publickey) : req->method;

    outcome result = outcome::failed;
    const bool known = std::find(known_auth_methods().begin(), known_auth_methods().end(), current_.method) !=
                       known_auth_methods().end();
    if (!known)
        log(auth_log_level::debug1, "authmethod_byname: unrecognized authentication method name: " +
                                        req->method + " [preauth]");
    else if (!method_enabled(current_.method))
        log(auth_log_level::debug3, "authmethod_lookup: method " + req->method + " not enabled [preauth]");
    else if (!lists_.allowed(current_.method))
        log(auth_log_level::debug3,
            "authmethod_lookup: method " + req->method + " not allowed by AuthenticationMethods [preauth]");
    else if (failures_ < settings_.max_auth_tries) {
        if (current_.method == method_none)
            result = run_none(current_);
        else if (current_.method == method_publickey)
            result = run_publickey(*req, current_);
        else if (current_.method == method_password)
            result = run_password(*req, current_);
        else if (current_.method == method_kbdint)
            result = run_kbdint(*req, current_);
        else if (current_.method == method_hostbased)
            result = run_hostbased(*req, current_);
    }
    switch (result) {
    case outcome::pending: return; // the program answers
    case outcome::postponed: log_attempt("Postponed", false); return;
    case outcome::succeeded: finish(true); return;
    case outcome::failed: finish(false); return;
    }
}

// --- completion ---

bool server_auth::root_allowed(std::string_view method, bool forced_command)
{
    switch (settings_.root_login) {
    case permit_root_login::yes: return true;
    case permit_root_login::prohibit_password:
        if (key_based_method(method))
            return true;
        break;
    case permit_root_login::forced_commands_only:
        if (forced_command) {
            if (!config_.verdicts_logged_by_monitor)
                log(auth_log_level::info, "Root login accepted for forced command.");
            return true;
        }
        break;
    case permit_root_login::no: break;
    }
    // sshd's unprivileged child says it too, as OpenSSH's does (the
    // monitor's own line is the verdict).
    log(auth_log_level::info, root_refused_line(config_.remote_ip, config_.remote_port) +
                                  (config_.verdicts_logged_by_monitor ? " [preauth]" : ""));
    return false;
}

void server_auth::log_attempt(const char* verdict, bool authenticated)
{
    const bool postponed = std::string_view(verdict) == "Postponed";
    // Under privilege separation the monitor writes every verdict but
    // "Postponed" from what it decided itself (as OpenSSH's monitor does),
    // so a compromised child can neither forge nor hide one.
    if ((!current_.log && !postponed) || (config_.verdicts_logged_by_monitor && !postponed))
        return;
    auth_attempt_record a;
    a.verdict = verdict;
    a.method = current_.method;
    a.submethod = current_.submethod;
    a.user = user_;
    a.valid_user = valid_;
    a.remote_ip = config_.remote_ip;
    a.remote_port = config_.remote_port;
    a.key = current_.key ? &*current_.key : nullptr;
    a.cert = current_.cert ? &*current_.cert : nullptr;
    if (std::string_view(verdict) == "Failed")
        a.note = current_.failure_note;
    std::string line = auth_attempt_line(a);
    // Postponed attempts are logged by sshd's unprivileged child.
    if (postponed)
        line += " [preauth]";
    log(auth_attempt_level(a, authenticated, failures_, settings_.max_auth_tries), std::move(line));
}

void server_auth::finish(bool authenticated, bool server_caused_failure)
{
    authenticated = authenticated && valid_;
    if (authenticated && is_root_ && !root_allowed(current_.method, current_.decision.forced_command))
        authenticated = false;
    bool partial = false;
    if (authenticated && lists_.active() && !lists_.update(current_.method, current_.submethod)) {
        authenticated = false;
        partial = true;
    }
    account_decision account;
    if (authenticated && policy_.account_check) {
        account = policy_.account_check(user_);
        authenticated = account.allowed;
    }
    log_attempt(partial ? "Partial" : authenticated ? "Accepted" : "Failed", authenticated);

    if (authenticated || partial)
        done_methods_.push_back(
            {current_.method, current_.submethod, current_.key, current_.decision.options, current_.cert});

    if (!account.allowed) {
        if (!account.message.empty())
            send(userauth_banner{account.message, ""}.encode());
        log(auth_log_level::error, "Access denied for user " + user_ + " by PAM account configuration [preauth]");
        disconnect(disconnect_reason::by_application,
                   "Access denied for user " + user_ + " by PAM account configuration", false);
        return;
    }

    if (authenticated) {
        send(userauth_success{}.encode());
        server_auth_event ev;
        ev.type = server_auth_event_type::authenticated;
        ev.user = user_;
        ev.user_valid = true;
        ev.methods = done_methods_;
        events_.push_back(std::move(ev));
        state_ = state::authenticated;
        queued_.clear();
        return;
    }

    const bool is_none = current_.method == method_none;
    // The first "none" probe is free: clients send it to learn the methods.
    if (!partial && !server_caused_failure && (attempts_ > 1 || !is_none))
        ++failures_;
    const auto delay = is_none ? std::chrono::microseconds(0) : failure_delay();
    if (failures_ >= settings_.max_auth_tries) {
        too_many_failures();
        events_.back().min_elapsed = delay;
        return;
    }
    send(userauth_failure{methods_list(), partial}.encode(), delay);
    state_ = state::ready;
}

std::string server_auth::methods_list() const
{
    std::string out;
    for (auto m : known_auth_methods()) {
        if (m == method_none || !method_enabled(m) || !lists_.allowed(m))
            continue;
        if (!out.empty())
            out += ',';
        out += m;
    }
    return out;
}

} // namespace longhaul
