// ssh-agent: holds private keys for ssh, ssh-add and the like (OpenSSH
// 9.2's command line and behaviour). The command line is in
// agent_options, the protocol in agent_core, the sockets in agent_server;
// this file creates the socket, forks and handles signals.
#include "common/random.hpp"
#include "common/temp_name.hpp"
#include "ssh/agent/agent_options.hpp"
#include "ssh/agent/agent_pkcs11.hpp"
#include "ssh/agent/agent_security_keys.hpp"
#include "ssh/agent/agent_server.hpp"
#include "ssh/prompt/prompt.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <string>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <syslog.h>
#include <unistd.h>
#include <vector>

namespace {

using namespace longhaul;
using namespace longhaul::agent;

// What cleanup removes: the socket, and the private directory made for it.
struct socket_paths {
    std::string socket;
    std::string dir;

    void remove() const
    {
        if (!socket.empty())
            ::unlink(socket.c_str());
        if (!dir.empty())
            ::rmdir(dir.c_str());
    }
};

// Set by the signal handlers; the server loop polls it (signals are only
// delivered inside its ppoll, so nothing else runs concurrently).
volatile std::sig_atomic_t stop_requested = 0;

extern "C" void on_stop_signal(int)
{
    stop_requested = 1;
}

// OpenSSH's unix_listener(): no unlink of an existing path.
int unix_listener(const std::string& path)
{
    sockaddr_un sun{};
    sun.sun_family = AF_UNIX;
    if (path.size() >= sizeof sun.sun_path) {
        std::fprintf(stderr, "unix_listener: path \"%s\" too long for Unix domain socket\r\n", path.c_str());
        return -1;
    }
    std::memcpy(sun.sun_path, path.c_str(), path.size() + 1);
    const int fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        std::fprintf(stderr, "unix_listener: socket: %s\r\n", std::strerror(errno));
        return -1;
    }
    if (::bind(fd, reinterpret_cast<sockaddr*>(&sun), sizeof sun) != 0) {
        std::fprintf(stderr, "unix_listener: cannot bind to path %s: %s\r\n", path.c_str(), std::strerror(errno));
        ::close(fd);
        return -1;
    }
    if (::listen(fd, 128) != 0) {
        std::fprintf(stderr, "unix_listener: cannot listen on path %s: %s\r\n", path.c_str(), std::strerror(errno));
        ::close(fd);
        ::unlink(path.c_str());
        return -1;
    }
    return fd;
}

int kill_agent(const agent_options& o)
{
    auto pid = parse_agent_pid(std::getenv("SSH_AGENT_PID"));
    if (!pid.error.empty()) {
        std::fputs(pid.error.c_str(), stderr);
        return 1;
    }
    if (::kill(static_cast<pid_t>(pid.pid), SIGTERM) == -1) {
        std::perror("kill");
        return 1;
    }
    std::fputs(kill_lines(o.csh, pid.pid).c_str(), stdout);
    return 0;
}

void stdio_to_devnull()
{
    const int fd = ::open("/dev/null", O_RDWR);
    if (fd < 0)
        return;
    for (int i = 0; i < 3; ++i)
        ::dup2(fd, i);
    if (fd > 2)
        ::close(fd);
}

// The agent proper, in the child (or in the foreground with -d/-D).
int serve(const agent_options& o, const socket_paths& paths, int sock, pid_t watch_parent, logger& log)
{
    std::signal(SIGPIPE, SIG_IGN);
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    ::sigemptyset(&sa.sa_mask);
    ::sigaction(SIGHUP, &sa, nullptr);
    ::sigaction(SIGTERM, &sa, nullptr);
    if (o.debug || o.foreground)
        ::sigaction(SIGINT, &sa, nullptr);
    else
        std::signal(SIGINT, SIG_IGN);
    sigset_t stop_signals;
    ::sigemptyset(&stop_signals);
    ::sigaddset(&stop_signals, SIGHUP);
    ::sigaddset(&stop_signals, SIGTERM);
    ::sigaddset(&stop_signals, SIGINT);

    system_random random;
    agent_settings settings;
    settings.default_lifetime = std::chrono::seconds(o.lifetime);
    settings.hash = o.hash;
    if (o.allowed_providers)
        settings.allowed_providers = *o.allowed_providers;
    settings.restrict_websafe = !o.no_restrict_websafe;
    settings.allow_remote_providers = o.allow_remote_pkcs11;
    agent_core core(settings, random, [](const std::string& prompt) { return ask_permission(prompt); }, log);
    agent_security_keys security_keys(log);
    core.set_security_key_hooks(security_keys.hooks());
    agent_pkcs11 modules(log);
    core.set_pkcs11_hooks(modules.hooks());
    agent_server server(core, log, sock, watch_parent);
    server.run(stop_requested, stop_signals);
    paths.remove();
    // OpenSSH's cleanup_handler and check_parent_exists both _exit(2).
    return 2;
}

} // namespace

