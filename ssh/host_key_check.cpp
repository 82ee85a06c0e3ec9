#include "ssh/host_key_check.hpp"

#include "common/keys/revocation_file.hpp"
#include "common/text_parse.hpp"
#include "ssh/algorithm_names.hpp"
#include "ssh/detail/config_values.hpp"
#include "ssh/host_key_check_cert.hpp"

#include <algorithm>
#include <ctime>

namespace longhaul {

namespace {

constexpr std::size_t max_other_names = 8;

std::string cut(std::string_view s, std::size_t n) { return std::string(s.substr(0, n)); }

class checker {
public:
    checker(client_config& cfg, const host_key_target& target, const public_key& key, const certificate* cert,
            const config_environment& env, const host_key_prompter& ui, random_source& rng, const log_sink& log)
        : cfg_(cfg), target_(target), key_(key), cert_(cert), env_(env), ui_(ui), rng_(rng), log_(log)
    {
    }

    host_key_verdict run()
    {
        host_key_verdict v;
        if (*cfg_.no_host_authentication_for_localhost && target_.loopback && !cfg_.host_key_alias) {
            emit(log_level::debug1, "Forcing accepting of host key for loopback/localhost.");
            cfg_.update_hostkeys = yes_no_ask::no;
            v.accepted = v.trusted = true;
            return v;
        }
        v.accepted = check(target_.port, mode::read_write, false, v.trusted, cert_);
        v.fatal = std::move(fatal_);
        if (!v.fatal.empty())
            v.accepted = false;
        return v;
    }

private:
    enum class mode { read_write, read_only, read_quiet };

    void emit(log_level level, const std::string& text) const
    {
        if (log_)
            log_(level, text);
    }

    // The confirmation dialogue; false when the user does not say yes.
    bool confirm(const std::string& prompt, const std::optional<std::string>& fingerprint)
    {
        if (*cfg_.batch_mode || !ui_.read_line)
            return false;
        std::string msg = prompt;
        while (true) {
            auto answer = ui_.read_line(msg);
            if (!answer)
                return false;
            switch (parse_confirmation(*answer, fingerprint)) {
            case confirmation::yes: return true;
            case confirmation::no: return false;
            case confirmation::again: msg = std::string(again_prompt(fingerprint.has_value())); break;
            }
        }
    }

    bool add(const std::string& names)
    {
        if (cfg_.user_known_hosts_files.empty())
            return false;
        return add_known_host(cfg_.user_known_hosts_files[0], names, key_, *cfg_.hash_known_hosts, rng_, env_.user_dir,
                              log_);
    }

    bool in_system_files(const known_host_entry* e) const
    {
        const auto& g = cfg_.global_known_hosts_files;
        return e != nullptr && std::find(g.begin(), g.end(), e->file) != g.end();
    }

    // With a certificate that no CA in known_hosts vouches for (or that
    // check_host_cert refuses), OpenSSH retries with the key it certifies,
    // as a plain key; a revoked one is not retried.
    bool check(int port, mode m, bool clobber_port, bool& trusted, const certificate* cert)
    {
        host_key_status status = host_key_status::not_found;
        if (check_with(port, m, clobber_port, trusted, cert, cert == nullptr, status))
            return true;
        if (cert == nullptr || status == host_key_status::revoked)
            return false;
        emit(log_level::debug1, "No matching CA found. Retry with plain key");
        // The address is not looked up after the downgrade either (OpenSSH
        // loads its keys only when the first try is not a certificate).
        return check_with(port, m, clobber_port, trusted, nullptr, false, status);
    }

