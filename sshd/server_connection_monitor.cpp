// Privilege separation (issue 12): the connection process forks the
// sandboxed pre-authentication child (sshd/preauth_child.hpp) and serves
// as its monitor until the client is authenticated. The monitor keeps the
// host keys and decides authentication itself: it records the session id
// from the one host key signature it makes, the user from the one lookup,
// the keys it allowed, and verifies publickey signatures and passwords
// itself; the child's word that a login succeeded counts only when the
// monitor's own record says so. Requests are dispatched from a table that
// says which are allowed before the key exchange and before the user is
// known; anything else ends the connection.
#include "sshd/detail/server_connection.hpp"

#include "common/name_list.hpp"
#include "common/text.hpp"
#include "common/transport/transport_state.hpp"
#include "common/wire.hpp"
#include "sshd/auth_info.hpp"
#include "sshd/certificate_auth.hpp"
#include "sshd/listener.hpp"
#include "sshd/preauth_child.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace longhaul::detail {

using namespace privsep;

namespace {

// Names longer than any account's are invalid users without a lookup.
constexpr std::size_t max_account_name = 256;
// The largest banner sent (a USERAUTH_BANNER must fit one packet).
constexpr std::size_t max_banner_size = 128 * 1024;
// Requests an honest child cannot need before authentication (a client may
// ask about many keys without failing: PK_OK queries do not count).
constexpr int max_monitor_requests = 1000;

} // namespace

struct server_connection::monitor_handler {
    monitor_type type;
    bool after_kex;  // only once the host key signed the first exchange hash
    bool after_user; // only once the user was looked up
    monitor_answer (server_connection::*answer)(byte_span msg);
};

const server_connection::monitor_handler* server_connection::find_monitor_handler(monitor_type t)
{
    static constexpr monitor_handler table[] = {
        {monitor_type::sign, false, false, &server_connection::monitor_sign},
        {monitor_type::log, false, false, &server_connection::monitor_log},
        {monitor_type::moduli, false, false, &server_connection::monitor_moduli},
        {monitor_type::lookup_user, true, false, &server_connection::monitor_lookup_user},
        {monitor_type::key_allowed, true, true, &server_connection::monitor_key_allowed},
        {monitor_type::verify_pubkey, true, true, &server_connection::monitor_verify_pubkey},
        {monitor_type::host_allowed, true, true, &server_connection::monitor_host_allowed},
        {monitor_type::password, true, true, &server_connection::monitor_password},
        {monitor_type::kbdint_start, true, true, &server_connection::monitor_kbdint_start},
        {monitor_type::kbdint_respond, true, true, &server_connection::monitor_kbdint_respond},
        {monitor_type::kbdint_abort, true, true, &server_connection::monitor_kbdint_abort},
        {monitor_type::account_check, true, true, &server_connection::monitor_account_check},
        {monitor_type::max_tries, true, false, &server_connection::monitor_max_tries},
        {monitor_type::authenticated, true, true, &server_connection::monitor_authenticated},
    };
    for (const auto& h : table)
        if (h.type == t)
            return &h;
    return nullptr;
}

