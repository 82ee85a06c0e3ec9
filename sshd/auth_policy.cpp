#include "sshd/auth_policy.hpp"

#include "common/text.hpp"
#include "sshd/authorized_keys_command.hpp"
#include "sshd/hostbased_auth.hpp"
#include "sshd/revoked_keys.hpp"
#include "sshd/secure_path.hpp"
#include "sshd/user_access.hpp"

#include <unistd.h>

#include <ctime>
#include <fstream>
#include <sstream>

namespace longhaul {

log_level to_log_level(syslog_level l) noexcept
{
    return static_cast<log_level>(static_cast<int>(l));
}

sshd_auth_policy::sshd_auth_policy(const sshd_config& config, connection_facts facts, logger& log)
    : config_(config), facts_(std::move(facts)), log_(log),
      user_config_(std::make_unique<server_config>(config.global()))
{
}

void sshd_auth_policy::log_all(const std::vector<log_message>& msgs)
{
    for (const auto& m : msgs)
        log_.log(to_log_level(m.level), m.text);
}

server_auth_settings sshd_auth_policy::settings_for(const server_config& c) const
{
    server_auth_settings s;
    s.pubkey_authentication = c.pubkey_authentication;
    s.password_authentication = c.password_authentication;
    s.kbd_interactive_authentication = c.kbd_interactive_authentication;
    s.permit_empty_passwords = c.permit_empty_passwords;
    switch (c.permit_root_login) {
    case permit_root_login_mode::yes: s.root_login = permit_root_login::yes; break;
    case permit_root_login_mode::no: s.root_login = permit_root_login::no; break;
    case permit_root_login_mode::forced_commands_only: s.root_login = permit_root_login::forced_commands_only; break;
    case permit_root_login_mode::prohibit_password: s.root_login = permit_root_login::prohibit_password; break;
    }
    s.authentication_methods = c.authentication_methods;
    s.max_auth_tries = c.max_auth_tries;
    s.pubkey_accepted_algorithms = c.pubkey_accepted_algorithms;
    s.ca_signature_algorithms = c.ca_signature_algorithms;
    s.hostbased_authentication = c.hostbased_authentication;
    s.hostbased_accepted_algorithms = c.hostbased_accepted_algorithms;
    if (!c.banner.empty() && c.banner != "none") {
        std::ifstream f(c.banner);
        std::stringstream ss;
        ss << f.rdbuf();
        s.banner = ss.str();
    }
    // Keyboard-interactive needs a device; on Linux that is PAM only.
    s.kbdint_device = c.use_pam ? "pam" : "";
    return s;
}

bool sshd_auth_policy::allowed_user(const user_account& u, const user_groups& g)
{
    const server_config& c = *user_config_;
    // With UsePAM, account state is PAM's business; otherwise shadow's.
    auto access = check_user_access(c, u, g.names, facts_.remote_host, facts_.remote_address,
                                    c.use_pam ? nullptr : &shadow_, std::time(nullptr));
    log_all(access.log);
    return access.allowed;
}

user_lookup sshd_auth_policy::lookup(std::string_view user)
{
    user_lookup out;
    auto u = lookup_user(std::string(user));
    // A server not started as root can only be its own user.
    if (u && geteuid() != 0 && u->uid != geteuid())
        u.reset();
    connection_info info;
    info.user = u ? u->name : std::string(user);
    info.host = facts_.remote_host;
    info.address = facts_.remote_address;
    info.local_address = facts_.local_address;
    info.local_port = facts_.local_port;
    if (!u) {
        // Match applies to an invalid user too, as OpenSSH evaluates it
        // with its fake passwd entry (the name as given, no groups): the
        // methods list, banner and MaxAuthTries must not tell the two apart.
        out.status = user_status::unknown;
        try {
            user_config_ = std::make_unique<server_config>(config_.for_connection(info));
            out.settings = settings_for(*user_config_);
            if (on_user_config)
                on_user_config(*user_config_);
        } catch (const config_error& e) {
            log_.error(e.what());
        }
        return out;
    }
    account_ = u;
    groups_ = lookup_groups(*u);
    info.groups = groups_.names;
    try {
        user_config_ = std::make_unique<server_config>(config_.for_connection(info));
    } catch (const config_error& e) {
        log_.error(e.what());
        out.status = user_status::refused;
        return out;
    }
    if (on_user_config)
        on_user_config(*user_config_);
    out.is_root = u->uid == 0;
    out.settings = settings_for(*user_config_);
    out.status = allowed_user(*u, groups_) ? user_status::valid : user_status::refused;
    return out;
}

authorized_keys_context sshd_auth_policy::keys_context() const
{
    const server_config& c = *user_config_;
    authorized_keys_context ctx;
    ctx.user = account_ ? account_->name : std::string();
    ctx.remote_address = facts_.remote_address;
    ctx.remote_host = facts_.remote_host;
    ctx.now = std::time(nullptr);
    ctx.fingerprint = c.fingerprint;
    ctx.permit_user_environment = c.permit_user_environment;
    ctx.permit_user_environment_patterns = c.permit_user_environment_patterns;
    return ctx;
}

std::optional<authorized_key_match> sshd_auth_policy::find_in_authorized_keys(const keys_file_check& check)
{
    std::vector<log_message> notes;
    std::optional<authorized_key_match> found;
    {
        // Read as the user, not as root (OpenSSH's temporarily_use_uid).
        temporary_identity as_user(*account_, groups_);
        for (const auto& path : authorized_keys_paths(*user_config_, *account_, notes)) {
            auto file = read_user_file(path, *account_, user_config_->strict_modes);
            log_all(file.log);
            if (!file.contents)
                continue;
            auto r = check(*file.contents, path);
            log_all(r.log);
            if (r.match) {
                found = std::move(r.match);
                break;
            }
        }
    }
    log_all(notes);
    return found;
}

std::string sshd_auth_policy::connection_id() const
{
    return facts_.remote_address + " " + std::to_string(facts_.remote_port) + " " + facts_.local_address + " " +
           std::to_string(facts_.local_port);
}

std::optional<authorized_key_match> sshd_auth_policy::find_in_keys_command(const public_key& key,
                                                                           const certificate* cert,
                                                                           const keys_file_check& check)
{
    const server_config& c = *user_config_;
    if (c.authorized_keys_command.empty() || c.authorized_keys_command == "none")
        return std::nullopt;
    std::vector<log_message> notes;
    keys_command_request req;
    req.command = c.authorized_keys_command;
    req.target = *account_;
    req.run_as = command_user("AuthorizedKeysCommand", c.authorized_keys_command_user, *account_, notes);
    log_all(notes);
    if (!req.run_as)
        return std::nullopt;
    req.key = key;
    if (cert)
        req.cert = *cert;
    req.fingerprint = c.fingerprint;
    req.connection_id = connection_id();
    auto out = run_authorized_keys_command(req);
    log_all(out.log);
    if (!out.output)
        return std::nullopt;
    auto r = check(*out.output, c.authorized_keys_command);
    log_all(r.log);
    return std::move(r.match);
}

key_decision sshd_auth_policy::key_allowed(std::string_view, const public_key& key, bool)
{
    key_decision d;
    if (!account_)
        return d;
    const server_config& c = *user_config_;
    // RequiredRSASize, before any file is read (OpenSSH's userauth_pubkey()).
    if (!rsa_size_allowed(key, c.required_rsa_size)) {
        log_.info("refusing " + std::string(key_type_short_name(key.type())) + " key: Invalid key length");
        return d;
    }
    // RevokedKeys first, read as root like OpenSSH's user_key_allowed():
    // a revoked key, or a file that cannot be read, refuses the key
    // whatever authorized_keys says.
    if (!c.revoked_keys.empty()) {
        auto revoked = check_revoked_key(c.revoked_keys, key, c.fingerprint);
        log_all(revoked.log);
        if (revoked.refused)
            return d;
    }
    const authorized_keys_context ctx = keys_context();
    const keys_file_check check = [&](std::string_view contents, const std::string& source) {
        return check_authorized_keys(contents, source, key, ctx);
    };
    std::optional<authorized_key_match> found = find_in_authorized_keys(check);
    if (!found)
        found = find_in_keys_command(key, nullptr, check);
    return decision_of(std::move(found));
}

bool sshd_auth_policy::host_allowed(const public_key& key, const certificate* cert, std::string_view client_host,
                                    std::string_view client_user)
{
    if (!account_)
        return false;
    const server_config& c = *user_config_;
    if (!rsa_size_allowed(key, c.required_rsa_size)) {
        log_.info("refusing " + std::string(key_type_short_name(key.type())) + " key: Invalid key length");
        return false;
    }
    hostbased_query q;
    q.user = &*account_;
    q.groups = &groups_;
    q.client_user = std::string(client_user);
    q.client_host = std::string(client_host);
    q.remote_address = facts_.remote_address;
    q.remote_host = facts_.remote_host;
    q.key = &key;
    q.cert = cert;
    auto v = hostbased_key_allowed(c, q);
    log_all(v.log);
    return v.allowed;
}

key_decision sshd_auth_policy::decision_of(std::optional<authorized_key_match> found) const
{
    key_decision d;
    if (!found)
        return d;
    d.allowed = true;
    d.forced_command = found->options.force_command.has_value();
    const server_config& c = *user_config_;
    d.security_key = sk_requirements_for(c.pubkey_auth_touch_required, c.pubkey_auth_verify_required,
                                         found->options.no_touch_required, found->options.verify_required);
    d.options = std::make_shared<const authorized_key_match>(std::move(*found));
    return d;
}

server_auth_policy sshd_auth_policy::make_policy()
{
    server_auth_policy p;
    p.lookup_user = [this](std::string_view user) { return lookup(user); };
    p.key_allowed = [this](std::string_view user, const public_key& key, bool sig) {
        return key_allowed(user, key, sig);
    };
    p.certificate_allowed = [this](std::string_view user, const certificate& cert, bool sig) {
        return certificate_allowed(user, cert, sig);
    };
    p.host_allowed = [this](std::string_view, const public_key& key, const certificate* cert, std::string_view host,
                            std::string_view user) { return host_allowed(key, cert, host, user); };
    return p;
}

} // namespace longhaul