    bool check_with(int port, mode m, bool clobber_port, bool& trusted, const certificate* cert, bool ip_allowed,
                    host_key_status& status_out)
    {
        const bool via_proxy = !target_.address.has_value();
        const std::string host = known_hosts_name(target_.hostname, clobber_port ? 0 : port, cfg_.host_key_alias);
        const std::string ip = via_proxy ? std::string("<no hostip for proxy command>")
                                         : known_hosts_name(*target_.address, clobber_port ? 0 : port);
        if (*cfg_.check_host_ip && (target_.loopback || target_.hostname == ip || via_proxy))
            cfg_.check_host_ip = false;
        const bool check_ip = *cfg_.check_host_ip;

        known_host_keys host_known, ip_known;
        for (const auto& f : cfg_.user_known_hosts_files)
            host_known.load_file(host, f, log_);
        for (const auto& f : cfg_.global_known_hosts_files)
            host_known.load_file(host, f, log_);
        if (check_ip && ip_allowed) {
            for (const auto& f : cfg_.user_known_hosts_files)
                ip_known.load_file(ip, f, log_);
            for (const auto& f : cfg_.global_known_hosts_files)
                ip_known.load_file(ip, f, log_);
        }

        const std::string type = cert != nullptr ? certificate_type_label(*cert) : std::string(key_type_label(key_));
        const known_host_entry* host_found = nullptr;
        const known_host_entry* ip_found = nullptr;
        const host_key_status host_status =
            cert != nullptr ? host_known.check_certificate(*cert, &host_found) : host_known.check(key_, &host_found);
        status_out = host_status;
        if (m == mode::read_write && cfg_.user_known_hosts_files.empty())
            m = mode::read_only;
        host_key_status ip_status = host_status;
        bool host_ip_differ = false;
        if (check_ip && ip_allowed) {
            ip_status = ip_known.check(key_, &ip_found);
            if (host_status == host_key_status::changed &&
                (ip_status != host_key_status::changed ||
                 (ip_found != nullptr && host_found != nullptr && !(ip_found->key == host_found->key))))
                host_ip_differ = true;
        }
        const std::string fp = key_fingerprint_text(key_, *cfg_.fingerprint_hash);
        const auto strict = *cfg_.strict_host_key_checking;
        bool hostkey_trusted = false;

        switch (host_status) {
        case host_key_status::ok:
            emit(log_level::debug1, "Host '" + cut(host, 200) + "' is known and matches the " + type + " host " +
                                        (cert != nullptr ? "certificate." : "key."));
            emit(log_level::debug1, std::string(cert != nullptr ? "Found CA key in " : "Found key in ") +
                                        host_found->file + ":" + std::to_string(host_found->line));
            if (cert != nullptr) {
                // The name is the one given (or HostKeyAlias), never [host]:port.
                const std::string name = cfg_.host_key_alias.value_or(target_.hostname);
                const std::string ca_algs = cfg_.ca_signature_algorithms.value_or(default_ca_signature_algorithms());
                if (auto problem = check_host_certificate(*cert, name, ca_algs, now_)) {
                    emit(problem->level, problem->message);
                    return false;
                }
            }
            if (*cfg_.update_hostkeys != yes_no_ask::no &&
                (in_system_files(host_found) || (ip_status == host_key_status::ok && in_system_files(ip_found)))) {
                cfg_.update_hostkeys = yes_no_ask::no;
                emit(log_level::debug3, "check_host_key: host key found in GlobalKnownHostsFile; disabling UpdateHostkeys");
            }
            if (check_ip && ip_status == host_key_status::not_found) {
                const std::string ipn = cut(ip, 128);
                if (m != mode::read_write)
                    emit(log_level::info, type + " host key for IP address '" + ipn + "' not in list of known hosts.");
                else if (!add(ip))
                    emit(log_level::info, "Failed to add the " + type + " host key for IP address '" + ipn +
                                              "' to the list of known hosts (" + cut(cfg_.user_known_hosts_files[0], 500) +
                                              ").");
                else
                    emit(log_level::info, "Warning: Permanently added the " + type + " host key for IP address '" + ipn +
                                              "' to the list of known hosts.");
            } else if (*cfg_.visual_host_key) {
                emit(log_level::info, "Host key fingerprint is " + fp);
            }
            hostkey_trusted = true;
            break;

        case host_key_status::not_found: {
            if (!cfg_.host_key_alias && port != 0 && port != 22 && !clobber_port) {
                emit(log_level::debug1, "checking without port identifier");
                bool inner_trusted = false;
                if (check(0, mode::read_quiet, true, inner_trusted, cert)) {
                    emit(log_level::debug1, "found matching key w/out port");
                    break;
                }
            }
            if (m != mode::read_write || cert != nullptr)
                return false;
            if (strict == strict_host_key_checking::yes) {
                emit(log_level::error, "No " + type + " host key is known for " + cut(host, 200) +
                                           " and you have requested strict checking.");
                return false;
            }
            if (strict == strict_host_key_checking::ask) {
                const bool others = show_other_keys(host_known);
                const auto names = other_names_for_key(key_, host, all_files(), env_.home_dir, log_);
                const std::string prompt = unknown_host_prompt(host, ip, type, fp, others, names);
                if (!confirm(prompt, fp))
                    return false;
                hostkey_trusted = true;
            }
            bool added;
            std::string shown;
            if (check_ip && ip_status == host_key_status::not_found) {
                shown = host + "," + ip;
                added = add(shown); // hashed: one line per name
            } else {
                shown = host;
                added = add(host);
            }
            if (!added)
                emit(log_level::info, "Failed to add the host to the list of known hosts (" +
                                          cut(cfg_.user_known_hosts_files.empty() ? std::string("(null)")
                                                                                  : cfg_.user_known_hosts_files[0],
                                              500) +
                                          ").");
            else
                emit(log_level::info, permanently_added_message(shown, type));
            break;
        }

        case host_key_status::revoked:
            for (const auto& line : revoked_host_key_warning(type, host))
                emit(log_level::error, line);
            if (strict != strict_host_key_checking::off) {
                emit(log_level::error, type + " host key for " + cut(host, 200) +
                                           " was revoked and you have requested strict checking.");
                return false;
            }
            continue_unsafe();
            break;

        case host_key_status::changed:
            if (m == mode::read_quiet)
                return false;
            if (check_ip && host_ip_differ) {
                const char* key_msg = ip_status == host_key_status::not_found ? "is unknown"
                                      : ip_status == host_key_status::ok      ? "is unchanged"
                                                                              : "has a different value";
                emit(log_level::error, "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@");
                emit(log_level::error, "@       WARNING: POSSIBLE DNS SPOOFING DETECTED!          @");
                emit(log_level::error, "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@");
                emit(log_level::error, "The " + type + " host key for " + host + " has changed,");
                emit(log_level::error, "and the key for the corresponding IP address " + ip);
                emit(log_level::error, std::string(key_msg) + ". This could either mean that");
                emit(log_level::error, "DNS SPOOFING is happening or the IP address for the host");
                emit(log_level::error, "and its host key have changed at the same time.");
                if (ip_status != host_key_status::not_found && ip_found != nullptr)
                    emit(log_level::error,
                         "Offending key for IP in " + ip_found->file + ":" + std::to_string(ip_found->line));
            }
            for (const auto& line : changed_host_key_warning(type, fp,
                                                             cfg_.user_known_hosts_files.empty()
                                                                 ? std::string_view("(null)")
                                                                 : std::string_view(cfg_.user_known_hosts_files[0]),
                                                             *host_found, host))
                emit(log_level::error, line);
            if (strict != strict_host_key_checking::off) {
                emit(log_level::error, "Host key for " + cut(host, 200) + " has changed and you have requested strict checking.");
                return false;
            }
            continue_unsafe();
            break;
        }

        if (check_ip && host_status != host_key_status::changed && ip_status == host_key_status::changed &&
            ip_found != nullptr) {
            std::string msg = "Warning: the " + type + " host key for '" + cut(host, 200) +
                              "' differs from the key for the IP address '" + cut(ip, 128) +
                              "'\nOffending key for IP in " + ip_found->file + ":" + std::to_string(ip_found->line);
            if (host_status == host_key_status::ok && host_found != nullptr)
                msg += "\nMatching host key in " + host_found->file + ":" + std::to_string(host_found->line);
            if (strict == strict_host_key_checking::ask) {
                if (!confirm(msg + "\nAre you sure you want to continue connecting (yes/no)? ", std::nullopt))
                    return false;
            } else if (strict != strict_host_key_checking::off) {
                emit(log_level::info, msg);
                emit(log_level::error, "Exiting, you have requested strict checking.");
                return false;
            } else {
                emit(log_level::info, msg);
            }
        }
        if (!hostkey_trusted && *cfg_.update_hostkeys != yes_no_ask::no) {
            emit(log_level::debug1, "check_host_key: hostkey not known or explicitly trusted: disabling UpdateHostkeys");
            cfg_.update_hostkeys = yes_no_ask::no;
        }
        trusted = hostkey_trusted;
        return fatal_.empty();
    }

