#include "meter.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <fcntl.h>
#include <random>
#include <stdexcept>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

namespace wan_meter {

std::int64_t now_ns()
{
    timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return std::int64_t{ts.tv_sec} * 1'000'000'000 + ts.tv_nsec;
}

namespace {

double tv_s(const timeval& tv) { return static_cast<double>(tv.tv_sec) + tv.tv_usec / 1e6; }

constexpr std::size_t chunk = 256 * 1024;

} // namespace

double cpu_self_s()
{
    rusage ru{};
    ::getrusage(RUSAGE_SELF, &ru);
    return tv_s(ru.ru_utime) + tv_s(ru.ru_stime);
}

std::span<const std::byte> pattern()
{
    // 4 MiB: larger than any compressor's window, so repeating it gives a
    // compressing transport nothing to gain.
    static const std::vector<std::byte> block = [] {
        std::vector<std::byte> b(4 << 20);
        std::mt19937_64 rng(0x10c9a01);
        for (std::size_t i = 0; i + 8 <= b.size(); i += 8) {
            const std::uint64_t v = rng();
            std::memcpy(b.data() + i, &v, 8);
        }
        return b;
    }();
    return block;
}

source_limit parse_limit(const args& a, std::size_t& i)
{
    source_limit l;
    if (a[i] == "--bytes" && i + 1 < a.size()) {
        l.bytes = std::stoull(a[++i]);
    } else if (a[i] == "--seconds" && i + 1 < a.size()) {
        l.seconds = std::stod(a[++i]);
    } else {
        throw std::invalid_argument("expected --bytes N or --seconds S");
    }
    return l;
}

std::uint64_t pump_out(int fd, const source_limit& limit)
{
    const auto pat = pattern();
    std::uint64_t sent = 0;
    std::size_t pos = 0;
    std::int64_t started = 0;
    while (limit.bytes == 0 || sent < limit.bytes) {
        std::size_t n = std::min(chunk, pat.size() - pos);
        if (limit.bytes != 0)
            n = static_cast<std::size_t>(std::min<std::uint64_t>(n, limit.bytes - sent));
        const ssize_t w = ::write(fd, pat.data() + pos, n);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            throw std::runtime_error(std::string("write: ") + std::strerror(errno));
        }
        sent += static_cast<std::uint64_t>(w);
        pos = (pos + static_cast<std::size_t>(w)) % pat.size();
        if (started == 0)
            started = now_ns();
        if (limit.seconds > 0 && now_ns() - started >= static_cast<std::int64_t>(limit.seconds * 1e9))
            break;
    }
    return sent;
}

int drain_and_report(int fd, std::FILE* out, int timeline_ms)
{
    std::vector<std::byte> buf(chunk);
    std::uint64_t total = 0;
    std::int64_t first = 0, last = 0;
    // Bytes per timeline_ms interval, counted from the first byte: shows a
    // transfer that starts well and then collapses, which the mean hides.
    std::vector<std::uint64_t> bins;
    const std::int64_t bin_ns = std::int64_t{timeline_ms} * 1'000'000;
    for (;;) {
        const ssize_t r = ::read(fd, buf.data(), buf.size());
        if (r < 0) {
            if (errno == EINTR)
                continue;
            std::fprintf(stderr, "wan_meter: read: %s\n", std::strerror(errno));
            return 1;
        }
        if (r == 0)
            break;
        last = now_ns();
        if (first == 0)
            first = last;
        total += static_cast<std::uint64_t>(r);
        if (bin_ns > 0) {
            const auto k = static_cast<std::size_t>((last - first) / bin_ns);
            if (bins.size() <= k)
                bins.resize(k + 1, 0);
            bins[k] += static_cast<std::uint64_t>(r);
        }
    }
    std::fprintf(out, "{\"bytes\": %llu, \"first_ns\": %lld, \"last_ns\": %lld, \"cpu_s\": %.4f",
                 (unsigned long long)total, (long long)first, (long long)last, cpu_self_s());
    if (bin_ns > 0) {
        std::fprintf(out, ", \"timeline_ms\": %d, \"timeline_bytes\": [", timeline_ms);
        for (std::size_t k = 0; k < bins.size(); ++k)
            std::fprintf(out, "%s%llu", k ? ", " : "", (unsigned long long)bins[k]);
        std::fprintf(out, "]");
    }
    std::fprintf(out, "}\n");
    std::fflush(out);
    return 0;
}

int parse_timeline_ms(const std::string& v)
{
    const int ms = std::stoi(v);
    if (ms <= 0 || ms > 3'600'000)
        throw std::invalid_argument("--timeline-ms: 1..3600000");
    return ms;
}

// source --bytes N | --seconds S [--report FILE]: with --report, writes
// {"sent","cpu_s"} to FILE at the end (stdout carries the data), so that the
// source's own CPU can be taken out of the side it runs on.
int cmd_source(const args& a)
{
    source_limit limit;
    bool have_limit = false;
    std::string report;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] == "--report" && i + 1 < a.size()) {
            report = a[++i];
        } else {
            limit = parse_limit(a, i);
            have_limit = true;
        }
    }
    if (!have_limit)
        throw std::invalid_argument("source --bytes N | --seconds S [--report FILE]");
    ::signal(SIGPIPE, SIG_IGN);
    const std::uint64_t sent = pump_out(STDOUT_FILENO, limit);
    if (!report.empty()) {
        std::FILE* f = std::fopen(report.c_str(), "w");
        if (!f)
            throw std::runtime_error("cannot write " + report);
        std::fprintf(f, "{\"sent\": %llu, \"cpu_s\": %.4f}\n", (unsigned long long)sent, cpu_self_s());
        std::fclose(f);
    }
    return 0;
}