int main(int argc, char** argv)
{
    // Memory holds private keys: no core dumps, no ptrace by other
    // processes of the user (OpenSSH's platform_disable_tracing).
    ::prctl(PR_SET_DUMPABLE, 0);
    std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
    auto parsed = parse_agent_args(args, std::getenv("SHELL"));
    if (!parsed.options) {
        std::fputs(parsed.error.message.c_str(), stderr);
        return parsed.error.status;
    }
    const agent_options& o = *parsed.options;
    if (o.kill)
        return kill_agent(o);

    const pid_t parent_pid = ::getpid();
    socket_paths paths;
    if (o.bind_address.empty()) {
        std::string dir = fill_temp_template(socket_dir_template(std::getenv("TMPDIR")));
        if (::mkdtemp(dir.data()) == nullptr) {
            std::perror("mkdtemp: private socket dir");
            return 1;
        }
        paths.dir = dir;
        paths.socket = dir + "/agent." + std::to_string(parent_pid);
    } else {
        paths.socket = o.bind_address;
    }
    // Create the socket before the command runs, readable by the owner only.
    const mode_t prev_mask = ::umask(0177);
    const int sock = unix_listener(paths.socket);
    ::umask(prev_mask);
    if (sock < 0) {
        if (!paths.dir.empty())
            ::rmdir(paths.dir.c_str());
        return 1;
    }

    logger log("ssh-agent", o.debug ? log_level::debug3 : log_level::info);
    if (o.debug || o.foreground) {
        std::fputs(environment_lines(o.csh, paths.socket, nullptr, parent_pid).c_str(), stdout);
        std::fflush(stdout);
        return serve(o, paths, sock, -1, log);
    }

    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid == -1) {
        std::perror("fork");
        paths.remove();
        return 1;
    }
    if (pid != 0) {
        // The parent prints the variables, or runs the command with them.
        ::close(sock);
        const std::string pid_text = std::to_string(pid);
        if (o.command.empty()) {
            std::fputs(environment_lines(o.csh, paths.socket, &pid_text, pid).c_str(), stdout);
            return 0;
        }
        if (::setenv("SSH_AUTH_SOCK", paths.socket.c_str(), 1) == -1 ||
            ::setenv("SSH_AGENT_PID", pid_text.c_str(), 1) == -1) {
            std::perror("setenv");
            return 1;
        }
        std::vector<char*> av;
        for (const auto& a : o.command)
            av.push_back(const_cast<char*>(a.c_str()));
        av.push_back(nullptr);
        ::execvp(av[0], av.data());
        std::perror(av[0]);
        return 1;
    }
    // The child is the agent.
    log.to_syslog(LOG_AUTH);
    if (::setsid() == -1) {
        log.error(std::string("setsid: ") + std::strerror(errno));
        paths.remove();
        return 1;
    }
    if (::chdir("/") != 0)
        log.error(std::string("chdir: ") + std::strerror(errno));
    stdio_to_devnull();
    rlimit no_core{0, 0};
    if (::setrlimit(RLIMIT_CORE, &no_core) == -1) {
        log.error(std::string("setrlimit RLIMIT_CORE: ") + std::strerror(errno));
        paths.remove();
        return 1;
    }
    return serve(o, paths, sock, o.command.empty() ? -1 : parent_pid, log);
}
