#include "relay.hpp"

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>
#include <fstream>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <system_error>
#include <unistd.h>

namespace wanem {

namespace {

[[noreturn]] void fail(const char* what)
{
    throw std::system_error(errno, std::generic_category(), what);
}

std::size_t ring_size_for(const link_params& p, const options& opts)
{
    if (opts.ring_bytes != 0)
        return opts.ring_bytes;
    if (p.rate_bps == 0)
        return std::size_t{256} << 20; // no bottleneck: room for a large burst
    // Everything queued plus everything on the wire, with room for vnet
    // headers and the dead space a wrap leaves behind.
    const double wire = static_cast<double>(p.rate_bps) / 8.0 *
                        static_cast<double>(p.delay_ns + p.jitter_ns) / 1e9;
    const double want = 1.5 * (wire + static_cast<double>(p.queue_bytes)) + (8 << 20);
    return static_cast<std::size_t>(std::min(want, 3.5 * (1ULL << 30)));
}

double seconds(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; }

constexpr int frames_per_drain = 64;

} // namespace

std::int64_t monotonic_ns()
{
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

relay::relay(const options& opts, tun_device client, tun_device server)
    : opts_(opts), client_(std::move(client)), server_(std::move(server)),
      c2s_("c2s", opts.c2s, opts.offload, opts.seed, ring_size_for(opts.c2s, opts)),
      s2c_("s2c", opts.s2c, opts.offload, opts.seed * 0x9e3779b97f4a7c15ULL + 1, ring_size_for(opts.s2c, opts))
{
    sigset_t set;
    sigemptyset(&set);
    for (int s : {SIGINT, SIGTERM, SIGUSR1, SIGHUP, link_down_signal(), link_up_signal()})
        sigaddset(&set, s);
    if (::sigprocmask(SIG_BLOCK, &set, nullptr) != 0)
        fail("sigprocmask");
    signal_fd_ = ::signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    if (signal_fd_ < 0)
        fail("signalfd");
    epoll_fd_ = ::epoll_create1(EPOLL_CLOEXEC);
    if (epoll_fd_ < 0)
        fail("epoll_create1");
    for (int fd : {client_.fd(), server_.fd(), signal_fd_}) {
        epoll_event ev{};
        ev.events = EPOLLIN;
        ev.data.fd = fd;
        if (::epoll_ctl(epoll_fd_, EPOLL_CTL_ADD, fd, &ev) != 0)
            fail("epoll_ctl");
    }
}

relay::~relay()
{
    if (epoll_fd_ >= 0)
        ::close(epoll_fd_);
    if (signal_fd_ >= 0)
        ::close(signal_fd_);
}

bool relay::drain(const tun_device& from, link_direction& dir)
{
    for (int i = 0; i < frames_per_drain; ++i) {
        auto buf = dir.read_buffer();
        const ssize_t n = from.read_packet(buf);
        if (n < 0) {
            if (errno == EAGAIN || errno == EINTR)
                return true;
            std::fprintf(stderr, "wanem: read %s: %s\n", from.name().c_str(), std::strerror(errno));
            return false;
        }
        // Stamped at read time: the kernel handed the frame over just now.
        dir.accept(static_cast<std::size_t>(n), monotonic_ns());
    }
    return true;
}

void relay::release_due(std::int64_t now_ns)
{
    const std::int64_t limit = now_ns + opts_.slack_ns;
    auto write_to = [](const tun_device& dev) {
        return [&dev](std::span<const std::byte> frame) { return dev.write_packet(frame) >= 0; };
    };
    c2s_.release(now_ns, limit, write_to(server_));
    s2c_.release(now_ns, limit, write_to(client_));
}

bool relay::handle_signal()
{
    signalfd_siginfo si;
    while (::read(signal_fd_, &si, sizeof si) == static_cast<ssize_t>(sizeof si)) {
        const int sig = static_cast<int>(si.ssi_signo);
        if (sig == SIGUSR1) {
            print_stats(stderr);
        } else if (sig == link_down_signal() || sig == link_up_signal()) {
            // Both directions at once: an outage, not a one-way loss.
            const bool down = sig == link_down_signal();
            c2s_.set_down(down);
            s2c_.set_down(down);
            std::fprintf(stderr, "wanem: link %s after %.3f s\n", down ? "down" : "up",
                         static_cast<double>(monotonic_ns() - started_ns_) / 1e9);
            std::fflush(stderr);
        } else {
            stop_ = true;
        }
    }
    return !stop_;
}

int relay::run()
{
    started_ns_ = monotonic_ns();
    epoll_event events[4];
    while (!stop_) {
        const std::int64_t now = monotonic_ns();
        release_due(now);

        std::optional<std::int64_t> due;
        for (const auto* d : {&c2s_, &s2c_}) {
            auto n = d->next_due();
            if (n && (!due || *n < *due))
                due = n;
        }
        timespec timeout{};
        timespec* tp = nullptr;
        if (due) {
            // Wake a little early: wake-up latency (tens of microseconds in
            // a VM) then lands packets close to their due time.
            const std::int64_t wait = std::max<std::int64_t>(0, *due - opts_.slack_ns - monotonic_ns());
            timeout.tv_sec = wait / 1'000'000'000;
            timeout.tv_nsec = wait % 1'000'000'000;
            tp = &timeout;
        }
        const int n = ::epoll_pwait2(epoll_fd_, events, 4, tp, nullptr);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            fail("epoll_pwait2");
        }
        ++wakeups_;
        for (int i = 0; i < n; ++i) {
            const int fd = events[i].data.fd;
            bool ok = true;
            if (fd == signal_fd_)
                handle_signal();
            else if (fd == client_.fd())
                ok = drain(client_, c2s_);
            else if (fd == server_.fd())
                ok = drain(server_, s2c_);
            if (!ok)
                return 1;
        }
    }
    return 0;
}

void relay::print_stats(std::FILE* out) const
{
    for (const auto* d : {&c2s_, &s2c_}) {
        const direction_stats& s = d->stats();
        std::fprintf(out,
                     "wanem: %s: in %llu frames %llu pkts %llu B; out %llu frames %llu pkts %llu B; "
                     "dropped: loss %llu queue %llu outage %llu storage %llu write-err %llu; "
                     "queue high-water %llu B %llu pkts; tso %llu (cut %llu); late avg %.1f max %.1f us\n",
                     d->label().c_str(), (unsigned long long)s.frames_in, (unsigned long long)s.segments_in,
                     (unsigned long long)s.bytes_in, (unsigned long long)s.frames_out,
                     (unsigned long long)s.segments_out, (unsigned long long)s.bytes_out,
                     (unsigned long long)s.lost, (unsigned long long)s.queue_drops,
                     (unsigned long long)s.outage_drops, (unsigned long long)s.ring_drops, (unsigned long long)s.write_errors,
                     (unsigned long long)d->schedule().high_water_bytes(),
                     (unsigned long long)d->schedule().high_water_packets(),
                     (unsigned long long)s.tso_frames, (unsigned long long)s.tso_splits,
                     s.frames_out ? static_cast<double>(s.late_sum_ns) / static_cast<double>(s.frames_out) / 1e3 : 0.0,
                     static_cast<double>(s.late_max_ns) / 1e3);
    }
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    const double wall = static_cast<double>(monotonic_ns() - started_ns_) / 1e9;
    const double cpu = seconds(ru.ru_utime) + seconds(ru.ru_stime);
    std::fprintf(out, "wanem: cpu user %.2f s sys %.2f s over %.1f s (%.1f%% of one core), %llu wake-ups\n",
                 seconds(ru.ru_utime), seconds(ru.ru_stime), wall, wall > 0 ? 100.0 * cpu / wall : 0.0,
                 (unsigned long long)wakeups_);
    std::fflush(out);
}

void relay::write_stats_json(const std::string& path) const
{
    std::ofstream f(path);
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    f << "{\n";
    for (const auto* d : {&c2s_, &s2c_}) {
        const direction_stats& s = d->stats();
        f << "  \"" << d->label() << "\": {\"frames_in\": " << s.frames_in << ", \"packets_in\": " << s.segments_in
          << ", \"bytes_in\": " << s.bytes_in << ", \"frames_out\": " << s.frames_out
          << ", \"packets_out\": " << s.segments_out << ", \"bytes_out\": " << s.bytes_out
          << ", \"lost\": " << s.lost << ", \"queue_drops\": " << s.queue_drops
          << ", \"outage_drops\": " << s.outage_drops
          << ", \"storage_drops\": " << s.ring_drops << ", \"write_errors\": " << s.write_errors
          << ", \"queue_high_water_bytes\": " << d->schedule().high_water_bytes()
          << ", \"queue_high_water_packets\": " << d->schedule().high_water_packets()
          << ", \"tso_frames\": " << s.tso_frames << ", \"tso_cut\": " << s.tso_splits
          << ", \"late_max_us\": " << static_cast<double>(s.late_max_ns) / 1e3 << "},\n";
    }
    f << "  \"cpu_user_s\": " << seconds(ru.ru_utime) << ", \"cpu_sys_s\": " << seconds(ru.ru_stime)
      << ", \"wall_s\": " << static_cast<double>(monotonic_ns() - started_ns_) / 1e9 << "\n}\n";
}

} // namespace wanem