// sink [--timeline-ms N]
int cmd_sink(const args& a)
{
    int timeline_ms = 0;
    for (std::size_t i = 0; i < a.size(); ++i) {
        if (a[i] == "--timeline-ms" && i + 1 < a.size())
            timeline_ms = parse_timeline_ms(a[++i]);
        else
            throw std::invalid_argument("sink [--timeline-ms N]");
    }
    return drain_and_report(STDIN_FILENO, stdout, timeline_ms);
}

// run [--ttfb] [--report FILE] -- CMD...: runs CMD and reports its wall time,
// CPU and peak RSS (of CMD and everything it waited for); with --ttfb, CMD's
// stdout is relayed and the arrival of its first byte is timed.
int cmd_run(const args& a)
{
    bool ttfb = false;
    std::string report;
    std::size_t i = 0;
    for (; i < a.size() && a[i] != "--"; ++i) {
        if (a[i] == "--ttfb")
            ttfb = true;
        else if (a[i] == "--report" && i + 1 < a.size())
            report = a[++i];
        else
            throw std::invalid_argument("run [--ttfb] [--report FILE] -- CMD...");
    }
    if (i + 1 >= a.size())
        throw std::invalid_argument("run: no command");
    std::vector<char*> argv;
    for (std::size_t k = i + 1; k < a.size(); ++k)
        argv.push_back(const_cast<char*>(a[k].c_str()));
    argv.push_back(nullptr);

    int pipefd[2] = {-1, -1};
    if (ttfb && ::pipe2(pipefd, O_CLOEXEC) != 0)
        throw std::runtime_error("pipe");
    const std::int64_t start = now_ns();
    const pid_t pid = ::fork();
    if (pid < 0)
        throw std::runtime_error("fork");
    if (pid == 0) {
        if (ttfb)
            ::dup2(pipefd[1], STDOUT_FILENO);
        ::execvp(argv[0], argv.data());
        std::fprintf(stderr, "wan_meter: exec %s: %s\n", argv[0], std::strerror(errno));
        ::_exit(127);
    }
    std::int64_t first = 0;
    if (ttfb) {
        ::close(pipefd[1]);
        std::vector<char> buf(65536);
        for (;;) {
            const ssize_t r = ::read(pipefd[0], buf.data(), buf.size());
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            if (first == 0)
                first = now_ns();
            if (::write(STDOUT_FILENO, buf.data(), static_cast<std::size_t>(r)) < 0)
                break;
        }
        ::close(pipefd[0]);
    }
    int status = 0;
    rusage ru{};
    while (::wait4(pid, &status, 0, &ru) < 0 && errno == EINTR) {
    }
    const std::int64_t end = now_ns();
    const int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);

    std::FILE* out = report.empty() ? stderr : std::fopen(report.c_str(), "w");
    if (!out)
        throw std::runtime_error("cannot write " + report);
    std::fprintf(out,
                 "{\"rc\": %d, \"start_ns\": %lld, \"end_ns\": %lld, \"wall_s\": %.6f, \"ttfb_s\": %.6f, "
                 "\"user_s\": %.4f, \"sys_s\": %.4f, \"maxrss_kb\": %ld}\n",
                 rc, (long long)start, (long long)end, (end - start) / 1e9,
                 first ? (first - start) / 1e9 : -1.0, tv_s(ru.ru_utime), tv_s(ru.ru_stime), ru.ru_maxrss);
    if (out != stderr)
        std::fclose(out);
    return rc;
}

} // namespace wan_meter

int main(int argc, char** argv)
{
    using namespace wan_meter;
    const char* usage =
        "usage: wan_meter SUBCOMMAND ...\n"
        "  source --bytes N | --seconds S [--report F]   incompressible data to stdout\n"
        "  sink [--timeline-ms N]              read stdin to EOF, report timing (and bytes per N ms)\n"
        "  run [--ttfb] [--report F] -- CMD    time CMD, its CPU and peak RSS\n"
        "  tcp-sink --listen|--connect ADDR PORT [--ready-file F] [--timeline-ms N]   one connection, report\n"
        "  tcp-source --connect|--listen ADDR PORT [--ready-file F] --bytes N | --seconds S\n"
        "  cpu [--wait-children SECS] PID      CPU seconds of PID and its reaped children\n"
        "  watch PID [--exclude NAME]          peak RSS of PID's descendants until SIGTERM\n";
    if (argc < 2) {
        std::fputs(usage, stderr);
        return 2;
    }
    const std::string cmd = argv[1];
    const args rest(argv + 2, argv + argc);
    try {
        if (cmd == "source")
            return cmd_source(rest);
        if (cmd == "sink")
            return cmd_sink(rest);
        if (cmd == "run")
            return cmd_run(rest);
        if (cmd == "tcp-sink")
            return cmd_tcp_sink(rest);
        if (cmd == "tcp-source")
            return cmd_tcp_source(rest);
        if (cmd == "cpu")
            return cmd_cpu(rest);
        if (cmd == "watch")
            return cmd_watch(rest);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "wan_meter %s: %s\n", cmd.c_str(), e.what());
        return 2;
    }
    std::fputs(usage, stderr);
    return 2;
}
