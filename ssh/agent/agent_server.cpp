#include "ssh/agent/agent_server.hpp"

#include "common/auth/agent_protocol.hpp"
#include "common/wire.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

namespace longhaul::agent {

namespace {

// How often a command's agent checks that its parent still runs (OpenSSH's
// parent_alive_interval).
constexpr std::chrono::seconds parent_check_interval{10};

} // namespace

agent_server::agent_server(agent_core& core, logger& log, int listen_fd, pid_t watch_parent)
    : core_(core), log_(log), listen_fd_(listen_fd), watch_parent_(watch_parent)
{
}

agent_server::~agent_server()
{
    for (auto& c : clients_)
        close_client(c);
}

void agent_server::close_client(client& c)
{
    if (c.fd >= 0)
        ::close(c.fd);
    c.fd = -1;
    // Requests carry private keys and passphrases.
    cleanse(c.in);
    cleanse(c.out);
    c.in.clear();
    c.out.clear();
}

void agent_server::accept_client()
{
    const int fd = ::accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
        if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
            log_.error(std::string("accept from AUTH_SOCKET: ") + std::strerror(errno));
        return;
    }
    ucred cred{};
    socklen_t len = sizeof cred;
    if (::getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
        log_.error(std::string("getpeereid: ") + std::strerror(errno));
        ::close(fd);
        return;
    }
    if (cred.uid != 0 && cred.uid != ::getuid()) {
        log_.error("uid mismatch: peer euid " + std::to_string(cred.uid) + " != uid " + std::to_string(::getuid()));
        ::close(fd);
        return;
    }
    client c;
    c.fd = fd;
    clients_.push_back(std::move(c));
}

bool agent_server::read_client(client& c, agent_clock::time_point now)
{
    std::uint8_t buf[16384];
    const ssize_t n = ::read(c.fd, buf, sizeof buf);
    if (n == 0)
        return false;
    if (n < 0)
        return errno == EAGAIN || errno == EINTR;
    c.in.insert(c.in.end(), buf, buf + n);
    cleanse(buf, static_cast<std::size_t>(n));
    return process_pending(c, now);
}

bool agent_server::process_pending(client& c, agent_clock::time_point now)
{
    // One request at a time: the next is taken once this reply is out.
    if (!c.out.empty() || c.in.size() < 4)
        return true;
    const std::uint32_t len = load_u32(c.in.data());
    if (len > max_message) {
        log_.debug("process_message: message too long " + std::to_string(len) + " > " + std::to_string(max_message));
        return false;
    }
    if (c.in.size() < 4 + std::size_t(len))
        return true;
    agent_reply reply = core_.handle(byte_span(c.in).subspan(4, len), c.conn, now);
    cleanse(c.in.data(), 4 + std::size_t(len));
    c.in.erase(c.in.begin(), c.in.begin() + 4 + len);
    if (reply.close)
        return false;
    std::uint8_t header[4];
    store_u32(header, static_cast<std::uint32_t>(reply.body.size()));
    c.out.insert(c.out.end(), header, header + 4);
    c.out.insert(c.out.end(), reply.body.begin(), reply.body.end());
    cleanse(reply.body);
    if (reply.delay.count() > 0)
        c.hold_until = now + reply.delay;
    return true;
}

bool agent_server::write_client(client& c, agent_clock::time_point now)
{
    const ssize_t n = ::send(c.fd, c.out.data() + c.out_sent, c.out.size() - c.out_sent, MSG_NOSIGNAL);
    if (n < 0)
        return errno == EAGAIN || errno == EINTR;
    c.out_sent += static_cast<std::size_t>(n);
    if (c.out_sent == c.out.size()) {
        cleanse(c.out);
        c.out.clear();
        c.out_sent = 0;
        return process_pending(c, now);
    }
    return true;
}

bool agent_server::run(volatile std::sig_atomic_t& stop, const sigset_t& stop_signals)
{
    sigset_t during_poll;
    ::sigprocmask(SIG_BLOCK, &stop_signals, &during_poll);
    auto next_parent_check = agent_clock::now() + parent_check_interval;
    std::vector<pollfd> fds;
    while (!stop) {
        auto now = agent_clock::now();
        if (watch_parent_ > 0 && now >= next_parent_check) {
            if (::getppid() != watch_parent_)
                return false;
            next_parent_check = now + parent_check_interval;
        }
        std::optional<agent_clock::time_point> wake = core_.expire(now);
        if (watch_parent_ > 0)
            wake = wake ? std::min(*wake, next_parent_check) : next_parent_check;
        fds.clear();
        fds.push_back({listen_fd_, short(clients_.size() < max_clients ? POLLIN : 0), 0});
        for (auto& c : clients_) {
            short events = 0;
            if (c.hold_until && *c.hold_until > now)
                wake = wake ? std::min(*wake, *c.hold_until) : *c.hold_until;
            else if (!c.out.empty())
                events = POLLOUT;
            else if (c.in.size() < max_message + 4)
                events = POLLIN;
            fds.push_back({c.fd, events, 0});
        }
        timespec ts{};
        timespec* timeout = nullptr;
        if (wake) {
            auto ms = std::chrono::ceil<std::chrono::milliseconds>(*wake - now).count();
            ms = std::max<long long>(ms, 0);
            ts.tv_sec = ms / 1000;
            ts.tv_nsec = (ms % 1000) * 1000000;
            timeout = &ts;
        }
        const int r = ::ppoll(fds.data(), fds.size(), timeout, &during_poll);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            log_.error(std::string("poll: ") + std::strerror(errno));
            return true;
        }
        now = agent_clock::now();
        for (std::size_t i = 0; i < clients_.size(); ++i) {
            client& c = clients_[i];
            if (c.hold_until && *c.hold_until <= now)
                c.hold_until.reset();
            const short rev = fds[i + 1].revents;
            bool keep = true;
            if (rev & POLLOUT)
                keep = write_client(c, now);
            else if (rev & (POLLIN | POLLHUP | POLLERR))
                keep = read_client(c, now);
            if (!keep)
                close_client(c);
        }
        std::erase_if(clients_, [](const client& c) { return c.fd < 0; });
        if (fds[0].revents & POLLIN)
            accept_client();
    }
    ::sigprocmask(SIG_SETMASK, &during_poll, nullptr);
    return true;
}

} // namespace longhaul::agent
