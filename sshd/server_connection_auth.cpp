// sshd's authentication backends, run by the monitor (the connection
// process, root) for its sandboxed pre-authentication child: shadow
// passwords and PAM (password, keyboard-interactive, account management).
// PAM works on a worker thread; the monitor waits for its events here, no
// longer than the login may still take.
#include "sshd/detail/server_connection.hpp"

#include "common/text.hpp"

#include <poll.h>

#include <algorithm>
#include <cstring>

namespace longhaul::detail {

namespace {

// What PAM or the shadow check gets in place of the password of a user
// who may not log in with one (invalid, or root under PermitRootLogin
// other than yes): OpenSSH's deliberately wrong password, so PAM's delay
// and logging are the same and the real password goes nowhere (defect 4).
constexpr std::string_view bogus_password = "\b\n\r\177INCORRECT";

} // namespace

// The PAM and shadow checks block the monitor, so they get what is left
// of LoginGraceTime (at least a second), or two minutes when there is none.
std::chrono::steady_clock::time_point server_connection::account_check_deadline() const
{
    const auto now = std::chrono::steady_clock::now();
    if (cfg_.login_grace_time <= 0)
        return now + std::chrono::minutes(2);
    return std::max(started_ + std::chrono::seconds(cfg_.login_grace_time), now + std::chrono::seconds(1));
}

// Whether the user looked up may log in with a password or PAM
// conversation at all; the monitor decides this itself, whatever the
// child says.
bool server_connection::secret_methods_allowed() const
{
    if (mon_.lookup.status != user_status::valid)
        return false;
    const server_auth_settings s = policy_.settings_for(policy_.user_config());
    return !mon_.lookup.is_root || s.root_login == permit_root_login::yes;
}

std::optional<pam_event> server_connection::wait_pam()
{
    const auto deadline = account_check_deadline();
    for (;;) {
        if (auto ev = pam_->poll())
            return ev;
        const auto left = deadline - std::chrono::steady_clock::now();
        if (left <= std::chrono::steady_clock::duration::zero())
            return std::nullopt;
        pollfd p{pam_->event_fd(), POLLIN, 0};
        (void)::poll(&p, 1, static_cast<int>(std::chrono::ceil<std::chrono::milliseconds>(left).count()));
    }
}

account_decision server_connection::check_account()
{
    // Password and keyboard-interactive ran pam_acct_mgmt already.
    if (pam_account_ok_)
        return {true, ""};
    // Any other transaction is a method that did not succeed: a failed
    // password, or a keyboard-interactive conversation the client left,
    // still waiting for answers that will never come. Waiting on it would
    // hang (and hold a MaxStartups slot): discard it and ask PAM's account
    // management afresh, as OpenSSH's sshpam_cleanup() + do_pam_account().
    if (pam_ && pam_purpose_ != pam_purpose::account)
        pam_.reset(); // cancels a pending conversation; never blocks
    if (!pam_) {
        pam_purpose_ = pam_purpose::account;
        start_pam(pam_mode::account_only, mon_.user, "");
        if (!pam_)
            return {false, ""};
    }
    auto ev = wait_pam();
    if (!ev) {
        log_.error("PAM account check for " + mon_.user + " from " + facts_.remote_address + " port " +
                   std::to_string(facts_.remote_port) + " did not finish in time: access refused [preauth]");
        pam_.reset();
        return {false, ""};
    }
    if (ev->kind != pam_event::type::done) {
        pam_->cancel();
        return {false, ""};
    }
    log_pam_account_refusal(*ev, mon_.user);
    if (ev->success)
        pam_account_ok_ = true;
    return {ev->success, ""};
}

bool server_connection::check_password(secret_bytes password)
{
    const bool allowed = secret_methods_allowed();
    const std::string pw(allowed ? as_string_view(password.span()) : bogus_password);
    cleanse(password.span());
    // Under UsePAM every user goes through PAM, invalid ones too (with the
    // wrong password), so PAM's timing and failure delay are the same
    // whether or not the user exists, as in OpenSSH.
    if (cfg_.use_pam) {
        pam_.reset();
        pam_purpose_ = pam_purpose::password;
        start_pam(pam_mode::password, mon_.user, pw);
        if (!pam_)
            return false;
        auto ev = wait_pam();
        if (!ev || ev->kind != pam_event::type::done) {
            // Any question beyond the password means PAM wants a conversation.
            pam_.reset();
            return false;
        }
        if (!ev->success && !ev->error.empty())
            log_.debug("PAM: " + ev->error);
        log_pam_account_refusal(*ev, mon_.user);
        if (ev->success && allowed)
            pam_account_ok_ = true;
        return ev->success && allowed;
    }
    auto r = shadow_.check_password(mon_.user, pw, mon_.lookup.status == user_status::valid,
                                    policy_.user_config().permit_empty_passwords, std::time(nullptr));
    for (const auto& m : r.log)
        log_.log(to_log_level(m.level), m.text);
    // OpenSSH lets an expired password in only to run passwd(1) on a tty.
    // That forced change is not implemented here, and a session with an
    // expired password must not be an ordinary one: refuse it.
    if (r.success && r.password_expired) {
        log_.info("Refusing password login for " + mon_.user.substr(0, 100) +
                  ": the password has expired and must be changed (not supported without PAM)");
        return false;
    }
    return r.success && allowed;
}

// Keyboard-interactive through PAM: the next prompts or the verdict.
kbdint_reply server_connection::kbdint_step()
{
    kbdint_reply reply;
    auto ev = wait_pam();
    if (!ev) {
        pam_.reset();
        return reply;
    }
    if (ev->kind == pam_event::type::prompts) {
        reply.result = kbdint_reply::kind::prompts;
        for (std::size_t i = 0; i < ev->prompts.size(); ++i)
            reply.prompts.push_back({kbdint_prompt_text(*ev, i), ev->prompts[i].echo});
        return reply;
    }
    if (!ev->success && !ev->error.empty())
        log_.debug("PAM: " + ev->error);
    log_pam_account_refusal(*ev, mon_.user);
    const bool ok = ev->success && secret_methods_allowed();
    if (ok)
        pam_account_ok_ = true;
    reply.result = ok ? kbdint_reply::kind::success : kbdint_reply::kind::failure;
    return reply;
}

kbdint_reply server_connection::kbdint_start()
{
    if (!cfg_.use_pam)
        return {};
    pam_.reset();
    pam_purpose_ = pam_purpose::kbdint;
    start_pam(pam_mode::keyboard_interactive, mon_.user, "");
    if (!pam_)
        return {};
    return kbdint_step();
}

kbdint_reply server_connection::kbdint_respond(std::vector<secret_bytes> responses)
{
    if (!pam_ || pam_purpose_ != pam_purpose::kbdint || pam_->finished())
        return {};
    const bool allowed = secret_methods_allowed();
    std::vector<std::string> answers;
    for (auto& r : responses) {
        answers.emplace_back(allowed ? as_string_view(r.span()) : bogus_password);
        cleanse(r.span());
    }
    const bool sent = static_cast<bool>(pam_->respond(std::move(answers)));
    for (auto& x : answers)
        cleanse(x.data(), x.size());
    if (!sent)
        return {};
    return kbdint_step();
}

void server_connection::start_pam(pam_mode mode, const std::string& user, std::string_view password)
{
    auto pam = std::make_unique<pam_authenticator>();
    pam_start_options o;
    o.service = ctx_.pam_service;
    o.user = user;
    o.remote_host = facts_.remote_host;
    o.ssh_connection = facts_.remote_address + " " + std::to_string(facts_.remote_port) + " " + facts_.local_address +
                       " " + std::to_string(facts_.local_port);
    o.mode = mode;
    o.password = std::string(password);
    o.disallow_null_authtok = !policy_.user_config().permit_empty_passwords;
    std::string error;
    const bool started = static_cast<bool>(pam->start(o, error));
    cleanse(o.password.data(), o.password.size());
    if (!started) {
        log_.error("PAM: " + error);
        return;
    }
    pam_ = std::move(pam);
}

void server_connection::log_pam_account_refusal(const pam_event& ev, std::string_view user)
{
    if (ev.password_change_required)
        log_.error("Password change required for " + std::string(user) +
                   ", which only keyboard-interactive can do here (not supported yet for other methods)");
    else if (ev.account_failed)
        log_.error("Access denied for user " + std::string(user) + " by PAM account configuration [preauth]");
}

} // namespace longhaul::detail
