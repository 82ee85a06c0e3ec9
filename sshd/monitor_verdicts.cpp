#include "sshd/monitor_verdicts.hpp"

#include "common/auth/auth_common.hpp"
#include "common/auth/messages.hpp"
#include "common/text.hpp"

namespace longhaul {

void monitor_verdicts::user(std::string name, user_status status)
{
    user_ = std::move(name);
    valid_ = status == user_status::valid;
    if (status == user_status::unknown) {
        out_(log_level::info, invalid_user_line(user_, remote_ip_, remote_port_));
        if (on_failed_login)
            on_failed_login(user_);
    }
}

void monitor_verdicts::child_line(log_level level, std::string_view text)
{
    // The child's lines already show peer text printable; this keeps a
    // compromised child from writing anything else into the log.
    std::string line = printable(text);
    constexpr std::string_view mark = " [preauth]";
    if (line.size() < mark.size() || line.compare(line.size() - mark.size(), mark.size(), mark) != 0)
        line += mark;
    out_(level, std::move(line));
}

void monitor_verdicts::attempt(std::string_view verdict, std::string_view method, std::string_view submethod,
                               const public_key* key, bool authenticated, const server_auth_settings& s,
                               const certificate* cert, std::string_view note)
{
    auth_attempt_record a;
    a.verdict = verdict;
    a.method = method;
    a.submethod = submethod;
    a.user = user_;
    a.valid_user = valid_;
    a.remote_ip = remote_ip_;
    a.remote_port = remote_port_;
    a.key = key;
    a.cert = cert;
    a.note = note;
    out_(to_log_level(auth_attempt_level(a, authenticated, failures_, s.max_auth_tries)), auth_attempt_line(a));
    if (verdict != "Failed")
        return;
    ++failures_;
    if (on_failed_login && (method == method_password || method == method_kbdint))
        on_failed_login(user_);
}

void monitor_verdicts::failed(std::string_view method, std::string_view submethod, const public_key* key,
                              const server_auth_settings& s, const certificate* cert, std::string_view note)
{
    attempt("Failed", method, submethod, key, false, s, cert, note);
}

void monitor_verdicts::succeeded(std::string_view method, std::string_view submethod, const public_key* key,
                                 bool is_root, permit_root_login root_rule, bool root_permitted, bool methods_complete,
                                 const server_auth_settings& s, const certificate* cert)
{
    if (is_root && !root_permitted) {
        out_(log_level::info, root_refused_line(remote_ip_, remote_port_));
        attempt("Failed", method, submethod, key, false, s, cert);
        return;
    }
    if (is_root && root_rule == permit_root_login::forced_commands_only)
        out_(log_level::info, "Root login accepted for forced command.");
    if (!methods_complete) {
        attempt("Partial", method, submethod, key, false, s, cert);
        return;
    }
    if (use_pam_) {
        accept_pending_ = pending{std::string(method), std::string(submethod), std::nullopt, std::nullopt};
        if (key != nullptr)
            accept_pending_->key = *key;
        if (cert != nullptr)
            accept_pending_->cert = *cert;
        return;
    }
    attempt("Accepted", method, submethod, key, true, s, cert);
}

void monitor_verdicts::account(bool allowed, const server_auth_settings& s)
{
    if (!accept_pending_)
        return;
    const pending p = std::move(*accept_pending_);
    accept_pending_.reset();
    attempt(allowed ? "Accepted" : "Failed", p.method, p.submethod, p.key ? &*p.key : nullptr, allowed, s,
            p.cert ? &*p.cert : nullptr);
}

void monitor_verdicts::timeout()
{
    out_(log_level::info,
         "Timeout before authentication for " + remote_ip_ + " port " + std::to_string(remote_port_));
}

} // namespace longhaul
