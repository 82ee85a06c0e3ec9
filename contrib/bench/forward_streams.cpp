// forward_streams: stream_loop's connect, SOCKS5 handshake, workloads and
// byte-for-byte checks, and make_streams (forward_streams.hpp).
#include "forward_streams.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace forward_load {
namespace {

const char* phase_name(phase p)
{
    switch (p) {
    case phase::connecting: return "connecting";
    case phase::socks_greeting: return "SOCKS greeting";
    case phase::socks_reply: return "SOCKS reply";
    case phase::probing: return "probe";
    case phase::running: return "running";
    case phase::done: return "done";
    }
    return "?";
}

}  // namespace

stream_loop::stream_loop(const run_options& o, const pattern& pat, std::vector<stream> streams,
                         const std::atomic<bool>* bulk_done, int wake_fd)
    : options_(o), pattern_(pat), streams_(std::move(streams)), bulk_done_(bulk_done), wake_fd_(wake_fd),
      scratch_(new unsigned char[max_io])
{
    epoll_ = epoll_create1(EPOLL_CLOEXEC);
    if (epoll_ < 0)
        die("epoll_create1");
    if (wake_fd_ >= 0) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.u64 = UINT64_MAX;
        epoll_ctl(epoll_, EPOLL_CTL_ADD, wake_fd_, &ev);
    }
}

stream_loop::~stream_loop()
{
    for (auto& s : streams_)
        if (s.fd_ >= 0)
            close(s.fd_);
    close(epoll_);
}

loop_result stream_loop::run(steady::time_point deadline, const std::atomic<bool>& abort)
{
    for (auto& s : streams_) {
        start_connect(s);
        if (!result_.error.empty())
            return finish();
    }
    std::vector<epoll_event> events(128);
    while (!all_done()) {
        if (abort.load(std::memory_order_relaxed)) {
            fail_all("stopped: another thread's stream failed");
            break;
        }
        const auto now = steady::now();
        if (now >= deadline) {
            fail_all("timeout after " + std::to_string(options_.timeout_s) + " s: " + progress_text());
            break;
        }
        if (stop_pending_) {
            stop_pending_ = false;
            for (auto& s : streams_)
                drive(s);
            continue;
        }
        const int timeout_ms = wait_ms(now, deadline);
        const int n = epoll_wait(epoll_, events.data(), static_cast<int>(events.size()), timeout_ms);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            die("epoll_wait");
        }
        for (int i = 0; i < n; ++i) {
            if (events[i].data.u64 == UINT64_MAX) {
                std::uint64_t v;
                [[maybe_unused]] auto r = read(wake_fd_, &v, sizeof v);
                stop_pending_ = true;
                continue;
            }
            drive(streams_[events[i].data.u64]);
            if (!result_.error.empty())
                return finish();
        }
        // Streams that used up their turn.
        turn_.swap(again_);
        for (const std::size_t k : turn_) {
            streams_[k].queued_ = false;
            drive(streams_[k]);
        }
        turn_.clear();
        if (!result_.error.empty())
            return finish();
        // Small streams whose pause is over.
        if (has_timers_) {
            const auto t = steady::now();
            for (auto& s : streams_)
                if (s.kind_ == stream_kind::small && s.phase_ == phase::running && !s.request_open_ &&
                    s.next_request_at_ <= t)
                    drive(s);
        }
        if (!result_.error.empty())
            return finish();
    }
    return finish();
}

bool stream_loop::all_done() const
{
    return std::all_of(streams_.begin(), streams_.end(), [](const stream& s) { return s.phase_ == phase::done; });
}

int stream_loop::wait_ms(steady::time_point now, steady::time_point deadline)
{
    auto until = deadline;
    has_timers_ = false;
    for (const auto& s : streams_)
        if (s.kind_ == stream_kind::small && s.phase_ == phase::running && !s.request_open_) {
            has_timers_ = true;
            until = std::min(until, s.next_request_at_);
        }
    if (!again_.empty())
        return 0;
    const double ms = ms_between(now, until);
    return ms <= 0 ? 0 : static_cast<int>(std::min(ms + 0.999, 1000.0));
}

