#include "ssh/sftp_client/ssh_process.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>

namespace longhaul::sftp {

namespace {

// 1 MiB pipes: at 1 Gbit/s a 64 KiB pipe drains in half a millisecond, and
// the ssh process and we would take turns instead of overlapping.
void widen_pipe(int fd)
{
#ifdef F_SETPIPE_SZ
    (void)::fcntl(fd, F_SETPIPE_SZ, 1 << 20);
#endif
}

// fork and exec `argv` with `in` as its stdin and `out` as its stdout
// (dup2 clears their close-on-exec flags); -1 with `error` set on failure.
pid_t fork_exec(const std::vector<std::string>& args, int in, int out, bool ignore_sigint, std::string& error)
{
    std::vector<char*> argv;
    for (const auto& a : args)
        argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    const pid_t p = ::fork();
    if (p == -1) {
        error = std::string("fork: ") + std::strerror(errno);
        return -1;
    }
    if (p == 0) {
        // The child: default signal dispositions (we ignore SIGPIPE; ssh
        // must not inherit that).
        ::dup2(in, 0);
        ::dup2(out, 1);
        ::signal(SIGPIPE, SIG_DFL);
        ::signal(SIGINT, ignore_sigint ? SIG_IGN : SIG_DFL);
        ::execvp(argv[0], argv.data());
        const std::string m = std::string("exec: ") + argv[0] + ": " + std::strerror(errno) + "\n";
        (void)!::write(2, m.data(), m.size());
        ::_exit(1);
    }
    return p;
}

} // namespace

std::string sibling_program(const char* argv0, const char* name)
{
    char buf[PATH_MAX];
    const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
    std::string self = n > 0 ? std::string(buf, std::size_t(n)) : std::string(argv0 ? argv0 : "");
    const auto slash = self.rfind('/');
    if (slash != std::string::npos) {
        std::string candidate = self.substr(0, slash + 1) + name;
        if (::access(candidate.c_str(), X_OK) == 0)
            return candidate;
    }
    return name;
}

std::vector<std::string> transfer_base_args()
{
    return {"-x", "-oPermitLocalCommand=no", "-oClearAllForwardings=yes", "-oRemoteCommand=none",
            "-oRequestTTY=no", "-oControlMaster=no", "-oForwardAgent=no"};
}

std::vector<std::string> ssh_command_line(const ssh_invocation& inv, const std::string& host,
                                          const std::string& user, int port, bool subsystem,
                                          const std::string& command)
{
    std::vector<std::string> a{inv.program};
    for (auto& s : transfer_base_args())
        a.push_back(s);
    for (auto& s : inv.args)
        a.push_back(s);
    if (port != -1) {
        a.push_back("-p");
        a.push_back(std::to_string(port));
    }
    if (!user.empty()) {
        a.push_back("-l");
        a.push_back(user);
    }
    if (subsystem)
        a.push_back("-s");
    a.push_back("--");
    a.push_back(host);
    a.push_back(command);
    return a;
}

child_process::child_process(child_process&& o) noexcept
    : pid_(std::exchange(o.pid_, -1)), to_(std::exchange(o.to_, -1)), from_(std::exchange(o.from_, -1))
{
}

child_process& child_process::operator=(child_process&& o) noexcept
{
    if (this != &o) {
        close_pipes();
        if (pid_ > 0)
            wait();
        pid_ = std::exchange(o.pid_, -1);
        to_ = std::exchange(o.to_, -1);
        from_ = std::exchange(o.from_, -1);
    }
    return *this;
}

child_process::~child_process()
{
    close_pipes();
    if (pid_ > 0)
        wait();
}

std::optional<child_process> child_process::spawn(const std::vector<std::string>& argv, std::string& error,
                                                  bool ignore_sigint)
{
    int in_pipe[2], out_pipe[2];
    if (::pipe2(in_pipe, O_CLOEXEC) == -1) {
        error = std::string("pipe: ") + std::strerror(errno);
        return std::nullopt;
    }
    if (::pipe2(out_pipe, O_CLOEXEC) == -1) {
        error = std::string("pipe: ") + std::strerror(errno);
        ::close(in_pipe[0]);
        ::close(in_pipe[1]);
        return std::nullopt;
    }
    widen_pipe(in_pipe[1]);
    widen_pipe(out_pipe[0]);
    const pid_t pid = fork_exec(argv, in_pipe[0], out_pipe[1], ignore_sigint, error);
    ::close(in_pipe[0]);
    ::close(out_pipe[1]);
    if (pid == -1) {
        ::close(in_pipe[1]);
        ::close(out_pipe[0]);
        return std::nullopt;
    }
    std::optional<child_process> c(std::in_place);
    c->pid_ = pid;
    c->to_ = in_pipe[1];
    c->from_ = out_pipe[0];
    return c;
}

std::optional<child_process> child_process::spawn_joined(const std::vector<std::string>& argv, int in, int out,
                                                         std::string& error)
{
    const pid_t pid = fork_exec(argv, in, out, false, error);
    if (pid == -1)
        return std::nullopt;
    std::optional<child_process> c(std::in_place);
    c->pid_ = pid;
    return c;
}

std::optional<child_process> child_process::spawn_shell(const std::string& command, std::string& error)
{
    return spawn({"/bin/sh", "-c", command}, error);
}

void child_process::close_pipes() noexcept
{
    if (to_ >= 0)
        ::close(to_);
    if (from_ >= 0 && from_ != to_)
        ::close(from_);
    to_ = from_ = -1;
}

void child_process::close_to_child() noexcept
{
    if (to_ < 0 || to_ == from_)
        return;
    ::close(to_);
    to_ = -1;
}

int child_process::wait() noexcept
{
    if (pid_ <= 0)
        return -1;
    int st = 0;
    pid_t r;
    do {
        r = ::waitpid(pid_, &st, 0);
    } while (r == -1 && errno == EINTR);
    pid_ = -1;
    if (r == -1)
        return -1;
    if (WIFEXITED(st))
        return WEXITSTATUS(st);
    if (WIFSIGNALED(st))
        return 128 + WTERMSIG(st);
    return -1;
}

void child_process::terminate() noexcept
{
    if (pid_ > 0)
        ::kill(pid_, SIGTERM);
    close_pipes();
    wait();
}

} // namespace longhaul::sftp
