// runstat: runs a command and prints what it cost, for the benchmarks:
//   runstat [-i input_file] -- command args...
// prints "wall_s user_s sys_s maxrss_kb exit_status" on stderr's last line
// (the command's own output passes through). With -i, the command's stdin
// is that file.
#include <fcntl.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstring>

int main(int argc, char** argv)
{
    int i = 1;
    const char* input = nullptr;
    if (i + 1 < argc && std::strcmp(argv[i], "-i") == 0) {
        input = argv[i + 1];
        i += 2;
    }
    if (i < argc && std::strcmp(argv[i], "--") == 0)
        ++i;
    if (i >= argc) {
        std::fprintf(stderr, "usage: runstat [-i input] -- command...\n");
        return 2;
    }
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = fork();
    if (pid == 0) {
        if (input != nullptr) {
            int fd = open(input, O_RDONLY);
            if (fd < 0 || dup2(fd, 0) < 0)
                _exit(127);
        }
        execvp(argv[i], argv + i);
        _exit(127);
    }
    int status = 0;
    rusage ru{};
    wait4(pid, &status, 0, &ru);
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double user = ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6;
    const double sys = ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6;
    std::fprintf(stderr, "RUNSTAT %.4f %.4f %.4f %ld %d\n", wall, user, sys, ru.ru_maxrss,
                 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
    return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
