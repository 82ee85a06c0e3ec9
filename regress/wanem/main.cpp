// wanem: user-space WAN emulator between two TUN devices (see README.md).
#include "options.hpp"
#include "relay.hpp"
#include "tun_device.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <sched.h>
#include <exception>
#include <fstream>
#include <sys/prctl.h>

int main(int argc, char** argv)
{
    using namespace wanem;
    options opts;
    try {
        opts = parse_options({argv + 1, argv + argc});
    } catch (const std::exception& e) {
        std::fprintf(stderr, "wanem: %s\n", e.what());
        return 2;
    }
    if (opts.help) {
        std::fputs(usage_text(), stdout);
        return 0;
    }
    finalize(opts);

    // The default 50 us timer slack would add that much to every delivery.
    ::prctl(PR_SET_TIMERSLACK, 1000UL);
    if (opts.realtime_priority > 0) {
        // A link does not slow down because a compiler runs next to it. The
        // emulator sleeps most of the time, so a real-time class costs the
        // rest of the machine little, and the kernel's RT throttling bounds
        // the damage of a bug.
        sched_param sp{};
        sp.sched_priority = opts.realtime_priority;
        if (::sched_setscheduler(0, SCHED_FIFO, &sp) != 0)
            std::fprintf(stderr, "wanem: SCHED_FIFO unavailable (%s); timing may suffer under load\n",
                         std::strerror(errno));
    }

    try {
        tun_device client = tun_device::create(opts.client.ns_path, opts.client.dev_name, opts.offload);
        tun_device server = tun_device::create(opts.server.ns_path, opts.server.dev_name, opts.offload);
        relay r(opts, std::move(client), std::move(server));
        if (!opts.ready_file.empty()) {
            std::ofstream ready(opts.ready_file);
            ready << "ready\n";
            if (!ready) {
                std::fprintf(stderr, "wanem: cannot write %s\n", opts.ready_file.c_str());
                return 1;
            }
        }
        for (const auto* p : {&opts.c2s, &opts.s2c})
            std::fprintf(stderr, "wanem: %s delay %.3f ms jitter %.3f ms rate %.3f Mbit/s queue %llu B/%llu pkts loss %.4f%%\n",
                         p == &opts.c2s ? "c2s" : "s2c", p->delay_ns / 1e6, p->jitter_ns / 1e6, p->rate_bps / 1e6,
                         (unsigned long long)p->queue_bytes, (unsigned long long)p->queue_packets, p->loss * 100);
        const int rc = r.run();
        r.print_stats(stderr);
        if (!opts.stats_json.empty())
            r.write_stats_json(opts.stats_json);
        return rc;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "wanem: %s\n", e.what());
        return 1;
    }
}
