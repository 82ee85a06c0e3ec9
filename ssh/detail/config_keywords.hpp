// The ssh_config keyword vocabulary: one opcode per keyword (aliases share
// one), looked up case-insensitively by the line parser.
#pragma once

#include <optional>
#include <string_view>

namespace longhaul::detail {

enum class kw {
    ignore, ignored_unknown, deprecated, unsupported,
    host, match, include,
    forward_agent, forward_x11, forward_x11_trusted, forward_x11_timeout, gateway_ports, exit_on_forward_failure,
    password_authentication, kbd_interactive_authentication, kbd_interactive_devices, pubkey_authentication,
    hostbased_authentication, xauth_location, identity_file, identities_only, certificate_file, add_keys_to_agent,
    identity_agent, hostname, host_key_alias, proxy_command, port, ciphers, macs, remote_forward, local_forward,
    permit_remote_open, user, escape_char, global_known_hosts_file, user_known_hosts_file, connection_attempts,
    batch_mode, check_host_ip, strict_host_key_checking, compression, tcp_keep_alive, number_of_password_prompts,
    log_facility, log_level, log_verbose, dynamic_forward, preferred_authentications, host_key_algorithms,
    ca_signature_algorithms, bind_address, bind_interface, clear_all_forwardings, enable_ssh_keysign,
    verify_host_key_dns, no_host_authentication_for_localhost, rekey_limit, connect_timeout, address_family,
    server_alive_interval, server_alive_count_max, send_env, set_env, control_path, control_master, control_persist,
    hash_known_hosts, tunnel, tunnel_device, local_command, permit_local_command, remote_command, visual_host_key,
    kex_algorithms, ip_qos, request_tty, session_type, stdin_null, fork_after_authentication, proxy_use_fdpass,
    canonical_domains, canonicalize_fallback_local, canonicalize_hostname, canonicalize_max_dots,
    canonicalize_permitted_cnames, stream_local_bind_mask, stream_local_bind_unlink, revoked_host_keys,
    fingerprint_hash, update_hostkeys, hostbased_accepted_algorithms, pubkey_accepted_algorithms, ignore_unknown,
    proxy_jump, security_key_provider, known_hosts_command, required_rsa_size, enable_escape_commandline,
    pkcs11_provider, gssapi_authentication, gssapi_delegate_credentials, gssapi_key_exchange, gssapi_trust_dns,
    gssapi_renewal_forces_rekey, gssapi_client_identity, gssapi_server_identity, gssapi_kex_algorithms,
    // Longhaul's own (channel windows).
    channel_window_max, connection_window_max, metrics, metrics_path, metrics_interval,
    // Longhaul's own (parallel packet crypto).
    crypto_threads,
};

// The opcode of a lowercased keyword; nullopt for an unknown one.
std::optional<kw> find_keyword(std::string_view name);

} // namespace longhaul::detail
