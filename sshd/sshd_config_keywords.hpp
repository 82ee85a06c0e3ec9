// Internal to the sshd_config parser: the keyword table (OpenSSH 9.2 as
// Debian builds it, plus a few later keywords that are parsed only) and the
// value vocabularies (multistate names, IPQoS, log levels...).
#pragma once

#include "sshd/sshd_config.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul::detail {

enum class sshd_kw : std::uint8_t {
    bad,
    use_pam,
    port,
    host_key,
    host_key_agent,
    pid_file,
    moduli_file,
    login_grace_time,
    permit_root_login,
    syslog_facility,
    log_level,
    log_verbose,
    hostbased_authentication,
    hostbased_uses_name_from_packet_only,
    hostbased_accepted_algorithms,
    host_key_algorithms,
    pubkey_authentication,
    pubkey_accepted_algorithms,
    pubkey_auth_options,
    kerberos_authentication,
    kerberos_or_local_passwd,
    kerberos_ticket_cleanup,
    gssapi_authentication,
    gssapi_cleanup_credentials,
    gssapi_key_exchange,
    gssapi_strict_acceptor_check,
    gssapi_store_credentials_on_rekey,
    gssapi_kex_algorithms,
    password_authentication,
    kbd_interactive_authentication,
    listen_address,
    address_family,
    print_motd,
    print_last_log,
    ignore_rhosts,
    ignore_user_known_hosts,
    x11_forwarding,
    x11_display_offset,
    x11_use_localhost,
    xauth_location,
    strict_modes,
    permit_empty_passwords,
    permit_user_environment,
    compression,
    rekey_limit,
    channel_window_max,    // Longhaul's own
    connection_window_max, // Longhaul's own
    crypto_threads,        // Longhaul's own
    tcp_keep_alive,
    allow_tcp_forwarding,
    allow_agent_forwarding,
    allow_users,
    deny_users,
    allow_groups,
    deny_groups,
    ciphers,
    macs,
    gateway_ports,
    subsystem,
    max_startups,
    per_source_max_startups,
    per_source_net_block_size,
    per_source_penalties,
    per_source_penalty_exempt_list,
    max_auth_tries,
    max_sessions,
    banner,
    use_dns,
    client_alive_interval,
    client_alive_count_max,
    authorized_keys_file,
    accept_env,
    set_env,
    permit_tunnel,
    permit_tty,
    permit_user_rc,
    match,
    permit_open,
    permit_listen,
    force_command,
    chroot_directory,
    host_certificate,
    revoked_keys,
    trusted_user_ca_keys,
    authorized_principals_file,
    kex_algorithms,
    include,
    ipqos,
    authorized_keys_command,
    authorized_keys_command_user,
    authorized_principals_command,
    authorized_principals_command_user,
    version_addendum,
    authentication_methods,
    stream_local_bind_mask,
    stream_local_bind_unlink,
    allow_stream_local_forwarding,
    fingerprint_hash,
    disable_forwarding,
    expose_auth_info,
    rdomain,
    ca_signature_algorithms,
    security_key_provider,
    required_rsa_size,
    channel_timeout,
    unused_connection_timeout,
    debian_banner,
    deprecated,
    ignored,
    unsupported,
    count_,
};

inline constexpr unsigned kw_global = 0x01; // allowed outside Match
inline constexpr unsigned kw_match = 0x02;  // allowed inside Match

struct sshd_keyword {
    std::string_view name; // lowercase
    sshd_kw id;
    unsigned flags;
};

// Case-insensitive lookup; nullptr for an unknown keyword.
const sshd_keyword* find_sshd_keyword(std::string_view name) noexcept;

// Multistate values (case-insensitive, as OpenSSH compares them).
std::optional<bool> parse_flag(std::string_view v);
std::optional<permit_root_login_mode> parse_permit_root_login(std::string_view v);
std::optional<address_family_mode> parse_address_family(std::string_view v);
std::optional<compression_mode> parse_compression(std::string_view v);
std::optional<forwarding_mode> parse_forwarding(std::string_view v);
std::optional<gateway_ports_mode> parse_gateway_ports(std::string_view v);
std::optional<ignore_rhosts_mode> parse_ignore_rhosts(std::string_view v);
std::optional<tunnel_mode> parse_tunnel(std::string_view v); // case-sensitive, as OpenSSH

std::string_view permit_root_login_name(permit_root_login_mode m) noexcept; // "without-password" for prohibit
std::string_view address_family_name(address_family_mode m) noexcept;
std::string_view compression_name(compression_mode m) noexcept;
std::string_view forwarding_name(forwarding_mode m) noexcept;
std::string_view gateway_ports_name(gateway_ports_mode m) noexcept;
std::string_view ignore_rhosts_name(ignore_rhosts_mode m) noexcept;
std::string_view tunnel_name(tunnel_mode m) noexcept;



} // namespace longhaul::detail
