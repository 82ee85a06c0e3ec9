// Reading ssh_config files: Host and Match blocks, Include, the two passes
// ssh makes ("Match final"), and what ssh does with the values before it
// connects or prints them with -G.
#include "ssh/detail/config_parser.hpp"

#include "common/match.hpp"
#include "ssh/destination.hpp"
#include "ssh/detail/config_values.hpp"

#include <glob.h>
#include <netdb.h>
#include <pwd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

namespace longhaul {

namespace detail {

namespace {

std::string lowercase(std::string s)
{
    for (auto& c : s)
        c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

std::string truncated(std::string_view s, std::size_t n) { return std::string(s.substr(0, n)); }

std::string location(std::string_view filename, int linenum)
{
    return truncated(filename, 200) + " line " + std::to_string(linenum) + ": ";
}

std::string join(const std::vector<std::string>& args)
{
    std::string out;
    for (const auto& a : args) {
        if (!out.empty())
            out.push_back(' ');
        out += a;
    }
    return out;
}

// OpenSSH's execute_in_shell(): $SHELL (or /bin/sh) -c cmd with stdin and
// stdout on /dev/null. The exit status, or -1 when the command did not exit
// normally.
int execute_in_shell(const config_environment& env, const std::string& cmd, const parse_state& st)
{
    std::string shell = "/bin/sh";
    if (auto s = env.getenv("SHELL"); s && !s->empty())
        shell = *s;
    if (access(shell.c_str(), X_OK) == -1)
        throw ssh_config_error("Shell \"" + shell + "\" is not executable: " + std::strerror(errno));
    st.emit(log_level::debug1, "Executing command: '" + truncated(cmd, 500) + "'");
    const pid_t pid = fork();
    if (pid == -1)
        throw ssh_config_error(std::string("execute_in_shell: fork: ") + std::strerror(errno));
    if (pid == 0) {
        const int null = open("/dev/null", O_RDWR);
        if (null == -1)
            _exit(127);
        dup2(null, STDIN_FILENO);
        dup2(null, STDOUT_FILENO);
        close_range(STDERR_FILENO + 1, ~0u, 0);
        execl(shell.c_str(), shell.c_str(), "-c", cmd.c_str(), static_cast<char*>(nullptr));
        // Die by a signal so the parent reports the failure, as OpenSSH does.
        signal(SIGTERM, SIG_DFL);
        kill(getpid(), SIGTERM);
        _exit(127);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) == -1) {
        if (errno != EINTR && errno != EAGAIN)
            throw ssh_config_error(std::string("execute_in_shell: waitpid: ") + std::strerror(errno));
    }
    if (!WIFEXITED(status)) {
        st.emit(log_level::error, "command '" + truncated(cmd, 100) + "' exited abnormally");
        return -1;
    }
    st.emit(log_level::debug3, "command returned status " + std::to_string(WEXITSTATUS(status)));
    return WEXITSTATUS(status);
}

int default_ssh_port()
{
    struct servent se {};
    struct servent* found = nullptr;
    char buf[4096];
    if (getservbyname_r("ssh", "tcp", &se, buf, sizeof buf, &found) == 0 && found != nullptr)
        return ntohs(static_cast<uint16_t>(found->s_port));
    return 22;
}

// OpenSSH's match_cfg_line(): 1 match, 0 no match, -1 error.
int match_config_line(parse_state& st, const std::vector<std::string>& args, std::string_view filename, int linenum,
                      bool final_pass)
{
    const auto& c = st.cfg;
    const int port = c.port && *c.port > 0 ? *c.port : default_ssh_port();
    const std::string ruser = c.user ? *c.user : st.env.local_user;
    std::string host;
    if (final_pass)
        host = c.hostname.value_or(st.host);
    else if (c.hostname)
        host = percent_expand(*c.hostname, {{'h', st.host}});
    else
        host = st.host;

    st.emit(log_level::debug2, "checking match for '" + join(args) + "' host " + host + " originally " +
                                   st.original_host);
    int result = 1;
    int attributes = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& oattrib = args[i];
        std::string_view attrib = oattrib;
        const bool negate = !attrib.empty() && attrib[0] == '!';
        if (negate)
            attrib.remove_prefix(1);
        if (iequals(attrib, "all")) {
            if (attributes > 1 || i + 1 < args.size()) {
                st.emit(log_level::error, location(filename, linenum) + "'" + oattrib +
                                              "' cannot be combined with other Match attributes");
                return -1;
            }
            if (result)
                result = negate ? 0 : 1;
            st.emit(log_level::debug2, std::string("match ") + (result ? "" : "not ") + "found");
            return result;
        }
        ++attributes;
        if (iequals(attrib, "canonical") || iequals(attrib, "final")) {
            // Both hold only in the second pass; "final" asks for that pass.
            if (iequals(attrib, "final") && st.want_final_pass != nullptr)
                *st.want_final_pass = true;
            bool this_result = true;
            if (final_pass == negate)
                this_result = false, result = 0;
            st.emit(log_level::debug3, location(filename, linenum) + (this_result ? "" : "not ") + "matched '" +
                                           oattrib + "'");
            continue;
        }
        if (i + 1 >= args.size()) {
            st.emit(log_level::error, "Missing Match criteria for " + std::string(attrib));
            return -1;
        }
        const std::string& arg = args[++i];
        bool r = false;
        std::string criteria;
        if (iequals(attrib, "host")) {
            criteria = host;
            r = match_hostname(host, arg) == list_match::positive;
        } else if (iequals(attrib, "originalhost")) {
            criteria = st.original_host;
            r = match_hostname(st.original_host, arg) == list_match::positive;
        } else if (iequals(attrib, "user")) {
            criteria = ruser;
            r = match_pattern_list(ruser, arg, false) == list_match::positive;
        } else if (iequals(attrib, "localuser")) {
            criteria = st.env.local_user;
            r = match_pattern_list(st.env.local_user, arg, false) == list_match::positive;
        } else if (iequals(attrib, "exec")) {
            const std::string& thishost = st.env.local_hostname;
            const std::string portstr = std::to_string(port);
            const std::string keyalias = c.host_key_alias ? *c.host_key_alias : host;
            const token_map tokens = {
                {'C', connection_hash(thishost, host, portstr, ruser)},
                {'L', thishost.substr(0, thishost.find('.'))},
                {'d', st.env.home_dir},
                {'h', host},
                {'k', keyalias},
                {'l', thishost},
                {'n', st.original_host},
                {'p', portstr},
                {'r', ruser},
                {'u', st.env.local_user},
                {'i', st.env.uid},
            };
            const std::string cmd = percent_expand(arg, tokens);
            if (result != 1) {
                // An earlier criterion failed: do not run the command.
                st.emit(log_level::debug3, location(filename, linenum) + "skipped exec \"" + truncated(cmd, 100) + "\"");
                continue;
            }
            int status = 1;
            if (st.env.allow_exec) {
                status = execute_in_shell(st.env, cmd, st);
                if (status == -1)
                    throw ssh_config_error(location(filename, linenum) + "match exec '" + truncated(cmd, 100) + "' error");
            }
            criteria = cmd;
            r = status == 0;
        } else {
            st.emit(log_level::error, "Unsupported Match attribute " + std::string(attrib));
            return -1;
        }
        bool this_result = true;
        if (r == negate)
            this_result = false, result = 0;
        st.emit(log_level::debug3, location(filename, linenum) + (this_result ? "" : "not ") + "matched '" + oattrib +
                                       " \"" + truncated(criteria, 100) + "\"' ");
    }
    if (attributes == 0) {
        st.emit(log_level::error, "One or more attributes required for Match");
        return -1;
    }
    st.emit(log_level::debug2, std::string("match ") + (result ? "" : "not ") + "found");
    return result;
}

} // namespace

bool process_host_line(parse_state& st, const std::vector<std::string>& args, std::string_view filename, int linenum,
                       bool* active, unsigned flags)
{
    *active = false;
    std::string matched;
    for (const auto& arg : args) {
        if (arg.empty()) {
            st.emit(log_level::error, std::string(filename) + " line " + std::to_string(linenum) +
                                          ": keyword host empty argument");
            return false;
        }
        if (flags & conf_never_match)
            break;
        const bool negated = arg[0] == '!';
        const std::string_view pattern = negated ? std::string_view(arg).substr(1) : std::string_view(arg);
        // Host patterns are matched one at a time and case-sensitively, as OpenSSH does.
        if (match_pattern(st.host, pattern)) {
            if (negated) {
                st.emit(log_level::debug1, location(filename, linenum) +
                                               "Skipping Host block because of negated match for " +
                                               truncated(pattern, 100));
                *active = false;
                break;
            }
            if (!*active)
                matched = std::string(pattern);
            *active = true;
        }
    }
    if (*active)
        st.emit(log_level::debug1, location(filename, linenum) + "Applying options for " + truncated(matched, 100));
    return true;
}

bool process_match_line(parse_state& st, const std::vector<std::string>& args, std::string_view filename,
                        int linenum, bool* active, unsigned flags)
{
    const int r = match_config_line(st, args, filename, linenum, (flags & conf_final) != 0);
    if (r < 0) {
        st.emit(log_level::error, location(filename, linenum) + "Bad Match condition");
        return false;
    }
    *active = (flags & conf_never_match) ? false : r == 1;
    return true;
}

bool process_include_line(parse_state& st, const std::vector<std::string>& args, std::string_view filename,
                          int linenum, bool* active, unsigned flags, int depth)
{
    for (const auto& arg : args) {
        if (arg.empty()) {
            st.emit(log_level::error, std::string(filename) + " line " + std::to_string(linenum) +
                                          ": keyword include empty argument");
            return false;
        }
        // User files may name "~/..." paths; relative paths live in ~/.ssh
        // for user files and /etc/ssh for system ones.
        if (arg[0] == '~' && !(flags & conf_user)) {
            st.emit(log_level::error, location(filename, linenum) + "bad include path " + arg + ".");
            return false;
        }
        std::string pattern;
        if (arg[0] != '/' && arg[0] != '~')
            pattern = ((flags & conf_user) ? std::string("~/.ssh") : st.env.system_dir) + "/" + arg;
        else
            pattern = arg;
        const std::string shown = pattern;
        if (pattern[0] == '~') {
            if (pattern.rfind("~/.ssh/", 0) == 0 && !st.env.user_dir.empty())
                pattern = st.env.user_dir + pattern.substr(6);
            else
                pattern = tilde_expand(pattern, st.env.home_dir, st.env.homes);
        }
        if (!st.env.allow_include) {
            st.emit(log_level::debug1, location(filename, linenum) + "include " + shown + " not followed");
            continue;
        }
        glob_t gl{};
        const int r = ::glob(pattern.c_str(), 0, nullptr, &gl);
        if (r == GLOB_NOMATCH) {
            st.emit(log_level::debug1, location(filename, linenum) + "include " + shown + " matched no files");
            globfree(&gl);
            continue;
        }
        if (r != 0) {
            globfree(&gl);
            st.emit(log_level::error, location(filename, linenum) + "glob failed for " + shown + ".");
            return false;
        }
        std::vector<std::string> paths(gl.gl_pathv, gl.gl_pathv + gl.gl_pathc);
        globfree(&gl);
        const bool was_active = *active;
        for (const auto& path : paths) {
            st.emit(log_level::debug3, location(filename, linenum) + "Including file " + path + " depth " +
                                           std::to_string(depth) + (was_active ? "" : " (parse only)"));
            std::string open_error;
            const bool ok = read_config_file(st, path, flags | conf_check_perm | (was_active ? 0u : conf_never_match),
                                             active, depth + 1, open_error);
            if (!ok && open_error != std::strerror(ENOENT)) {
                st.emit(log_level::error,
                        "Can't open user config file " + truncated(path, 100) + ": " + truncated(open_error, 100));
                return false;
            }
            // A Match inside the included file must not change this file's state.
            *active = was_active;
        }
    }
    return true;
}

bool read_config_file(parse_state& st, const std::string& path, unsigned flags, bool* active, int depth,
                      std::string& open_error)
{
    if (depth < 0 || depth > max_include_depth)
        throw ssh_config_error("Too many recursive configuration includes");
    const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd == -1) {
        open_error = std::strerror(errno);
        return false;
    }
    struct stat sb {};
    if (fstat(fd, &sb) == -1) {
        const std::string why = std::strerror(errno);
        close(fd);
        throw ssh_config_error("fstat " + path + ": " + why);
    }
    if ((flags & conf_check_perm) && st.env.check_permissions &&
        ((sb.st_uid != 0 && sb.st_uid != getuid()) || (sb.st_mode & 022) != 0)) {
        close(fd);
        throw ssh_config_error("Bad owner or permissions on " + path);
    }
    std::string text;
    char buf[65536];
    while (true) {
        const ssize_t n = read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            open_error = std::strerror(errno);
            close(fd);
            return false;
        }
        if (n == 0)
            break;
        text.append(buf, static_cast<std::size_t>(n));
        if (text.size() > max_config_file_size) {
            close(fd);
            open_error = std::strerror(EFBIG);
            return false;
        }
    }
    close(fd);

    st.emit(log_level::debug1, "Reading configuration data " + truncated(path, 200));
    int linenum = 0;
    int bad_options = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        std::string_view line(text.data() + pos, (nl == std::string::npos ? text.size() : nl) - pos);
        pos = nl == std::string::npos ? text.size() : nl + 1;
        ++linenum;
        // Lines are C strings to OpenSSH: a NUL ends them.
        line = line.substr(0, line.find('\0'));
        if (!process_config_line(st, line, path, linenum, active, flags, depth))
            ++bad_options;
    }
    if (bad_options > 0)
        throw ssh_config_error(path + ": terminating, " + std::to_string(bad_options) + " bad configuration options");
    return true;
}

} // namespace detail

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

// Numeric addresses only: true for anything OpenSSH's is_addr() accepts
// without a DNS lookup.
bool is_address(const std::string& name, std::optional<address_family> family)
{
    if (name.find_first_of("%:") != std::string::npos ||
        name.find_first_not_of("0123456789.") == std::string::npos)
        return true;
    addrinfo hints{};
    hints.ai_family = !family || *family == address_family::any ? AF_UNSPEC
                      : *family == address_family::inet         ? AF_INET
                                                                 : AF_INET6;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    if (getaddrinfo(name.c_str(), "22", &hints, &res) != 0)
        return false;
    const bool single = res != nullptr && res->ai_next == nullptr;
    freeaddrinfo(res);
    return single;
}

// OpenSSH's resolve_addr(): the canonical text of a numeric address
// ("127.1" -> "127.0.0.1"), nullopt when `name` is not one.
std::optional<std::string> canonical_address(const std::string& name, std::optional<address_family> family)
{
    addrinfo hints{};
    hints.ai_family = !family || *family == address_family::any ? AF_UNSPEC
                      : *family == address_family::inet         ? AF_INET
                                                                 : AF_INET6;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICHOST | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    if (getaddrinfo(name.c_str(), "22", &hints, &res) != 0 || res == nullptr)
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
