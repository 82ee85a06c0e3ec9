#include "sshd/authorized_keys_command.hpp"

#include "common/config_line.hpp"
#include "common/keys/base64.hpp"
#include "common/keys/fingerprint.hpp"
#include "common/keys/key_lines.hpp"
#include "common/percent_expand.hpp"
#include "sshd/secure_path.hpp"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace longhaul {

namespace {

constexpr const char* std_path = "/usr/bin:/bin:/usr/sbin:/sbin";

// argv_assemble: arguments joined by spaces, quoted where needed.
std::string assemble(const std::vector<std::string>& av)
{
    std::string out;
    for (const auto& a : av) {
        if (!out.empty())
            out.push_back(' ');
        const bool quote = a.empty() || a.find_first_of(" \t\r\n\"'\\") != std::string::npos;
        if (!quote) {
            out += a;
            continue;
        }
        out.push_back('"');
        for (char c : a) {
            if (c == '"' || c == '\\')
                out.push_back('\\');
            out.push_back(c);
        }
        out.push_back('"');
    }
    return out;
}

std::vector<gid_t> supplementary_groups(const user_account& u)
{
    int n = 64;
    std::vector<gid_t> g(static_cast<std::size_t>(n));
    if (getgrouplist(u.name.c_str(), u.gid, g.data(), &n) < 0) {
        if (n <= 0 || n > 65536)
            return {u.gid};
        g.resize(static_cast<std::size_t>(n));
        if (getgrouplist(u.name.c_str(), u.gid, g.data(), &n) < 0)
            return {u.gid};
    }
    g.resize(static_cast<std::size_t>(n));
    return g;
}

void close_from(int lowest)
{
#ifdef SYS_close_range
    if (::syscall(SYS_close_range, static_cast<unsigned>(lowest), ~0U, 0) == 0)
        return;
#endif
    const long max = ::sysconf(_SC_OPEN_MAX);
    for (long fd = lowest; fd < (max > 0 ? max : 1024); ++fd)
        ::close(static_cast<int>(fd));
}

// The part both commands share, from argument splitting to the checked
// exit status; `tokens` are the command's own %-letters besides %C %D %U
// %u %h.
auth_command_result run_command(std::string_view setting, const auth_command_request& rq, percent_tokens tokens,
                                bool user_without_arguments)
{
    const std::string tag(setting);
    auth_command_result r;
    auto log = [&](syslog_level l, std::string text) { r.log.push_back({l, std::move(text)}); };
    if (rq.command.empty() || !rq.run_as)
        return r;
    auto split = split_arguments(rq.command, false);
    if (!split) {
        log(syslog_level::error, tag + " \"" + rq.command + "\" contains invalid quotes");
        return r;
    }
    std::vector<std::string> av = std::move(*split);
    if (av.empty()) {
        log(syslog_level::error, tag + " \"" + rq.command + "\" yielded no arguments");
        return r;
    }
    tokens.insert(tokens.end(), {{'C', rq.connection_id},
                                 {'D', rq.rdomain},
                                 {'U', std::to_string(rq.target.uid)},
                                 {'u', rq.target.name},
                                 {'h', rq.target.home}});
    for (std::size_t i = 1; i < av.size(); ++i) {
        std::string error;
        auto expanded = percent_expand(av[i], tokens, error);
        if (!expanded) {
            log(syslog_level::error, error);
            return r;
        }
        av[i] = std::move(*expanded);
    }
    // Without arguments the user name is passed, as older OpenSSH did.
    if (user_without_arguments && av.size() == 1)
        av.push_back(rq.target.name);
    r.command = assemble(av);

    if (av[0].empty() || av[0][0] != '/') {
        log(syslog_level::error, tag + " path is not absolute");
        return r;
    }
    struct stat st {};
    if (::stat(av[0].c_str(), &st) == -1) {
        log(syslog_level::error,
            std::string("Could not stat ") + tag + " \"" + av[0] + "\": " + std::strerror(errno));
        return r;
    }
    if (auto problem = secure_path_problem(av[0], st, {}, 0)) {
        log(syslog_level::error, std::string("Unsafe ") + tag + " \"" + av[0] + "\": " + *problem);
        return r;
    }

    // Everything the child needs is prepared here: after fork() in a
    // process that may have threads only async-signal-safe calls are made.
    const user_account& as = *rq.run_as;
    std::vector<std::string> env_strings = {"PATH=" + std::string(std_path), "USER=" + as.name,
                                            "LOGNAME=" + as.name, "HOME=" + as.home};
    if (const char* lang = std::getenv("LANG"))
        env_strings.push_back(std::string("LANG=") + lang);
    std::vector<char*> argv, envp;
    for (auto& a : av)
        argv.push_back(a.data());
    argv.push_back(nullptr);
    for (auto& e : env_strings)
        envp.push_back(e.data());
    envp.push_back(nullptr);
    const bool drop = rq.switch_user && ::geteuid() == 0;
    const std::vector<gid_t> groups = drop ? supplementary_groups(as) : std::vector<gid_t>{};

    int p[2];
    if (::pipe2(p, O_CLOEXEC) == -1) {
        log(syslog_level::error, std::string("pipe: ") + std::strerror(errno));
        return r;
    }
    const pid_t pid = ::fork();
    if (pid == -1) {
        log(syslog_level::error, std::string("fork: ") + std::strerror(errno));
        ::close(p[0]);
        ::close(p[1]);
        return r;
    }
    if (pid == 0) {
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        for (int s = 1; s < NSIG; ++s)
            (void)::sigaction(s, &dfl, nullptr);
        sigset_t none;
        sigemptyset(&none);
        (void)::sigprocmask(SIG_SETMASK, &none, nullptr);
        const int devnull = ::open("/dev/null", O_RDWR);
        if (devnull == -1 || ::dup2(devnull, STDIN_FILENO) == -1 || ::dup2(p[1], STDOUT_FILENO) == -1 ||
            ::dup2(devnull, STDERR_FILENO) == -1)
            ::_exit(1);
        close_from(STDERR_FILENO + 1);
        if (drop) {
            if (::setgroups(groups.size(), groups.data()) == -1 || ::setresgid(as.gid, as.gid, as.gid) == -1 ||
                ::setresuid(as.uid, as.uid, as.uid) == -1)
                ::_exit(1);
        }
        ::execve(argv[0], argv.data(), envp.data());
        ::_exit(127);
    }
    ::close(p[1]);

    std::string output;
    bool timed_out = false, too_much = false;
    const auto deadline = std::chrono::steady_clock::now() + rq.timeout;
    char buf[65536];
    while (true) {
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
        if (left.count() <= 0) {
            timed_out = true;
            break;
        }
        pollfd pfd{p[0], POLLIN, 0};
        const int n = ::poll(&pfd, 1, static_cast<int>(std::min<long long>(left.count(), 1000)));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            continue;
        const ssize_t got = ::read(p[0], buf, sizeof buf);
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0)
            break;
        output.append(buf, static_cast<std::size_t>(got));
        if (output.size() > rq.max_output) {
            too_much = true;
            break;
        }
    }
    ::close(p[0]);
    if (timed_out || too_much)
        (void)::kill(pid, SIGKILL);
    int status = 0;
    while (::waitpid(pid, &status, 0) == -1 && errno == EINTR) {
    }
    if (timed_out) {
        log(syslog_level::error, tag + " " + r.command + " timed out after " +
                                     std::to_string(rq.timeout.count() / 1000) + " seconds");
        return r;
    }
    if (too_much) {
        log(syslog_level::error, tag + " " + r.command + " output exceeds " +
                                     std::to_string(rq.max_output) + " bytes");
        return r;
    }
    if (WIFSIGNALED(status)) {
        log(syslog_level::error,
            tag + " " + r.command + " exited on signal " + std::to_string(WTERMSIG(status)));
        return r;
    }
    if (WEXITSTATUS(status) != 0) {
        log(syslog_level::error,
            tag + " " + r.command + " failed, status " + std::to_string(WEXITSTATUS(status)));
        return r;
    }
    r.output = std::move(output);
    return r;
}