bool server_connection::run_preauth()
{
    auto pair = make_monitor_socketpair();
    if (!pair) {
        log_.error(std::string("socketpair: ") + std::strerror(errno));
        return false;
    }
    preauth_child_setup setup;
    setup.facts = facts_;
    setup.read_fd = read_fd_;
    setup.write_fd = write_fd_;
    setup.monitor_fd = pair->child_end;
    setup.transport = make_transport_config();
    for (const auto& k : setup.transport.host_keys)
        setup.transport.host_public_keys.push_back(k->public_part());
    setup.transport.host_keys.clear();
    setup.settings = policy_.settings_for(cfg_);
    std::uint8_t secret[8];
    rng_.fill(secret);
    std::memcpy(&setup.timing_secret, secret, sizeof secret);
    setup.login_grace_time = cfg_.login_grace_time;
    setup.level = log_.level();
    setup.sandbox = ctx_.sandbox;

    mon_.verdicts.emplace(facts_.remote_address, facts_.remote_port, cfg_.use_pam,
                          [this](log_level level, std::string line) { log_.log(level, line); });
    if (geteuid() == 0)
        mon_.verdicts->on_failed_login = [this](const std::string& user) { record_failed_login(user); };
    const pid_t pid = fork();
    if (pid < 0) {
        log_.error(std::string("fork of unprivileged child failed: ") + std::strerror(errno));
        ::close(pair->monitor_end);
        ::close(pair->child_end);
        return false;
    }
    if (pid == 0) {
        ::close(pair->monitor_end);
        if (startup_fd_ >= 0)
            ::close(startup_fd_);
        // No private host key stays in the process that parses the network.
        ctx_.host_keys.clear();
        _exit(run_preauth_child(std::move(setup)));
    }
    ::close(pair->child_end);
    setup.transport.host_public_keys.clear();
    monitor_channel mon(pair->monitor_end);
    const bool handed_off = serve_monitor(mon);
    // Done with the child either way: after a hand-off it has nothing left
    // to do, and one that lingered would hold this process (and the
    // listener's MaxStartups slot). It closes its end as it exits, so its
    // exit status (a timeout, a failure) is usually a moment away: wait
    // for it briefly before the SIGKILL, which would replace it.
    int status = 0;
    bool reaped = false;
    for (int i = 0; i < 100 && !reaped; ++i) {
        const pid_t r = waitpid(pid, &status, WNOHANG);
        reaped = r == pid || (r < 0 && errno != EINTR);
        if (!reaped)
            ::usleep(10'000);
    }
    if (!reaped) {
        ::kill(pid, SIGKILL);
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
    mon.close();
    const bool past_grace = cfg_.login_grace_time > 0 &&
                            std::chrono::steady_clock::now() >= started_ + std::chrono::seconds(cfg_.login_grace_time);
    char outcome = 0; // for the listener's PerSourcePenalties
    if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL) {
        log_.error("preauth child terminated by signal " + std::to_string(WTERMSIG(status)) + " [preauth]");
        outcome = connection_outcome::crash;
    } else if ((WIFEXITED(status) && WEXITSTATUS(status) == preauth_exit_timeout) ||
               (WIFSIGNALED(status) && !handed_off && past_grace && !mon_.grace_logged)) {
        mon_.verdicts->timeout(); // (the second: a child too slow to exit, by the monitor's own clock)
        outcome = connection_outcome::grace;
    } else if (WIFEXITED(status) && WEXITSTATUS(status) == preauth_exit_failed) {
        log_.error("preauth child exited with status " + std::to_string(WEXITSTATUS(status)) + " [preauth]");
    }
    if (mon_.grace_logged)
        outcome = connection_outcome::grace;
    if (!handed_off) {
        // As OpenSSH 10.5: naming a user that does not exist is enough for
        // the invalid-user penalty; otherwise any refused attempt is authfail.
        if (outcome == 0 && mon_.verdicts->invalid_user())
            outcome = connection_outcome::invalid_user;
        else if (outcome == 0 && mon_.verdicts->failures() > 0)
            outcome = connection_outcome::auth_failed;
        notify_startup(outcome != 0 ? outcome : connection_outcome::no_auth);
    }
    return handed_off;
}

bool server_connection::serve_monitor(monitor_channel& mon)
{
    // The child keeps LoginGraceTime itself; a child that does not is
    // stopped a little later. The deadline holds for sending too (a child
    // that asks and never reads fills the socket's buffer), and without
    // LoginGraceTime a reply that cannot be sent in two minutes ends it.
    std::optional<std::chrono::steady_clock::time_point> deadline;
    if (cfg_.login_grace_time > 0)
        deadline = started_ + std::chrono::seconds(cfg_.login_grace_time) + std::chrono::seconds(5);
    auto send_deadline = [&deadline] {
        return deadline ? *deadline : std::chrono::steady_clock::now() + std::chrono::minutes(2);
    };
    for (;;) {
        auto msg = mon.receive(deadline);
        if (!msg) {
            if (msg.error() == errc::too_large)
                log_.error("monitor: oversized request from the unprivileged child [preauth]");
            else if (msg.error() == errc::timeout) {
                mon_.verdicts->timeout(); // a child that did not keep LoginGraceTime
                mon_.grace_logged = true;
            }
            return false;
        }
        const auto type = message_type(*msg, false);
        const monitor_handler* h = type ? find_monitor_handler(*type) : nullptr;
        monitor_answer a;
        if (h == nullptr || (h->after_kex && mon_.session_id.empty()) || (h->after_user && !mon_.user_looked_up))
            a = violation();
        else
            a = (this->*(h->answer))(*msg);
        // Passwords, keyboard-interactive answers and the hand-off's keys
        // pass through this buffer.
        cleanse(msg->data(), msg->size());
        switch (a.what) {
        case monitor_answer::kind::violation:
            log_.error("monitor: unpermitted request " + std::to_string(type ? static_cast<int>(*type) : -1) +
                       " from the unprivileged child: disconnecting [preauth]");
            return false;
        case monitor_answer::kind::none: break;
        case monitor_answer::kind::reply:
            if (!mon.send(a.reply, send_deadline()))
                return false;
            break;
        case monitor_answer::kind::handed_off:
            return static_cast<bool>(mon.send(encode_verdict(*type, true), send_deadline()));
        }
    }
}

bool server_connection::bound_to_our_host_key(byte_span host_blob) const
{
    // The key the monitor signed the session with, or (when a certificate
    // algorithm was negotiated, which the monitor does not see: it signs
    // with the plain algorithm) that key's HostCertificate.
    if (to_bytes(host_blob) == mon_.host_key_blob)
        return true;
    for (const auto& c : ctx_.host_certificates)
        if (c.key().blob() == mon_.host_key_blob && c.blob() == to_bytes(host_blob))
            return true;
    return false;
}

monitor_answer server_connection::monitor_sign(byte_span msg)
{
    auto q = decode_sign_request(msg);
    // One signature before authentication: the first exchange hash, which
    // becomes the session id (the child is refused a key re-exchange
    // before authentication, as OpenSSH's is).
    if (!q || !mon_.session_id.empty() || !is_exchange_hash_length(q->data.size()))
        return violation();
    const public_key* key = find_host_key(q->key_blob);
    if (key == nullptr)
        return violation();
    auto sig = sign_with_host_key(*key, q->algorithm, q->data);
    if (!sig) {
        log_.error("monitor: host key signature failed [preauth]");
        return reply(encode(sign_reply{false, {}}));
    }
    mon_.session_id = q->data;
    mon_.host_key_blob = q->key_blob;
    return reply(encode(sign_reply{true, std::move(*sig)}));
}

monitor_answer server_connection::monitor_moduli(byte_span msg)
{
    // Asked once, in the first key exchange (the child is refused a
    // re-exchange before authentication), with the sizes the exchange
    // clamps a client's request to.
    auto q = decode_moduli_request(msg);
    if (!q || !is_clamped(*q) || !mon_.session_id.empty() || mon_.moduli_asked)
        return violation();
    mon_.moduli_asked = true;
    // The monitor's own log: OpenSSH's choose_dh runs in its monitor, so
    // its warnings carry no " [preauth]".
    auto choose = make_gex_group_provider(ctx_.moduli, rng_, [this](const log_message& m) {
        log_.log(to_log_level(m.level), m.text);
    });
    auto group = choose(q->min_bits, q->preferred_bits, q->max_bits);
    if (!group)
        return reply(encode(moduli_reply{}));
    return reply(encode(moduli_reply{true, std::move(*group)}));
}

monitor_answer server_connection::monitor_log(byte_span msg)
{
    auto q = decode_log_request(msg);
    if (!q)
        return violation();
    mon_.verdicts->child_line(q->level, q->text);
    return reply(encode_verdict(monitor_type::log, true));
}

monitor_answer server_connection::monitor_lookup_user(byte_span msg)
{
    auto q = decode_lookup_user_request(msg);
    if (!q || mon_.user_looked_up)
        return violation();
    mon_.user_looked_up = true;
    mon_.user = q->user;
    mon_.backend = policy_.make_policy();
    // No account has a name that long: an invalid user, without asking
    // the system's databases.
    if (mon_.user.size() > max_account_name)
        mon_.lookup = user_lookup{};
    else
        mon_.lookup = mon_.backend.lookup_user(mon_.user);
    mon_.verdicts->user(mon_.user, mon_.lookup.status);
    lookup_user_reply r;
    r.status = mon_.lookup.status;
    r.is_root = mon_.lookup.is_root;
    r.settings = mon_.lookup.settings;
    // A banner over what one packet carries is not sent (OpenSSH skips
    // banner files over 1 MiB; a USERAUTH_BANNER cannot exceed a packet).
    if (r.settings && r.settings->banner.size() > max_banner_size) {
        log_.error("Banner file is larger than " + std::to_string(max_banner_size) + " bytes: not sent");
        r.settings->banner.clear();
    }
    r.level = log_.level();
    return reply(encode(r));
}

// The monitor's own count of what a child asks for: past what an honest
// child can ask before it disconnects at MaxAuthTries, the child is not
// honest (OpenSSH's monitor likewise counts failures).
bool server_connection::monitor_attempt(bool failed)
{
    const int max_tries = std::max(1, policy_.settings_for(policy_.user_config()).max_auth_tries);
    if (failed)
        ++mon_.failures;
    ++mon_.requests;
    // (+1: a failed "none" with PermitEmptyPasswords is checked here but
    // not counted by the child, as by OpenSSH.)
    return mon_.failures <= max_tries + 1 && mon_.requests <= max_monitor_requests;
}

monitor_answer server_connection::monitor_key_allowed(byte_span msg)
{
    auto q = decode_key_allowed_request(msg);
    if (!q)
        return violation();
    if (!monitor_attempt(false))
        return violation();
    auto [cert, key] = parse_presented_key(q->key_blob);
    const server_auth_settings s = policy_.settings_for(policy_.user_config());
    // What the child's machine checks first, checked again here so that
    // no authorized_keys file or command is consulted for a key the
    // settings refuse anyway (OpenSSH's mm_answer_keyallowed()).
    if (!key || mon_.lookup.status != user_status::valid || !s.pubkey_authentication ||
        !key_type_accepted(s.pubkey_accepted_algorithms, key->type(), cert.has_value()))
        return reply(encode(key_allowed_reply{}));
    key_decision d = cert ? mon_.backend.certificate_allowed(mon_.user, *cert, q->with_signature)
                          : mon_.backend.key_allowed(mon_.user, *key, q->with_signature);
    if (!d.allowed)
        mon_.verdicts->failed(method_publickey, "", &*key, s, cert ? &*cert : nullptr);
    if (d.allowed && q->with_signature) {
        // One entry per key, however often it is asked about.
        const bytes& blob = cert ? cert->blob() : key->blob();
        std::erase_if(mon_.allowed_keys, [&](const monitor_state::allowed_key& k) { return k.blob == blob; });
        mon_.allowed_keys.push_back({blob, d.options, d.forced_command, d.security_key});
    }
    return reply(encode(key_allowed_reply{d.allowed, d.forced_command}));
}

// The signed data must be a publickey request for this session, this user
// and this key (and, host-bound, this host key): then the monitor checks
// the signature itself and records the method as done.
monitor_answer server_connection::monitor_verify_pubkey(byte_span msg)
{
    auto q = decode_verify_pubkey_request(msg);
    if (!q)
        return violation();
    if (signed_method(q->signed_data) == method_hostbased)
        return monitor_verify_hostbased(*q);
    const monitor_state::allowed_key* allowed = nullptr;
    for (const auto& k : mon_.allowed_keys)
        if (k.blob == q->key_blob)
            allowed = &k;
    auto [cert, key] = parse_presented_key(q->key_blob);
    const certificate* cert_ptr = cert ? &*cert : nullptr;
    const bool used = std::find(mon_.used_keys.begin(), mon_.used_keys.end(), q->key_blob) != mon_.used_keys.end();
    const server_auth_settings settings = policy_.settings_for(policy_.user_config());
    // A certificate signs with its key's plain algorithm; the request names
    // the certificate algorithm, which must be one for a certificate.
    const auto sig_alg =
        cert ? certificate_signature_algorithm(q->algorithm) : std::optional(std::string_view(q->algorithm));
    if (allowed == nullptr || !key || used || !sig_alg ||
        !name_list_contains(settings.pubkey_accepted_algorithms, q->algorithm)) {
        mon_.verdicts->failed(method_publickey, "", key ? &*key : nullptr, settings, cert_ptr);
        return monitor_attempt(true) ? reply(encode_verdict(monitor_type::verify_pubkey, false)) : violation();
    }
    wire_reader r(q->signed_data);
    const byte_span sid = r.string();
    const std::uint8_t type = r.u8();
    std::string_view user = r.text();
    const std::string_view service = r.text();
    const std::string_view method = r.text();
    const bool has_signature = r.boolean();
    const std::string_view alg = r.text();
    const byte_span blob = r.string();
    const bool hostbound = method == method_publickey_hostbound;
    const byte_span host_blob = hostbound ? r.string() : byte_span{};
    user = user.substr(0, user.find(':'));
    const bool shape_ok = r.finish() && equal_constant_time(sid, mon_.session_id) && type == 50 &&
                          user == mon_.user && service == "ssh-connection" &&
                          (method == method_publickey || hostbound) && has_signature && alg == q->algorithm &&
                          to_bytes(blob) == q->key_blob && (!hostbound || bound_to_our_host_key(host_blob));
    if (!shape_ok) {
        log_.error("monitor: publickey signed data does not match this session [preauth]");
        return violation();
    }
    sk_signature_details sk;
    std::optional<std::string_view> unmet;
    const bool verified = static_cast<bool>(key->verify(*sig_alg, q->signed_data, q->signature, &sk));
    if (verified && is_security_key(key->type()))
        unmet = sk_unmet_requirement(allowed->security_key, sk.flags);
    if (unmet) {
        const std::string key_text = std::string(key_type_short_name(key->type())) + (cert ? "-CERT " : " ") +
                                     key->fingerprint_sha256();
        log_.error(sk_refusal_line(key_text, true, mon_.user, facts_.remote_address, facts_.remote_port, *unmet));
    }
    if (!verified || unmet) {
        mon_.verdicts->failed(method_publickey, "", &*key, settings, cert_ptr);
        return monitor_attempt(true) ? reply(encode_verdict(monitor_type::verify_pubkey, false)) : violation();
    }
    mon_.used_keys.push_back(q->key_blob);
    authenticated_method m;
    m.method = std::string(method_publickey);
    m.key = *key;
    m.key_options = allowed->options;
    m.cert = std::move(cert);
    mon_.successes.push_back(std::move(m));
    mon_.forced_command.push_back(allowed->forced_command);
    monitor_log_success();
    return reply(encode_verdict(monitor_type::verify_pubkey, true));
}

monitor_answer server_connection::monitor_password(byte_span msg)
{
    auto q = decode_password_request(msg);
    if (!q)
        return violation();
    // The first request with an empty password is "none" under
    // PermitEmptyPasswords (OpenSSH's monitor names it the same way).
    const std::string_view method = q->password.empty() && ++mon_.password_requests == 1 ? method_none : method_password;
    if (!q->password.empty())
        ++mon_.password_requests;
    const bool ok = check_password(std::move(q->password));
    if (!ok)
        mon_.verdicts->failed(method, "", nullptr, policy_.settings_for(policy_.user_config()));
    if (!monitor_attempt(!ok))
        return violation();
    if (ok) {
        mon_.successes.push_back({std::string(method_password), "", std::nullopt, nullptr});
        mon_.forced_command.push_back(false);
        monitor_log_success(method);
    }
    return reply(encode_verdict(monitor_type::password, ok));
}

monitor_answer server_connection::monitor_kbdint_start(byte_span msg)
{
    auto q = decode_kbdint_start_request(msg);
    if (!q || !monitor_attempt(false))
        return violation();
    return kbdint_answer(monitor_type::kbdint_start, kbdint_start());
}

monitor_answer server_connection::monitor_kbdint_respond(byte_span msg)
{
    auto q = decode_kbdint_respond_request(msg);
    if (!q || !monitor_attempt(false))
        return violation();
    return kbdint_answer(monitor_type::kbdint_respond, kbdint_respond(std::move(q->responses)));
}

monitor_answer server_connection::kbdint_answer(monitor_type request, const kbdint_reply& r)
{
    if (r.result == kbdint_reply::kind::failure) {
        mon_.verdicts->failed(method_kbdint, "pam", nullptr, policy_.settings_for(policy_.user_config()));
        if (!monitor_attempt(true))
            return violation();
    }
    if (r.result == kbdint_reply::kind::success) {
        mon_.successes.push_back({std::string(method_kbdint), "pam", std::nullopt, nullptr});
        mon_.forced_command.push_back(false);
        monitor_log_success();
    }
    return reply(encode_kbdint_reply(request, r));
}

monitor_answer server_connection::monitor_kbdint_abort(byte_span msg)
{
    if (!decode_empty(monitor_type::kbdint_abort, msg))
        return violation();
    if (pam_ && pam_purpose_ == pam_purpose::kbdint && !pam_->finished())
        pam_->cancel();
    return {};
}

monitor_answer server_connection::monitor_account_check(byte_span msg)
{
    if (!decode_empty(monitor_type::account_check, msg))
        return violation();
    account_decision d = cfg_.use_pam ? check_account() : account_decision{true, ""};
    mon_.verdicts->account(d.allowed, policy_.settings_for(policy_.user_config()));
    return reply(encode(account_reply{d.allowed, d.message}));
}

monitor_answer server_connection::monitor_max_tries(byte_span msg)
{
    if (!decode_empty(monitor_type::max_tries, msg))
        return violation();
    notify_startup('f');
    return {};
}

bool server_connection::root_login_permitted(permit_root_login rule, std::string_view method, bool forced_command) noexcept
{
    const bool key_based = key_based_method(method);
    switch (rule) {
    case permit_root_login::yes: return true;
    case permit_root_login::prohibit_password: return key_based;
    case permit_root_login::forced_commands_only: return key_based && forced_command;
    case permit_root_login::no: return false;
    }
    return false;
}

bool server_connection::method_enabled(const server_auth_settings& s, std::string_view method) noexcept
{
    return (method == method_publickey && s.pubkey_authentication) ||
           (method == method_hostbased && s.hostbased_authentication) ||
           (method == method_password && s.password_authentication) ||
           (method == method_kbdint && s.kbd_interactive_authentication);
}

server_connection::methods_state server_connection::monitor_methods(const server_auth_settings& s) const
{
    auth_methods_lists lists;
    lists.setup(s.authentication_methods, [&s](std::string_view m) { return method_enabled(s, m); });
    if (!lists.active())
        return methods_state::unconstrained;
    bool complete = false;
    for (const auto& m : mon_.successes)
        complete = complete || lists.update(m.method, m.submethod);
    return complete ? methods_state::complete : methods_state::incomplete;
}

void server_connection::monitor_log_success(std::string_view shown_method)
{
    const authenticated_method& m = mon_.successes.back();
    // ExposeAuthInfo's line, as OpenSSH's monitor adds one for each success
    // (auth2_update_session_info), by the name it logs: "none" for an
    // empty password under PermitEmptyPasswords.
    mon_.auth_info += auth_info_line(shown_method.empty() ? std::string_view(m.method) : shown_method, m.submethod,
                                     m.key ? &*m.key : nullptr, m.cert ? &*m.cert : nullptr);
    const server_auth_settings s = policy_.settings_for(policy_.user_config());
    mon_.verdicts->succeeded(shown_method.empty() ? std::string_view(m.method) : shown_method, m.submethod,
                             m.key ? &*m.key : nullptr, mon_.lookup.is_root, s.root_login,
                             root_login_permitted(s.root_login, m.method, mon_.forced_command.back()),
                             monitor_methods(s) != methods_state::incomplete, s, m.cert ? &*m.cert : nullptr);
}

// The child says the client is authenticated: true only if the methods
// the monitor saw succeed satisfy this user's AuthenticationMethods and
// PermitRootLogin, and PAM's account management agrees.
bool server_connection::monitor_login_complete()
{
    if (mon_.lookup.status != user_status::valid || mon_.successes.empty())
        return false;
    const server_auth_settings s = policy_.settings_for(policy_.user_config());
    for (std::size_t i = 0; i < mon_.successes.size(); ++i)
        if (mon_.lookup.is_root && !root_login_permitted(s.root_login, mon_.successes[i].method,
                                                         mon_.forced_command[i]))
            return false;
    const methods_state methods = monitor_methods(s);
    if (methods == methods_state::incomplete ||
        (methods == methods_state::unconstrained && !method_enabled(s, mon_.successes.back().method)))
        return false;
    if (!cfg_.use_pam)
        return true;
    const bool allowed = check_account().allowed;
    mon_.verdicts->account(allowed, s); // a child that skipped asking
    return allowed;
}

monitor_answer server_connection::monitor_authenticated(byte_span msg)
{
    auto q = decode_authenticated_request(msg);
    if (!q)
        return violation();
    if (!monitor_login_complete()) {
        log_.error("monitor: the unprivileged child claims a login the monitor did not see [preauth]");
        return violation();
    }
    auto state = decode_transport_state(q->transport_state);
    cleanse(q->transport_state.data(), q->transport_state.size());
    // The connection handed over must be the one the monitor signed for.
    if (state && (state->session_id != mon_.session_id || !state->host_key ||
                  state->host_key->blob() != mon_.host_key_blob))
        state = errc::protocol_error;
    if (!state) {
        log_.error("monitor: unusable transport state from the unprivileged child [preauth]");
        return violation();
    }
    handoff_ = std::move(*state);
    return {monitor_answer::kind::handed_off, {}};
}

} // namespace longhaul::detail
