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
//       [--samples FILE]
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
//       --samples FILE writes each small request as a line "SENT_MS
//       LATENCY_MS" (SENT_MS from the first connect), to see when in a run
//       requests waited, not only the percentiles.
//
// Plain epoll and non-blocking sockets, one thread for the bulk streams and
// (mixed) one for the small ones, so that the small requests' latencies are
// not queued behind our own bulk copying: the load must cost far less CPU
// than the SSH processes it measures, on a 2-core machine.
//
// The parts: forward_load_util (pattern, helpers), forward_echo_server
// (serve), forward_streams (the client's epoll loop), proc_stats (the
// /proc CPU figures); this file parses `run`'s options, runs the loops and
// prints the result line.
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "forward_echo_server.hpp"
#include "forward_load_util.hpp"
#include "forward_streams.hpp"
#include "proc_stats.hpp"

namespace forward_load {
namespace {

int run_load(int argc, char** argv)
{
    run_options o;
    std::string samples_path;
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
        else if (a == "--samples" && i + 1 < argc) samples_path = argv[++i];
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
    if (!samples_path.empty()) {
        if (FILE* f = std::fopen(samples_path.c_str(), "w")) {
            for (std::size_t i = 0; i < small_result.small_ms.size(); ++i)
                std::fprintf(f, "%.3f %.3f\n", std::chrono::duration<double, std::milli>(small_result.small_at[i] - start).count(),
                             small_result.small_ms[i]);
            std::fclose(f);
        } else {
            std::perror(samples_path.c_str());
        }
    }
    std::printf("%s\n", line.str().c_str());
    std::fflush(stdout);
    close(wake);
    return error.empty() ? 0 : 1;
}

}  // namespace
}  // namespace forward_load

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
        return forward_load::run_serve(argc - 2, argv + 2);
    if (mode == "run")
        return forward_load::run_load(argc - 2, argv + 2);
    forward_load::die("unknown mode " + mode);
}
