#include "channel/window_report.hpp"

#include <algorithm>
#include <cstdio>

namespace longhaul {

namespace {

std::string fixed(double v, int decimals)
{
    char buf[64];
    std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
    return buf;
}

std::string ms(std::uint64_t us) { return fixed(static_cast<double>(us) / 1000.0, 1) + " ms"; }
std::string seconds(std::uint64_t us) { return fixed(static_cast<double>(us) / 1e6, 2) + " s"; }

std::string share(std::uint64_t part, std::uint64_t whole)
{
    return seconds(part) + " (" + fixed(whole == 0 ? 0.0 : 100.0 * static_cast<double>(part) / static_cast<double>(whole), 1) +
           "%)";
}

} // namespace

std::string mib(std::uint64_t bytes) { return fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 1) + " MiB"; }

std::string describe_window_change(channel_id id, const window_change& c, std::uint64_t budget_limit)
{
    std::string out = "channel " + std::to_string(id) + ": window " + mib(c.from) + " -> " + mib(c.to) + ": ";
    const std::string rate = mib(c.per_rtt) + " per " + ms(c.rtt_us) + " round trip";
    switch (c.why) {
    case window_change::reason::lead: out += "ahead of the sender, " + rate; break;
    case window_change::reason::window_limited: out += "window-limited, " + rate; break;
    case window_change::reason::settled: out += "rate settled, " + rate; break;
    case window_change::reason::sink_limited: out += "sink-limited, the sink took " + rate; break;
    case window_change::reason::idle: out += "idle, growth returned"; break;
    case window_change::reason::spare_bound:
        out += "spare credit bounded (the peer buffers what it holds), " + rate;
        break;
    case window_change::reason::path_bound: out += "above what the path holds, " + rate; break;
    case window_change::reason::budget:
        out = "channel " + std::to_string(id) + ": window " + mib(c.from) + " stays: connection budget of " +
              mib(budget_limit) + " in use, " + rate;
        break;
    }
    return out;
}

std::string describe_channel_summary(const channel_summary& s)
{
    const window_stats& w = s.receive;
    std::string out = "channel " + std::to_string(s.id) + " (" + s.type + ") summary: in " + std::to_string(s.bytes_in) +
                      " bytes, out " + std::to_string(s.bytes_out) + " bytes, " + seconds(s.lifetime_us) +
                      "; window mean " + mib(w.mean_target()) + ", peak " + mib(w.peak_target) + "; active " +
                      seconds(w.active_us) + ": window-limited " + share(w.window_limited_us, w.active_us) +
                      ", network-limited " + share(w.network_limited_us, w.active_us) + ", sink-limited " +
                      share(w.sink_limited_us, w.active_us) + "; send blocked by peer window " +
                      seconds(s.send_blocked_us) + "; rtt " + ms(s.rtt_us) + " (";
    out += s.transport_rtt_us != 0 ? "tcp " + ms(s.transport_rtt_us) : std::string("tcp none");
    out += s.probe_rtt_us != 0 ? ", ssh " + ms(s.probe_rtt_us) + " min " + ms(s.probe_min_rtt_us) : std::string(", ssh none");
    return out + ")";
}

std::string metrics_header()
{
    return "# time_s channel bytes_in bytes_out window credit backlog peer_window rtt_ms tcp_rtt_ms ssh_rtt_ms "
           "window_peak window_mean active_s window_limited_s network_limited_s sink_limited_s send_blocked_s "
           "tcp_cwnd tcp_retransmits tcp_rcv_space";
}

std::string metrics_line(const channel_metrics& m)
{
    const auto s = [](std::uint64_t us) { return fixed(static_cast<double>(us) / 1e6, 3); };
    const auto msec = [](std::uint64_t us) { return fixed(static_cast<double>(us) / 1000.0, 1); };
    std::string out = fixed(m.time_s, 3) + " " + std::to_string(m.id) + " " + std::to_string(m.bytes_in) + " " +
                      std::to_string(m.bytes_out) + " " + std::to_string(m.window) + " " + std::to_string(m.credit) +
                      " " + std::to_string(m.backlog) + " " + std::to_string(m.peer_window) + " " + msec(m.rtt_us) +
                      " " + msec(m.tcp_rtt_us) + " " + msec(m.ssh_rtt_us) + " " + std::to_string(m.stats.peak_target) +
                      " " + std::to_string(m.stats.mean_target()) + " " + s(m.stats.active_us) + " " +
                      s(m.stats.window_limited_us) + " " + s(m.stats.network_limited_us) + " " +
                      s(m.stats.sink_limited_us) + " " + s(m.send_blocked_us) + " " + std::to_string(m.tcp_cwnd_bytes) +
                      " " + std::to_string(m.tcp_retransmits) + " " +
                      std::to_string(m.tcp_rcv_space);
    return out;
}

bool window_log_filter::keep(channel_id id, const window_change& c, std::uint64_t now_us)
{
    auto [it, first] = last_.try_emplace(id);
    printed& p = it->second;
    const std::uint64_t larger = std::max(c.to, p.to);
    const std::uint64_t moved = c.to > p.to ? c.to - p.to : p.to - c.to;
    if (!first && moved * 8 < larger && now_us - p.at_us < quiet_us)
        return false;
    p = {c.to, now_us};
    return true;
}

} // namespace longhaul
