// Loading the client configuration: the environment of the user, -o lines,
// the two passes over the files ssh makes ("Match final"), and what ssh does
// with the values before it connects or prints them with -G.
#include "ssh/detail/config_parser.hpp"

#include "common/text_parse.hpp"
#include "ssh/destination.hpp"
#include "ssh/detail/config_values.hpp"

#include <netdb.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstring>

namespace longhaul {

using namespace detail;

namespace {

std::optional<std::string> passwd_field_home(uid_t uid, std::string& name)
{
    struct passwd pw {};
    struct passwd* found = nullptr;
    std::string buf(16384, '\0');
    if (getpwuid_r(uid, &pw, buf.data(), buf.size(), &found) != 0 || found == nullptr)
        return std::nullopt;
    name = found->pw_name;
    return std::string(found->pw_dir);
}

// getaddrinfo() that never touches DNS; the caller frees `res`.
bool numeric_lookup(const std::string& name, std::optional<address_family> family, addrinfo*& res)
{
    addrinfo hints{};
    hints.ai_family = !family || *family == address_family::any ? AF_UNSPEC
                      : *family == address_family::inet         ? AF_INET
                                                                 : AF_INET6;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    return getaddrinfo(name.c_str(), "22", &hints, &res) == 0;
}

// Numeric addresses only: true for anything OpenSSH's is_addr() accepts
// without a DNS lookup.
bool is_address(const std::string& name, std::optional<address_family> family)
{
    if (name.find_first_of("%:") != std::string::npos ||
        name.find_first_not_of("0123456789.") == std::string::npos)
        return true;
    addrinfo* res = nullptr;
    if (!numeric_lookup(name, family, res))
        return false;
    const bool single = res != nullptr && res->ai_next == nullptr;
    freeaddrinfo(res);
    return single;
}

// OpenSSH's resolve_addr(): the canonical text of a numeric address
// ("127.1" -> "127.0.0.1"), nullopt when `name` is not one.
std::optional<std::string> canonical_address(const std::string& name, std::optional<address_family> family)
{
    addrinfo* res = nullptr;
    if (!numeric_lookup(name, family, res) || res == nullptr)
        return std::nullopt;
    std::optional<std::string> out;
    char text[NI_MAXHOST];
    if (res->ai_next == nullptr &&
        getnameinfo(res->ai_addr, res->ai_addrlen, text, sizeof text, nullptr, 0, NI_NUMERICHOST) == 0)
        out = text;
    freeaddrinfo(res);
    return out;
}

void process_config_files(parse_state& st, const config_request& request, bool final_pass)
{
    const unsigned pass = final_pass ? conf_final : 0u;
    std::string open_error;
    if (request.config_file) {
        if (iequals(*request.config_file, "none"))
            return;
        bool active = true;
        if (!read_config_file(st, *request.config_file, conf_user | pass, &active, 0, open_error))
            throw ssh_config_error("Can't open user config file " + request.config_file->substr(0, 100) + ": " +
                               open_error.substr(0, 100));
        return;
    }
    bool active = true;
    (void)read_config_file(st, st.env.user_config, conf_check_perm | conf_user | pass, &active, 0, open_error);
    active = true;
    (void)read_config_file(st, st.env.system_config, pass, &active, 0, open_error);
}

std::string expand_path(const std::string& path, const connection_tokens& tokens, const config_environment& env)
{
    return percent_dollar_expand(tilde_expand(path, env.home_dir, env.homes), tokens.map(), env.getenv);
}

} // namespace

config_environment config_environment::from_system()
{
    config_environment env;
    std::string name;
    auto home = passwd_field_home(getuid(), name);
    if (!home)
        throw ssh_config_error("No user exists for uid " + std::to_string(getuid()));
    env.home_dir = *home;
    env.local_user = name;
    env.uid = std::to_string(getuid());
    char host[1025] = {};
    if (gethostname(host, sizeof host - 1) == -1)
        throw ssh_config_error(std::string("gethostname: ") + std::strerror(errno));
    env.local_hostname = host;
    const char* sep = (!env.home_dir.empty() && env.home_dir.back() == '/') ? "" : "/";
    env.user_dir = env.home_dir + sep + ".ssh";
    env.user_config = env.user_dir + "/config";
    return env;
}

config_environment config_environment::for_home(std::string home, std::string user, std::string system_config)
{
    config_environment env;
    env.home_dir = std::move(home);
    env.local_user = std::move(user);
    env.uid = std::to_string(getuid());
    env.local_hostname = "localhost.localdomain";
    env.user_dir = env.home_dir + "/.ssh";
    env.user_config = env.user_dir + "/config";
    env.system_config = std::move(system_config);
    const auto slash = env.system_config.rfind('/');
    env.system_dir = slash == std::string::npos ? "." : env.system_config.substr(0, slash);
    env.check_permissions = false;
    return env;
}

bool apply_option_line(client_config& cfg, std::string_view line, const config_environment& env, const log_sink& log)
{
    parse_state st{cfg, env, log, "", "", nullptr};
    return process_config_line(st, line, "command-line", 0, nullptr, conf_user, 0);
}

connection_tokens make_connection_tokens(const client_config& cfg, const config_environment& env)
{
    connection_tokens t;
    t.local_host = env.local_hostname;
    t.short_host = env.local_hostname.substr(0, env.local_hostname.find('.'));
    t.port = std::to_string(cfg.port.value_or(22));
    t.uid = env.uid;
    t.key_alias = cfg.host_key_alias ? *cfg.host_key_alias : cfg.host_arg;
    t.host_arg = cfg.host_arg;
    t.remote_host = cfg.hostname.value_or(cfg.host_arg);
    t.remote_user = cfg.user.value_or(env.local_user);
    t.home_dir = env.home_dir;
    t.local_user = env.local_user;
    t.conn_hash = connection_hash(t.local_host, t.remote_host, t.port, t.remote_user);
    return t;
}

std::string expand_proxy_command(const client_config& cfg)
{
    const token_map tokens = {
        {'h', cfg.hostname.value_or(cfg.host_arg)},
        {'n', cfg.host_arg},
        {'p', std::to_string(cfg.port.value_or(22))},
        {'r', cfg.user.value_or("")},
    };
    return percent_expand(cfg.proxy_command.value_or(""), tokens);
}

std::string expand_local_command(const client_config& cfg, const config_environment& env, std::string_view tunnel)
{
    auto tokens = make_connection_tokens(cfg, env).map();
    tokens.push_back({'T', tunnel.empty() ? std::string("NONE") : std::string(tunnel)});
    return percent_expand(cfg.local_command.value_or(""), tokens);
}

std::string expand_identity_path(std::string_view path, const client_config& cfg, const config_environment& env)
{
    return expand_path(std::string(path), make_connection_tokens(cfg, env), env);
}

namespace {

void load_client_config_impl(client_config& cfg, const config_request& request, const config_environment& env,
                             const log_sink& log)
{
    bool want_final = false;
    cfg.host_arg = request.host_arg;
    parse_state st{cfg, env, log, request.host_arg, request.host_arg, &want_final};
    process_config_files(st, request, false);
    if (want_final)
        st.emit(log_level::debug1, "configuration requests final Match pass");

    // The HostName (with %h) replaces the host; names are lowercased,
    // addresses canonicalized.
    std::string host = request.host_arg;
    if (cfg.hostname) {
        host = percent_expand(*cfg.hostname, {{'h', request.host_arg}});
        cfg.hostname = host;
    }
    const auto canonicalize = cfg.canonicalize_hostname.value_or(canonicalize_hostname::no);
    const bool was_addr = is_address(host, cfg.address_family);
    if (!was_addr)
        host = lowercase(host);
    if (canonicalize != canonicalize_hostname::no || was_addr) {
        // Only numeric addresses are canonicalized; no DNS lookups are made here.
        if (auto a = canonical_address(host, cfg.address_family))
            host = *a;
    }
    if (canonicalize != canonicalize_hostname::no && !want_final) {
        st.emit(log_level::debug1, "hostname canonicalisation enabled, will re-parse configuration");
        want_final = true;
    }
    if (want_final) {
        st.emit(log_level::debug1, "re-parsing configuration");
        cfg.hostname = host;
        st.host = host;
        st.want_final_pass = nullptr;
        process_config_files(st, request, true);
    }

    fill_default_options(cfg);
    cfg.hostname = host;
    if (!cfg.user)
        cfg.user = env.local_user;
    if (*cfg.port == 0)
        cfg.port = default_ssh_port();
    if (cfg.host_key_alias)
        cfg.host_key_alias = lowercase(*cfg.host_key_alias);
    if (cfg.proxy_command && *cfg.proxy_command == "-" && *cfg.proxy_use_fdpass)
        throw ssh_config_error("ProxyCommand=- and ProxyUseFDPass are incompatible");
    if (*cfg.update_hostkeys == yes_no_ask::ask) {
        if (*cfg.control_persist && cfg.control_path) {
            st.emit(log_level::debug1, "UpdateHostKeys=ask is incompatible with ControlPersist; disabling");
            cfg.update_hostkeys = yes_no_ask::no;
        } else if (request.have_command || cfg.remote_command || *cfg.request_tty == request_tty::no) {
            st.emit(log_level::debug1, "UpdateHostKeys=ask is incompatible with remote command execution; disabling");
            cfg.update_hostkeys = yes_no_ask::no;
        } else if (*cfg.log_level < log_level::info) {
            cfg.update_hostkeys = yes_no_ask::no; // nobody would see the question
        }
    }
    if (*cfg.connection_attempts <= 0)
        throw ssh_config_error("Invalid number of ConnectionAttempts");
    if (request.have_command && cfg.remote_command)
        throw ssh_config_error("Cannot execute command-line and remote command.");
    if (*cfg.fork_after_authentication && !request.have_command && !cfg.remote_command &&
        *cfg.session_type != session_type::none)
        throw ssh_config_error("Cannot fork into background without a command to execute.");

    const connection_tokens tokens = make_connection_tokens(cfg, env);
    if (cfg.remote_command)
        cfg.remote_command = percent_expand(*cfg.remote_command, tokens.map());
    if (cfg.control_path)
        cfg.control_path = expand_path(*cfg.control_path, tokens, env);
    if (cfg.identity_agent)
        cfg.identity_agent = expand_path(*cfg.identity_agent, tokens, env);
    if (cfg.forward_agent_sock_path) {
        cfg.forward_agent_sock_path = expand_path(*cfg.forward_agent_sock_path, tokens, env);
        struct stat sb {};
        if (stat(cfg.forward_agent_sock_path->c_str(), &sb) != 0) {
            const std::string msg = "Cannot forward agent socket path \"" + *cfg.forward_agent_sock_path +
                                    "\": " + std::strerror(errno);
            if (*cfg.exit_on_forward_failure)
                throw ssh_config_error(msg);
            st.emit(log_level::error, msg);
        }
    }
    if (!cfg.global_known_hosts_files.empty() && iequals(cfg.global_known_hosts_files[0], "none")) {
        if (cfg.global_known_hosts_files.size() > 1)
            throw ssh_config_error("Invalid GlobalKnownHostsFiles: \"none\" appears with other entries");
        cfg.global_known_hosts_files.clear();
    }
    if (!cfg.user_known_hosts_files.empty() && iequals(cfg.user_known_hosts_files[0], "none")) {
        if (cfg.user_known_hosts_files.size() > 1)
            throw ssh_config_error("Invalid UserKnownHostsFiles: \"none\" appears with other entries");
        cfg.user_known_hosts_files.clear();
    }
    for (auto& f : cfg.user_known_hosts_files) {
        auto expanded = expand_path(f, tokens, env);
        if (expanded != f)
            st.emit(log_level::debug3, "expanded UserKnownHostsFile '" + f + "' -> '" + expanded + "'");
        f = std::move(expanded);
    }
    for (auto* list : {&cfg.local_forwards, &cfg.remote_forwards}) {
        for (auto& fwd : *list) {
            if (fwd.listen_path)
                fwd.listen_path = percent_expand(*fwd.listen_path, tokens.map());
            if (fwd.connect_path)
                fwd.connect_path = percent_expand(*fwd.connect_path, tokens.map());
        }
    }
}

} // namespace

void load_client_config(client_config& cfg, const config_request& request, const config_environment& env,
                        const log_sink& log)
{
    try {
        load_client_config_impl(cfg, request, env, log);
    } catch (const expansion_error& e) {
        // Token and variable errors are fatal to ssh, like config errors.
        throw ssh_config_error(e.what());
    }
}

} // namespace longhaul
