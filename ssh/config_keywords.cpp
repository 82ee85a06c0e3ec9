// One ssh_config line: keyword lookup, argument checks and the first-value-
// wins assignment into client_config, with OpenSSH 9.2's error wording.
// The keywords of what a session forwards and carries are in
// config_keywords_session.cpp, hostname canonicalization's lists in
// config_keywords_canonical.cpp (declared in config_keyword_handlers.hpp).
#include "ssh/detail/config_parser.hpp"

#include "common/config_line.hpp"
#include "common/crypto/crypto_engine.hpp"
#include "common/match.hpp"
#include "common/text_parse.hpp"
#include "ssh/destination.hpp"
#include "ssh/detail/config_keyword_handlers.hpp"
#include "ssh/detail/config_keywords.hpp"
#include "ssh/detail/config_values.hpp"
#include "ssh/detail/line_parser.hpp"
#include "ssh/forward_spec.hpp"

#include <algorithm>
#include <cctype>
#include <climits>

namespace longhaul::detail {

namespace {

// Limits, as OpenSSH's.
constexpr std::size_t max_identity_files = 100;  // SSH_MAX_IDENTITY_FILES
constexpr std::size_t max_certificate_files = 100;
constexpr std::size_t max_hosts_files = 32;      // SSH_MAX_HOSTS_FILES

// The text after the keyword with any further blanks and '=' removed:
// what ProxyCommand and friends take verbatim (OpenSSH skips
// strspn(WHITESPACE "=")).
std::string_view rest_of_line(std::string_view value)
{
    std::size_t i = 0;
    while (i < value.size() && (value[i] == ' ' || value[i] == '\t' || value[i] == '\r' || value[i] == '\n' ||
                                value[i] == '='))
        ++i;
    return value.substr(i);
}

void add_identity(std::vector<identity_file>& files, const std::string& path, bool user_provided)
{
    identity_file f{path, user_provided};
    if (std::find(files.begin(), files.end(), f) == files.end())
        files.push_back(std::move(f));
}

bool process_keyword(line_parser& p, kw op, std::string_view raw, std::string_view filename, int linenum,
                     bool* active, unsigned flags, int depth)
{
    auto& c = p.cfg();
    auto& st = p.state();
    (void)active;
    switch (op) {
    case kw::ignore:
        p.consume_all();
        return true;
    case kw::ignored_unknown:
        st.emit(log_level::debug1, p.where() + "Ignored unknown option \"" + p.keyword() + "\"");
        p.consume_all();
        return true;
    case kw::deprecated:
        st.emit(log_level::debug1, p.where() + "Deprecated option \"" + p.keyword() + "\"");
        p.consume_all();
        return true;
    case kw::unsupported:
        st.emit(log_level::error, p.where() + "Unsupported option \"" + p.keyword() + "\"");
        p.consume_all();
        return true;

    case kw::host:
    case kw::match:
    case kw::include:
    case kw::rekey_limit:
        return false; // handled by process_config_line()

    case kw::connect_timeout: return p.time(c.connect_timeout);
    case kw::forward_x11_timeout: return p.time(c.forward_x11_timeout);
    case kw::server_alive_interval: return p.time(c.server_alive_interval);

    case kw::forward_agent: {
        const std::string* arg = p.next();
        if (p.missing_argument(arg))
            return p.fail("missing argument.");
        if (auto v = parse_word(flag_words(), *arg)) {
            p.set(c.forward_agent, *v);
            return true;
        }
        // Not yes/no: a socket path to forward instead of $SSH_AUTH_SOCK.
        p.set(c.forward_agent, true);
        return p.agent_path(c.forward_agent_sock_path, *arg);
    }
    case kw::forward_x11: return p.flag(c.forward_x11);
    case kw::forward_x11_trusted: return p.flag(c.forward_x11_trusted);
    case kw::gateway_ports: return p.flag(c.gateway_ports);
    case kw::exit_on_forward_failure: return p.flag(c.exit_on_forward_failure);
    case kw::password_authentication: return p.flag(c.password_authentication);
    case kw::kbd_interactive_authentication: return p.flag(c.kbd_interactive_authentication);
    case kw::kbd_interactive_devices: return p.string(c.kbd_interactive_devices);
    case kw::pubkey_authentication: return p.multistate(c.pubkey_authentication, pubkey_auth_words());
    case kw::hostbased_authentication: return p.flag(c.hostbased_authentication);
    case kw::gssapi_authentication: return p.flag(c.gssapi_authentication);
    case kw::gssapi_delegate_credentials: return p.flag(c.gssapi_delegate_credentials);
    case kw::gssapi_key_exchange: return p.flag(c.gssapi_key_exchange);
    case kw::gssapi_trust_dns: return p.flag(c.gssapi_trust_dns);
    case kw::gssapi_renewal_forces_rekey: return p.flag(c.gssapi_renewal_forces_rekey);
    case kw::gssapi_client_identity: return p.string(c.gssapi_client_identity);
    case kw::gssapi_server_identity: return p.string(c.gssapi_server_identity);
    case kw::gssapi_kex_algorithms: return p.algorithms(c.gssapi_kex_algorithms, op);
    case kw::batch_mode: return p.flag(c.batch_mode);
    case kw::check_host_ip: return p.flag(c.check_host_ip);
    case kw::verify_host_key_dns: return p.multistate(c.verify_host_key_dns, yes_no_ask_words());
    case kw::strict_host_key_checking: return p.multistate(c.strict_host_key_checking, strict_host_key_words());
    case kw::compression: return p.multistate(c.compression, compression_words());
    case kw::tcp_keep_alive: return p.flag(c.tcp_keep_alive);
    case kw::no_host_authentication_for_localhost: return p.flag(c.no_host_authentication_for_localhost);
    case kw::number_of_password_prompts: return p.integer(c.number_of_password_prompts);

    case kw::identity_file:
    case kw::certificate_file: {
        const std::string* arg = p.next();
        if (p.missing_argument(arg))
            return p.fail("Missing argument.", true);
        if (p.active()) {
            auto& files = op == kw::identity_file ? c.identity_files : c.certificate_files;
            const auto max = op == kw::identity_file ? max_identity_files : max_certificate_files;
            if (files.size() >= max)
                return p.fail(std::string("Too many ") + (op == kw::identity_file ? "identity" : "certificate") +
                                  " files specified (max " + std::to_string(max) + ").",
                              true);
            add_identity(files, *arg, (flags & conf_user) != 0);
        }
        return true;
    }

    case kw::xauth_location: return p.string(c.xauth_location);
    case kw::user: return p.string(c.user);
    case kw::global_known_hosts_file: return p.list(c.global_known_hosts_files, max_hosts_files);
    case kw::user_known_hosts_file: return p.list(c.user_known_hosts_files, max_hosts_files);
    case kw::hostname: return p.string(c.hostname);
    case kw::host_key_alias: return p.string(c.host_key_alias);
    case kw::preferred_authentications: return p.string(c.preferred_authentications);
    case kw::bind_address: return p.string(c.bind_address);
    case kw::bind_interface: return p.string(c.bind_interface);
    case kw::pkcs11_provider: return p.string(c.pkcs11_provider);
    case kw::security_key_provider: return p.string(c.security_key_provider);
    case kw::revoked_host_keys: return p.string(c.revoked_host_keys);
    case kw::ignore_unknown: return p.string(c.ignore_unknown);

    case kw::known_hosts_command: return p.command(c.known_hosts_command, raw);
    case kw::local_command: return p.command(c.local_command, raw);
    case kw::remote_command: return p.command(c.remote_command, raw);
    case kw::proxy_command:
        // A ProxyJump seen first wins over a later ProxyCommand, except
        // "ProxyJump none" (OpenSSH 9.2 behaves so).
        if (c.jump_host && *c.jump_host != "none") {
            p.consume_all();
            return true;
        }
        return p.command(c.proxy_command, raw);
    case kw::proxy_jump:
        if (!parse_proxy_jump(raw, c, p.active()))
            return p.fail("Invalid ProxyJump \"" + std::string(raw) + "\"", true);
        p.consume_all();
        return true;

    case kw::port: {
        const std::string* arg = p.next();
        if (p.missing_argument(arg))
            return p.fail("Missing argument.", true);
        const int port = parse_port(*arg);
        if (port <= 0)
            return p.fail("Bad port '" + *arg + "'.", true);
        p.set(c.port, port);
        return true;
    }
    case kw::connection_attempts: return p.integer(c.connection_attempts);

    case kw::ciphers: return p.algorithms(c.ciphers, op);
    case kw::macs: return p.algorithms(c.macs, op);
    case kw::kex_algorithms: return p.algorithms(c.kex_algorithms, op);
    case kw::host_key_algorithms: return p.algorithms(c.host_key_algorithms, op);
    case kw::ca_signature_algorithms: return p.algorithms(c.ca_signature_algorithms, op);
    case kw::hostbased_accepted_algorithms: return p.algorithms(c.hostbased_accepted_algorithms, op);
    case kw::pubkey_accepted_algorithms: return p.algorithms(c.pubkey_accepted_algorithms, op);

    case kw::log_level: {
        const std::string* arg = p.next();
        // "SILENT" is OpenSSH's other name for QUIET.
        auto level = !arg ? std::nullopt : iequals(*arg, "SILENT") ? std::optional(log_level::quiet) : parse_log_level(*arg);
        if (!level)
            return p.fail("unsupported log level '" + (arg ? *arg : std::string("<NONE>")) + "'", true);
        p.set(c.log_level, *level);
        return true;
    }
    case kw::log_facility: {
        const std::string* arg = p.next();
        auto f = arg ? parse_syslog_facility(*arg) : std::nullopt;
        if (!f)
            return p.fail("unsupported log facility '" + (arg ? *arg : std::string("<NONE>")) + "'", true);
        // OpenSSH sets the facility even inside inactive blocks; so do we.
        if (!c.log_facility)
            c.log_facility = *f;
        return true;
    }
    case kw::log_verbose: return p.list(c.log_verbose, SIZE_MAX);

    case kw::local_forward:
    case kw::remote_forward:
    case kw::dynamic_forward: return forward_keyword(p, op);

    case kw::permit_remote_open: return permit_remote_open_keyword(p);

    case kw::clear_all_forwardings: return p.flag(c.clear_all_forwardings);

    case kw::escape_char: return escape_char_keyword(p);

    case kw::address_family: return p.multistate(c.address_family, address_family_words());
    case kw::enable_ssh_keysign: return p.flag(c.enable_ssh_keysign);
    case kw::identities_only: return p.flag(c.identities_only);
    case kw::server_alive_count_max: return p.integer(c.server_alive_count_max);
    case kw::metrics: return p.flag(c.metrics);
    case kw::metrics_path: return p.string(c.metrics_path);
    case kw::metrics_interval: {
        std::optional<int> v;
        if (!p.time(v))
            return false;
        if (v && *v < 1)
            return p.fail("MetricsInterval must be at least 1 second.");
        if (v)
            p.set(c.metrics_interval, *v);
        return true;
    }
    case kw::channel_window_max:
    case kw::connection_window_max: {
        const std::string* arg = p.next();
        if (p.missing_argument(arg))
            return p.fail("missing argument.");
        std::string why;
        // A channel's window is a uint32 that one side keeps below 2^31.
        const std::uint64_t max = op == kw::channel_window_max ? 0x7fffffffull : 1ull << 50;
        auto v = parse_window_size(*arg, max, why);
        if (!v)
            return p.fail("bad size '" + *arg + "': " + why + ".");
        p.set(op == kw::channel_window_max ? c.channel_window_max : c.connection_window_max, *v);
        return true;
    }

    case kw::crypto_threads: {
        const std::string* arg = p.next();
        if (p.missing_argument(arg))
            return p.fail("missing argument.");
        int v = -1;
        if (*arg != "auto") {
            auto n = parse_crypto_threads(*arg);
            if (!n)
                return p.fail("invalid CryptoThreads '" + *arg + "': auto or 0.." +
                              std::to_string(crypto_pool::max_threads) + ".");
            v = *n;
        }
        p.set(c.crypto_threads, v);
        return true;
    }

    case kw::send_env: return send_env_keyword(p);

    case kw::set_env: return set_env_keyword(p);

    case kw::control_path: return p.string(c.control_path);
    case kw::control_master: return p.multistate(c.control_master, control_master_words());
    case kw::control_persist: return control_persist_keyword(p);
    case kw::hash_known_hosts: return p.flag(c.hash_known_hosts);
    case kw::tunnel: return p.multistate(c.tunnel, tunnel_words());
    case kw::tunnel_device: return tunnel_device_keyword(p);
    case kw::permit_local_command: return p.flag(c.permit_local_command);
    case kw::visual_host_key: return p.flag(c.visual_host_key);

    case kw::ip_qos: {
        const std::string* arg = p.next();
        const int interactive = arg ? parse_ipqos(*arg) : -1;
        if (interactive == -1)
            return p.fail("Bad IPQoS value: " + (arg ? *arg : std::string("(null)")));
        int bulk = interactive;
        if (const std::string* arg2 = p.next()) {
            bulk = parse_ipqos(*arg2);
            if (bulk == -1)
                return p.fail("Bad IPQoS value: " + *arg2);
        }
        if (p.active() && !c.ip_qos_interactive) {
            c.ip_qos_interactive = interactive;
            c.ip_qos_bulk = bulk;
        }
        return true;
    }

    case kw::request_tty: return p.multistate(c.request_tty, request_tty_words());
    case kw::session_type: return p.multistate(c.session_type, session_type_words());
    case kw::stdin_null: return p.flag(c.stdin_null);
    case kw::fork_after_authentication: return p.flag(c.fork_after_authentication);
    case kw::proxy_use_fdpass: return p.flag(c.proxy_use_fdpass);

    case kw::canonical_domains: return canonical_domains_keyword(p);
    case kw::canonicalize_permitted_cnames: return canonicalize_permitted_cnames_keyword(p);
    case kw::canonicalize_hostname: return p.multistate(c.canonicalize_hostname, canonicalize_words());
    case kw::canonicalize_max_dots: return p.integer(c.canonicalize_max_dots);
    case kw::canonicalize_fallback_local: return p.flag(c.canonicalize_fallback_local);

    case kw::stream_local_bind_mask: {
        const std::string* arg = p.next();
        if (p.missing_argument(arg))
            return p.fail("Missing StreamLocalBindMask argument.", true);
        char* end = nullptr;
        const long v = std::strtol(arg->c_str(), &end, 8);
        if (end == arg->c_str() || v < 0 || v > 0777)
            return p.fail("Bad mask.", true);
        // OpenSSH assigns this one unconditionally (last value wins).
        c.stream_local_bind_mask = static_cast<unsigned>(v);
        return true;
    }
    case kw::stream_local_bind_unlink: return p.flag(c.stream_local_bind_unlink);

    case kw::fingerprint_hash: {
        const std::string* arg = p.next();
        if (p.missing_argument(arg))
            return p.fail("Missing argument.", true);
        auto h = parse_word(fingerprint_hash_words(), *arg);
        if (!h)
            return p.fail("Invalid hash algorithm \"" + *arg + "\".", true);
        p.set(c.fingerprint_hash, *h);
        return true;
    }
    case kw::update_hostkeys: return p.multistate(c.update_hostkeys, yes_no_ask_words());

    case kw::add_keys_to_agent: return add_keys_to_agent_keyword(p);

    case kw::identity_agent: {
        const std::string* arg = p.next();
        if (p.missing_argument(arg))
            return p.fail("Missing argument.", true);
        return p.agent_path(c.identity_agent, *arg);
    }

    case kw::required_rsa_size: return p.integer(c.required_rsa_size);
    case kw::enable_escape_commandline: return p.flag(c.enable_escape_commandline);
    }
    (void)filename;
    (void)linenum;
    (void)depth;
    return p.fail("Unimplemented opcode");
}

} // namespace

bool process_config_line(parse_state& st, std::string_view line, std::string_view filename, int linenum,
                         bool* active, unsigned flags, int depth)
{
    const std::string where = std::string(filename) + " line " + std::to_string(linenum) + ": ";
    std::string lex_error;
    auto lexed = lex_config_line(line, lex_error);
    if (!lexed) {
        if (lex_error == "invalid quotes") {
            // OpenSSH looks the keyword up before splitting the arguments, so
            // an unknown keyword is reported too.
            const std::string key = config_line_keyword(line).value_or("");
            const bool ignored = st.cfg.ignore_unknown &&
                                 match_pattern_list(key, *st.cfg.ignore_unknown, true) == list_match::positive;
            if (!find_keyword(key) && !ignored)
                st.emit(log_level::error, std::string(filename) + ": line " + std::to_string(linenum) +
                                              ": Bad configuration option: " + key);
        }
        st.emit(log_level::error, where + lex_error);
        return false;
    }
    if (lexed->empty)
        return true;
    const config_line& cl = *lexed;

    const auto k = find_keyword(cl.keyword);
    kw op;
    if (k) {
        op = *k;
    } else if (st.cfg.ignore_unknown &&
               match_pattern_list(cl.keyword, *st.cfg.ignore_unknown, true) == list_match::positive) {
        op = kw::ignored_unknown;
    } else {
        st.emit(log_level::error, std::string(filename) + ": line " + std::to_string(linenum) +
                                      ": Bad configuration option: " + cl.keyword);
        return false;
    }

    const bool cmdline = active == nullptr;
    line_parser p(st, filename, linenum, cl.keyword, cl.args, cmdline ? true : *active);

    if (op == kw::host || op == kw::match) {
        if (cmdline) {
            st.emit(log_level::error, "Host directive not supported as a command-line option");
            return false;
        }
        return op == kw::host ? process_host_line(st, cl.args, filename, linenum, active, flags)
                              : process_match_line(st, cl.args, filename, linenum, active, flags);
    }
    if (op == kw::include) {
        if (cmdline) {
            st.emit(log_level::error, "Include directive not supported as a command-line option");
            return false;
        }
        return process_include_line(st, cl.args, filename, linenum, active, flags, depth);
    }
    if (op == kw::rekey_limit) {
        // RekeyLimit size [interval]: handled here because the interval is
        // an optional second argument parsed like a time value.
        const std::string* arg = p.next();
        if (p.missing_argument(arg))
            return p.fail("Missing argument.", true);
        long long v = 0;
        if (*arg != "default") {
            const char* why = nullptr;
            auto n = scan_scaled(*arg, why);
            if (!n)
                return p.fail("Bad number '" + *arg + "': " + why, true);
            v = *n;
            if (v != 0 && v < 16)
                return p.fail("RekeyLimit too small", true);
        }
        p.set(st.cfg.rekey_limit, v);
        if (p.left() > 0) {
            if (cl.args[1] == "none")
                p.next();
            else if (!p.time(st.cfg.rekey_interval))
                return false;
        }
    } else if (!process_keyword(p, op, rest_of_line(cl.value), filename, linenum, active, flags, depth)) {
        return false;
    }
    if (p.left() > 0) {
        st.emit(log_level::error,
                (filename.size() > 200 ? std::string(filename.substr(0, 200)) : std::string(filename)) + " line " +
                    std::to_string(linenum) + ": keyword " + cl.keyword + " extra arguments at end of line");
        return false;
    }
    return true;
}

} // namespace longhaul::detail
