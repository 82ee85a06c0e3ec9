// forward_load: the load generator of contrib/bench/forward (issue 11): an
// echo server and the client side that drives many streams through an SSH
// port forward and checks every byte that comes back.
//
//   forward_load serve [--port-file FILE]
//       Echo server on 127.0.0.1 (an ephemeral port, printed as "port=N" and
//       written to FILE): every byte read is written back; the peer's EOF is
//       passed on (shutdown) once everything before it has been echoed.
//       Runs until SIGTERM or SIGINT.
//
//   forward_load run --port P [--socks5-target PORT] --workload rr|duplex|mixed
//       [--streams N] [--exchanges 9] [--chunk 65536] [--chunks 129]
//       [--bulk-streams 8] [--small-streams 16] [--small-size 64]
//       [--small-interval-ms 10] [--probe 64] [--timeout S]
//       [--client-pid PID] [--server-pid PID]... [--echo-pid PID] [--label TEXT]
//       Connects N streams to 127.0.0.1:P at once (with --socks5-target
//       through a SOCKS5 CONNECT to 127.0.0.1:PORT), and on each:
//         ready     the first --probe bytes echoed (connect + SOCKS + channel
//                   and target set-up + one round trip), timed per stream;
//         rr        --exchanges requests of --chunk bytes, each sent after
//                   the previous response came back whole;
//         duplex    --chunks x --chunk bytes each way, producer and consumer
//                   independent (the consumer never waits for the producer);
//         mixed     --bulk-streams duplex streams plus --small-streams
//                   streams of --small-size requests (one every
//                   --small-interval-ms after the last answer) until every
//                   bulk stream is done; their latencies are the "small"
//                   figures (only requests started while bulk data flowed).
//       then half-closes and expects the echo's EOF. Every byte is compared
//       with what was sent. Prints one line of key=value fields (status=ok
//       or status=FAILED with reason=...) and exits 0 only when all streams
//       were intact. With --client-pid / --server-pid it also reads
//       utime+stime of those processes and all their descendants from
//       /proc/PID/stat right before the first connect and after the last
//       stream, and the client's VmHWM at the end; --echo-pid likewise for
//       the echo server, reported with this program's own CPU (getrusage)
//       as the load's cost, which must stay well below the SSH processes'.
//
// Plain epoll and non-blocking sockets, one thread for the bulk streams and
// (mixed) one for the small ones, so that the small requests' latencies are
// not queued behind our own bulk copying: the load must cost far less CPU
// than the SSH processes it measures, on a 2-core machine.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cinttypes>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using steady = std::chrono::steady_clock;

// Largest single read or write: big enough that a bulk stream costs few
// system calls per MiB, small enough to stay in cache for the compare.
constexpr std::size_t max_io = 256 * 1024;

// Bytes one connection may move (read + written) before the loop turns to
// the others: fairness between streams, so that a newly opened stream's
// probe is not queued behind a bulk stream that always has more to move.
constexpr std::size_t turn_bytes = 1024 * 1024;

double ms_between(steady::time_point a, steady::time_point b)
{
    return std::chrono::duration<double, std::milli>(b - a).count();
}

[[noreturn]] void die(const std::string& what)
{
    std::fprintf(stderr, "forward_load: %s\n", what.c_str());
    std::exit(2);
}

