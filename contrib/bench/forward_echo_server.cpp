// forward_echo_server: the echo server of `forward_load serve`: one epoll
// loop that writes back every byte read and passes the peer's EOF on once
// everything before it has been echoed (forward_echo_server.hpp).
#include "forward_echo_server.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "forward_load_util.hpp"

namespace forward_load {
namespace {

class echo_server {
public:
    explicit echo_server(int listen_fd) : listen_fd_(listen_fd)
    {
        epoll_ = epoll_create1(EPOLL_CLOEXEC);
        if (epoll_ < 0)
            die("epoll_create1");
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.ptr = nullptr;  // the listener
        epoll_ctl(epoll_, EPOLL_CTL_ADD, listen_fd_, &ev);
    }

    void run(const std::atomic<bool>& stop)
    {
        std::vector<epoll_event> events(256);
        std::vector<connection*> turn;
        while (!stop.load(std::memory_order_relaxed)) {
            // Connections that used up their turn go again right after the
            // events; epoll must not sleep while any is waiting.
            const int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), again_.empty() ? 200 : 0);
            if (n < 0 && errno != EINTR)
                die("epoll_wait");
            for (int i = 0; i < n; ++i) {
                if (events[i].data.ptr == nullptr) {
                    accept_all();
                    continue;
                }
                serve(static_cast<connection*>(events[i].data.ptr));
            }
            turn.swap(again_);
            for (auto* c : turn) {
                c->queued_ = false;
                serve(c);
            }
            turn.clear();
        }
    }

private:
    struct connection {
        int fd_ = -1;
        std::unique_ptr<unsigned char[]> buf_{new unsigned char[max_io]};
        std::size_t head_ = 0;  // first byte not yet echoed
        std::size_t tail_ = 0;  // end of what was read
        bool eof_ = false;
        bool queued_ = false;  // in again_
    };

    enum class pumped { waiting, finished, again };

    void serve(connection* c)
    {
        if (c->queued_)
            return;  // its turn comes with the others
        switch (pump(*c)) {
        case pumped::waiting:
            break;
        case pumped::again:
            c->queued_ = true;
            again_.push_back(c);
            break;
        case pumped::finished:
            close(c->fd_);
            connections_.erase(c);
            delete c;
            break;
        }
    }

    void accept_all()
    {
        for (;;) {
            const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
            if (fd < 0)
                return;
            set_nodelay(fd);
            auto* c = new connection;
            c->fd_ = fd;
            connections_.insert(c);
            epoll_event ev{};
            // Edge-triggered: pump() runs each side until it would block, so
            // no readiness is lost and no interest has to be toggled.
            ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
            ev.data.ptr = c;
            epoll_ctl(epoll_, EPOLL_CTL_ADD, fd, &ev);
            serve(c);
        }
    }

    // Echoes until neither side can make progress (waiting), the connection
    // is finished (EOF passed on) or broken, or it has moved its share for
    // this turn (again): a busy bulk connection must not keep the loop from
    // the others, or their first bytes wait behind it.
    static pumped pump(connection& c)
    {
        std::size_t moved = 0;
        for (;;) {
            if (moved >= turn_bytes)
                return pumped::again;
            bool progress = false;
            if (c.head_ < c.tail_) {
                const ssize_t n = send(c.fd_, c.buf_.get() + c.head_, c.tail_ - c.head_, MSG_NOSIGNAL);
                if (n > 0) {
                    c.head_ += static_cast<std::size_t>(n);
                    moved += static_cast<std::size_t>(n);
                    if (c.head_ == c.tail_)
                        c.head_ = c.tail_ = 0;
                    progress = true;
                } else if (n < 0 && !would_block(errno)) {
                    return pumped::finished;
                }
            }
            if (!c.eof_ && c.tail_ < max_io) {
                const ssize_t n = recv(c.fd_, c.buf_.get() + c.tail_, max_io - c.tail_, 0);
                if (n > 0) {
                    c.tail_ += static_cast<std::size_t>(n);
                    moved += static_cast<std::size_t>(n);
                    progress = true;
                } else if (n == 0) {
                    c.eof_ = true;
                    progress = true;
                } else if (!would_block(errno)) {
                    return pumped::finished;
                }
            }
            // Everything echoed and the peer is done sending: close, which
            // sends our FIN after the data (nothing unread is left, so no RST).
            if (c.eof_ && c.head_ == c.tail_)
                return pumped::finished;
            if (!progress)
                return pumped::waiting;
        }
    }

    int listen_fd_;
    int epoll_ = -1;
    std::set<connection*> connections_;
    std::vector<connection*> again_;
};

std::atomic<bool> serve_stop{false};

}  // namespace

int run_serve(int argc, char** argv)
{
    std::string port_file;
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--port-file" && i + 1 < argc)
            port_file = argv[++i];
        else
            die("serve: unknown argument " + a);
    }
    const int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) < 0 || listen(fd, 1024) < 0)
        die(std::string("serve: cannot listen: ") + std::strerror(errno));
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);
    const int port = ntohs(addr.sin_port);
    struct sigaction sa{};
    sa.sa_handler = [](int) { serve_stop.store(true); };
    sigaction(SIGTERM, &sa, nullptr);
    sigaction(SIGINT, &sa, nullptr);
    signal(SIGPIPE, SIG_IGN);
    if (!port_file.empty()) {
        // Written whole under a temporary name, so a reader never sees half.
        const std::string tmp = port_file + ".tmp";
        std::ofstream(tmp) << port << "\n";
        std::rename(tmp.c_str(), port_file.c_str());
    }
    std::printf("port=%d\n", port);
    std::fflush(stdout);
    echo_server server(fd);
    server.run(serve_stop);
    return 0;
}

}  // namespace forward_load
