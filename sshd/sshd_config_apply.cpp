// The per-keyword handling of sshd_config lines: validation with OpenSSH
// 9.2's messages, and first-value-wins application into a draft layer.
#include "sshd/sshd_config_internal.hpp"
#include "sshd/sshd_config_syntax.hpp"

#include "common/config_line.hpp"
#include "common/crypto/crypto_engine.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/match.hpp"
#include "common/name_list.hpp"
#include "common/text_parse.hpp"
#include "sshd/sshd_algorithms.hpp"

#include <cctype>
#include <climits>
#include <cstring>

namespace longhaul::detail {

namespace {

// The state of one line being applied.
class line_applier {
public:
    line_applier(const line_context& ctx, config_draft& d, parse_log& log)
        : ctx_(ctx), e_(ctx.entry), d_(d), cfg_(d.cfg), log_(log),
          where_((ctx.reprocess ? std::string("reprocess config") : e_.file) + " line " + std::to_string(e_.line)),
          kw_(e_.keyword_text)
    {
    }

    bool run();

private:
    [[noreturn]] void fatal(const std::string& what) const { log_.fatal(where_ + ": " + what); }
    bool error(const std::string& what)
    {
        log_.error(where_ + ": " + what);
        return false;
    }
    const std::string* next()
    {
        if (pos_ >= e_.args.size())
            return nullptr;
        return &e_.args[pos_++];
    }
    const std::string* peek() const { return pos_ < e_.args.size() ? &e_.args[pos_] : nullptr; }
    void consume_all() { pos_ = e_.args.size(); }
    bool active() const { return ctx_.active; }
    // First-value-wins: true once per keyword and layer, for active lines.
    bool take()
    {
        const auto i = static_cast<std::size_t>(e_.keyword->id);
        if (!ctx_.active || d_.seen[i])
            return false;
        d_.seen[i] = true;
        return true;
    }
    // For keywords where the last value wins: marks the layer as having set it.
    bool mark()
    {
        if (!ctx_.active)
            return false;
        d_.seen[static_cast<std::size_t>(e_.keyword->id)] = true;
        return true;
    }
    // For accumulating lists: the first occurrence in a layer replaces what
    // the layer inherited (defaults, or the global value in a Match layer).
    void accumulate(std::vector<std::string>& list, std::string value)
    {
        const auto i = static_cast<std::size_t>(e_.keyword->id);
        if (!d_.seen[i]) {
            list.clear();
            d_.seen[i] = true;
        }
        list.push_back(std::move(value));
    }

