#include "options.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <stdexcept>
#include <string_view>

namespace wanem {

namespace {

double parse_number(const std::string& opt, const std::string& text, double lo, double hi)
{
    std::size_t used = 0;
    double v = 0;
    try {
        v = std::stod(text, &used);
    } catch (const std::exception&) {
        used = 0;
    }
    if (used != text.size() || !std::isfinite(v) || v < lo || v > hi)
        throw std::invalid_argument(opt + ": bad value '" + text + "'");
    return v;
}

using setter = std::function<void(link_params&, double)>;

struct per_direction_option {
    std::string_view name;
    double lo;
    double hi;
    setter set;
};

// Options that may be given for both directions ("--delay-ms 25") or for one
// ("--delay-ms-c2s 25"); the per-direction form wins because it is applied
// after the shared one regardless of order.
const per_direction_option per_direction_options[] = {
    {"--delay-ms", 0, 60'000, [](link_params& p, double v) { p.delay_ns = std::llround(v * 1e6); }},
    {"--jitter-ms", 0, 60'000, [](link_params& p, double v) { p.jitter_ns = std::llround(v * 1e6); }},
    {"--rate-mbit", 0, 1e6, [](link_params& p, double v) { p.rate_bps = std::llround(v * 1e6); }},
    {"--queue-kb", 0, 4e6, [](link_params& p, double v) { p.queue_bytes = std::llround(v * 1024); }},
    {"--queue-pkts", 0, 1e7, [](link_params& p, double v) { p.queue_packets = std::llround(v); }},
    {"--loss", 0, 100, [](link_params& p, double v) { p.loss = v / 100.0; }},
    {"--overhead-bytes", 0, 1000, [](link_params& p, double v) { p.overhead_bytes = std::lround(v); }},
};

} // namespace

options parse_options(const std::vector<std::string>& args)
{
    options opts;
    struct pending {
        const per_direction_option* opt;
        int dirs; // 1 = c2s, 2 = s2c, 3 = both
        double value;
    };
    std::vector<pending> shared, specific;

    for (std::size_t i = 0; i < args.size(); ++i) {
        const std::string& a = args[i];
        auto value = [&]() -> const std::string& {
            if (i + 1 >= args.size())
                throw std::invalid_argument(a + ": missing value");
            return args[++i];
        };
        if (a == "-h" || a == "--help") {
            opts.help = true;
            continue;
        }
        if (a == "--ns-client") { opts.client.ns_path = value(); continue; }
        if (a == "--ns-server") { opts.server.ns_path = value(); continue; }
        if (a == "--dev-client") { opts.client.dev_name = value(); continue; }
        if (a == "--dev-server") { opts.server.dev_name = value(); continue; }
        if (a == "--ready-file") { opts.ready_file = value(); continue; }
        if (a == "--stats-json") { opts.stats_json = value(); continue; }
        if (a == "--offload") {
            const std::string& v = value();
            if (v != "on" && v != "off")
                throw std::invalid_argument("--offload: expected on or off");
            opts.offload = v == "on";
            continue;
        }
        if (a == "--slack-us") {
            opts.slack_ns = std::llround(parse_number(a, value(), 0, 10'000) * 1e3);
            continue;
        }
        if (a == "--rt-priority") {
            opts.realtime_priority = static_cast<int>(parse_number(a, value(), 0, 99));
            continue;
        }
        if (a == "--seed") {
            opts.seed = static_cast<std::uint64_t>(parse_number(a, value(), 0, 1e15));
            continue;
        }
        if (a == "--ring-mb") {
            opts.ring_bytes = static_cast<std::uint64_t>(parse_number(a, value(), 1, 16384)) << 20;
            continue;
        }
        bool matched = false;
        for (const auto& o : per_direction_options) {
            int dirs = 0;
            if (a == o.name)
                dirs = 3;
            else if (a == std::string(o.name) + "-c2s")
                dirs = 1;
            else if (a == std::string(o.name) + "-s2c")
                dirs = 2;
            if (dirs == 0)
                continue;
            double v = parse_number(a, value(), o.lo, o.hi);
            (dirs == 3 ? shared : specific).push_back({&o, dirs, v});
            matched = true;
            break;
        }
        if (!matched)
            throw std::invalid_argument("unknown option '" + a + "' (try --help)");
    }
    for (const auto* list : {&shared, &specific})
        for (const auto& p : *list) {
            if (p.dirs & 1)
                p.opt->set(opts.c2s, p.value);
            if (p.dirs & 2)
                p.opt->set(opts.s2c, p.value);
        }
    if (!opts.help && (opts.client.dev_name.empty() || opts.server.dev_name.empty()))
        throw std::invalid_argument("--dev-client and --dev-server are required");
    for (const auto* p : {&opts.c2s, &opts.s2c})
        if (p->loss >= 1.0)
            throw std::invalid_argument("--loss must be below 100");
    return opts;
}

void finalize(options& opts)
{
    // Without an explicit limit the bottleneck buffers one bandwidth-delay
    // product of the round trip (the classic router sizing rule), but at
    // least 10 ms at the link rate and 64 KiB: a near-zero RTT would
    // otherwise leave a queue smaller than one TSO burst of the sender, and
    // the "LAN" cells would measure drops instead of the link.
    const std::int64_t rtt_ns = opts.c2s.delay_ns + opts.s2c.delay_ns;
    constexpr double min_queue_s = 0.010;
    for (auto* p : {&opts.c2s, &opts.s2c}) {
        if (p->queue_bytes != 0)
            continue;
        if (p->rate_bps == 0 && p->queue_packets == 0) {
            p->queue_bytes = 0; // unlimited rate: nothing ever waits
            continue;
        }
        const double bytes_per_s = static_cast<double>(p->rate_bps) / 8.0;
        const double bdp = bytes_per_s * std::max(static_cast<double>(rtt_ns) / 1e9, min_queue_s);
        p->queue_bytes = std::max<std::uint64_t>(64 * 1024, static_cast<std::uint64_t>(bdp));
    }
}

const char* usage_text()
{
    return R"(usage: wanem --dev-client NAME --dev-server NAME [options]

Creates one TUN device in each namespace and moves IP packets between them,
applying per-direction delay, rate, drop-tail queue and random loss.
Normally started by the wanem-net wrapper (see README.md).

  --ns-client PATH, --ns-server PATH   network namespace files (/run/netns/NAME)
  --dev-client NAME, --dev-server NAME TUN device names inside them
  --delay-ms MS        one-way delay
  --jitter-ms MS       uniform delay variation +-MS, never reorders
  --rate-mbit R        bottleneck rate in Mbit/s of IP bytes (0 = unlimited)
  --queue-kb KB        drop-tail limit of bytes waiting for the bottleneck
                       (default: one round-trip BDP, at least 10 ms of
                       the rate and 64 KiB)
  --queue-pkts N       drop-tail limit in packets (in addition)
  --loss PCT           random loss per wire packet, percent
  --overhead-bytes N   framing bytes charged per packet (0; 38 = Ethernet)
      Each of the options above also takes a -c2s or -s2c suffix to set one
      direction (client->server, server->client) only.
  --offload on|off     exchange TSO super-packets with the kernel (default on)
  --slack-us US        release packets up to US early to batch wake-ups (50)
  --rt-priority N      SCHED_FIFO priority so that busy CPUs do not stretch
                       the emulated delay (10; 0 = normal scheduling)
  --seed N             random seed for loss and jitter (1)
  --ring-mb MB         packet storage per direction (default from the link)
  --ready-file PATH    created once both devices exist
  --stats-json PATH    counters written here on exit
Signals: SIGUSR1 prints counters; SIGINT/SIGTERM print them and exit;
SIGRTMIN+1 takes the link down (every packet offered is dropped, both
directions), SIGRTMIN+2 brings it up again.
)";
}

} // namespace wanem
