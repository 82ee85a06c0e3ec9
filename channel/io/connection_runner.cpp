#include "channel/io/connection_runner.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/steady_timer.hpp>

#include "channel/channel_types.hpp"
#include "channel/window_report.hpp"
#include "common/crypto/crypto_engine.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <cstddef>
#include <iterator>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

namespace longhaul {

namespace asio = boost::asio;

void channel_handler::on_request(std::string_view, bool want_reply, byte_span)
{
    if (want_reply && runner != nullptr)
        runner->conn().reply(id, false);
}

struct connection_runner::timer_state {
    explicit timer_state(asio::io_context& io) : timer(io) {}
    asio::steady_timer timer;
    bool stopped = false;
};

connection_runner::connection_runner(asio::io_context& io, transport_driver& driver, connection& conn)
    : io_(io), driver_(driver), conn_(conn), timer_(std::make_shared<timer_state>(io))
{
}

struct connection_runner::metrics_file {
    std::FILE* f = nullptr;
    std::chrono::steady_clock::duration interval{};
    std::chrono::steady_clock::time_point next{};
    ~metrics_file()
    {
        if (f != nullptr)
            std::fclose(f);
    }
};

connection_runner::~connection_runner()
{
    stop();
    if (metrics_)
        write_metrics(); // the last figures, as the connection ends
}

bool connection_runner::enable_metrics(const std::string& path, std::chrono::seconds interval, std::string& error)
{
    auto m = std::make_unique<metrics_file>();
    m->f = std::fopen(path.c_str(), "ae");
    if (m->f == nullptr) {
        error = "Couldn't open metrics file " + path + ": " + std::strerror(errno);
        return false;
    }
    m->interval = interval;
    std::fprintf(m->f, "%s\n", metrics_header().c_str());
    std::fflush(m->f);
    metrics_ = std::move(m);
    return true;
}

void connection_runner::write_metrics()
{
    tcp_info info{};
    socklen_t len = sizeof info;
    const bool tcp = getsockopt(driver_.native_handle(), IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
                     len >= offsetof(tcp_info, tcpi_total_retrans) + sizeof info.tcpi_total_retrans;
    const double now = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    for (const auto& [id, h] : handlers_) {
        (void)h;
        if (!conn_.exists(id))
            continue;
        const channel_info& ci = conn_.info(id);
        const receive_window& rx = conn_.window(id);
        channel_metrics m;
        m.time_s = now;
        m.id = id;
        m.bytes_in = ci.bytes_in;
        m.bytes_out = ci.bytes_out;
        m.window = rx.target();
        m.credit = rx.credit();
        m.backlog = rx.backlog();
        m.peer_window = ci.remote_window;
        m.rtt_us = conn_.rtt_us();
        m.ssh_rtt_us = conn_.probe().srtt_us();
        m.stats = rx.stats();
        m.send_blocked_us = conn_.send_blocked_us(id);
        if (tcp) {
            m.tcp_rtt_us = info.tcpi_rtt;
            m.tcp_cwnd_bytes = std::uint64_t(info.tcpi_snd_cwnd) * info.tcpi_snd_mss;
            m.tcp_retransmits = info.tcpi_total_retrans;
            m.tcp_rcv_space = info.tcpi_rcv_space;
        }
        std::fprintf(metrics_->f, "%s\n", metrics_line(m).c_str());
    }
    std::fflush(metrics_->f);
}

void connection_runner::stop()
{
    if (timer_->stopped)
        return;
    // Channels the connection's end cut off still leave their summary.
    conn_.report_open_channels();
    if (log_ != nullptr && log_->enabled(log_level::verbose) && driver_.crypto() != nullptr)
        log_->verbose(describe_crypto_engine(*driver_.crypto()));
    timer_->stopped = true;
    timer_->timer.cancel();
}

void connection_runner::attach(channel_id id, std::shared_ptr<channel_handler> h)
{
    h->runner = this;
    h->id = id;
    handlers_[id] = std::move(h);
}

void connection_runner::detach(channel_id id) { handlers_.erase(id); }

channel_handler* connection_runner::handler(channel_id id)
{
    auto it = handlers_.find(id);
    return it == handlers_.end() ? nullptr : it->second.get();
}

void connection_runner::dispatch(const connection_event& e)
{
    using t = connection_event_type;
    if (e.type == t::none)
        return;
    if (e.type == t::open_request) {
        refuse_channel_open(conn_, e.channel, e.name, e.data);
        return;
    }
    if (e.type == t::global_request) {
        refuse_global_request(conn_, e.name, e.want_reply, e.data);
        return;
    }
    if (e.type == t::global_reply) {
        if (on_global_reply)
            on_global_reply(e.success, e.data);
        return;
    }
    // Keep the handler alive through the callback even if it detaches itself.
    auto it = handlers_.find(e.channel);
    if (it == handlers_.end()) {
        // Data for a channel nobody reads: give the window back so the peer is not stuck.
        if (e.type == t::data)
            conn_.consumed(e.channel, e.data.size(), std::chrono::steady_clock::now());
        return;
    }
    std::shared_ptr<channel_handler> h = it->second;
    switch (e.type) {
    case t::open_confirmed: h->on_open_confirmed(e.data); break;
    case t::open_failed:
        h->on_open_failed(e.code, e.text);
        handlers_.erase(e.channel);
        break;
    case t::data: h->on_data(e.data, e.code); break;
    case t::eof: h->on_eof(); break;
    case t::close:
        h->on_close();
        if (!conn_.exists(e.channel))
            handlers_.erase(e.channel);
        break;
    case t::request: h->on_request(e.name, e.want_reply, e.data); break;
    case t::request_reply: h->on_request_reply(e.success); break;
    case t::window_opened: h->on_writable(); break;
    default: break;
    }
}

bool connection_runner::congested() const noexcept { return conn_.core().queued_size() > high_water_; }

bool connection_runner::room_for_small_send() const noexcept
{
    return conn_.core().queued_size() + small_send_bytes <= 2 * high_water_;
}

void connection_runner::wake_when_drained(channel_id id)
{
    if (std::find(waiting_.begin(), waiting_.end(), id) == waiting_.end())
        waiting_.push_back(id);
    if (!drain_armed_) {
        drain_armed_ = true;
        driver_.on_output_drained(high_water_ / 4, [this] { drained(); });
    }
}

void connection_runner::drained()
{
    drain_armed_ = false;
    // Round-robin: every waiting channel gets a turn, in arrival order.
    std::deque<channel_id> ready;
    ready.swap(waiting_);
    for (channel_id id : ready)
        if (auto* h = handler(id))
            h->on_writable();
    driver_.flush();
}

void connection_runner::consumed(channel_id id, std::size_t n)
{
    conn_.consumed(id, n, std::chrono::steady_clock::now());
}

void connection_runner::sample_rtt()
{
    // The window policy needs the path's round-trip time; the kernel's TCP
    // estimate is the measurement. A stream that is not a TCP socket (a
    // ProxyCommand's socketpair, sshd -i's pipes) reports 0, and the
    // connection core measures the RTT itself with probes.
    // glibc's tcp_info stops before the fields Linux added later; the
    // minimum RTT (Linux 4.6) follows them at a fixed place.
    // (The count of packets received out of order, Linux 5.4, comes later.)
    struct {
        tcp_info base;
        std::uint64_t pacing_rate, max_pacing_rate, bytes_acked, bytes_received;
        std::uint32_t segs_out, segs_in, notsent_bytes, min_rtt;
        std::uint32_t data_segs_in, data_segs_out;
        std::uint64_t delivery_rate, busy_time, rwnd_limited, sndbuf_limited;
        std::uint32_t delivered, delivered_ce;
        std::uint64_t bytes_sent, bytes_retrans;
        std::uint32_t dsack_dups, reord_seen, rcv_ooopack, snd_wnd;
    } info{};
    static_assert(offsetof(decltype(info), min_rtt) == 148, "Linux's tcpi_min_rtt");
    static_assert(offsetof(decltype(info), rcv_ooopack) == 224, "Linux's tcpi_rcv_ooopack");
    socklen_t len = sizeof info;
    std::uint32_t rtt = 0, min_rtt = 0, out_of_order = 0;
    if (getsockopt(driver_.native_handle(), IPPROTO_TCP, TCP_INFO, &info, &len) == 0 &&
        len >= offsetof(tcp_info, tcpi_rcv_rtt) + sizeof info.base.tcpi_rcv_rtt) {
        rtt = info.base.tcpi_rtt != 0 ? info.base.tcpi_rtt : info.base.tcpi_rcv_rtt;
        if (len >= offsetof(decltype(info), min_rtt) + sizeof info.min_rtt && info.min_rtt != ~0u)
            min_rtt = info.min_rtt;
        if (len >= offsetof(decltype(info), rcv_ooopack) + sizeof info.rcv_ooopack)
            out_of_order = info.rcv_ooopack;
    }
    conn_.set_rtt(std::chrono::microseconds(rtt), std::chrono::microseconds(min_rtt), out_of_order);
}

void connection_runner::sample_drain_rate()
{
    const auto now = std::chrono::steady_clock::now();
    const std::uint64_t written = driver_.bytes_written();
    if (last_rate_sample_ != std::chrono::steady_clock::time_point{}) {
        const auto us = std::chrono::duration_cast<std::chrono::microseconds>(now - last_rate_sample_).count();
        if (us > 0)
            drain_rates_[drain_index_++ % std::size(drain_rates_)] =
                (written - last_written_) * 1'000'000 / static_cast<std::uint64_t>(us);
    }
    last_written_ = written;
    last_rate_sample_ = now;
    // The best recent rate: what the path can take when there is data to
    // send (idle periods would otherwise pull the mark down).
    const std::uint64_t rate = *std::max_element(std::begin(drain_rates_), std::end(drain_rates_));
    high_water_ = output_high_water_for(rate);
    driver_.set_unsent_limit(unsent_limit_for(rate));
}

void connection_runner::set_logger(logger* log)
{
    log_ = log;
    if (log_ == nullptr) {
        conn_.on_window_change = nullptr;
        conn_.on_channel_released = nullptr;
        conn_.on_rtt_sample = nullptr;
        return;
    }
    conn_.on_window_change = [this](channel_id id, const window_change& c) {
        if (!log_->enabled(log_level::debug1))
            return;
        const auto now = std::chrono::duration_cast<std::chrono::microseconds>(
            std::chrono::steady_clock::now().time_since_epoch());
        if (window_log_.keep(id, c, static_cast<std::uint64_t>(now.count())))
            log_->debug(describe_window_change(id, c, conn_.budget().limit()));
    };
    conn_.on_rtt_sample = [this](std::uint64_t probe_us, std::uint64_t tcp_us) {
        if (log_->enabled(log_level::debug2))
            log_->debug2("rtt probe answered in " + std::to_string(probe_us / 1000) + "." +
                         std::to_string(probe_us / 100 % 10) + " ms" +
                         (tcp_us != 0 ? " (tcp " + std::to_string(tcp_us / 1000) + "." + std::to_string(tcp_us / 100 % 10) + " ms)"
                                      : std::string(" (no tcp estimate)")));
    };
    conn_.on_channel_released = [this](const channel_summary& s) {
        window_log_.forget(s.id);
        if (log_->enabled(log_level::verbose))
            log_->verbose(describe_channel_summary(s));
    };
}

void connection_runner::start_timers()
{
    // Every period: the RTT from TCP_INFO, then the core's tick (idle
    // windows shrink, RTT probes go out). The first tick also tells the
    // core the time before the first channel opens.
    sample_rtt();
    sample_drain_rate();
    const auto now = std::chrono::steady_clock::now();
    conn_.tick(now);
    if (on_idle_timeout)
        for (channel_id id : conn_.idle_expired(now))
            on_idle_timeout(id);
    if (metrics_ && now >= metrics_->next) {
        write_metrics();
        metrics_->next = now + metrics_->interval;
    }
    driver_.flush();
    auto state = timer_;
    state->timer.expires_after(std::chrono::microseconds(connection::sample_period_us));
    state->timer.async_wait([this, state](const boost::system::error_code& ec) {
        if (ec || state->stopped)
            return;
        start_timers();
    });
}

} // namespace longhaul
