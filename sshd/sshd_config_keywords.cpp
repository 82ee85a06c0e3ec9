#include "sshd/sshd_config_keywords.hpp"

#include "common/text_parse.hpp"

#include <syslog.h>

namespace longhaul::detail {

namespace {

constexpr unsigned G = kw_global;
constexpr unsigned A = kw_global | kw_match;

// Debian 12's sshd (OpenSSH 9.2p1 with GSSAPI, Kerberos, PAM and Debian's
// patches). Where a name is listed twice, the first entry is the canonical
// spelling. PerSourcePenalties* come from OpenSSH 9.8 (enforced by the
// listener: sshd/penalty_table.hpp).
constexpr sshd_keyword keywords[] = {
    {"usepam", sshd_kw::use_pam, G},
    {"pamauthenticationviakbdint", sshd_kw::deprecated, G},
    {"port", sshd_kw::port, G},
    {"hostkey", sshd_kw::host_key, G},
    {"hostdsakey", sshd_kw::host_key, G},
    {"hostkeyagent", sshd_kw::host_key_agent, G},
    {"pidfile", sshd_kw::pid_file, G},
    {"modulifile", sshd_kw::moduli_file, G},
    {"serverkeybits", sshd_kw::deprecated, G},
    {"logingracetime", sshd_kw::login_grace_time, G},
    {"keyregenerationinterval", sshd_kw::deprecated, G},
    {"permitrootlogin", sshd_kw::permit_root_login, A},
    {"syslogfacility", sshd_kw::syslog_facility, G},
    {"loglevel", sshd_kw::log_level, A},
    {"logverbose", sshd_kw::log_verbose, A},
    {"rhostsauthentication", sshd_kw::deprecated, G},
    {"rhostsrsaauthentication", sshd_kw::deprecated, A},
    {"hostbasedauthentication", sshd_kw::hostbased_authentication, A},
    {"hostbasedusesnamefrompacketonly", sshd_kw::hostbased_uses_name_from_packet_only, A},
    {"hostbasedacceptedalgorithms", sshd_kw::hostbased_accepted_algorithms, A},
    {"hostbasedacceptedkeytypes", sshd_kw::hostbased_accepted_algorithms, A},
    {"hostkeyalgorithms", sshd_kw::host_key_algorithms, G},
    {"rsaauthentication", sshd_kw::deprecated, A},
    {"pubkeyauthentication", sshd_kw::pubkey_authentication, A},
    {"pubkeyacceptedalgorithms", sshd_kw::pubkey_accepted_algorithms, A},
    {"pubkeyacceptedkeytypes", sshd_kw::pubkey_accepted_algorithms, A},
    {"pubkeyauthoptions", sshd_kw::pubkey_auth_options, A},
    {"dsaauthentication", sshd_kw::pubkey_authentication, G},
    {"kerberosauthentication", sshd_kw::kerberos_authentication, A},
    {"kerberosorlocalpasswd", sshd_kw::kerberos_or_local_passwd, G},
    {"kerberosticketcleanup", sshd_kw::kerberos_ticket_cleanup, G},
    {"kerberosgetafstoken", sshd_kw::unsupported, G},
    {"kerberostgtpassing", sshd_kw::unsupported, G},
    {"afstokenpassing", sshd_kw::unsupported, G},
    {"gssapiauthentication", sshd_kw::gssapi_authentication, A},
    {"gssapicleanupcredentials", sshd_kw::gssapi_cleanup_credentials, G},
    {"gssapicleanupcreds", sshd_kw::gssapi_cleanup_credentials, G},
    {"gssapikeyexchange", sshd_kw::gssapi_key_exchange, G},
    {"gssapistrictacceptorcheck", sshd_kw::gssapi_strict_acceptor_check, G},
    {"gssapistorecredentialsonrekey", sshd_kw::gssapi_store_credentials_on_rekey, G},
    {"gssapikexalgorithms", sshd_kw::gssapi_kex_algorithms, G},
    {"gssapiusesessioncredcache", sshd_kw::unsupported, G},
    {"gssusesessionccache", sshd_kw::unsupported, G},
    {"passwordauthentication", sshd_kw::password_authentication, A},
    {"kbdinteractiveauthentication", sshd_kw::kbd_interactive_authentication, A},
    {"challengeresponseauthentication", sshd_kw::kbd_interactive_authentication, A},
    {"skeyauthentication", sshd_kw::kbd_interactive_authentication, A},
    {"checkmail", sshd_kw::deprecated, G},
    {"listenaddress", sshd_kw::listen_address, G},
    {"addressfamily", sshd_kw::address_family, G},
    {"printmotd", sshd_kw::print_motd, G},
    {"printlastlog", sshd_kw::print_last_log, G},
    {"ignorerhosts", sshd_kw::ignore_rhosts, A},
    {"ignoreuserknownhosts", sshd_kw::ignore_user_known_hosts, G},
    {"x11forwarding", sshd_kw::x11_forwarding, A},
    {"x11displayoffset", sshd_kw::x11_display_offset, A},
    {"x11uselocalhost", sshd_kw::x11_use_localhost, A},
    {"xauthlocation", sshd_kw::xauth_location, G},
    {"strictmodes", sshd_kw::strict_modes, G},
    {"permitemptypasswords", sshd_kw::permit_empty_passwords, A},
    {"permituserenvironment", sshd_kw::permit_user_environment, G},
    {"uselogin", sshd_kw::deprecated, G},
    {"compression", sshd_kw::compression, G},
    {"rekeylimit", sshd_kw::rekey_limit, A},
    {"tcpkeepalive", sshd_kw::tcp_keep_alive, G},
    {"keepalive", sshd_kw::tcp_keep_alive, G},
    {"allowtcpforwarding", sshd_kw::allow_tcp_forwarding, A},
    {"allowagentforwarding", sshd_kw::allow_agent_forwarding, A},
    {"allowusers", sshd_kw::allow_users, A},
    {"denyusers", sshd_kw::deny_users, A},
    {"allowgroups", sshd_kw::allow_groups, A},
    {"denygroups", sshd_kw::deny_groups, A},
    {"ciphers", sshd_kw::ciphers, G},
    {"macs", sshd_kw::macs, G},
    {"protocol", sshd_kw::ignored, G},
    {"gatewayports", sshd_kw::gateway_ports, A},
    {"subsystem", sshd_kw::subsystem, G},
    {"maxstartups", sshd_kw::max_startups, G},
    {"persourcemaxstartups", sshd_kw::per_source_max_startups, G},
    {"persourcenetblocksize", sshd_kw::per_source_net_block_size, G},
    {"persourcepenalties", sshd_kw::per_source_penalties, G},
    {"persourcepenaltyexemptlist", sshd_kw::per_source_penalty_exempt_list, G},
    {"maxauthtries", sshd_kw::max_auth_tries, A},
    {"maxsessions", sshd_kw::max_sessions, A},
    {"banner", sshd_kw::banner, A},
    {"usedns", sshd_kw::use_dns, G},
    {"verifyreversemapping", sshd_kw::deprecated, G},
    {"reversemappingcheck", sshd_kw::deprecated, G},
    {"clientaliveinterval", sshd_kw::client_alive_interval, A},
    {"clientalivecountmax", sshd_kw::client_alive_count_max, A},
    {"authorizedkeysfile", sshd_kw::authorized_keys_file, A},
    {"authorizedkeysfile2", sshd_kw::deprecated, A},
    {"useprivilegeseparation", sshd_kw::deprecated, G},
    {"acceptenv", sshd_kw::accept_env, A},
    {"setenv", sshd_kw::set_env, A},
    {"permittunnel", sshd_kw::permit_tunnel, A},
    {"permittty", sshd_kw::permit_tty, A},
    {"permituserrc", sshd_kw::permit_user_rc, A},
    {"match", sshd_kw::match, A},
    {"permitopen", sshd_kw::permit_open, A},
    {"permitlisten", sshd_kw::permit_listen, A},
    {"forcecommand", sshd_kw::force_command, A},
    {"chrootdirectory", sshd_kw::chroot_directory, A},
    {"hostcertificate", sshd_kw::host_certificate, G},
    {"revokedkeys", sshd_kw::revoked_keys, A},
    {"trustedusercakeys", sshd_kw::trusted_user_ca_keys, A},
    {"authorizedprincipalsfile", sshd_kw::authorized_principals_file, A},
    {"kexalgorithms", sshd_kw::kex_algorithms, G},
    {"include", sshd_kw::include, A},
    {"ipqos", sshd_kw::ipqos, A},
    {"authorizedkeyscommand", sshd_kw::authorized_keys_command, A},
    {"authorizedkeyscommanduser", sshd_kw::authorized_keys_command_user, A},
    {"authorizedprincipalscommand", sshd_kw::authorized_principals_command, A},
    {"authorizedprincipalscommanduser", sshd_kw::authorized_principals_command_user, A},
    {"versionaddendum", sshd_kw::version_addendum, G},
    {"authenticationmethods", sshd_kw::authentication_methods, A},
    {"streamlocalbindmask", sshd_kw::stream_local_bind_mask, A},
    {"streamlocalbindunlink", sshd_kw::stream_local_bind_unlink, A},
    {"allowstreamlocalforwarding", sshd_kw::allow_stream_local_forwarding, A},
    {"fingerprinthash", sshd_kw::fingerprint_hash, G},
    {"disableforwarding", sshd_kw::disable_forwarding, A},
    {"exposeauthinfo", sshd_kw::expose_auth_info, A},
    {"rdomain", sshd_kw::rdomain, A},
    {"casignaturealgorithms", sshd_kw::ca_signature_algorithms, A},
    {"securitykeyprovider", sshd_kw::security_key_provider, G},
    {"requiredrsasize", sshd_kw::required_rsa_size, A},
    {"channeltimeout", sshd_kw::channel_timeout, A},
    {"unusedconnectiontimeout", sshd_kw::unused_connection_timeout, A},
    {"debianbanner", sshd_kw::debian_banner, G},
    // Longhaul's own: receive-window limits (channel/window_policy.hpp).
    {"channelwindowmax", sshd_kw::channel_window_max, A},
    {"connectionwindowmax", sshd_kw::connection_window_max, A},
    // Longhaul's own: threads that seal and open packets (common/crypto/crypto_engine.hpp).
    {"cryptothreads", sshd_kw::crypto_threads, G},
    {"permitblacklistedkeys", sshd_kw::deprecated, G},
};

template <class T>
struct named {
    std::string_view name;
    T value;
};

// The first entry with a value is the name -T prints, as OpenSSH's tables.
template <class T, std::size_t N>
std::optional<T> lookup(const named<T> (&table)[N], std::string_view v, bool fold_case = true)
{
    for (const auto& e : table)
        if (fold_case ? iequals(e.name, v) : e.name == v)
            return e.value;
    return std::nullopt;
}

template <class T, std::size_t N>
std::string_view name_of(const named<T> (&table)[N], T v) noexcept
{
    for (const auto& e : table)
        if (e.value == v)
            return e.name;
    return "UNKNOWN";
}

constexpr named<bool> flag_names[] = {{"yes", true}, {"no", false}};
constexpr named<permit_root_login_mode> root_login_names[] = {
    {"without-password", permit_root_login_mode::prohibit_password},
    {"prohibit-password", permit_root_login_mode::prohibit_password},
    {"forced-commands-only", permit_root_login_mode::forced_commands_only},
    {"yes", permit_root_login_mode::yes},
    {"no", permit_root_login_mode::no},
};
constexpr named<address_family_mode> family_names[] = {
    {"inet", address_family_mode::inet}, {"inet6", address_family_mode::inet6}, {"any", address_family_mode::any}};
constexpr named<compression_mode> compression_names[] = {
    {"yes", compression_mode::delayed}, {"delayed", compression_mode::delayed}, {"no", compression_mode::no}};
constexpr named<gateway_ports_mode> gateway_names[] = {{"clientspecified", gateway_ports_mode::client_specified},
                                                        {"yes", gateway_ports_mode::yes},
                                                        {"no", gateway_ports_mode::no}};
constexpr named<forwarding_mode> forwarding_names[] = {{"yes", forwarding_mode::yes},
                                                       {"all", forwarding_mode::yes},
                                                       {"no", forwarding_mode::no},
                                                       {"remote", forwarding_mode::remote},
                                                       {"local", forwarding_mode::local}};
constexpr named<ignore_rhosts_mode> rhosts_names[] = {
    {"yes", ignore_rhosts_mode::yes}, {"no", ignore_rhosts_mode::no}, {"shosts-only", ignore_rhosts_mode::shosts_only}};
constexpr named<tunnel_mode> tunnel_names[] = {{"no", tunnel_mode::no},
                                               {"point-to-point", tunnel_mode::point_to_point},
                                               {"ethernet", tunnel_mode::ethernet},
                                               {"yes", tunnel_mode::yes}};
constexpr named<syslog_level> level_names[] = {
    {"QUIET", syslog_level::quiet},   {"FATAL", syslog_level::fatal},   {"ERROR", syslog_level::error},
    {"INFO", syslog_level::info},     {"VERBOSE", syslog_level::verbose}, {"DEBUG", syslog_level::debug1},
    {"DEBUG1", syslog_level::debug1}, {"DEBUG2", syslog_level::debug2}, {"DEBUG3", syslog_level::debug3},
};
constexpr named<syslog_facility> facility_names[] = {
    {"DAEMON", syslog_facility::daemon}, {"USER", syslog_facility::user},     {"AUTH", syslog_facility::auth},
    {"AUTHPRIV", syslog_facility::authpriv}, {"LOCAL0", syslog_facility::local0}, {"LOCAL1", syslog_facility::local1},
    {"LOCAL2", syslog_facility::local2}, {"LOCAL3", syslog_facility::local3}, {"LOCAL4", syslog_facility::local4},
    {"LOCAL5", syslog_facility::local5}, {"LOCAL6", syslog_facility::local6}, {"LOCAL7", syslog_facility::local7},
};

} // namespace

const sshd_keyword* find_sshd_keyword(std::string_view name) noexcept
{
    for (const auto& k : keywords)
        if (iequals(k.name, name))
            return &k;
    return nullptr;
}

std::optional<bool> parse_flag(std::string_view v) { return lookup(flag_names, v); }
std::optional<permit_root_login_mode> parse_permit_root_login(std::string_view v) { return lookup(root_login_names, v); }
std::optional<address_family_mode> parse_address_family(std::string_view v) { return lookup(family_names, v); }
std::optional<compression_mode> parse_compression(std::string_view v) { return lookup(compression_names, v); }
std::optional<forwarding_mode> parse_forwarding(std::string_view v) { return lookup(forwarding_names, v); }
std::optional<gateway_ports_mode> parse_gateway_ports(std::string_view v) { return lookup(gateway_names, v); }
std::optional<ignore_rhosts_mode> parse_ignore_rhosts(std::string_view v) { return lookup(rhosts_names, v); }
std::optional<tunnel_mode> parse_tunnel(std::string_view v) { return lookup(tunnel_names, v, false); }

std::string_view permit_root_login_name(permit_root_login_mode m) noexcept { return name_of(root_login_names, m); }
std::string_view address_family_name(address_family_mode m) noexcept { return name_of(family_names, m); }
std::string_view compression_name(compression_mode m) noexcept { return name_of(compression_names, m); }
std::string_view forwarding_name(forwarding_mode m) noexcept { return name_of(forwarding_names, m); }
std::string_view gateway_ports_name(gateway_ports_mode m) noexcept { return name_of(gateway_names, m); }
std::string_view ignore_rhosts_name(ignore_rhosts_mode m) noexcept { return name_of(rhosts_names, m); }
std::string_view tunnel_name(tunnel_mode m) noexcept { return name_of(tunnel_names, m); }

} // namespace longhaul::detail

namespace longhaul {

std::optional<syslog_level> parse_syslog_level(std::string_view name)
{
    return detail::lookup(detail::level_names, name);
}

std::string_view syslog_level_name(syslog_level l) noexcept { return detail::name_of(detail::level_names, l); }

std::optional<syslog_facility> parse_syslog_facility(std::string_view name)
{
    return detail::lookup(detail::facility_names, name);
}

std::string_view syslog_facility_name(syslog_facility f) noexcept { return detail::name_of(detail::facility_names, f); }

int syslog_facility_code(syslog_facility f) noexcept
{
    // In syslog_facility's order.
    static constexpr int codes[] = {LOG_DAEMON, LOG_USER,   LOG_AUTH,   LOG_AUTHPRIV, LOG_LOCAL0, LOG_LOCAL1,
                                    LOG_LOCAL2, LOG_LOCAL3, LOG_LOCAL4, LOG_LOCAL5,   LOG_LOCAL6, LOG_LOCAL7};
    const auto i = static_cast<std::size_t>(f);
    return i < std::size(codes) ? codes[i] : LOG_AUTH;
}

} // namespace longhaul
