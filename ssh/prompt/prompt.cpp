#include "ssh/prompt/prompt.hpp"

#include <fcntl.h>
#include <pthread.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <strings.h>

namespace longhaul {

namespace {

// Reads one line from `fd` a byte at a time (the tty is shared; reading
// ahead would steal the user's next input).
std::optional<secret_bytes> read_line_fd(int fd)
{
    std::string line;
    for (;;) {
        char c;
        ssize_t n = ::read(fd, &c, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            if (line.empty()) {
                cleanse(line.data(), line.size());
                return std::nullopt;
            }
            break;
        }
        if (c == '\n' || c == '\r')
            break;
        line.push_back(c);
    }
    secret_bytes out(as_bytes(line));
    cleanse(line.data(), line.size());
    return out;
}

// The askpass program's answer; `hint` goes to it as SSH_ASKPASS_PROMPT
// ("confirm": a yes/no question).
std::optional<secret_bytes> askpass(const std::string& prompt, const char* program, const char* hint = nullptr)
{
    if (program == nullptr || *program == '\0')
        return std::nullopt;
    int p[2];
    // Close-on-exec: the child keeps only the write end, as its stdout.
    if (pipe2(p, O_CLOEXEC) != 0)
        return std::nullopt;
    const int pid = spawn_askpass(program, prompt, hint, p[1]);
    ::close(p[1]);
    if (pid < 0) {
        ::close(p[0]);
        return std::nullopt;
    }
    auto answer = read_line_fd(p[0]);
    ::close(p[0]);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        return std::nullopt;
    // No output from a program that succeeded is an empty answer, as
    // OpenSSH's ssh_askpass returns it: a confirm dialog answers "OK" by
    // its exit status alone.
    if (!answer)
        answer.emplace();
    return answer;
}

// Restores echo if a signal ends us at a password prompt (the user's shell
// would otherwise be left typing blind). Process-wide because a signal
// handler cannot reach an object.
struct prompt_restore {
    volatile sig_atomic_t active = 0;
    int fd = -1;
    termios saved{};
};
prompt_restore g_prompt;

void restore_and_reraise(int sig)
{
    if (g_prompt.active)
        tcsetattr(g_prompt.fd, TCSAFLUSH, &g_prompt.saved);
    std::signal(sig, SIG_DFL);
    raise(sig);
}

bool askpass_wanted(bool have_tty)
{
    const char* req = std::getenv("SSH_ASKPASS_REQUIRE");
    if (req != nullptr && std::strcmp(req, "force") == 0)
        return true;
    if (req != nullptr && std::strcmp(req, "never") == 0)
        return false;
    // As ssh: only without a terminal, and only when a display could show it.
    return !have_tty && std::getenv("SSH_ASKPASS") != nullptr &&
           (std::getenv("DISPLAY") != nullptr || std::getenv("WAYLAND_DISPLAY") != nullptr || req != nullptr);
}

} // namespace

std::optional<secret_bytes> read_passphrase(const std::string& prompt, prompt_echo echo, bool allow_askpass)
{
    int tty = ::open("/dev/tty", O_RDWR | O_CLOEXEC | O_NOCTTY);
    if (allow_askpass && askpass_wanted(tty >= 0)) {
        if (tty >= 0)
            ::close(tty);
        return askpass(prompt, std::getenv("SSH_ASKPASS"));
    }
    if (tty < 0)
        return std::nullopt;
    termios saved{};
    const bool is_term = tcgetattr(tty, &saved) == 0;
    if (is_term && echo == prompt_echo::off) {
        termios quiet = saved;
        quiet.c_lflag &= ~(ECHO | ECHONL);
        quiet.c_lflag |= ICANON;
        tcsetattr(tty, TCSAFLUSH, &quiet);
    }
    struct sigaction act {}, old_int{}, old_term{}, old_quit{}, old_hup{};
    if (is_term && echo == prompt_echo::off) {
        g_prompt.fd = tty;
        g_prompt.saved = saved;
        g_prompt.active = 1;
        act.sa_handler = restore_and_reraise;
        sigaction(SIGINT, &act, &old_int);
        sigaction(SIGTERM, &act, &old_term);
        sigaction(SIGQUIT, &act, &old_quit);
        sigaction(SIGHUP, &act, &old_hup);
    }
    (void)!::write(tty, prompt.data(), prompt.size());
    auto answer = read_line_fd(tty);
    if (is_term && echo == prompt_echo::off) {
        tcsetattr(tty, TCSAFLUSH, &saved);
        g_prompt.active = 0;
        sigaction(SIGINT, &old_int, nullptr);
        sigaction(SIGTERM, &old_term, nullptr);
        sigaction(SIGQUIT, &old_quit, nullptr);
        sigaction(SIGHUP, &old_hup, nullptr);
        (void)!::write(tty, "\n", 1);
    }
    ::close(tty);
    return answer;
}

int spawn_askpass(const char* program, const std::string& prompt, const char* hint, int stdout_fd)
{
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    const pid_t pid = fork();
    if (pid != 0) {
        const int saved = errno;
        pthread_sigmask(SIG_SETMASK, &old, nullptr);
        errno = saved;
        return pid;
    }
    for (int sig = 1; sig < NSIG; ++sig) {
        struct sigaction cur {};
        if (sigaction(sig, nullptr, &cur) == 0 && cur.sa_handler != SIG_IGN && cur.sa_handler != SIG_DFL)
            std::signal(sig, SIG_DFL);
    }
    // The program starts with nothing blocked, whatever the caller blocks
    // (ssh-agent keeps SIGTERM blocked outside its poll): the notice is
    // ended with SIGTERM, which must end it at once.
    sigset_t none;
    sigemptyset(&none);
    pthread_sigmask(SIG_SETMASK, &none, nullptr);
    if (stdout_fd >= 0) {
        dup2(stdout_fd, STDOUT_FILENO);
    } else if (const int devnull = ::open("/dev/null", O_RDWR); devnull >= 0) {
        dup2(devnull, STDIN_FILENO);
        dup2(devnull, STDOUT_FILENO);
    }
    if (hint != nullptr)
        ::setenv("SSH_ASKPASS_PROMPT", hint, 1);
    execlp(program, program, prompt.c_str(), static_cast<char*>(nullptr));
    _exit(1);
}

std::optional<secret_bytes> run_askpass(const std::string& prompt, const char* program, const char* hint)
{
    return askpass(prompt, program, hint);
}

bool askpass_displayable(bool wayland)
{
    auto set = [](const char* name) {
        const char* v = std::getenv(name);
        return v != nullptr && *v != '\0';
    };
    bool allowed = set("DISPLAY") || (wayland && set("WAYLAND_DISPLAY"));
    if (const char* req = std::getenv("SSH_ASKPASS_REQUIRE")) {
        if (strcasecmp(req, "force") == 0)
            allowed = true;
        else if (strcasecmp(req, "never") == 0)
            allowed = false;
    }
    return allowed;
}

const char* askpass_program()
{
    const char* p = std::getenv("SSH_ASKPASS");
    return p != nullptr && *p != '\0' ? p : "/usr/bin/ssh-askpass";
}

bool ask_permission(const std::string& prompt)
{
    if (!askpass_displayable(true))
        return false;
    auto answer = askpass(prompt, askpass_program(), "confirm");
    if (!answer)
        return false;
    const std::string_view a = as_string_view(answer->span());
    return a.empty() || a == "\n" || (a.size() == 3 && strncasecmp(a.data(), "yes", 3) == 0);
}

std::optional<std::string> read_line(const std::string& prompt)
{
    auto s = read_passphrase(prompt, prompt_echo::on, true);
    if (!s)
        return std::nullopt;
    return std::string(as_string_view(s->span()));
}

} // namespace longhaul
