#include "sshd/session_process.hpp"

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

namespace longhaul {

namespace {

constexpr int session_pipe_size = 1024 * 1024;

struct pipe_fds {
    int r = -1, w = -1;
    bool open()
    {
        int fds[2];
        if (pipe2(fds, O_CLOEXEC) != 0)
            return false;
        r = fds[0];
        w = fds[1];
        // A 64 KiB pipe is half a millisecond at 1 Gbit/s: the program and
        // sshd would have to take turns that often. A larger one (best
        // effort, up to the system's pipe-max-size) lets either side run
        // for a while on a busy machine without the other starving.
        (void)::fcntl(r, F_SETPIPE_SZ, session_pipe_size);
        return true;
    }
    void close_all()
    {
        if (r >= 0)
            ::close(r);
        if (w >= 0)
            ::close(w);
        r = w = -1;
    }
};

void reset_signals()
{
    sigset_t all;
    sigemptyset(&all);
    sigprocmask(SIG_SETMASK, &all, nullptr);
    for (int sig = 1; sig < NSIG; ++sig)
        if (sig != SIGKILL && sig != SIGSTOP)
            std::signal(sig, SIG_DFL);
}

void close_other_fds()
{
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3u, ~0u, 0u) == 0)
        return;
#endif
    for (int fd = 3; fd < 65536; ++fd)
        ::close(fd);
}

bool file_exists(const std::string& path)
{
    struct stat st {};
    return ::stat(path.c_str(), &st) == 0;
}

// Runs argv[0] with `input` on its stdin and waits, as OpenSSH's popen(..., "w")
// for the rc files and xauth. Called in the session child after fork:
// pipe, fork, write, close and waitpid only.
void run_with_input(const char* path, const char* const argv[], char* const envp[], const std::string& input)
{
    int fds[2] = {-1, -1};
    const bool piped = !input.empty() && ::pipe(fds) == 0;
    pid_t pid = fork();
    if (pid == 0) {
        if (piped) {
            ::dup2(fds[0], 0);
            ::close(fds[0]);
            ::close(fds[1]);
        }
        execve(path, const_cast<char* const*>(argv), envp);
        _exit(127);
    }
    if (piped) {
        ::close(fds[0]);
        // The reader may exit without reading: SIGPIPE is at its default
        // here (reset_signals), so ignore it for the write.
        std::signal(SIGPIPE, SIG_IGN);
        std::size_t off = 0;
        while (pid > 0 && off < input.size()) {
            const ssize_t n = ::write(fds[1], input.data() + off, input.size() - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                break;
            off += static_cast<std::size_t>(n);
        }
        ::close(fds[1]);
        std::signal(SIGPIPE, SIG_DFL);
    }
    if (pid > 0) {
        int status = 0;
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
    }
}

// Runs `/bin/sh file` and waits, as OpenSSH does for ~/.ssh/rc; `input`
// (the X11 cookie line, or nothing) on its stdin.
void run_rc(const std::string& file, char* const envp[], const std::string& input)
{
    const char* argv[] = {"sh", file.c_str(), nullptr};
    run_with_input("/bin/sh", argv, envp, input);
}

void print_motd()
{
    FILE* f = std::fopen("/etc/motd", "r");
    if (f == nullptr)
        return;
    char buf[4096];
    std::size_t n;
    while ((n = std::fread(buf, 1, sizeof buf, f)) > 0)
        (void)!::write(STDOUT_FILENO, buf, n);
    std::fclose(f);
}

[[noreturn]] void child_fail(const std::string& what)
{
    std::string msg = what + ": " + std::strerror(errno) + "\n";
    (void)!::write(STDERR_FILENO, msg.data(), msg.size());
    _exit(1);
}

} // namespace

std::vector<std::string> environment_strings(const std::vector<std::pair<std::string, std::string>>& env)
{
    std::vector<std::string> out;
    out.reserve(env.size());
    for (const auto& [k, v] : env)
        out.push_back(k + "=" + v);
    return out;
}