    std::vector<std::string> all_files() const
    {
        auto files = cfg_.user_known_hosts_files;
        files.insert(files.end(), cfg_.global_known_hosts_files.begin(), cfg_.global_known_hosts_files.end());
        return files;
    }

    // Keys of other types known for the host (logged before the prompt).
    bool show_other_keys(const known_host_keys& known)
    {
        bool any = false;
        for (auto t : {key_type::rsa, key_type::ecdsa_p256, key_type::ecdsa_p384, key_type::ecdsa_p521, key_type::ed25519}) {
            if (t == key_.type())
                continue;
            const known_host_entry* e = known.find_type(t);
            if (e == nullptr)
                continue;
            const std::string type(key_type_label(e->key));
            emit(log_level::info, "WARNING: " + type + " key found for host " + e->lookup_name + "\nin " + e->file +
                                      ":" + std::to_string(e->line) + "\n" + type + " key fingerprint " +
                                      key_fingerprint_text(e->key, *cfg_.fingerprint_hash) + ".");
            any = true;
        }
        return any;
    }

    // StrictHostKeyChecking=no let a changed or revoked key through: turn
    // off what a man in the middle could use.
    void continue_unsafe()
    {
        bool cancelled = false;
        if (*cfg_.password_authentication) {
            emit(log_level::error, "Password authentication is disabled to avoid man-in-the-middle attacks.");
            cfg_.password_authentication = false;
            cancelled = true;
        }
        if (*cfg_.kbd_interactive_authentication) {
            emit(log_level::error, "Keyboard-interactive authentication is disabled to avoid man-in-the-middle attacks.");
            cfg_.kbd_interactive_authentication = false;
            cancelled = true;
        }
        if (*cfg_.forward_agent) {
            emit(log_level::error, "Agent forwarding is disabled to avoid man-in-the-middle attacks.");
            cfg_.forward_agent = false;
            cancelled = true;
        }
        if (*cfg_.forward_x11) {
            emit(log_level::error, "X11 forwarding is disabled to avoid man-in-the-middle attacks.");
            cfg_.forward_x11 = false;
            cancelled = true;
        }
        if (!cfg_.local_forwards.empty() || !cfg_.remote_forwards.empty()) {
            emit(log_level::error, "Port forwarding is disabled to avoid man-in-the-middle attacks.");
            cfg_.local_forwards.clear();
            cfg_.remote_forwards.clear();
            cancelled = true;
        }
        if (*cfg_.tunnel != tunnel_request::no) {
            emit(log_level::error, "Tunnel forwarding is disabled to avoid man-in-the-middle attacks.");
            cfg_.tunnel = tunnel_request::no;
            cancelled = true;
        }
        if (*cfg_.update_hostkeys != yes_no_ask::no) {
            emit(log_level::error, "UpdateHostkeys is disabled because the host key is not trusted.");
            cfg_.update_hostkeys = yes_no_ask::no;
        }
        if (*cfg_.exit_on_forward_failure && cancelled)
            fatal_ = "Error: forwarding disabled due to host key check failure";
    }

