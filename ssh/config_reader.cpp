// Reading ssh_config files: Host and Match blocks (with Match exec) and
// Include, with OpenSSH's depth limit and permission checks.
#include "ssh/detail/config_parser.hpp"

#include "common/file_read.hpp"
#include "common/match.hpp"
#include "common/text_parse.hpp"
#include "ssh/destination.hpp"
#include "ssh/detail/config_values.hpp"

#include <glob.h>
#include <netdb.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstring>

namespace longhaul {

namespace detail {

namespace {

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

int default_ssh_port()
{
    struct servent se {};
    struct servent* found = nullptr;
    char buf[4096];
    if (getservbyname_r("ssh", "tcp", &se, buf, sizeof buf, &found) == 0 && found != nullptr)
        return ntohs(static_cast<uint16_t>(found->s_port));
    return 22;
}

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
    const int err = read_to_end(fd, max_config_file_size, text);
    close(fd);
    if (err != 0) {
        open_error = std::strerror(err);
        return false;
    }

    st.emit(log_level::debug1, "Reading configuration data " + truncated(path, 200));
    process_config_text(st, text, path, flags, active, depth);
    return true;
}

void process_config_text(parse_state& st, std::string_view text, const std::string& path, unsigned flags, bool* active,
                         int depth)
{
    int linenum = 0;
    int bad_options = 0;
    std::size_t pos = 0;
    while (pos < text.size()) {
        auto nl = text.find('\n', pos);
        std::string_view line = text.substr(pos, (nl == std::string_view::npos ? text.size() : nl) - pos);
        pos = nl == std::string_view::npos ? text.size() : nl + 1;
        ++linenum;
        // Lines are C strings to OpenSSH: a NUL ends them.
        line = line.substr(0, line.find('\0'));
        if (!process_config_line(st, line, path, linenum, active, flags, depth))
            ++bad_options;
    }
    if (bad_options > 0)
        throw ssh_config_error(path + ": terminating, " + std::to_string(bad_options) + " bad configuration options");
}

} // namespace detail

} // namespace longhaul