void set_nodelay(int fd)
{
    // Requests and probes are small and must not wait for Nagle; bulk
    // writes are large anyway.
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

bool would_block(int e) { return e == EAGAIN || e == EWOULDBLOCK; }

// ---------------------------------------------------------------- pattern

// What every stream sends: stream i's byte at position p is
// bytes_[(origin_i + p) % period_]. The period is not a multiple of any
// chunk or packet size, so a lost, repeated or reordered block shifts what
// follows and the compare sees it. The buffer holds max_io bytes past the
// period, so any window of up to max_io bytes is contiguous.
class pattern {
public:
    static constexpr std::size_t period = (std::size_t{1} << 22) + 4099;

    pattern() : bytes_(period + max_io)
    {
        std::uint64_t x = 0x9e3779b97f4a7c15ULL;
        for (std::size_t i = 0; i < period; ++i) {
            // xorshift64*: cheap and without short cycles.
            x ^= x >> 12;
            x ^= x << 25;
            x ^= x >> 27;
            bytes_[i] = static_cast<unsigned char>((x * 0x2545f4914f6cdd1dULL) >> 56);
        }
        std::copy_n(bytes_.begin(), max_io, bytes_.begin() + period);
    }

    const unsigned char* at(std::uint64_t origin, std::uint64_t pos) const
    {
        return bytes_.data() + (origin + pos) % period;
    }

private:
    std::vector<unsigned char> bytes_;
};

// ---------------------------------------------------------------- echo server

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

// ---------------------------------------------------------------- /proc

struct proc_sample {
    std::uint64_t ticks = 0;  // utime + stime
    int ppid = 0;
};

// Every process's parent and CPU ticks, from /proc/PID/stat.
std::map<int, proc_sample> scan_proc()
{
    std::map<int, proc_sample> out;
    DIR* d = opendir("/proc");
    if (d == nullptr)
        return out;
    while (dirent* e = readdir(d)) {
        char* end = nullptr;
        const long pid = std::strtol(e->d_name, &end, 10);
        if (end == e->d_name || *end != '\0')
            continue;
        std::ifstream f(std::string("/proc/") + e->d_name + "/stat");
        std::string line;
        if (!std::getline(f, line))
            continue;
        // The command name may hold spaces and parentheses: fields start
        // after the last ')'.
        const auto close = line.rfind(')');
        if (close == std::string::npos)
            continue;
        std::istringstream rest(line.substr(close + 2));
        std::string state;
        long long field = 0;
        proc_sample s;
        rest >> state >> s.ppid;  // fields 3 and 4
        // Fields 5..13 (pgrp .. cmajflt), then 14 utime and 15 stime.
        for (int k = 5; k <= 13; ++k)
            rest >> field;
        unsigned long long utime = 0, stime = 0;
        rest >> utime >> stime;
        if (!rest)
            continue;
        s.ticks = utime + stime;
        out[static_cast<int>(pid)] = s;
    }
    closedir(d);
    return out;
}

// The roots and every process below them.
std::set<int> tree_of(const std::map<int, proc_sample>& procs, const std::vector<int>& roots)
{
    std::multimap<int, int> children;
    for (const auto& [pid, s] : procs)
        children.emplace(s.ppid, pid);
    std::set<int> seen;
    std::vector<int> todo;
    for (const int r : roots)
        if (procs.count(r) != 0)
            todo.push_back(r);
    while (!todo.empty()) {
        const int p = todo.back();
        todo.pop_back();
        if (!seen.insert(p).second)
            continue;
        auto [a, b] = children.equal_range(p);
        for (auto it = a; it != b; ++it)
            todo.push_back(it->second);
    }
    return seen;
}

// CPU of a group of process trees between two scans. A process that
// appeared in between counts from zero; one that exited in between is lost
// (the figure is then a lower bound: `lost` says how many).
struct cpu_figure {
    double ms = 0;
    int procs = 0;
    int lost = 0;
};

cpu_figure cpu_between(const std::map<int, proc_sample>& before, const std::map<int, proc_sample>& after,
                       const std::vector<int>& roots)
{
    const double ms_per_tick = 1000.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
    cpu_figure f;
    const auto was = tree_of(before, roots);
    const auto now = tree_of(after, roots);
    for (const int pid : now) {
        const auto a = after.at(pid).ticks;
        const auto it = before.find(pid);
        const std::uint64_t b = (it != before.end() && was.count(pid) != 0) ? it->second.ticks : 0;
        f.ms += static_cast<double>(a >= b ? a - b : 0) * ms_per_tick;
        ++f.procs;
    }
    for (const int pid : was)
        if (now.count(pid) == 0)
            ++f.lost;
    return f;
}

long vm_hwm_kb(int pid)
{
    std::ifstream f("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(f, line))
        if (line.rfind("VmHWM:", 0) == 0)
            return std::strtol(line.c_str() + 6, nullptr, 10);
    return -1;
}

// ---------------------------------------------------------------- streams

enum class stream_kind { rr, duplex, small };

enum class phase { connecting, socks_greeting, socks_reply, probing, running, done };

struct run_options {
    int port = 0;
    int socks5_target = 0;  // 0: plain TCP to the port
    std::string workload;
    int streams = 1;
    int exchanges = 9;
    std::size_t chunk = 64 * 1024;
    int chunks = 129;
    int bulk_streams = 8;
    int small_streams = 16;
    std::size_t small_size = 64;
    double small_interval_ms = 10;
    std::size_t probe = 64;
    double timeout_s = 120;
    std::vector<int> client_pids;
    std::vector<int> server_pids;
    std::vector<int> echo_pids;
    std::string label;
};

struct stream {
    stream_kind kind_ = stream_kind::duplex;
    int index_ = 0;
    int fd_ = -1;
    phase phase_ = phase::connecting;
    std::uint64_t origin_ = 0;  // where this stream starts in the pattern

    // Bytes of the pattern written and read back (probe included).
    std::uint64_t sent_ = 0;
    std::uint64_t received_ = 0;
    // How much may be sent in total; UINT64_MAX for a small stream until it
    // is told to stop.
    std::uint64_t total_ = 0;
    bool write_shut_ = false;
    bool eof_ = false;

    // SOCKS5 handshake bytes: what is still to be written, what was read.
    std::vector<unsigned char> socks_out_;
    std::size_t socks_out_pos_ = 0;
    std::vector<unsigned char> socks_in_;

    steady::time_point connect_at_{};
    steady::time_point ready_at_{};
    bool ready_ = false;

    // Small streams: the request in flight and when the next may start.
    bool request_open_ = false;
    steady::time_point request_at_{};
    bool request_under_load_ = false;
    steady::time_point next_request_at_{};
    std::uint64_t requests_done_ = 0;

    bool queued_ = false;  // waiting in stream_loop::again_ for its next turn
};

// The results of one thread's streams, merged at the end.
struct loop_result {
    std::vector<double> ready_ms;
    std::vector<double> small_ms;
    std::uint64_t payload_up = 0;
    std::uint64_t payload_down = 0;
    std::string error;  // empty: all intact
};

// One epoll loop over a set of streams.
class stream_loop {
public:
    stream_loop(const run_options& o, const pattern& pat, std::vector<stream> streams,
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

    ~stream_loop()
    {
        for (auto& s : streams_)
            if (s.fd_ >= 0)
                close(s.fd_);
        close(epoll_);
    }

    // Runs until every stream is done, one fails, or the deadline passes.
    loop_result run(steady::time_point deadline, const std::atomic<bool>& abort)
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

private:
    bool all_done() const
    {
        return std::all_of(streams_.begin(), streams_.end(), [](const stream& s) { return s.phase_ == phase::done; });
    }

    int wait_ms(steady::time_point now, steady::time_point deadline)
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

    std::string progress_text() const
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

    void fail(const stream& s, const std::string& why)
    {
        if (result_.error.empty())
            result_.error = "stream " + std::to_string(s.index_) + ": " + why;
    }

    void fail_all(const std::string& why)
    {
        if (result_.error.empty())
            result_.error = why;
    }

    loop_result finish()
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

    void start_connect(stream& s)
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

    // How far the stream may have written by now.
    std::uint64_t send_limit(stream& s)
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

    // Moves the stream as far as its sockets allow.
    void drive(stream& s)
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

    static const char* phase_name(phase p)
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

    // Checks n bytes just read into scratch_ against the pattern and moves
    // the stream's state on. Returns false on a failure.
    bool take(stream& s, std::size_t n)
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
            if (s.request_under_load_)
                result_.small_ms.push_back(ms_between(s.request_at_, now));
            ++s.requests_done_;
            s.request_open_ = false;
            s.next_request_at_ =
                now + std::chrono::microseconds(static_cast<long long>(options_.small_interval_ms * 1000));
        }
        return true;
    }

    // SOCKS5 (RFC 1928) CONNECT to 127.0.0.1:socks5_target, no
    // authentication. Returns true once the stream may go on to its probe.
    bool socks_step(stream& s)
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

    void stream_finished(const stream& s)
    {
        (void)s;
        if (on_all_done_ && all_done())
            on_all_done_();
    }

public:
    // Called (in this loop's thread) when its last stream is done.
    std::function<void()> on_all_done_;

private:
    const run_options& options_;
    const pattern& pattern_;
    std::vector<stream> streams_;
    const std::atomic<bool>* bulk_done_;  // small streams stop when set
    int wake_fd_;
    int epoll_ = -1;
    std::unique_ptr<unsigned char[]> scratch_;
    loop_result result_;
    bool stop_pending_ = false;
    bool has_timers_ = false;
    std::vector<std::size_t> again_;  // streams whose turn ran out
    std::vector<std::size_t> turn_;
};

double percentile(std::vector<double> v, double p)
{
    if (v.empty())
        return std::nan("");
    std::sort(v.begin(), v.end());
    // Nearest rank: the smallest value with at least p% of the samples at
    // or below it.
    const auto rank = static_cast<std::size_t>(std::ceil(p / 100.0 * static_cast<double>(v.size())));
    return v[std::min(v.size(), std::max<std::size_t>(rank, 1)) - 1];
}

std::string fmt(double v, int decimals = 2)
{
    if (std::isnan(v))
        return "nan";
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
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

int run_load(int argc, char** argv)
{
    run_options o;
    auto number = [&](int& i, const std::string& name) -> double {
        if (i + 1 >= argc)
            die(name + " needs a value");
        char* end = nullptr;
        const double v = std::strtod(argv[++i], &end);
        if (end == argv[i] || *end != '\0' || v < 0)
            die(name + ": not a number: " + argv[i]);
        return v;
    };
    for (int i = 0; i < argc; ++i) {
        const std::string a = argv[i];
        if (a == "--port") o.port = static_cast<int>(number(i, a));
        else if (a == "--socks5-target") o.socks5_target = static_cast<int>(number(i, a));
        else if (a == "--workload" && i + 1 < argc) o.workload = argv[++i];
        else if (a == "--streams") o.streams = static_cast<int>(number(i, a));
        else if (a == "--exchanges") o.exchanges = static_cast<int>(number(i, a));
        else if (a == "--chunk") o.chunk = static_cast<std::size_t>(number(i, a));
        else if (a == "--chunks") o.chunks = static_cast<int>(number(i, a));
        else if (a == "--bulk-streams") o.bulk_streams = static_cast<int>(number(i, a));
        else if (a == "--small-streams") o.small_streams = static_cast<int>(number(i, a));
        else if (a == "--small-size") o.small_size = static_cast<std::size_t>(number(i, a));
        else if (a == "--small-interval-ms") o.small_interval_ms = number(i, a);
        else if (a == "--probe") o.probe = static_cast<std::size_t>(number(i, a));
        else if (a == "--timeout") o.timeout_s = number(i, a);
        else if (a == "--client-pid") o.client_pids.push_back(static_cast<int>(number(i, a)));
        else if (a == "--server-pid") o.server_pids.push_back(static_cast<int>(number(i, a)));
        else if (a == "--echo-pid") o.echo_pids.push_back(static_cast<int>(number(i, a)));
        else if (a == "--label" && i + 1 < argc) o.label = argv[++i];
        else die("run: unknown argument " + a + " (see the comment at the top of forward_load.cpp)");
    }
    if (o.port <= 0 || o.port > 65535)
        die("run: --port is required");
    if (o.workload != "rr" && o.workload != "duplex" && o.workload != "mixed")
        die("run: --workload is rr, duplex or mixed");
    if (o.probe == 0 || o.chunk == 0 || o.small_size == 0)
        die("run: --probe, --chunk and --small-size must be positive");
    signal(SIGPIPE, SIG_IGN);

    const pattern pat;
    std::atomic<bool> bulk_done{false};
    std::atomic<bool> abort{false};
    const int wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);

    std::vector<stream> main_streams;
    std::vector<stream> small_streams;
    int nstreams = 0;
    if (o.workload == "mixed") {
        main_streams = make_streams(stream_kind::duplex, o.bulk_streams, 0);
        small_streams = make_streams(stream_kind::small, o.small_streams, o.bulk_streams);
        nstreams = o.bulk_streams + o.small_streams;
    } else {
        main_streams = make_streams(o.workload == "rr" ? stream_kind::rr : stream_kind::duplex, o.streams, 0);
        nstreams = o.streams;
    }

    const bool measure_cpu = !o.client_pids.empty() || !o.server_pids.empty() || !o.echo_pids.empty();
    rusage self_before{};
    getrusage(RUSAGE_SELF, &self_before);
    std::map<int, proc_sample> before;
    if (measure_cpu)
        before = scan_proc();

    const auto start = steady::now();
    const auto deadline = start + std::chrono::microseconds(static_cast<long long>(o.timeout_s * 1e6));
    stream_loop bulk(o, pat, std::move(main_streams), nullptr, -1);
    bulk.on_all_done_ = [&] {
        bulk_done.store(true);
        const std::uint64_t one = 1;
        [[maybe_unused]] auto r = write(wake, &one, sizeof one);
    };
    loop_result small_result;
    std::thread small_thread;
    std::unique_ptr<stream_loop> small;
    if (!small_streams.empty()) {
        small = std::make_unique<stream_loop>(o, pat, std::move(small_streams), &bulk_done, wake);
        small_thread = std::thread([&] {
            small_result = small->run(deadline, abort);
            if (!small_result.error.empty())
                abort.store(true);
        });
    }
    loop_result bulk_result = bulk.run(deadline, abort);
    if (!bulk_result.error.empty()) {
        abort.store(true);
        // Let the small streams' loop notice at once.
        bulk_done.store(true);
        const std::uint64_t one = 1;
        [[maybe_unused]] auto r = write(wake, &one, sizeof one);
    }
    if (small_thread.joinable())
        small_thread.join();
    const auto end = steady::now();

    std::map<int, proc_sample> after;
    if (measure_cpu)
        after = scan_proc();
    rusage self_after{};
    getrusage(RUSAGE_SELF, &self_after);
    auto tv_ms = [](const timeval& t) { return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_usec) / 1e3; };
    // Our own CPU (all threads; the /proc scans included), to show the load
    // generator is not what limits the figures.
    const double self_ms = tv_ms(self_after.ru_utime) - tv_ms(self_before.ru_utime) + tv_ms(self_after.ru_stime) -
                           tv_ms(self_before.ru_stime);

    // The first failure, not the other loop's "stopped" that it caused.
    std::string error = bulk_result.error;
    if (error.empty() || (error.rfind("stopped:", 0) == 0 && !small_result.error.empty()))
        error = small_result.error;
    std::vector<double> ready = bulk_result.ready_ms;
    ready.insert(ready.end(), small_result.ready_ms.begin(), small_result.ready_ms.end());
    const std::uint64_t up = bulk_result.payload_up + small_result.payload_up;
    const std::uint64_t down = bulk_result.payload_down + small_result.payload_down;
    const double elapsed = std::chrono::duration<double>(end - start).count();
    const double mib = 1024.0 * 1024.0;

    std::ostringstream line;
    line << "forward_load";
    if (!o.label.empty())
        line << " label=" << o.label;
    line << " workload=" << o.workload << " socks5=" << (o.socks5_target != 0 ? 1 : 0) << " streams=" << nstreams
         << " status=" << (error.empty() ? "ok" : "FAILED") << " elapsed_s=" << fmt(elapsed, 4)
         << " bytes_up=" << up << " bytes_down=" << down << " mib_s_up=" << fmt(up / mib / elapsed)
         << " mib_s_down=" << fmt(down / mib / elapsed) << " ready_n=" << ready.size()
         << " ready_p50_ms=" << fmt(percentile(ready, 50)) << " ready_p95_ms=" << fmt(percentile(ready, 95))
         << " ready_max_ms=" << fmt(percentile(ready, 100)) << " small_n=" << small_result.small_ms.size()
         << " small_p50_ms=" << fmt(percentile(small_result.small_ms, 50))
         << " small_p95_ms=" << fmt(percentile(small_result.small_ms, 95))
         << " small_max_ms=" << fmt(percentile(small_result.small_ms, 100));
    const double total_mib = static_cast<double>(up + down) / mib;
    line << " load_cpu_ms=" << fmt(self_ms, 0);
    if (!o.echo_pids.empty()) {
        const auto e = cpu_between(before, after, o.echo_pids);
        line << " echo_cpu_ms=" << fmt(e.ms, 0)
             << " load_echo_cpu_ms_per_mib=" << fmt(total_mib > 0 ? (self_ms + e.ms) / total_mib : std::nan(""), 3);
    }
    if (!o.client_pids.empty() || !o.server_pids.empty()) {
        const auto c = cpu_between(before, after, o.client_pids);
        const auto s = cpu_between(before, after, o.server_pids);
        line << " client_cpu_ms=" << fmt(c.ms, 0) << " client_procs=" << c.procs << " client_lost=" << c.lost
             << " server_cpu_ms=" << fmt(s.ms, 0) << " server_procs=" << s.procs << " server_lost=" << s.lost
             << " client_cpu_ms_per_mib=" << fmt(total_mib > 0 ? c.ms / total_mib : std::nan(""), 3)
             << " server_cpu_ms_per_mib=" << fmt(total_mib > 0 ? s.ms / total_mib : std::nan(""), 3);
        if (!o.client_pids.empty())
            line << " client_hwm_kb=" << vm_hwm_kb(o.client_pids.front());
    }
    if (!error.empty()) {
        // One token: the driver reads fields by splitting on spaces.
        std::string e = error;
        std::replace(e.begin(), e.end(), ' ', '_');
        line << " reason=" << e;
    }
    std::printf("%s\n", line.str().c_str());
    std::fflush(stdout);
    close(wake);
    return error.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv)
{
    if (argc < 2) {
        std::fprintf(stderr, "usage: forward_load serve [--port-file FILE]\n"
                             "       forward_load run --port P --workload rr|duplex|mixed [options]\n"
                             "(options: the comment at the top of contrib/bench/forward_load.cpp)\n");
        return 2;
    }
    const std::string mode = argv[1];
    if (mode == "serve")
        return run_serve(argc - 2, argv + 2);
    if (mode == "run")
        return run_load(argc - 2, argv + 2);
    die("unknown mode " + mode);
}