    client_config& cfg_;
    const host_key_target& target_;
    const public_key& key_;
    const certificate* cert_;
    const std::uint64_t now_ = static_cast<std::uint64_t>(std::time(nullptr));
    const config_environment& env_;
    const host_key_prompter& ui_;
    random_source& rng_;
    const log_sink& log_;
    std::string fatal_;
};

} // namespace

std::optional<std::string> host_key_length_refusal(const client_config& cfg, const public_key& key)
{
    if (rsa_size_allowed(key, cfg.required_rsa_size.value_or(1024)))
        return std::nullopt;
    return "Bad server host key: " + std::string(to_string(errc::key_length));
}

host_key_verdict verify_host_key(client_config& cfg, const host_key_target& target, const public_key& key,
                                 const config_environment& env, const host_key_prompter& ui, random_source& rng,
                                 const log_sink& log)
{
    return verify_host_key(cfg, target, key, nullptr, env, ui, rng, log);
}

host_key_verdict verify_host_key(client_config& cfg, const host_key_target& target, const public_key& key,
                                 const certificate* cert, const config_environment& env, const host_key_prompter& ui,
                                 random_source& rng, const log_sink& log)
{
    const auto hash = cfg.fingerprint_hash.value_or(key_fingerprint_hash::sha256);
    const std::string fp = key_fingerprint_text(key, hash);
    if (log) {
        if (cert != nullptr)
            log(log_level::debug1, server_host_certificate_line(*cert, hash));
        else
            log(log_level::debug1, "Server host key: " + std::string(key.type_name()) + " " + fp);
    }
    // RevokedHostKeys comes before everything else, even the loopback
    // exemption, and a file that cannot be read refuses every host key.
    // OpenSSH 9.2 uses the path as written (no ~ or % expansion).
    if (cfg.revoked_host_keys) {
        const auto check = cert != nullptr ? check_certificate_revocation(*cfg.revoked_host_keys, *cert)
                                           : check_revocation_file(*cfg.revoked_host_keys, key);
        if (check.result != revocation_check::status::not_revoked) {
            const std::string what =
                (cert != nullptr ? certificate_type_label(*cert) : std::string(key_type_label(key))) + " " + fp;
            if (log) {
                if (check.result == revocation_check::status::revoked)
                    log(log_level::error, "Host key " + what + " revoked by file " + *cfg.revoked_host_keys);
                else
                    log(log_level::error, "Error checking host key " + what + " in revoked keys file " +
                                              *cfg.revoked_host_keys + ": " + check.reason);
            }
            return {};
        }
    }
    return checker(cfg, target, key, cert, env, ui, rng, log).run();
}

std::string unknown_host_prompt(std::string_view host_name, std::string_view ip_name, std::string_view type_label,
                                std::string_view fingerprint, bool other_key_types_known,
                                const std::vector<std::string>& other_names)
{
    std::string msg = "The authenticity of host '" + cut(host_name, 200) + " (" + std::string(ip_name) +
                      ")' can't be established";
    msg += other_key_types_known ? "\nbut keys of different type are already known for this host." : ".";
    msg += "\n" + std::string(type_label) + " key fingerprint is " + std::string(fingerprint) + ".";
    if (other_names.empty()) {
        msg += "\nThis key is not known by any other names.";
    } else {
        msg += "\nThis host key is known by the following other names/addresses:";
        const std::size_t n = std::min(other_names.size(), max_other_names);
        for (std::size_t i = 0; i < n; ++i)
            msg += "\n    " + other_names[i];
        if (n < other_names.size())
            msg += "\n    (" + std::to_string(other_names.size() - n) + " additional names omitted)";
    }
    msg += "\nAre you sure you want to continue connecting (yes/no/[fingerprint])? ";
    return msg;
}

std::string permanently_added_message(std::string_view names, std::string_view type_label)
{
    return "Warning: Permanently added '" + cut(names, 200) + "' (" + std::string(type_label) +
           ") to the list of known hosts.";
}

std::vector<std::string> changed_host_key_warning(std::string_view type_label, std::string_view fingerprint,
                                                  std::string_view first_user_file, const known_host_entry& offending,
                                                  std::string_view lookup_name)
{
    return {
        "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
        "@    WARNING: REMOTE HOST IDENTIFICATION HAS CHANGED!     @",
        "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
        "IT IS POSSIBLE THAT SOMEONE IS DOING SOMETHING NASTY!",
        "Someone could be eavesdropping on you right now (man-in-the-middle attack)!",
        "It is also possible that a host key has just been changed.",
        "The fingerprint for the " + std::string(type_label) + " key sent by the remote host is\n" +
            std::string(fingerprint) + ".",
        "Please contact your system administrator.",
        "Add correct host key in " + cut(first_user_file, 100) + " to get rid of this message.",
        "Offending " + std::string(key_type_label(offending.key)) + " key in " + offending.file + ":" +
            std::to_string(offending.line),
        "  remove with:",
        "  ssh-keygen -f \"" + offending.file + "\" -R \"" + std::string(lookup_name) + "\"",
    };
}

std::vector<std::string> revoked_host_key_warning(std::string_view type_label, std::string_view host_name)
{
    return {
        "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
        "@       WARNING: REVOKED HOST KEY DETECTED!               @",
        "@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@",
        "The " + std::string(type_label) + " host key for " + std::string(host_name) + " is marked as revoked.",
        "This could mean that a stolen key is being used to",
        "impersonate this host.",
    };
}

confirmation parse_confirmation(std::string_view answer, const std::optional<std::string>& fingerprint)
{
    std::size_t i = 0;
    while (i < answer.size() && (answer[i] == ' ' || answer[i] == '\t'))
        ++i;
    answer.remove_prefix(i);
    answer = answer.substr(0, answer.find_first_of(" \t\n"));
    if (answer.empty() || iequals(answer, "no"))
        return confirmation::no;
    if (iequals(answer, "yes") || (fingerprint && answer == *fingerprint))
        return confirmation::yes;
    return confirmation::again;
}

std::string_view again_prompt(bool with_fingerprint) noexcept
{
    return with_fingerprint ? "Please type 'yes', 'no' or the fingerprint: " : "Please type 'yes' or 'no': ";
}

} // namespace longhaul
