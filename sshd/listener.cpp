#include "sshd/listener.hpp"


#include <arpa/inet.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace longhaul {

std::string address_string(const sockaddr_storage& sa)
{
    char host[NI_MAXHOST] = "unknown";
    getnameinfo(reinterpret_cast<const sockaddr*>(&sa), sizeof sa, host, sizeof host, nullptr, 0, NI_NUMERICHOST);
    std::string h = host;
    // IPv4-mapped IPv6 peers are reported as plain IPv4, as OpenSSH does.
    if (h.starts_with("::ffff:") && h.find('.') != std::string::npos)
        h = h.substr(7);
    return h;
}

int address_port(const sockaddr_storage& sa)
{
    if (sa.ss_family == AF_INET)
        return ntohs(reinterpret_cast<const sockaddr_in&>(sa).sin_port);
    if (sa.ss_family == AF_INET6)
        return ntohs(reinterpret_cast<const sockaddr_in6&>(sa).sin6_port);
    return 0;
}

int open_listen_socket(const std::string& host, int port, int family, std::string& error)
{
    addrinfo hints{};
    hints.ai_family = family;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    addrinfo* res = nullptr;
    const std::string service = std::to_string(port);
    int rc = getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &res);
    if (rc != 0) {
        error = "bad addr or host: " + host + " (" + gai_strerror(rc) + ")";
        return -1;
    }
    int fd = -1;
    for (addrinfo* ai = res; ai != nullptr && fd < 0; ai = ai->ai_next) {
        fd = ::socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
        if (fd < 0)
            continue;
        int one = 1;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        if (ai->ai_family == AF_INET6)
            setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
        if (::bind(fd, ai->ai_addr, ai->ai_addrlen) != 0 || ::listen(fd, 128) != 0) {
            error = "Bind to port " + service + " on " + (host.empty() ? "0.0.0.0" : host) +
                    " failed: " + std::strerror(errno) + ".";
            ::close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

listener::listener(std::vector<int> listen_fds, max_startups ms, source_limit per_source, penalty_table penalties,
                   log_fn log)
    : listen_fds_(std::move(listen_fds)), max_startups_(ms), per_source_(std::move(per_source)),
      penalties_(std::move(penalties)), log_(std::move(log)), rng_(std::random_device{}())
{
}

namespace {

// Monotonic seconds, as OpenSSH's monotime_double().
double monotonic_now()
{
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace

penalty_kind penalty_for(char outcome, int status) noexcept
{
    // A connection process killed by a signal that means a bug (OpenSSH's
    // signal_is_crash); SIGTERM or SIGKILL from an administrator is not one.
    if (WIFSIGNALED(status)) {
        switch (WTERMSIG(status)) {
        case SIGSEGV:
        case SIGBUS:
        case SIGILL:
        case SIGABRT:
        case SIGFPE:
        case SIGSYS: return penalty_kind::crash;
        default: break;
        }
    } else if (!WIFEXITED(status)) {
        return penalty_kind::crash;
    }
    switch (outcome) {
    case connection_outcome::no_auth: return penalty_kind::noauth;
    case connection_outcome::auth_failed: return penalty_kind::authfail;
    case connection_outcome::invalid_user: return penalty_kind::invaliduser;
    case connection_outcome::grace: return penalty_kind::grace_exceeded;
    case connection_outcome::crash: return penalty_kind::crash;
    default: break;
    }
    if (WIFSIGNALED(status))
        return penalty_kind::none;
    // No word from the child: a clean exit is no penalty, any other
    // status counts as a connection that did not authenticate (OpenSSH's
    // default case).
    return WEXITSTATUS(status) == 0 ? penalty_kind::none : penalty_kind::noauth;
}

bool listener::should_drop(const max_startups& ms, int startups, std::mt19937& rng)
{
    if (startups >= ms.full)
        return true;
    if (startups < ms.start)
        return false;
    // Random early drop: rate% at `start`, rising linearly to 100% at `full`.
    const double p = ms.rate + (100.0 - ms.rate) * (startups - ms.start) / std::max(1, ms.full - ms.start);
    return std::uniform_real_distribution<double>(0, 100)(rng) < p;
}

// OpenSSH's drop_connection(): the same line for MaxStartups and
// PerSourceMaxStartups, and a best-effort note to the client.
void listener::drop(const accepted_connection& c)
{
    log_("drop connection #" + std::to_string(startups_) + " from [" + address_string(c.peer) +
         "]:" + std::to_string(address_port(c.peer)) + " on [" + address_string(c.local) + "]:" +
         std::to_string(address_port(c.local)) + " past MaxStartups");
    static constexpr char note[] = "Exceeded MaxStartups\r\n";
    (void)!::write(c.fd, note, sizeof note - 1);
    ::close(c.fd);
}

// OpenSSH 9.8+'s drop_connection() for a penalised source: logged at INFO
// with the penalty's reason, and its note to the client.
void listener::drop_penalised(const accepted_connection& c, const std::string& reason)
{
    log_("drop connection #" + std::to_string(startups_) + " from [" + address_string(c.peer) +
         "]:" + std::to_string(address_port(c.peer)) + " on [" + address_string(c.local) + "]:" +
         std::to_string(address_port(c.local)) + " " + reason);
    static constexpr char note[] = "Not allowed at this time\r\n";
    (void)!::write(c.fd, note, sizeof note - 1);
    ::close(c.fd);
}

void listener::accept_one(int listen_fd, const serve_fn& serve)
{
    accepted_connection c;
    socklen_t len = sizeof c.peer;
    c.fd = ::accept4(listen_fd, reinterpret_cast<sockaddr*>(&c.peer), &len, SOCK_CLOEXEC);
    if (c.fd < 0)
        return;
    len = sizeof c.local;
    getsockname(c.fd, reinterpret_cast<sockaddr*>(&c.local), &len);
    // Penalties first, as OpenSSH checks them before MaxStartups: a
    // penalised source is refused before any child exists.
    if (auto why = penalties_.refusal(c.peer, monotonic_now())) {
        drop_penalised(c, *why);
        return;
    }
    if (should_drop(max_startups_, startups_, rng_)) {
        drop(c);
        return;
    }
    const std::string block = per_source_.block_of(c.peer);
    if (!per_source_.admit(block)) {
        drop(c);
        return;
    }
    int startup[2];
    if (pipe2(startup, O_CLOEXEC) != 0) {
        per_source_.release(block);
        ::close(c.fd);
        return;
    }
    pid_t pid = fork();
    if (pid < 0) {
        log_(std::string("fork: ") + std::strerror(errno));
        per_source_.release(block);
        ::close(c.fd);
        ::close(startup[0]);
        ::close(startup[1]);
        return;
    }
    if (pid == 0) {
        for (int fd : listen_fds_)
            ::close(fd);
        for (auto& [p, ch] : children_)
            ::close(ch.startup_fd);
        ::close(startup[0]);
        if (signal_fd_ >= 0)
            ::close(signal_fd_);
        sigset_t none;
        sigemptyset(&none);
        sigprocmask(SIG_SETMASK, &none, nullptr);
        c.startup_fd = startup[1];
        _exit(serve(c));
    }
    ::close(startup[1]);
    ::close(c.fd);
    // Never block the listener on a child's pipe (one a grandchild kept
    // open would otherwise hang the drain at reap time).
    ::fcntl(startup[0], F_SETFL, O_NONBLOCK);
    child ch;
    ch.startup_fd = startup[0];
    ch.block = block;
    ch.peer = c.peer;
    children_[pid] = ch;
    ++startups_;
}

void listener::end_startup(child& ch)
{
    ::close(ch.startup_fd);
    ch.startup_fd = -1;
    per_source_.release(ch.block);
    --startups_;
}

void listener::startup_readable(pid_t pid)
{
    auto it = children_.find(pid);
    if (it == children_.end() || it->second.startup_fd < 0)
        return;
    for (;;) {
        char b = 0;
        ssize_t n = ::read(it->second.startup_fd, &b, 1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && errno == EAGAIN)
            return;
        if (n == 1 && b != 'a') {
            // 'f' (too many authentication failures) or how the child
            // ended: the end follows.
            if (b != 'f')
                it->second.outcome = b;
            continue;
        }
        if (n == 1)
            it->second.authenticated = true;
        // Authenticated, or the child ended: either way no longer a startup.
        end_startup(it->second);
        return;
    }
}

void listener::reap()
{
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        auto it = children_.find(pid);
        if (it == children_.end())
            continue;
        if (it->second.startup_fd >= 0) {
            // Drain the last bytes the child may have written before dying.
            startup_readable(pid);
            if (it->second.startup_fd >= 0)
                end_startup(it->second);
        }
        // Only connections that never authenticated are penalised (OpenSSH
        // penalises its "early" children alone).
        if (!it->second.authenticated)
            penalties_.penalise(it->second.peer, penalty_for(it->second.outcome, status), monotonic_now());
        children_.erase(it);
    }
}

int listener::run(const serve_fn& serve)
{
    sigset_t mask;
    sigemptyset(&mask);
    for (int sig : {SIGCHLD, SIGHUP, SIGTERM, SIGINT, SIGQUIT})
        sigaddset(&mask, sig);
    sigprocmask(SIG_BLOCK, &mask, nullptr);
    int sfd = signalfd(-1, &mask, SFD_CLOEXEC);
    if (sfd < 0)
        return 2;
    signal_fd_ = sfd;
    for (;;) {
        std::vector<pollfd> fds;
        fds.push_back({sfd, POLLIN, 0});
        for (int fd : listen_fds_)
            fds.push_back({fd, POLLIN, 0});
        std::vector<pid_t> owners;
        for (auto& [pid, ch] : children_) {
            if (ch.startup_fd >= 0) {
                fds.push_back({ch.startup_fd, POLLIN, 0});
                owners.push_back(pid);
            }
        }
        if (::poll(fds.data(), fds.size(), -1) < 0) {
            if (errno == EINTR)
                continue;
            return 2;
        }
        if (fds[0].revents & POLLIN) {
            signalfd_siginfo si{};
            while (::read(sfd, &si, sizeof si) == sizeof si) {
                if (si.ssi_signo == SIGCHLD) {
                    reap();
                } else if (si.ssi_signo == SIGHUP) {
                    ::close(sfd);
                    return 1;
                } else {
                    log_("Received signal " + std::to_string(si.ssi_signo) + "; terminating.");
                    ::close(sfd);
                    return 0;
                }
                break;
            }
        }
        for (std::size_t i = 0; i < listen_fds_.size(); ++i)
            if (fds[1 + i].revents & POLLIN)
                accept_one(listen_fds_[i], serve);
        for (std::size_t i = 0; i < owners.size(); ++i)
            if (fds[1 + listen_fds_.size() + i].revents & (POLLIN | POLLHUP))
                startup_readable(owners[i]);
    }
}

} // namespace longhaul