std::string stream_loop::progress_text() const
{
    int ready = 0, done = 0;
    std::uint64_t up = 0, down = 0;
    for (const auto& s : streams_) {
        ready += s.ready_;
        done += s.phase_ == phase::done;
        up += s.sent_;
        down += s.received_;
    }
    return std::to_string(ready) + "/" + std::to_string(streams_.size()) + " ready, " + std::to_string(done) +
           " done, " + std::to_string(up) + " bytes sent, " + std::to_string(down) + " received";
}

void stream_loop::fail(const stream& s, const std::string& why)
{
    if (result_.error.empty())
        result_.error = "stream " + std::to_string(s.index_) + ": " + why;
}

void stream_loop::fail_all(const std::string& why)
{
    if (result_.error.empty())
        result_.error = why;
}

loop_result stream_loop::finish()
{
    for (const auto& s : streams_) {
        if (s.ready_)
            result_.ready_ms.push_back(ms_between(s.connect_at_, s.ready_at_));
        const std::uint64_t probe = std::min<std::uint64_t>(options_.probe, s.received_);
        result_.payload_up += s.sent_ > options_.probe ? s.sent_ - options_.probe : 0;
        result_.payload_down += s.received_ - probe;
    }
    return std::move(result_);
}

void stream_loop::start_connect(stream& s)
{
    s.fd_ = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s.fd_ < 0) {
        fail(s, std::string("socket: ") + std::strerror(errno));
        return;
    }
    set_nodelay(s.fd_);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<std::uint16_t>(options_.port));
    s.connect_at_ = steady::now();
    const int r = connect(s.fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);
    if (r < 0 && errno != EINPROGRESS) {
        fail(s, std::string("connect: ") + std::strerror(errno));
        return;
    }
    epoll_event ev{};
    // Edge-triggered: drive() reads and writes until the socket would
    // block, so readiness is never lost and interest never toggled.
    ev.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET;
    ev.data.u64 = static_cast<std::uint64_t>(&s - streams_.data());
    epoll_ctl(epoll_, EPOLL_CTL_ADD, s.fd_, &ev);
}

std::uint64_t stream_loop::send_limit(stream& s)
{
    const std::uint64_t probe = options_.probe;
    switch (s.phase_) {
    case phase::probing:
        return probe;
    case phase::running:
        break;
    default:
        return 0;
    }
    switch (s.kind_) {
    case stream_kind::duplex:
        return s.total_;
    case stream_kind::rr: {
        // The next request only once the previous response is whole.
        const std::uint64_t done = (s.received_ - probe) / options_.chunk;
        return std::min(s.total_, probe + (done + 1) * options_.chunk);
    }
    case stream_kind::small: {
        if (!s.request_open_) {
            const bool stop = bulk_done_ != nullptr && bulk_done_->load(std::memory_order_relaxed);
            // Every small stream makes at least one request (so each
            // path is checked), then stops when the bulk streams are done.
            if (stop && s.requests_done_ > 0) {
                s.total_ = s.sent_;
                return s.total_;
            }
            const auto now = steady::now();
            if (now < s.next_request_at_)
                return s.sent_;
            s.request_open_ = true;
            s.request_at_ = now;
            s.request_under_load_ = !stop;
        }
        return probe + (s.requests_done_ + 1) * options_.small_size;
    }
    }
    return 0;
}

