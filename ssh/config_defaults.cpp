// OpenSSH's fill_default_options(): the value of everything left unset once
// the command line and the files have been read. Defaults follow the
// installed reference (Debian 12's OpenSSH 9.2, whose ForwardX11Trusted
// and IPQoS defaults differ from upstream's).
#include "ssh/ssh_config.hpp"

#include "common/text_parse.hpp"
#include "common/transport/algorithms.hpp"
#include "ssh/algorithm_names.hpp"
#include "ssh/detail/config_values.hpp"

namespace longhaul {

namespace {

template <class T>
void default_to(std::optional<T>& field, T value)
{
    if (!field)
        field = std::move(value);
}

// OpenSSH's kex_assemble_names() against this build's algorithms. A list
// that comes out empty here but not against OpenSSH's full set (it names
// only algorithms this build lacks) is kept empty rather than refused, so
// the configuration still loads and negotiation reports the mismatch; one
// OpenSSH itself would refuse is refused with its message.
void assemble(std::optional<std::string>& field, const std::string& defaults, const std::string& all,
              std::string_view openssh_all, const std::string& error)
{
    const std::string spec = field.value_or("");
    auto r = assemble_algorithm_list(spec, defaults, all);
    if (r) {
        field = std::move(*r);
        return;
    }
    if (!assemble_algorithm_list(spec, defaults, openssh_all))
        throw ssh_config_error(error);
    field = std::string();
}

void clear_on_none(std::optional<std::string>& field)
{
    if (field && iequals(*field, "none"))
        field.reset();
}

} // namespace

void fill_default_options(client_config& c)
{
    default_to(c.forward_agent, false);
    default_to(c.forward_x11, false);
    default_to(c.forward_x11_trusted, true); // Debian's default; upstream's is "no"
    default_to(c.forward_x11_timeout, 1200);
    // stdio forwarding (-W) changes these defaults.
    default_to(c.exit_on_forward_failure, c.stdio_forward_host.has_value());
    default_to(c.clear_all_forwardings, c.stdio_forward_host.has_value());
    if (*c.clear_all_forwardings) {
        c.local_forwards.clear();
        c.remote_forwards.clear();
        c.tunnel = tunnel_request::no;
    }
    default_to(c.xauth_location, std::string("/usr/bin/xauth"));
    default_to(c.gateway_ports, false);
    default_to(c.stream_local_bind_mask, 0177u);
    default_to(c.stream_local_bind_unlink, false);
    default_to(c.pubkey_authentication, pubkey_authentication::all);
    default_to(c.gssapi_authentication, false);
    default_to(c.gssapi_delegate_credentials, false);
    default_to(c.gssapi_key_exchange, false);
    default_to(c.gssapi_trust_dns, false);
    default_to(c.gssapi_renewal_forces_rekey, false);
    default_to(c.password_authentication, true);
    default_to(c.kbd_interactive_authentication, true);
    default_to(c.hostbased_authentication, false);
    default_to(c.batch_mode, false);
    default_to(c.check_host_ip, false);
    default_to(c.strict_host_key_checking, strict_host_key_checking::ask);
    default_to(c.compression, false);
    default_to(c.tcp_keep_alive, true);
    default_to(c.port, 0); // the caller puts the ssh service port in
    default_to(c.address_family, address_family::any);
    default_to(c.connection_attempts, 1);
    default_to(c.connect_timeout, -1);
    default_to(c.number_of_password_prompts, 3);
    if (!c.add_keys_to_agent) {
        c.add_keys_to_agent = add_keys_to_agent::no;
        c.add_keys_to_agent_lifespan = 0;
    }
    if (c.identity_files.empty()) {
        for (const char* name : {"id_rsa", "id_ecdsa", "id_ecdsa_sk", "id_ed25519", "id_ed25519_sk", "id_xmss", "id_dsa"})
            c.identity_files.push_back({std::string("~/.ssh/") + name, false});
    }
    default_to(c.escape_char, int{'~'});
    if (c.global_known_hosts_files.empty())
        c.global_known_hosts_files = {"/etc/ssh/ssh_known_hosts", "/etc/ssh/ssh_known_hosts2"};
    if (!c.update_hostkeys) {
        // Only with the default known_hosts file: keys learned would go there.
        const bool default_file = c.user_known_hosts_files.empty() ||
                                  (c.user_known_hosts_files.size() == 1 &&
                                   c.user_known_hosts_files[0] == "~/.ssh/known_hosts");
        const bool dns = c.verify_host_key_dns && *c.verify_host_key_dns != yes_no_ask::no;
        c.update_hostkeys = !dns && default_file ? yes_no_ask::yes : yes_no_ask::no;
    }
    if (c.user_known_hosts_files.empty())
        c.user_known_hosts_files = {"~/.ssh/known_hosts", "~/.ssh/known_hosts2"};
    default_to(c.log_level, log_level::info);
    default_to(c.log_facility, std::string("USER"));
    default_to(c.no_host_authentication_for_localhost, false);
    default_to(c.identities_only, false);
    default_to(c.enable_ssh_keysign, false);
    default_to(c.rekey_limit, 0LL);
    default_to(c.rekey_interval, 0);
    default_to(c.verify_host_key_dns, yes_no_ask::no);
    // Debian: five-minute keepalives in batch mode (upstream's default is 0).
    default_to(c.server_alive_interval, *c.batch_mode ? 300 : 0);
    default_to(c.server_alive_count_max, 3);
    default_to(c.control_master, control_master::no);
    if (!c.control_persist) {
        c.control_persist = false;
        c.control_persist_timeout = 0;
    }
    default_to(c.hash_known_hosts, false);
    default_to(c.tunnel, tunnel_request::no);
    default_to(c.tunnel_local, tun_id_any);
    default_to(c.tunnel_remote, tun_id_any);
    default_to(c.permit_local_command, false);
    default_to(c.visual_host_key, false);
    default_to(c.ip_qos_interactive, 0x10); // lowdelay (Debian); upstream: af21
    default_to(c.ip_qos_bulk, 0x08);        // throughput (Debian); upstream: cs1
    default_to(c.request_tty, request_tty::automatic);
    default_to(c.session_type, session_type::normal);
    default_to(c.stdin_null, false);
    default_to(c.fork_after_authentication, false);
    default_to(c.proxy_use_fdpass, false);
    default_to(c.canonicalize_max_dots, 1);
    default_to(c.canonicalize_fallback_local, true);
    default_to(c.canonicalize_hostname, canonicalize_hostname::no);
    default_to(c.fingerprint_hash, key_fingerprint_hash::sha256);
    default_to(c.security_key_provider, std::string("internal"));
    default_to(c.required_rsa_size, 1024);
    default_to(c.enable_escape_commandline, false);

    const auto fill_error = [](const char* what) { return std::string("fill_default_options: ") + what + ": invalid argument"; };
    assemble(c.ciphers, default_client_ciphers(), all_ciphers(), openssh_cipher_names(), fill_error("ciphers"));
    assemble(c.macs, default_client_macs(), all_macs(), openssh_mac_names(), fill_error("macs"));
    assemble(c.kex_algorithms, default_client_kex_algorithms(), all_kex_algorithms(), openssh_kex_names(),
             fill_error("kex_algorithms"));
    // Hostbased offers host certificates too: the same lists as publickey.
    assemble(c.hostbased_accepted_algorithms, default_client_pubkey_algorithms(), all_pubkey_algorithms(),
             openssh_key_algorithm_names(), fill_error("hostbased_accepted_algos"));
    assemble(c.pubkey_accepted_algorithms, default_client_pubkey_algorithms(), all_pubkey_algorithms(),
             openssh_key_algorithm_names(), fill_error("pubkey_accepted_algos"));
    assemble(c.ca_signature_algorithms, default_ca_signature_algorithms(), all_signature_algorithms(),
             openssh_key_algorithm_names(), fill_error("ca_sign_algorithms"));
    if (c.host_key_algorithms) {
        // Left unset otherwise: the connection orders the defaults by the
        // key types known for the host.
        assemble(c.host_key_algorithms, default_client_host_key_algorithms(), all_host_key_algorithms(),
                 openssh_key_algorithm_names(), "ssh_kex2: kex_assemble_namelist: invalid argument");
    }

    clear_on_none(c.local_command);
    clear_on_none(c.remote_command);
    clear_on_none(c.proxy_command);
    clear_on_none(c.control_path);
    clear_on_none(c.revoked_host_keys);
    clear_on_none(c.pkcs11_provider);
    clear_on_none(c.security_key_provider);
    clear_on_none(c.known_hosts_command);
    if (c.jump_host && *c.jump_host == "none" && c.jump_port.value_or(0) == 0 && !c.jump_user) {
        c.jump_host.reset();
        c.jump_port.reset();
    }
    if (c.canonicalize_permitted_cnames.size() == 1 &&
        iequals(c.canonicalize_permitted_cnames[0].source_list, "none") &&
        c.canonicalize_permitted_cnames[0].target_list.empty())
        c.canonicalize_permitted_cnames.clear();
}

std::vector<std::string> unsupported_settings(const client_config& c)
{
    std::vector<std::string> out;
    const auto note = [&](const char* setting, const char* effect) {
        out.push_back(std::string(setting) + ": not supported yet, " + effect);
    };
    if (c.gssapi_authentication.value_or(false) || c.gssapi_key_exchange.value_or(false))
        note("GSSAPIAuthentication/GSSAPIKeyExchange yes", "not tried");
    if (!c.log_verbose.empty())
        note("LogVerbose", "ignored (LogLevel applies)");
    return out;
}

} // namespace longhaul
