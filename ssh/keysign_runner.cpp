#include "ssh/keysign_runner.hpp"

#include "common/auth/keysign_protocol.hpp"
#include "common/fd_io.hpp"
#include "common/wire.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>

#ifndef LONGHAUL_SSH_KEYSIGN
#define LONGHAUL_SSH_KEYSIGN "/usr/lib/openssh/ssh-keysign"
#endif

namespace longhaul {

std::string ssh_keysign_path()
{
    return LONGHAUL_SSH_KEYSIGN;
}

namespace {

// The descriptor ssh-keysign finds the connection on (STDERR_FILENO + 1).
constexpr int helper_connection_fd = 3;

// The helper's process: the pipes on stdin and stdout, the connection on
// descriptor 3, nothing else open. Only async-signal-safe calls here.
[[noreturn]] void exec_helper(const std::string& program, int connection_fd, int to_read, int from_write)
{
    if (::dup2(from_write, STDOUT_FILENO) < 0 || ::dup2(to_read, STDIN_FILENO) < 0)
        ::_exit(255);
    if (connection_fd == helper_connection_fd)
        (void)::fcntl(helper_connection_fd, F_SETFD, 0); // keep it open across exec
    else if (::dup2(connection_fd, helper_connection_fd) < 0)
        ::_exit(255);
    ::close_range(helper_connection_fd + 1, ~0U, 0);
    std::signal(SIGPIPE, SIG_DFL);
    ::execl(program.c_str(), program.c_str(), static_cast<char*>(nullptr));
    const char* why = std::strerror(errno);
    for (const char* part : {"ssh_keysign: exec(", program.c_str(), "): ", why, "\r\n"})
        (void)!::write(STDERR_FILENO, part, std::strlen(part));
    ::_exit(255);
}

// SIGCHLD at its default while the helper runs, so it is reaped here.
class default_sigchld {
public:
    default_sigchld()
    {
        struct sigaction dfl {};
        dfl.sa_handler = SIG_DFL;
        sigemptyset(&dfl.sa_mask);
        sigaction(SIGCHLD, &dfl, &old_);
    }
    ~default_sigchld() { sigaction(SIGCHLD, &old_, nullptr); }
    default_sigchld(const default_sigchld&) = delete;
    default_sigchld& operator=(const default_sigchld&) = delete;

private:
    struct sigaction old_ {};
};

std::optional<int> wait_for(pid_t pid)
{
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return std::nullopt;
    return status;
}

} // namespace

std::optional<bytes> run_ssh_keysign(const std::string& program, int connection_fd, byte_span data, logger& log,
                                     std::chrono::milliseconds timeout)
{
    struct stat st {};
    if (::stat(program.c_str(), &st) != 0) {
        log.error("ssh_keysign: not installed: " + std::string(std::strerror(errno)));
        return std::nullopt;
    }
    std::fflush(stdout);
    int to[2], from[2];
    if (::pipe2(to, O_CLOEXEC) != 0) {
        log.error("ssh_keysign: pipe: " + std::string(std::strerror(errno)));
        return std::nullopt;
    }
    if (::pipe2(from, O_CLOEXEC) != 0) {
        log.error("ssh_keysign: pipe: " + std::string(std::strerror(errno)));
        ::close(to[0]);
        ::close(to[1]);
        return std::nullopt;
    }
    default_sigchld sigchld;
    const pid_t pid = ::fork();
    if (pid == 0)
        exec_helper(program, connection_fd, to[0], from[1]);
    ::close(to[0]);
    ::close(from[1]);
    if (pid < 0) {
        log.error("ssh_keysign: fork: " + std::string(std::strerror(errno)));
        ::close(to[1]);
        ::close(from[0]);
        return std::nullopt;
    }
    log.debug3("ssh_keysign: [parent] pid=" + std::to_string(pid) + ", exec " + program);

    // A helper that died early closes its stdin: EPIPE, not SIGPIPE (ssh
    // ignores SIGPIPE).
    const bool sent = write_all(to[1], encode_keysign_request(helper_connection_fd, data));
    ::close(to[1]);
    std::uint8_t header[4];
    bytes body;
    bool replied = false;
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    // The reply: uint32 length (bounded), then the body, before the deadline.
    bool read_failed = sent;
    if (sent && read_exactly(from[0], header, sizeof header, deadline)) {
        read_failed = false;
        if (auto n = keysign_frame_length(header)) {
            body.resize(*n);
            replied = read_exactly(from[0], body.data(), body.size(), deadline);
            read_failed = !replied;
        } else {
            log.error("ssh_msg_recv: read: bad msg_len " + std::to_string(wire_reader(byte_span(header, 4)).u32()));
        }
    }
    const bool timed_out = read_failed && errno == ETIMEDOUT;
    ::close(from[0]);
    if (timed_out) {
        log.error("ssh_keysign: no reply after " + std::to_string(timeout.count() / 1000) + " s; stopped");
        ::kill(pid, SIGKILL);
    }
    const auto status = wait_for(pid);
    if (!sent) {
        log.error("ssh_keysign: couldn't send request");
        return std::nullopt;
    }
    if (!replied) {
        log.error("ssh_keysign: no reply");
        return std::nullopt;
    }
    if (!status) {
        log.error("ssh_keysign: waitpid " + std::to_string(pid) + ": " + std::strerror(errno));
        return std::nullopt;
    }
    if (!WIFEXITED(*status)) {
        log.error("ssh_keysign: exited abnormally");
        return std::nullopt;
    }
    if (WEXITSTATUS(*status) != 0) {
        log.error("ssh_keysign: exited with status " + std::to_string(WEXITSTATUS(*status)));
        return std::nullopt;
    }
    wire_reader r(body);
    const std::uint8_t version = r.u8();
    if (!r.ok()) {
        log.error("ssh_keysign: buffer error: incomplete message");
        return std::nullopt;
    }
    if (version != keysign_version) {
        log.error("ssh_keysign: bad version");
        return std::nullopt;
    }
    const byte_span sig = r.string();
    if (!r.ok()) {
        log.error("ssh_keysign: buffer error: incomplete message");
        return std::nullopt;
    }
    return to_bytes(sig);
}

} // namespace longhaul
