#include "ssh/prompt/user_notifier.hpp"

#include "common/log.hpp"
#include "ssh/prompt/prompt.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace longhaul {

namespace {

// Where OpenSSH on Debian looks for an askpass program when SSH_ASKPASS is
// unset (set but empty: none, unlike askpass_program()).
constexpr const char* default_askpass = "/usr/bin/ssh-askpass";

void write_notice(const std::string& text)
{
    const std::string line = "\r" + text + "\r\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
}

} // namespace

user_notifier::user_notifier(bool force_askpass, const std::string& message, logger& log)
{
    std::fflush(nullptr);
    if (!force_askpass && isatty(STDERR_FILENO)) {
        write_notice(message);
        on_stderr_ = true;
        return;
    }
    const char* askpass = std::getenv("SSH_ASKPASS");
    if (askpass == nullptr)
        askpass = default_askpass;
    if (*askpass == '\0') {
        log.debug3("notify_start: cannot notify: no askpass");
        return;
    }
    const char* require = std::getenv("SSH_ASKPASS_REQUIRE");
    if (std::getenv("DISPLAY") == nullptr && (require == nullptr || std::strcmp(require, "force") != 0)) {
        log.debug3("notify_start: cannot notify: no display");
        return;
    }
    // Ended with SIGTERM, possibly before it has exec'd (spawn_askpass
    // keeps the caller's handlers out of the child meanwhile).
    const int pid = spawn_askpass(askpass, message, "none", -1);
    if (pid < 0) {
        log.error(std::string("notify_start: fork: ") + std::strerror(errno));
        return;
    }
    pid_ = pid;
}

void user_notifier::complete(const char* conclusion)
{
    if (done_)
        return;
    done_ = true;
    if (on_stderr_ && conclusion != nullptr)
        write_notice(conclusion);
    if (pid_ > 0) {
        ::kill(pid_, SIGTERM);
        while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
        }
        pid_ = -1;
    }
}

} // namespace longhaul
