// The client's prompting methods, as OpenSSH's sshconnect2.c: password
// (NumberOfPasswordPrompts tries, "Permission denied, please try again.",
// PASSWD_CHANGEREQ), keyboard-interactive (INFO_REQUEST prompts shown as
// "(user@host) prompt"), and where each answered prompt leads.
#include "common/auth/client_auth.hpp"

namespace longhaul {

namespace {

std::string limited_user_at_host(const std::string& user, const std::string& host)
{
    // OpenSSH's "%.30s@%.128s" in the password change prompts.
    return std::string(truncated(user, 30)) + "@" + std::string(truncated(host, 128));
}

bool same_secret(const secret_bytes& a, const secret_bytes& b)
{
    return a.size() == b.size() && equal_constant_time(a.span(), b.span());
}

} // namespace

void client_auth::resume(started s)
{
    if (s == started::sent)
        phase_ = phase::waiting;
    else if (s == started::not_sent)
        continue_method();
}

client_auth::started client_auth::run_password()
{
    if (password_attempts_++ >= config_.number_of_password_prompts)
        return started::not_sent;
    if (password_attempts_ != 1)
        log(auth_log_level::error, "Permission denied, please try again.");
    prompt(prompt_kind::password, {{user_at_host() + "'s password: ", false}}, ask::password);
    return started::waiting;
}

client_auth::started client_auth::run_kbdint()
{
    if (kbdint_attempts_++ >= config_.number_of_password_prompts)
        return started::not_sent;
    // A server that never asked anything will not start now.
    if (kbdint_attempts_ > 1 && !info_req_seen_) {
        log(auth_log_level::debug3, "userauth_kbdint: disable: no info_req_seen");
        return started::not_sent;
    }
    log(auth_log_level::debug2, "userauth_kbdint");
    send(userauth_request{config_.user, config_.service, std::string(method_kbdint),
                          userauth_kbdint_data{"", config_.kbd_interactive_devices}}
             .encode());
    return started::sent;
}

void client_auth::handle_info_request(byte_span payload)
{
    auto req = userauth_info_request::decode(payload);
    if (!req) {
        disconnect("invalid format");
        return;
    }
    info_req_seen_ = true;
    const std::string name = sanitize_peer_text(req->name, true);
    const std::string instruction = sanitize_peer_text(req->instruction, true);
    if (!name.empty())
        log(auth_log_level::info, name);
    if (!instruction.empty())
        log(auth_log_level::info, instruction);
    if (req->prompts.empty()) {
        send(userauth_info_response{}.encode());
        return;
    }
    std::vector<kbdint_prompt> prompts;
    prompts.reserve(req->prompts.size());
    for (const auto& p : req->prompts)
        prompts.push_back({"(" + user_at_host() + ") " + sanitize_peer_text(p.text, true), p.echo});
    kbdint_expected_ = prompts.size();
    prompt(prompt_kind::kbdint, std::move(prompts), ask::kbdint);
    events_.back().name = name;
    events_.back().instruction = instruction;
}

void client_auth::handle_passwd_changereq(byte_span payload)
{
    auto req = userauth_passwd_changereq::decode(payload);
    if (!req) {
        disconnect("invalid format");
        return;
    }
    log(auth_log_level::debug2, "input_userauth_passwd_changereq");
    if (!req->prompt.empty())
        log(auth_log_level::info, sanitize_peer_text(req->prompt, true));
    prompt(prompt_kind::old_password,
           {{"Enter " + limited_user_at_host(config_.user, prompt_host()) + "'s old password: ", false}},
           ask::old_password);
}

void client_auth::prompt_answered(std::vector<secret_bytes> responses)
{
    const ask why = asking_;
    asking_ = ask::none;
    if (why != ask::kbdint && responses.size() != 1) {
        // One prompt, one answer; anything else counts as no answer.
        responses.clear();
        asking_ = why;
        prompt_cancelled();
        return;
    }
    const std::string host = limited_user_at_host(config_.user, prompt_host());
    switch (why) {
    case ask::none: return;
    case ask::password:
        send(userauth_request{config_.user, config_.service, std::string(method_password),
                              userauth_password_data{false, std::move(responses[0]), {}}}
                 .encode_secret());
        return;
    case ask::kbdint: {
        // Exactly as many responses as prompts, whatever the program gave.
        responses.resize(kbdint_expected_);
        userauth_info_response r;
        r.responses = std::move(responses);
        send(r.encode());
        return;
    }
    case ask::passphrase:
        if (responses[0].empty()) {
            log(auth_log_level::debug2, "no passphrase given, try next key");
            resume(started::not_sent);
            return;
        }
        resume(try_load(as_string_view(responses[0].span())));
        return;
    case ask::old_password:
        change_old_ = std::move(responses[0]);
        prompt(prompt_kind::new_password, {{"Enter " + host + "'s new password: ", false}}, ask::new_password);
        return;
    case ask::new_password:
        change_new_ = std::move(responses[0]);
        prompt(prompt_kind::retype_new_password, {{"Retype " + host + "'s new password: ", false}},
               ask::retype_password);
        return;
    case ask::retype_password:
        if (!same_secret(change_new_, responses[0])) {
            change_new_.clear();
            log(auth_log_level::info, "Mismatch; try again, EOF to quit.");
            prompt(prompt_kind::new_password, {{"Enter " + host + "'s new password: ", false}}, ask::new_password);
            return;
        }
        send(userauth_request{config_.user, config_.service, std::string(method_password),
                              userauth_password_data{true, std::move(change_old_), std::move(change_new_)}}
                 .encode_secret());
        change_old_.clear();
        change_new_.clear();
        return;
    }
}

// No answer: the identity or method is given up and the next one tried.
// (OpenSSH would send an empty password; not asking the server about a
// password nobody typed is kinder to MaxAuthTries.)
void client_auth::prompt_cancelled()
{
    const ask why = asking_;
    asking_ = ask::none;
    change_old_.clear();
    change_new_.clear();
    switch (why) {
    case ask::none: return;
    case ask::passphrase: resume(started::not_sent); return;
    case ask::password:
    case ask::old_password:
    case ask::new_password:
    case ask::retype_password:
    case ask::kbdint:
        disabled_[current_] = true;
        continue_method();
        return;
    }
}

} // namespace longhaul
