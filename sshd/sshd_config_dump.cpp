// `sshd -T`: the effective configuration in OpenSSH 9.2's order and format
// (Debian's build: PAM, Kerberos and GSSAPI lines included).
#include "sshd/sshd_config_internal.hpp"

#include "channel/window_policy.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/physical_memory.hpp"
#include "common/text_parse.hpp"

#include <cstdio>

namespace longhaul {

namespace {

class printer {
public:
    void line(std::string_view keyword, std::string_view value)
    {
        out_.append(keyword);
        out_.push_back(' ');
        out_.append(value);
        out_.push_back('\n');
    }
    void flag(std::string_view keyword, bool v) { line(keyword, v ? "yes" : "no"); }
    void number(std::string_view keyword, long long v) { line(keyword, std::to_string(v)); }
    void string(std::string_view keyword, const std::string& v) { line(keyword, v.empty() ? "none" : v); }
    void each(std::string_view keyword, const std::vector<std::string>& values)
    {
        for (const auto& v : values)
            line(keyword, v);
    }
    void one_line(std::string_view keyword, const std::vector<std::string>& values, const char* if_empty)
    {
        if (values.empty() && if_empty == nullptr)
            return;
        out_.append(keyword);
        for (const auto& v : values) {
            out_.push_back(' ');
            out_.append(v);
        }
        if (values.empty()) {
            out_.push_back(' ');
            out_.append(if_empty);
        }
        out_.push_back('\n');
    }
    std::string take() { return std::move(out_); }

private:
    std::string out_;
};

} // namespace

std::string dump(const server_config& c)
{
    using namespace detail;
    printer p;
    for (int port : c.ports)
        p.number("port", port);
    p.line("addressfamily", address_family_name(c.address_family));
    for (const auto& la : c.listen_addresses) {
        std::string v = la.addr.ss_family == AF_INET6 ? "[" + la.host + "]" : la.host;
        v += ":" + std::to_string(la.port);
        if (!la.rdomain.empty())
            v += " rdomain " + la.rdomain;
        p.line("listenaddress", v);
    }
    p.flag("usepam", c.use_pam);
    p.number("logingracetime", c.login_grace_time);
    p.number("x11displayoffset", c.x11_display_offset);
    p.number("maxauthtries", c.max_auth_tries);
    p.number("maxsessions", c.max_sessions);
    p.number("clientaliveinterval", c.client_alive_interval);
    p.number("clientalivecountmax", c.client_alive_count_max);
    p.number("requiredrsasize", c.required_rsa_size);
    char mask[16];
    std::snprintf(mask, sizeof mask, "0%o", static_cast<unsigned>(c.stream_local_bind_mask));
    p.line("streamlocalbindmask", mask);
    if (c.unused_connection_timeout == 0)
        p.line("unusedconnectiontimeout", "none");
    else
        p.number("unusedconnectiontimeout", c.unused_connection_timeout);
    p.line("permitrootlogin", permit_root_login_name(c.permit_root_login));
    p.line("ignorerhosts", ignore_rhosts_name(c.ignore_rhosts));
    p.flag("ignoreuserknownhosts", c.ignore_user_known_hosts);
    p.flag("hostbasedauthentication", c.hostbased_authentication);
    p.flag("hostbasedusesnamefrompacketonly", c.hostbased_uses_name_from_packet_only);
    p.flag("pubkeyauthentication", c.pubkey_authentication);
    p.flag("kerberosauthentication", c.kerberos_authentication);
    p.flag("kerberosorlocalpasswd", c.kerberos_or_local_passwd);
    p.flag("kerberosticketcleanup", c.kerberos_ticket_cleanup);
    p.flag("gssapiauthentication", c.gssapi_authentication);
    p.flag("gssapicleanupcredentials", c.gssapi_cleanup_credentials);
    p.flag("gssapikeyexchange", c.gssapi_key_exchange);
    p.flag("gssapistrictacceptorcheck", c.gssapi_strict_acceptor_check);
    p.flag("gssapistorecredentialsonrekey", c.gssapi_store_credentials_on_rekey);
    p.line("gssapikexalgorithms", c.gssapi_kex_algorithms);
    p.flag("passwordauthentication", c.password_authentication);
    p.flag("kbdinteractiveauthentication", c.kbd_interactive_authentication);
    p.flag("printmotd", c.print_motd);
    p.flag("printlastlog", c.print_last_log);
    p.flag("x11forwarding", c.x11_forwarding);
    p.flag("x11uselocalhost", c.x11_use_localhost);
    p.flag("permittty", c.permit_tty);
    p.flag("permituserrc", c.permit_user_rc);
    p.flag("strictmodes", c.strict_modes);
    p.flag("tcpkeepalive", c.tcp_keep_alive);
    p.flag("permitemptypasswords", c.permit_empty_passwords);
    p.line("compression", compression_name(c.compression));
    p.line("gatewayports", gateway_ports_name(c.gateway_ports));
    p.flag("usedns", c.use_dns);
    p.line("allowtcpforwarding", forwarding_name(c.allow_tcp_forwarding));
    p.flag("allowagentforwarding", c.allow_agent_forwarding);
    p.flag("disableforwarding", c.disable_forwarding);
    p.line("allowstreamlocalforwarding", forwarding_name(c.allow_stream_local_forwarding));
    p.flag("streamlocalbindunlink", c.stream_local_bind_unlink);
    p.line("fingerprinthash", fingerprint_hash_name(c.fingerprint));
    p.flag("exposeauthinfo", c.expose_auth_info);
    p.string("pidfile", c.pid_file);
    p.string("modulifile", c.moduli_file);
    p.string("xauthlocation", c.xauth_location);
    p.string("ciphers", c.ciphers);
    p.string("macs", c.macs);
    p.string("banner", c.banner);
    p.string("forcecommand", c.force_command);
    p.string("chrootdirectory", c.chroot_directory);
    p.string("trustedusercakeys", c.trusted_user_ca_keys);
    p.string("revokedkeys", c.revoked_keys);
    p.string("securitykeyprovider", c.security_key_provider);
    p.string("authorizedprincipalsfile", c.authorized_principals_file);
    p.string("versionaddendum", c.version_addendum);
    p.string("authorizedkeyscommand", c.authorized_keys_command);
    p.string("authorizedkeyscommanduser", c.authorized_keys_command_user);
    p.string("authorizedprincipalscommand", c.authorized_principals_command);
    p.string("authorizedprincipalscommanduser", c.authorized_principals_command_user);
    p.string("hostkeyagent", c.host_key_agent);
    p.string("kexalgorithms", c.kex_algorithms);
    p.string("casignaturealgorithms", c.ca_signature_algorithms);
    p.string("hostbasedacceptedalgorithms", c.hostbased_accepted_algorithms);
    p.string("hostkeyalgorithms", c.host_key_algorithms_shown);
    p.string("pubkeyacceptedalgorithms", c.pubkey_accepted_algorithms);
    p.line("loglevel", syslog_level_name(c.log_level));
    p.line("syslogfacility", syslog_facility_name(c.log_facility));
    p.one_line("authorizedkeysfile", c.authorized_keys_files, nullptr);
    p.each("hostkey", c.host_key_files);
    p.each("hostcertificate", c.host_certificate_files);
    p.each("allowusers", c.allow_users);
    p.each("denyusers", c.deny_users);
    p.each("allowgroups", c.allow_groups);
    p.each("denygroups", c.deny_groups);
    p.each("acceptenv", c.accept_env);
    p.each("setenv", c.set_env);
    p.one_line("authenticationmethods", c.authentication_methods, "any");
    p.one_line("logverbose", c.log_verbose, nullptr);
    p.one_line("channeltimeout", c.channel_timeouts, nullptr);
    for (const auto& s : c.subsystems)
        p.line("subsystem", s.name + " " + s.args);
    p.line("maxstartups", std::to_string(c.max_startups_begin) + ":" + std::to_string(c.max_startups_rate) + ":" +
                              std::to_string(c.max_startups));
    if (c.per_source_max_startups == INT_MAX)
        p.line("persourcemaxstartups", "none");
    else
        p.number("persourcemaxstartups", c.per_source_max_startups);
    p.line("persourcenetblocksize",
           std::to_string(c.per_source_netblock_ipv4) + ":" + std::to_string(c.per_source_netblock_ipv6));
    p.line("permittunnel", tunnel_name(c.permit_tunnel));
    p.line("ipqos", ipqos_name(c.ipqos_interactive) + " " + ipqos_name(c.ipqos_bulk));
    p.line("rekeylimit", std::to_string(c.rekey_limit) + " " + std::to_string(c.rekey_interval));
    p.one_line("permitopen", c.permit_open, "any");
    p.one_line("permitlisten", c.permit_listen, "any");
    if (!c.permit_user_environment_patterns.empty())
        p.line("permituserenvironment", c.permit_user_environment_patterns);
    else
        p.flag("permituserenvironment", c.permit_user_environment);
    std::string opts;
    if (!c.pubkey_auth_touch_required && !c.pubkey_auth_verify_required)
        opts = " none";
    if (c.pubkey_auth_touch_required)
        opts += " touch-required";
    if (c.pubkey_auth_verify_required)
        opts += " verify-required";
    p.line("pubkeyauthoptions", opts.substr(1));
    // Longhaul's own keywords last, so the lines before them stay OpenSSH's.
    const window_config window = window_limits(c.channel_window_max, c.connection_window_max, physical_memory_bytes());
    p.line("channelwindowmax", std::to_string(window.max_window));
    p.line("connectionwindowmax", std::to_string(window.budget));
    p.line("cryptothreads", c.crypto_threads < 0 ? std::string("auto") : std::to_string(c.crypto_threads));
    // OpenSSH 9.8+'s keywords, which 9.2 does not print: after everything
    // it does. The values are OpenSSH 10.5's exactly (10.5 spells the
    // keywords PerSourcePenaltyExemptList and PerSourcePenalties).
    p.string("persourcepenaltyexemptlist", c.per_source_penalty_exempt);
    p.line("persourcepenalties", describe(c.per_source_penalties));
    return p.take();
}

} // namespace longhaul