void stream_loop::drive(stream& s)
{
    if (s.phase_ == phase::done || !result_.error.empty() || s.queued_)
        return;
    if (s.phase_ == phase::connecting) {
        int err = 0;
        socklen_t len = sizeof err;
        getsockopt(s.fd_, SOL_SOCKET, SO_ERROR, &err, &len);
        if (err != 0) {
            fail(s, std::string("connect: ") + std::strerror(err));
            return;
        }
        // Not yet connected: EPOLLOUT will come.
        sockaddr_in peer{};
        socklen_t plen = sizeof peer;
        if (getpeername(s.fd_, reinterpret_cast<sockaddr*>(&peer), &plen) < 0)
            return;
        if (options_.socks5_target != 0) {
            // Method negotiation first, as any SOCKS5 client does (no
            // pipelining: the request goes after the server's choice).
            s.socks_out_ = {5, 1, 0};
            s.phase_ = phase::socks_greeting;
        } else {
            s.phase_ = phase::probing;
        }
    }
    if (s.phase_ == phase::socks_greeting || s.phase_ == phase::socks_reply) {
        if (!socks_step(s))
            return;
    }
    std::size_t moved = 0;
    for (;;) {
        if (moved >= turn_bytes) {
            // Its share of this turn is used: go again after the others.
            if (!s.queued_) {
                s.queued_ = true;
                again_.push_back(static_cast<std::size_t>(&s - streams_.data()));
            }
            return;
        }
        bool progress = false;
        // Write what the workload allows.
        const std::uint64_t limit = send_limit(s);
        if (s.sent_ < limit) {
            const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(limit - s.sent_, max_io));
            const ssize_t n = send(s.fd_, pattern_.at(s.origin_, s.sent_), want, MSG_NOSIGNAL);
            if (n > 0) {
                s.sent_ += static_cast<std::uint64_t>(n);
                moved += static_cast<std::size_t>(n);
                progress = true;
            } else if (n < 0 && !would_block(errno)) {
                fail(s, std::string("send: ") + std::strerror(errno));
                return;
            }
        }
        if (s.phase_ == phase::running && s.sent_ == s.total_ && !s.write_shut_) {
            // All sent: the half-close travels through the forward as
            // the channel's EOF, and the echo's EOF comes back after the
            // data.
            shutdown(s.fd_, SHUT_WR);
            s.write_shut_ = true;
        }
        // Read and compare.
        if (!s.eof_) {
            const ssize_t n = recv(s.fd_, scratch_.get(), max_io, 0);
            if (n > 0) {
                if (!take(s, static_cast<std::size_t>(n)))
                    return;
                moved += static_cast<std::size_t>(n);
                progress = true;
            } else if (n == 0) {
                s.eof_ = true;
                if (!(s.phase_ == phase::running && s.write_shut_ && s.received_ == s.total_)) {
                    fail(s, "EOF after " + std::to_string(s.received_) + " of " +
                                (s.phase_ == phase::running && s.total_ != UINT64_MAX ? std::to_string(s.total_)
                                                                                      : std::string("?")) +
                                " bytes (" + phase_name(s.phase_) + ")");
                    return;
                }
                s.phase_ = phase::done;
                close(s.fd_);
                s.fd_ = -1;
                stream_finished(s);
                return;
            } else if (!would_block(errno)) {
                fail(s, std::string("recv: ") + std::strerror(errno));
                return;
            }
        }
        if (!progress)
            return;
    }
}

bool stream_loop::take(stream& s, std::size_t n)
{
    const std::uint64_t expect_max = s.phase_ == phase::probing ? options_.probe : s.total_;
    if (s.received_ + n > s.sent_ || s.received_ + n > expect_max) {
        fail(s, "received more than was sent (" + std::to_string(s.received_ + n) + " > " +
                    std::to_string(s.sent_) + ")");
        return false;
    }
    if (std::memcmp(scratch_.get(), pattern_.at(s.origin_, s.received_), n) != 0) {
        std::size_t k = 0;
        while (k < n && scratch_[k] == pattern_.at(s.origin_, s.received_)[k])
            ++k;
        fail(s, "payload mismatch at byte " + std::to_string(s.received_ + k));
        return false;
    }
    s.received_ += n;
    const auto now = steady::now();
    if (s.phase_ == phase::probing && s.received_ == options_.probe) {
        s.ready_ = true;
        s.ready_at_ = now;
        s.phase_ = phase::running;
        switch (s.kind_) {
        case stream_kind::rr:
            s.total_ = options_.probe + static_cast<std::uint64_t>(options_.exchanges) * options_.chunk;
            break;
        case stream_kind::duplex:
            s.total_ = options_.probe + static_cast<std::uint64_t>(options_.chunks) * options_.chunk;
            break;
        case stream_kind::small:
            s.total_ = UINT64_MAX;
            s.next_request_at_ = now;
            break;
        }
    } else if (s.kind_ == stream_kind::small && s.request_open_ &&
               s.received_ == options_.probe + (s.requests_done_ + 1) * options_.small_size) {
        if (s.request_under_load_) {
            result_.small_ms.push_back(ms_between(s.request_at_, now));
            result_.small_at.push_back(s.request_at_);
        }
        ++s.requests_done_;
        s.request_open_ = false;
        s.next_request_at_ =
            now + std::chrono::microseconds(static_cast<long long>(options_.small_interval_ms * 1000));
    }
    return true;
}

