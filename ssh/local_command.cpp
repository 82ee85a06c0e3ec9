#include "ssh/local_command.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

namespace longhaul {

int run_local_command(const std::string& command, const env_lookup& env, logger& log)
{
    if (command.empty())
        return 1;
    std::string shell = "/bin/sh";
    if (auto s = env("SHELL"); s && !s->empty())
        shell = *s;
    log.debug3("Executing " + shell + " -c \"" + command + "\"");
    // SIGCHLD back to its default while waiting: the child is reaped here.
    struct sigaction dfl {}, old {};
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(SIGCHLD, &dfl, &old);
    const pid_t pid = fork();
    if (pid == 0) {
        std::signal(SIGPIPE, SIG_DFL);
        execl(shell.c_str(), shell.c_str(), "-c", command.c_str(), static_cast<char*>(nullptr));
        const std::string msg =
            "Couldn't execute " + shell + " -c \"" + command + "\": " + std::strerror(errno) + "\n";
        (void)!::write(STDERR_FILENO, msg.data(), msg.size());
        _exit(1);
    }
    int status = 0;
    int rc = 255;
    if (pid < 0) {
        log.error(std::string("fork failed: ") + std::strerror(errno));
    } else {
        while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
        }
        rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
    }
    sigaction(SIGCHLD, &old, nullptr);
    return rc;
}

} // namespace longhaul