result<spawned_session> spawn_session(const session_spawn& req, std::string& error)
{
    const user_account& user = *req.user;
    pipe_fds in, out, err;
    if (req.pty == nullptr && (!in.open() || !out.open() || !err.open())) {
        error = std::string("pipe: ") + std::strerror(errno);
        in.close_all();
        out.close_all();
        err.close_all();
        return errc::io_error;
    }
    // Everything the child needs is prepared before fork: after it, only
    // async-signal-safe calls (and exec) are made.
    const std::string shell = user.shell.empty() ? "/bin/sh" : user.shell;
    const std::string base = shell.substr(shell.rfind('/') + 1);
    const bool login = req.command.empty();
    const std::string argv0 = login ? "-" + base : base;
    std::vector<const char*> argv{argv0.c_str()};
    if (!login) {
        argv.push_back("-c");
        argv.push_back(req.command.c_str());
    }
    argv.push_back(nullptr);
    const auto env_strings = environment_strings(req.environment);
    std::vector<char*> envp;
    for (const auto& e : env_strings)
        envp.push_back(const_cast<char*>(e.c_str()));
    envp.push_back(nullptr);
    const std::string user_rc = user.home + "/.ssh/rc";
    // X11 forwarding's cookie: what the rc file reads, or xauth's commands.
    const session_x11_auth& x = req.x11;
    const bool do_xauth = !x.protocol.empty();
    const std::string rc_input = do_xauth ? x.protocol + " " + x.cookie + "\n" : std::string();
    const std::string xauth_input = do_xauth ? "remove " + x.auth_display + "\nadd " + x.auth_display + " " +
                                                   x.protocol + " " + x.cookie + "\n"
                                             : std::string();
    const char* xauth_argv[] = {x.xauth.c_str(), "-q", "-", nullptr};
    const std::string hushlogin = user.home + "/.hushlogin";

    pid_t pid = fork();
    if (pid < 0) {
        error = std::string("fork: ") + std::strerror(errno);
        in.close_all();
        out.close_all();
        err.close_all();
        return errc::io_error;
    }
    if (pid == 0) {
        reset_signals();
        if (setsid() < 0)
            child_fail("setsid");
        if (req.pty != nullptr) {
            const int slave = req.pty->slave();
            if (ioctl(slave, TIOCSCTTY, 0) < 0)
                child_fail("TIOCSCTTY");
            if (dup2(slave, 0) < 0 || dup2(slave, 1) < 0 || dup2(slave, 2) < 0)
                child_fail("dup2");
        } else {
            if (dup2(in.r, 0) < 0 || dup2(out.w, 1) < 0 || dup2(err.w, 2) < 0)
                child_fail("dup2");
        }
        close_other_fds();
        if (chdir(user.home.c_str()) != 0) {
            if (!req.in_chroot) {
                std::string msg = "Could not chdir to home directory " + user.home + ": " + std::strerror(errno) + "\n";
                (void)!::write(STDERR_FILENO, msg.data(), msg.size());
            }
            if (chdir("/") != 0)
                _exit(1);
        }
        if (login && (req.print_motd || !req.login_message.empty()) && !file_exists(hushlogin)) {
            (void)!::write(STDOUT_FILENO, req.login_message.data(), req.login_message.size());
            if (req.print_motd)
                print_motd();
        }
        if (req.run_user_rc && file_exists(user_rc))
            run_rc(user_rc, envp.data(), rc_input);
        else if (!req.system_rc.empty() && file_exists(req.system_rc))
            run_rc(req.system_rc, envp.data(), rc_input);
        else if (do_xauth && !x.xauth.empty())
            run_with_input(x.xauth.c_str(), xauth_argv, envp.data(), xauth_input);
        if (req.run_in_process) {
            environ = envp.data();
            _exit(req.run_in_process());
        }
        execve(shell.c_str(), const_cast<char* const*>(argv.data()), envp.data());
        child_fail(shell);
    }

    spawned_session s;
    s.pid = pid;
    if (req.pty != nullptr) {
        req.pty->close_slave();
        s.in = req.pty->release_master();
        s.out = ::fcntl(s.in, F_DUPFD_CLOEXEC, 3);
        s.err = -1;
    } else {
        ::close(in.r);
        ::close(out.w);
        ::close(err.w);
        s.in = in.w;
        s.out = out.r;
        s.err = err.r;
    }
    return s;
}

} // namespace longhaul