bool stream_loop::socks_step(stream& s)
{
    for (;;) {
        while (s.socks_out_pos_ < s.socks_out_.size()) {
            const ssize_t n = send(s.fd_, s.socks_out_.data() + s.socks_out_pos_,
                                   s.socks_out_.size() - s.socks_out_pos_, MSG_NOSIGNAL);
            if (n > 0) {
                s.socks_out_pos_ += static_cast<std::size_t>(n);
            } else if (n < 0 && would_block(errno)) {
                return false;
            } else {
                fail(s, std::string("SOCKS send: ") + std::strerror(errno));
                return false;
            }
        }
        // Read only what the reply needs: anything after it is echo data.
        std::size_t need = 2;
        if (s.phase_ == phase::socks_reply) {
            need = 5;
            if (s.socks_in_.size() >= 5) {
                switch (s.socks_in_[3]) {
                case 1: need = 10; break;
                case 4: need = 22; break;
                case 3: need = 7 + s.socks_in_[4]; break;
                default:
                    fail(s, "SOCKS reply with address type " + std::to_string(s.socks_in_[3]));
                    return false;
                }
            }
        }
        if (s.socks_in_.size() < need) {
            unsigned char buf[300];
            const ssize_t n = recv(s.fd_, buf, need - s.socks_in_.size(), 0);
            if (n > 0) {
                s.socks_in_.insert(s.socks_in_.end(), buf, buf + n);
                continue;
            }
            if (n < 0 && would_block(errno))
                return false;
            fail(s, n == 0 ? std::string("EOF during the SOCKS handshake")
                           : std::string("SOCKS recv: ") + std::strerror(errno));
            return false;
        }
        if (s.phase_ == phase::socks_greeting) {
            if (s.socks_in_[0] != 5 || s.socks_in_[1] != 0) {
                fail(s, "SOCKS server refused the no-authentication method");
                return false;
            }
            const auto port = static_cast<std::uint16_t>(options_.socks5_target);
            s.socks_out_ = {5, 1, 0, 1, 127, 0, 0, 1, static_cast<unsigned char>(port >> 8),
                            static_cast<unsigned char>(port & 0xff)};
            s.socks_out_pos_ = 0;
            s.socks_in_.clear();
            s.phase_ = phase::socks_reply;
            continue;
        }
        if (s.socks_in_.size() == need) {
            if (s.socks_in_[0] != 5 || s.socks_in_[1] != 0) {
                fail(s, "SOCKS CONNECT failed, reply code " + std::to_string(s.socks_in_[1]));
                return false;
            }
            s.phase_ = phase::probing;
            return true;
        }
    }
}

void stream_loop::stream_finished(const stream& s)
{
    (void)s;
    if (on_all_done_ && all_done())
        on_all_done_();
}
std::vector<stream> make_streams(stream_kind kind, int count, int first_index)
{
    std::vector<stream> v(static_cast<std::size_t>(count));
    for (int i = 0; i < count; ++i) {
        auto& s = v[static_cast<std::size_t>(i)];
        s.kind_ = kind;
        s.index_ = first_index + i;
        // Streams start far apart in the pattern, so that data crossing
        // from one stream into another does not compare equal.
        s.origin_ = static_cast<std::uint64_t>(s.index_) * 1000003ULL % pattern::period;
    }
    return v;
}

}  // namespace forward_load