// sshkey_to_base64: the key blob of a plain key.
std::string key_base64(const public_key& key)
{
    const std::string text = format_public_key(key);
    return text.substr(text.find(' ') + 1);
}

} // namespace

std::optional<user_account> command_user(std::string_view setting, const std::string& configured,
                                         const user_account& target, std::vector<log_message>& log)
{
    if (configured.empty()) {
        log.push_back({syslog_level::error, "No user for " + std::string(setting) + " specified, skipping"});
        return std::nullopt;
    }
    std::string error;
    auto name = percent_expand(configured, percent_tokens{{'u', target.name}}, error);
    if (!name) {
        log.push_back({syslog_level::error, std::string(setting) + "User: " + error});
        return std::nullopt;
    }
    errno = 0;
    auto account = lookup_user(*name);
    if (!account)
        log.push_back({syslog_level::error,
                       std::string(setting) + "User \"" + *name + "\" not found: " + std::strerror(errno)});
    return account;
}

auth_command_result run_authorized_keys_command(const keys_command_request& rq)
{
    // For a certificate OpenSSH names the certificate (%t its type, %k its
    // blob) and fingerprints the certified key (%f).
    const public_key& key = rq.cert ? rq.cert->key() : rq.key;
    return run_command("AuthorizedKeysCommand", rq,
                       {{'t', rq.cert ? std::string(rq.cert->type_name()) : std::string(key.type_name())},
                        {'f', key_fingerprint(key, rq.fingerprint)},
                        {'k', rq.cert ? base64_encode(rq.cert->blob()) : key_base64(key)}},
                       true);
}

auth_command_result run_authorized_principals_command(const principals_command_request& rq)
{
    if (!rq.cert)
        return {};
    const certificate& c = *rq.cert;
    return run_command("AuthorizedPrincipalsCommand", rq,
                       {{'t', std::string(c.type_name())},
                        {'T', std::string(c.signature_key().type_name())},
                        {'f', key_fingerprint(c.key(), rq.fingerprint)},
                        {'F', key_fingerprint(c.signature_key(), rq.fingerprint)},
                        {'k', base64_encode(c.blob())},
                        {'K', key_base64(c.signature_key())},
                        {'i', c.key_id()},
                        {'s', std::to_string(c.serial())}},
                       false);
}

} // namespace longhaul