    template <class T, class Parse>
    void multistate(T& field, Parse parse)
    {
        const std::string* arg = next();
        if (arg == nullptr || arg->empty())
            fatal("missing argument.");
        auto v = parse(*arg);
        if (!v)
            fatal("unsupported option \"" + *arg + "\".");
        if (take())
            field = *v;
    }
    void flag(bool& field) { multistate(field, parse_flag); }
    void int_value(int& field)
    {
        const std::string* arg = next();
        int v = 0;
        if (const char* why = atoi_err(arg ? std::string_view(*arg) : std::string_view{}, v))
            fatal(kw_ + " integer value " + why + ".");
        if (take())
            field = v;
    }
    int time_value()
    {
        const std::string* arg = next();
        if (arg == nullptr || arg->empty())
            fatal("missing time value.");
        auto v = parse_time_interval(*arg);
        if (!v)
            fatal("invalid time value.");
        return static_cast<int>(*v);
    }
    void time_option(int& field)
    {
        const int v = time_value();
        if (take())
            field = v;
    }
    const std::string& required(const char* missing_format)
    {
        const std::string* arg = next();
        if (arg == nullptr || arg->empty())
            fatal(missing_format);
        return *arg;
    }
    const std::string& required_kw() { return required((kw_ + " missing argument.").c_str()); }
    void filename(std::string& field)
    {
        const std::string& arg = required("missing file name.");
        if (take())
            field = derelativise_path(arg);
    }
    void algorithms(spec_origin& origin, sshd_algorithm_list kind, const char* bad)
    {
        const std::string& arg = required_kw();
        if (arg[0] != '-' && !sshd_algorithm_spec_valid(kind, arg)) {
            if (kind == sshd_algorithm_list::kex)
                log_.error("Unsupported KEX algorithm \"" + first_unknown(kind, arg).substr(0, 100) + "\"");
            fatal(std::string(bad) + " '" + arg + "'.");
        }
        if (take())
            origin = {arg, where_};
    }
    void key_algorithms(spec_origin& origin)
    {
        const std::string* arg = next();
        if (arg == nullptr || arg->empty())
            fatal("Missing argument.");
        if ((*arg)[0] != '-' && !sshd_algorithm_spec_valid(sshd_algorithm_list::key, *arg))
            fatal("Bad key types '" + *arg + "'.");
        if (take())
            origin = {*arg, where_};
    }
    void user_patterns(std::vector<std::string>& list)
    {
        while (const std::string* arg = next()) {
            bool ok = !arg->empty();
            if (ok) {
                const auto at = arg->find('@');
                if (at != std::string::npos) {
                    ok = addr_match_list({}, std::string_view(*arg).substr(at + 1)) != addr_list_result::invalid;
                }
            }
            if (!ok)
                fatal("invalid " + kw_ + " pattern: \"" + *arg + "\"");
            if (active())
                accumulate(list, *arg);
        }
    }
    void group_patterns(std::vector<std::string>& list)
    {
        while (const std::string* arg = next()) {
            if (arg->empty())
                fatal("empty " + kw_ + " pattern");
            if (active())
                accumulate(list, *arg);
        }
    }
    void permit_list(std::vector<std::string>& list, bool listen)
    {
        const std::string& first = required_kw();
        const bool apply = take();
        if (first == "any" || first == "none") {
            if (apply)
                list = {first};
            return;
        }
        if (apply)
            list.clear();
        for (const std::string* arg = &first; arg != nullptr && !arg->empty(); arg = next()) {
            std::string entry = *arg;
            std::optional<std::string_view> port;
            if (listen && arg->find(':') == std::string::npos) {
                entry = "*:" + *arg;
                port = *arg;
            } else {
                const auto f = hpdelim(*arg);
                if (!f)
                    fatal(kw_ + " missing host");
                if (f->more)
                    port = f->rest;
            }
            const bool port_ok = port && (*port == "*" || parse_port(*port) > 0);
            if (!port_ok)
                fatal(kw_ + " bad port number");
            if (apply)
                list.push_back(entry);
        }
    }
    void listen_address();
    void rekey_limit();
    void subsystem();
    void authentication_methods();
    bool log_verbose();
    bool channel_timeout();
    void rest_of_line(std::string& field, bool command);
    void deprecated(const char* what);
    // A setting this server cannot enforce yet: refused at start-up (sshd
    // and sshd -t), in Match blocks too, never accepted and ignored.
    [[noreturn]] void not_supported(const std::string& setting) const
    {
        fatal(setting + " is not supported yet");
    }

