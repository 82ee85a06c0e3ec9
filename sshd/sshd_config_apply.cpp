// The per-keyword handling of sshd_config lines: validation with OpenSSH
// 9.2's messages, and first-value-wins application into a draft layer.
// One switch over every keyword, so that the compiler names a keyword
// without a handler; the line's state and shared argument parsers are in
// sshd_config_line_applier.hpp, the keywords with a syntax of their own in
// sshd_config_apply_syntax.cpp.
#include "sshd/sshd_config_line_applier.hpp"
#include "sshd/sshd_config_internal.hpp"
#include "sshd/sshd_config_syntax.hpp"

#include "common/config_line.hpp"
#include "common/crypto/crypto_engine.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/match.hpp"
#include "common/name_list.hpp"
#include "common/text_parse.hpp"
#include "sshd/sshd_algorithms.hpp"
#include "sshd/host_key_agent.hpp"

#include <cctype>
#include <climits>
#include <cstring>

namespace longhaul::detail {

bool line_applier::run()
{
    using k = sshd_kw;
    switch (e_.keyword->id) {
    case k::use_pam: flag(cfg_.use_pam); break;
    case k::port: {
        if (d_.ports_from_command_line) {
            consume_all();
            break;
        }
        if (cfg_.ports.size() >= 256)
            fatal("too many ports.");
        const std::string* arg = next();
        if (arg == nullptr || arg->empty())
            fatal("missing port number.");
        const int port = parse_port(*arg);
        if (port <= 0)
            fatal("Badly formatted port number.");
        if (active())
            cfg_.ports.push_back(port);
        break;
    }
    case k::login_grace_time: time_option(cfg_.login_grace_time); break;
    case k::client_alive_interval: time_option(cfg_.client_alive_interval); break;
    case k::unused_connection_timeout:
        if (const std::string* arg = peek(); arg != nullptr && iequals(*arg, "none")) {
            next();
            if (take())
                cfg_.unused_connection_timeout = 0;
            break;
        }
        time_option(cfg_.unused_connection_timeout);
        break;
    case k::listen_address: listen_address(); break;
    case k::address_family: multistate(cfg_.address_family, parse_address_family); break;
    case k::host_key: {
        const std::string& arg = required("missing file name.");
        if (active())
            accumulate(cfg_.host_key_files, derelativise_path(arg));
        break;
    }
    case k::host_certificate: {
        // As OpenSSH's servconf_add_hostcert: a path relative to the
        // configuration's directory, each line adding one.
        const std::string& arg = required("missing file name.");
        if (active())
            accumulate(cfg_.host_certificate_files, derelativise_path(arg));
        break;
    }
    case k::host_key_agent: {
        // The literal SSH_AUTH_SOCK stays as written: it is resolved from
        // the environment when sshd starts (host_key_agent.hpp).
        const std::string& arg = required("missing socket name.");
        if (take())
            cfg_.host_key_agent = arg == host_key_agent_from_environment ? arg : derelativise_path(arg);
        break;
    }
    case k::pid_file: filename(cfg_.pid_file); break;
    case k::moduli_file: filename(cfg_.moduli_file); break;
    case k::xauth_location: filename(cfg_.xauth_location); break;
    case k::banner: filename(cfg_.banner); break;
    case k::trusted_user_ca_keys: filename(cfg_.trusted_user_ca_keys); break;
    case k::revoked_keys: filename(cfg_.revoked_keys); break;
    case k::permit_root_login: multistate(cfg_.permit_root_login, parse_permit_root_login); break;
    case k::ignore_rhosts: multistate(cfg_.ignore_rhosts, parse_ignore_rhosts); break;
    case k::ignore_user_known_hosts: flag(cfg_.ignore_user_known_hosts); break;
    case k::hostbased_authentication: flag(cfg_.hostbased_authentication); break;
    case k::hostbased_uses_name_from_packet_only: flag(cfg_.hostbased_uses_name_from_packet_only); break;
    case k::hostbased_accepted_algorithms: key_algorithms(d_.hostbased_algorithms); break;
    case k::host_key_algorithms: key_algorithms(d_.host_key_algorithms); break;
    case k::ca_signature_algorithms: key_algorithms(d_.ca_algorithms); break;
    case k::pubkey_accepted_algorithms: key_algorithms(d_.pubkey_algorithms); break;
    case k::pubkey_authentication: flag(cfg_.pubkey_authentication); break;
    case k::pubkey_auth_options: {
        bool touch = false, verify = false;
        while (const std::string* arg = next()) {
            if (iequals(*arg, "none"))
                continue;
            if (iequals(*arg, "touch-required"))
                touch = true;
            else if (iequals(*arg, "verify-required"))
                verify = true;
            else
                return error("unsupported " + kw_ + " option " + *arg);
        }
        if (take()) {
            cfg_.pubkey_auth_touch_required = touch;
            cfg_.pubkey_auth_verify_required = verify;
        }
        break;
    }
    case k::kerberos_authentication: flag(cfg_.kerberos_authentication); break;
    case k::kerberos_or_local_passwd: flag(cfg_.kerberos_or_local_passwd); break;
    case k::kerberos_ticket_cleanup: flag(cfg_.kerberos_ticket_cleanup); break;
    case k::gssapi_authentication: flag(cfg_.gssapi_authentication); break;
    case k::gssapi_cleanup_credentials: flag(cfg_.gssapi_cleanup_credentials); break;
    case k::gssapi_key_exchange: flag(cfg_.gssapi_key_exchange); break;
    case k::gssapi_strict_acceptor_check: flag(cfg_.gssapi_strict_acceptor_check); break;
    case k::gssapi_store_credentials_on_rekey: flag(cfg_.gssapi_store_credentials_on_rekey); break;
    case k::gssapi_kex_algorithms: {
        const std::string* arg = next();
        if (arg == nullptr || arg->empty())
            fatal("Missing argument.");
        if (!valid_gss_kex(*arg, log_))
            fatal("Bad GSSAPI KexAlgorithms '" + *arg + "'.");
        if (take())
            cfg_.gssapi_kex_algorithms = *arg;
        break;
    }
    case k::password_authentication: flag(cfg_.password_authentication); break;
    case k::kbd_interactive_authentication: flag(cfg_.kbd_interactive_authentication); break;
    case k::print_motd: flag(cfg_.print_motd); break;
    case k::print_last_log: flag(cfg_.print_last_log); break;
    case k::x11_forwarding: flag(cfg_.x11_forwarding); break;
    case k::x11_display_offset: int_value(cfg_.x11_display_offset); break;
    case k::x11_use_localhost: flag(cfg_.x11_use_localhost); break;
    case k::permit_tty: flag(cfg_.permit_tty); break;
    case k::permit_user_rc: flag(cfg_.permit_user_rc); break;
    case k::strict_modes: flag(cfg_.strict_modes); break;
    case k::tcp_keep_alive: flag(cfg_.tcp_keep_alive); break;
    case k::permit_empty_passwords: flag(cfg_.permit_empty_passwords); break;
    case k::use_dns: flag(cfg_.use_dns); break;
    case k::allow_agent_forwarding: flag(cfg_.allow_agent_forwarding); break;
    case k::disable_forwarding: flag(cfg_.disable_forwarding); break;
    case k::expose_auth_info: flag(cfg_.expose_auth_info); break;
    case k::stream_local_bind_unlink: flag(cfg_.stream_local_bind_unlink); break;
    case k::debian_banner: flag(cfg_.debian_banner); break;
    case k::permit_user_environment: {
        const std::string& arg = required_kw();
        if (take()) {
            cfg_.permit_user_environment = arg != "no";
            cfg_.permit_user_environment_patterns = (arg == "yes" || arg == "no") ? std::string() : arg;
        }
        break;
    }
    case k::compression: multistate(cfg_.compression, parse_compression); break;
    case k::rekey_limit: rekey_limit(); break;
    case k::channel_window_max:
    case k::connection_window_max: {
        const std::string& arg = required_kw();
        std::string why;
        // A channel's window is a uint32 that one side keeps below 2^31.
        const bool channel = e_.keyword->id == k::channel_window_max;
        auto v = parse_window_size(arg, channel ? 0x7fffffffull : 1ull << 50, why);
        if (!v)
            fatal("Bad " + kw_ + " '" + arg + "': " + why);
        if (take())
            (channel ? cfg_.channel_window_max : cfg_.connection_window_max) = *v;
        break;
    }
    case k::crypto_threads: {
        const std::string& arg = required_kw();
        int v = -1;
        if (arg != "auto") {
            auto n = parse_crypto_threads(arg);
            if (!n)
                fatal("Bad " + kw_ + " '" + arg + "': auto or 0.." + std::to_string(crypto_pool::max_threads));
            v = *n;
        }
        if (take())
            cfg_.crypto_threads = v;
        break;
    }
    case k::gateway_ports: multistate(cfg_.gateway_ports, parse_gateway_ports); break;
    case k::allow_tcp_forwarding: multistate(cfg_.allow_tcp_forwarding, parse_forwarding); break;
    case k::allow_stream_local_forwarding: multistate(cfg_.allow_stream_local_forwarding, parse_forwarding); break;
    case k::syslog_facility: {
        const std::string* arg = next();
        auto v = arg ? parse_syslog_facility(*arg) : std::nullopt;
        if (!v)
            fatal("unsupported log facility '" + (arg ? *arg : std::string("<NONE>")) + "'");
        if (take())
            cfg_.log_facility = *v;
        break;
    }
    case k::log_level: {
        const std::string* arg = next();
        auto v = arg ? parse_syslog_level(*arg) : std::nullopt;
        if (!v)
            fatal("unsupported log level '" + (arg ? *arg : std::string("<NONE>")) + "'");
        if (take())
            cfg_.log_level = *v;
        break;
    }
    case k::log_verbose:
        if (!log_verbose())
            return false;
        // Per-function debug logging: not implemented.
        if (!e_.args.empty() && !iequals(e_.args[0], "none"))
            not_supported(kw_);
        break;
    case k::allow_users: user_patterns(cfg_.allow_users); break;
    case k::deny_users: user_patterns(cfg_.deny_users); break;
    case k::allow_groups: group_patterns(cfg_.allow_groups); break;
    case k::deny_groups: group_patterns(cfg_.deny_groups); break;
    case k::ciphers: algorithms(d_.ciphers, sshd_algorithm_list::cipher, "Bad SSH2 cipher spec"); break;
    case k::macs: algorithms(d_.macs, sshd_algorithm_list::mac, "Bad SSH2 mac spec"); break;
    case k::kex_algorithms: algorithms(d_.kex, sshd_algorithm_list::kex, "Bad SSH2 KexAlgorithms"); break;
    case k::subsystem: subsystem(); break;
    case k::max_startups: {
        const std::string& arg = required_kw();
        int v[3] = {cfg_.max_startups_begin, cfg_.max_startups_rate, cfg_.max_startups};
        const int n = scan_ints(arg, v, 3);
        // Like sscanf into the live options: the last line wins.
        cfg_.max_startups_begin = v[0];
        cfg_.max_startups_rate = v[1];
        cfg_.max_startups = v[2];
        mark();
        if (n == 3) {
            if (v[0] > v[2] || v[1] > 100 || v[1] < 1)
                fatal("Invalid " + kw_ + " spec.");
        } else if (n != 1) {
            fatal("Invalid " + kw_ + " spec.");
        } else {
            cfg_.max_startups = v[0];
        }
        break;
    }
    case k::per_source_net_block_size: {
        const std::string& arg = required_kw();
        int v[2] = {0, 128};
        int n = scan_ints(arg, v, 2);
        if (n == 2 && (v[1] < 0 || v[1] > 128))
            n = -1;
        if ((n == 1 || n == 2) && (v[0] < 0 || v[0] > 32))
            n = -1;
        if (n != 1 && n != 2)
            fatal("Invalid " + kw_ + " spec.");
        if (mark()) {
            cfg_.per_source_netblock_ipv4 = v[0];
            cfg_.per_source_netblock_ipv6 = v[1];
        }
        break;
    }
    case k::per_source_max_startups: {
        const std::string& arg = required_kw();
        int value = INT_MAX;
        if (arg != "none") {
            if (const char* why = atoi_err(arg, value))
                fatal(kw_ + " integer value " + why + ".");
        }
        if (mark())
            cfg_.per_source_max_startups = value;
        break;
    }
    case k::per_source_penalties: {
        // OpenSSH 9.8's penalty box (sshd/penalty_table.hpp); each field
        // keeps its first value, as OpenSSH's servconf.c does.
        std::vector<std::string> args;
        while (const std::string* arg = next())
            args.push_back(*arg);
        unsigned seen = d_.penalty_fields_seen;
        auto r = parse_per_source_penalties(args, cfg_.per_source_penalties, seen);
        if (!r.error.empty())
            fatal(r.error);
        if (active()) {
            cfg_.per_source_penalties = r.settings;
            d_.penalty_fields_seen = seen;
        }
        break;
    }
    case k::per_source_penalty_exempt_list: {
        const std::string* arg = next();
        if (arg == nullptr || arg->empty())
            fatal("missing argument.");
        if (addr_match_list({}, *arg) == addr_list_result::invalid)
            fatal("keyword " + kw_ + " invalid address argument.");
        if (take())
            cfg_.per_source_penalty_exempt = *arg;
        break;
    }
    case k::max_auth_tries: int_value(cfg_.max_auth_tries); break;
    case k::max_sessions: int_value(cfg_.max_sessions); break;
    case k::client_alive_count_max: int_value(cfg_.client_alive_count_max); break;
    case k::required_rsa_size: int_value(cfg_.required_rsa_size); break;
    case k::authorized_keys_file: {
        const bool apply = take();
        if (apply)
            cfg_.authorized_keys_files.clear();
        while (const std::string* arg = next()) {
            if (arg->empty())
                return error("keyword " + kw_ + " empty argument");
            if (apply)
                cfg_.authorized_keys_files.push_back(tilde_expand(*arg));
        }
        break;
    }
    case k::authorized_principals_file: {
        const std::string& arg = required_kw();
        if (take())
            cfg_.authorized_principals_file = tilde_expand(arg);
        break;
    }
    case k::accept_env:
        while (const std::string* arg = next()) {
            if (arg->empty() || arg->find('=') != std::string::npos)
                fatal("Invalid environment name.");
            if (active())
                accumulate(cfg_.accept_env, *arg);
        }
        break;
    case k::set_env: {
        const bool apply = take();
        if (apply)
            cfg_.set_env.clear();
        while (const std::string* arg = next()) {
            if (arg->empty() || arg->find('=') == std::string::npos)
                fatal("Invalid environment.");
            if (!apply)
                continue;
            const auto name = std::string_view(*arg).substr(0, arg->find('=') + 1);
            bool duplicate = false;
            for (const auto& s : cfg_.set_env)
                duplicate = duplicate || std::string_view(s).substr(0, name.size()) == name;
            if (!duplicate)
                cfg_.set_env.push_back(*arg);
        }
        break;
    }
    case k::permit_tunnel: {
        const std::string& arg = required_kw();
        auto v = parse_tunnel(arg);
        if (!v)
            fatal("bad " + kw_ + " argument " + arg);
        if (take())
            cfg_.permit_tunnel = *v;
        break;
    }
    case k::permit_open: permit_list(cfg_.permit_open, false); break;
    case k::permit_listen: permit_list(cfg_.permit_listen, true); break;
    case k::force_command: rest_of_line(cfg_.force_command, false); break;
    case k::chroot_directory: {
        const std::string& arg = required_kw();
        if (take())
            cfg_.chroot_directory = arg;
        break;
    }
    case k::security_key_provider: {
        // Only for FIDO host keys, which this server cannot load.
        const std::string& arg = required_kw();
        if (!iequals(arg, "internal"))
            not_supported(kw_ + " " + arg);
        break;
    }
    case k::ipqos: {
        const std::string& arg = required_kw();
        const int interactive = parse_ipqos(arg);
        if (interactive == -1)
            fatal("Bad " + kw_ + " value: " + arg);
        int bulk = interactive;
        if (const std::string* second = next()) {
            bulk = parse_ipqos(*second);
            if (bulk == -1)
                fatal("Bad " + kw_ + " value: " + *second);
        }
        if (mark()) {
            cfg_.ipqos_interactive = interactive;
            cfg_.ipqos_bulk = bulk;
        }
        break;
    }
    case k::version_addendum: {
        if (e_.rest.find('\r') != std::string::npos)
            fatal("Invalid " + kw_ + " argument");
        if (take())
            cfg_.version_addendum = iequals(e_.rest, "none") ? std::string() : e_.rest;
        consume_all();
        break;
    }
    case k::authorized_keys_command: rest_of_line(cfg_.authorized_keys_command, true); break;
    case k::authorized_principals_command: rest_of_line(cfg_.authorized_principals_command, true); break;
    case k::authorized_keys_command_user: {
        const std::string& arg = required(("missing " + kw_ + " argument.").c_str());
        if (take())
            cfg_.authorized_keys_command_user = arg;
        break;
    }
    case k::authorized_principals_command_user: {
        const std::string& arg = required(("missing " + kw_ + " argument.").c_str());
        if (take())
            cfg_.authorized_principals_command_user = arg;
        break;
    }
    case k::authentication_methods: authentication_methods(); break;
    case k::stream_local_bind_mask: {
        const std::string& arg = required_kw();
        char* end = nullptr;
        const long v = std::strtol(arg.c_str(), &end, 8);
        if (end == arg.c_str() || v < 0 || v > 0777)
            fatal("Invalid " + kw_ + ".");
        if (mark())
            cfg_.stream_local_bind_mask = static_cast<int>(v);
        break;
    }
    case k::fingerprint_hash: {
        const std::string& arg = required_kw();
        const auto v = parse_fingerprint_hash(arg);
        if (!v)
            fatal("Invalid " + kw_ + " algorithm \"" + arg + "\".");
        if (mark())
            cfg_.fingerprint = *v;
        break;
    }
    case k::rdomain: fatal("setting RDomain not supported on this platform.");
    case k::channel_timeout:
        if (!channel_timeout())
            return false;
        break;
    case k::deprecated: deprecated("Deprecated"); break;
    case k::unsupported: deprecated("Unsupported"); break;
    case k::ignored: consume_all(); break;
    case k::bad:
    case k::match:
    case k::include:
    case k::count_: fatal("Missing handler for opcode " + kw_);
    }
    if (pos_ < e_.args.size())
        return error("keyword " + kw_ + " extra arguments at end of line");
    return true;
}

bool apply_entry(const line_context& ctx, config_draft& draft, parse_log& log)
{
    line_applier a(ctx, draft, log);
    return a.run();
}

} // namespace longhaul::detail
