// sshd's authentication backends for the session layer's server_auth
// machine: shadow passwords, PAM (password, keyboard-interactive, account
// management) on a worker thread whose eventfd the event loop watches.
#include "sshd/detail/server_connection.hpp"

#include "common/text.hpp"

#include <sys/select.h>

#include <algorithm>
#include <cstring>

namespace longhaul::detail {

void server_connection::start_auth()
{
    server_auth_config ac;
    ac.settings = policy_.settings_for(cfg_);
    ac.remote_ip = facts_.remote_address;
    ac.remote_port = facts_.remote_port;
    ac.session_id = to_bytes(core_->session_id());
    ac.host_key_blob = server_host_key_blob(*core_);
    std::uint8_t secret[8];
    rng_.fill(secret);
    std::memcpy(&ac.timing_secret, secret, sizeof secret);
    server_auth_policy p = policy_.make_policy();
    if (cfg_.use_pam) {
        // After a method succeeds, PAM's account management has the last word
        // (and its handle carries on into the session).
        p.account_check = [this](std::string_view user) -> account_decision {
            // Password and keyboard-interactive ran pam_acct_mgmt already.
            if (pam_account_ok_)
                return {true, ""};
            // Any other transaction is a method that did not succeed: a
            // failed password, or a keyboard-interactive conversation the
            // client left for this method, still waiting for answers that
            // will never come. Waiting on it would hang this connection
            // (and hold a MaxStartups slot): discard it and ask PAM's
            // account management afresh, as OpenSSH's sshpam_cleanup() +
            // do_pam_account() do.
            if (pam_ && pam_purpose_ != pam_purpose::account) {
                pam_watch_.reset();
                pam_.reset(); // cancels a pending conversation; never blocks
            }
            if (!pam_) {
                pam_purpose_ = pam_purpose::account;
                start_pam(pam_mode::account_only, std::string(user), "");
                if (!pam_)
                    return {false, ""};
            }
            // The worker runs pam_acct_mgmt; wait for its verdict here, but
            // no longer than the login may still take.
            const auto deadline = account_check_deadline();
            for (;;) {
                if (auto ev = pam_->poll()) {
                    if (ev->kind == pam_event::type::done) {
                        log_pam_account_refusal(*ev, user);
                        return {ev->success, ""};
                    }
                    pam_->cancel();
                    return {false, ""};
                }
                const auto left = deadline - std::chrono::steady_clock::now();
                if (left <= std::chrono::steady_clock::duration::zero()) {
                    log_.error("PAM account check for " + std::string(user) + " from " + facts_.remote_address +
                               " port " + std::to_string(facts_.remote_port) +
                               " did not finish in time: access refused [preauth]");
                    pam_.reset();
                    return {false, ""};
                }
                const auto us = std::chrono::duration_cast<std::chrono::microseconds>(left).count();
                timeval tv{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
                fd_set rd;
                FD_ZERO(&rd);
                FD_SET(pam_->event_fd(), &rd);
                ::select(pam_->event_fd() + 1, &rd, nullptr, nullptr, &tv);
            }
        };
    }
    layer_->start_server_auth(std::move(ac), std::move(p));
}

// The PAM account check blocks the event loop, so it gets what is left of
// LoginGraceTime (at least a second), or two minutes when there is none.
std::chrono::steady_clock::time_point server_connection::account_check_deadline() const
{
    const auto now = std::chrono::steady_clock::now();
    if (cfg_.login_grace_time <= 0)
        return now + std::chrono::minutes(2);
    return std::max(started_ + std::chrono::seconds(cfg_.login_grace_time), now + std::chrono::seconds(1));
}

// What the authentication machine asks of the backends; sending, holding
// and the hand-off are the session layer's.
void server_connection::on_auth_event(server_auth_event& ev)
{
    switch (ev.type) {
    case server_auth_event_type::log: log_.log(to_log_level(ev.level), ev.text); break;
    case server_auth_event_type::check_password: check_password(ev); break;
    case server_auth_event_type::kbdint_start:
        if (!cfg_.use_pam) {
            auth()->answer_kbdint({});
            break;
        }
        pam_.reset();
        pam_purpose_ = pam_purpose::kbdint;
        start_pam(pam_mode::keyboard_interactive, ev.user, "");
        if (!pam_)
            auth()->answer_kbdint({});
        break;
    case server_auth_event_type::kbdint_respond: {
        std::vector<std::string> answers;
        for (const auto& r : ev.responses)
            answers.emplace_back(as_string_view(r.span()));
        if (!pam_ || !pam_->respond(std::move(answers)))
            auth()->answer_kbdint({});
        for (auto& x : answers)
            cleanse(x.data(), x.size());
        break;
    }
    case server_auth_event_type::kbdint_abort:
        if (pam_ && !pam_->finished())
            pam_->cancel();
        break;
    default: break;
    }
}

void server_connection::check_password(const server_auth_event& ev)
{
    const std::string pw(as_string_view(ev.password.span()));
    // Under UsePAM every user goes through PAM, invalid ones too (the auth
    // core has replaced what they typed), so PAM's timing and failure delay
    // are the same whether or not the user exists, as in OpenSSH.
    if (cfg_.use_pam) {
        pam_.reset();
        pam_purpose_ = pam_purpose::password;
        start_pam(pam_mode::password, ev.user, pw);
        if (!pam_)
            auth()->answer_password(false);
        return;
    }
    auto r = shadow_.check_password(ev.user, pw, ev.user_valid, policy_.user_config().permit_empty_passwords,
                                    std::time(nullptr));
    for (const auto& m : r.log)
        log_.log(to_log_level(m.level), m.text);
    // OpenSSH lets an expired password in only to run passwd(1) on a tty.
    // That forced change is not implemented here, and a session with an
    // expired password must not be an ordinary one: refuse it.
    if (r.success && r.password_expired) {
        log_.info("Refusing password login for " + ev.user.substr(0, 100) +
                  ": the password has expired and must be changed (not supported without PAM)");
        auth()->answer_password(false);
        return;
    }
    auth()->answer_password(r.success);
}

void server_connection::start_pam(pam_mode mode, const std::string& user, const std::string& password)
{
    auto pam = std::make_unique<pam_authenticator>();
    pam_start_options o;
    o.service = ctx_.pam_service;
    o.user = user;
    o.remote_host = facts_.remote_host;
    o.ssh_connection = facts_.remote_address + " " + std::to_string(facts_.remote_port) + " " + facts_.local_address +
                       " " + std::to_string(facts_.local_port);
    o.mode = mode;
    o.password = password;
    o.disallow_null_authtok = !policy_.user_config().permit_empty_passwords;
    std::string error;
    if (!pam->start(o, error)) {
        log_.error("PAM: " + error);
        return;
    }
    pam_ = std::move(pam);
    if (mode != pam_mode::account_only)
        watch_pam();
}

void server_connection::watch_pam()
{
    pam_watch_ = std::make_unique<asio::posix::stream_descriptor>(io_, ::dup(pam_->event_fd()));
    pam_watch_->async_wait(asio::posix::stream_descriptor::wait_read,
                           [this](const boost::system::error_code& ec) {
                               if (!ec)
                                   pam_event_ready();
                           });
}

void server_connection::log_pam_account_refusal(const pam_event& ev, std::string_view user)
{
    if (ev.password_change_required)
        log_.error("Password change required for " + std::string(user) +
                   ", which only keyboard-interactive can do here (not supported yet for other methods)");
    else if (ev.account_failed)
        log_.error("Access denied for user " + std::string(user) + " by PAM account configuration [preauth]");
}

void server_connection::pam_event_ready()
{
    if (!pam_)
        return;
    while (auto ev = pam_->poll()) {
        if (ev->kind == pam_event::type::prompts) {
            // The password method answers PAM's password prompt itself; any
            // other question means PAM wants a conversation: give up.
            if (pam_purpose_ != pam_purpose::kbdint) {
                pam_->cancel();
                continue;
            }
            kbdint_reply reply;
            reply.result = kbdint_reply::kind::prompts;
            for (std::size_t i = 0; i < ev->prompts.size(); ++i)
                reply.prompts.push_back({kbdint_prompt_text(*ev, i), ev->prompts[i].echo});
            auth()->answer_kbdint(std::move(reply));
            continue;
        }
        if (!ev->success && !ev->error.empty())
            log_.debug("PAM: " + ev->error);
        if (ev->success)
            pam_account_ok_ = true;
        log_pam_account_refusal(*ev, auth()->user());
        if (pam_purpose_ == pam_purpose::password) {
            auth()->answer_password(ev->success);
        } else if (pam_purpose_ == pam_purpose::kbdint) {
            kbdint_reply reply;
            reply.result = ev->success ? kbdint_reply::kind::success : kbdint_reply::kind::failure;
            auth()->answer_kbdint(std::move(reply));
        }
    }
    pump_session();
    if (pam_ && !pam_->finished() && pam_watch_)
        pam_watch_->async_wait(asio::posix::stream_descriptor::wait_read,
                               [this](const boost::system::error_code& ec) {
                                   if (!ec)
                                       pam_event_ready();
                               });
}

} // namespace longhaul::detail