    const line_context& ctx_;
    const config_entry& e_;
    config_draft& d_;
    server_config& cfg_;
    parse_log& log_;
    std::string where_;
    std::string kw_;
    std::size_t pos_ = 0;
};

void line_applier::listen_address()
{
    const std::string& arg = required("missing address");
    std::string host;
    int port = 0;
    const auto colon = arg.find(':');
    if (arg.find('[') == std::string::npos && colon != std::string::npos &&
        arg.find(':', colon + 1) != std::string::npos) {
        host = arg; // a bare IPv6 address
    } else {
        const auto f = hpdelim(arg);
        if (!f)
            fatal("bad address:port usage");
        host = std::string(clean_hostname(f->field));
        if (f->more) {
            port = parse_port(f->rest);
            if (port <= 0)
                fatal("bad port number");
        }
    }
    std::string rdomain;
    if (const std::string* extra = next()) {
        const std::string* name = next();
        if (*extra != "rdomain" || name == nullptr)
            fatal("bad ListenAddress syntax");
        // Routing domains (Linux VRF) are not supported by this server.
        fatal("bad routing domain");
    }
    if (active())
        d_.listen.push_back({host, port, rdomain});
}

void line_applier::rekey_limit()
{
    const std::string& arg = required_kw();
    long long limit = 0;
    if (arg != "default") {
        const char* why = nullptr;
        auto v = scan_scaled(arg, why);
        if (!v)
            fatal("Bad " + kw_ + " number '" + arg + "': " + why);
        if (*v != 0 && *v < 16)
            fatal(kw_ + " too small");
        limit = *v;
    }
    if (take())
        cfg_.rekey_limit = static_cast<std::uint64_t>(limit);
    if (const std::string* interval = peek()) {
        if (*interval == "none") {
            next();
            return;
        }
        const int v = time_value();
        if (active() && !d_.rekey_interval_seen) {
            d_.rekey_interval_seen = true;
            cfg_.rekey_interval = v;
        }
    }
}

void line_applier::subsystem()
{
    if (cfg_.subsystems.size() >= 256)
        fatal("too many subsystems defined.");
    const std::string& name = required_kw();
    if (!active()) {
        next();
        return;
    }
    for (const auto& s : cfg_.subsystems)
        if (s.name == name)
            fatal("Subsystem '" + name + "' already defined.");
    const std::string& command = required("Missing subsystem command.");
    subsystem_config s{name, command, command};
    while (const std::string* arg = next())
        s.args += " " + *arg;
    cfg_.subsystems.push_back(std::move(s));
}

void line_applier::authentication_methods()
{
    const auto id = static_cast<std::size_t>(e_.keyword->id);
    const bool apply = active() && !d_.seen[id];
    if (apply)
        cfg_.authentication_methods.clear();
    bool any_seen = false, parsed = false;
    while (const std::string* arg = next()) {
        if (*arg == "any") {
            // OpenSSH counts the methods already in the structure being
            // parsed: the global one at start-up (so "any" after an earlier
            // line is fatal even inside a Match), a Match layer's own later.
            const bool have = d_.match_layer ? (d_.seen[id] || (apply && !cfg_.authentication_methods.empty()))
                                             : !cfg_.authentication_methods.empty();
            if (have)
                fatal("\"any\" must appear alone in " + kw_);
            any_seen = true;
        } else if (any_seen) {
            fatal("\"any\" must appear alone in " + kw_);
        } else if (!valid_auth_method_list(*arg, log_)) {
            fatal("invalid " + kw_ + " method list.");
        }
        parsed = true;
        if (apply)
            cfg_.authentication_methods.push_back(*arg);
    }
    if (!parsed)
        fatal("no " + kw_ + " specified");
    if (apply)
        d_.seen[id] = true;
}

bool line_applier::log_verbose()
{
    const auto id = static_cast<std::size_t>(e_.keyword->id);
    const bool apply = active() && !d_.seen[id];
    if (apply)
        cfg_.log_verbose.clear();
    std::size_t i = 0;
    while (const std::string* arg = next()) {
        if (arg->empty()) {
            consume_all();
            return error("keyword " + kw_ + " empty argument");
        }
        if (iequals(*arg, "none") && (i > 0 || peek() != nullptr)) {
            consume_all();
            return error("keyword " + kw_ + " \"none\" argument must appear alone.");
        }
        ++i;
        if (apply)
            cfg_.log_verbose.push_back(*arg);
    }
    if (apply)
        d_.seen[id] = true;
    return true;
}

bool line_applier::channel_timeout()
{
    const auto id = static_cast<std::size_t>(e_.keyword->id);
    const bool apply = active() && !d_.seen[id];
    if (apply)
        cfg_.channel_timeouts.clear();
    std::size_t i = 0;
    while (const std::string* arg = next()) {
        if (iequals(*arg, "none")) {
            if (i > 0 || peek() != nullptr) {
                consume_all();
                return error("keyword " + kw_ + " \"none\" argument must appear alone.");
            }
        } else if (!valid_channel_timeout(*arg)) {
            fatal("invalid channel timeout " + *arg);
        }
        ++i;
        if (apply && !iequals(*arg, "none"))
            cfg_.channel_timeouts.push_back(*arg);
    }
    if (apply)
        d_.seen[id] = true;
    return true;
}

void line_applier::rest_of_line(std::string& field, bool command)
{
    std::string_view rest = e_.rest;
    if (command && (rest.empty() || rest[0] != '/') && !iequals(rest, "none"))
        fatal(kw_ + " must be an absolute path");
    if (take())
        field = std::string(rest);
    consume_all();
}

void line_applier::deprecated(const char* what)
{
    log_.info(where_ + ": " + what + " option " + kw_);
    consume_all();
}

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
    case k::host_key_agent:
        (void)required("missing socket name.");
        not_supported(kw_);
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
    case k::expose_auth_info:
        flag(cfg_.expose_auth_info);
        if (e_.args.size() == 1 && parse_flag(e_.args[0]).value_or(false))
            not_supported(kw_ + " yes");
        break;
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
    case k::rekey_limit:
        // The transport takes its rekey limits when the connection starts;
        // a per-user value would be accepted and not applied.
        if (!e_.conditions.empty())
            not_supported(kw_ + " in a Match block");
        rekey_limit();
        break;
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
        // OpenSSH 9.8's penalty box is not implemented: only "no" (what
        // this server does) is accepted.
        const std::string& arg = required_kw();
        if (!iequals(arg, "no"))
            not_supported(kw_ + " " + arg);
        break;
    }
    case k::per_source_penalty_exempt_list:
        (void)required_kw();
        not_supported(kw_);
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
        // Idle channels would stay open past the administrator's limit.
        if (!e_.args.empty() && !iequals(e_.args[0], "none"))
            not_supported(kw_);
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

} // namespace

bool apply_entry(const line_context& ctx, config_draft& draft, parse_log& log)
{
    line_applier a(ctx, draft, log);
    return a.run();
}

} // namespace longhaul::detail
