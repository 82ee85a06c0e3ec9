// Ties a connection core (channels) to the event loop: routes connection
// events to per-channel handlers, applies output backpressure across
// channels, feeds the window policy the TCP round-trip time, and runs the
// periodic window tick. Programs (ssh, sshd) attach handlers per channel.
#pragma once

#include "channel/connection.hpp"
#include "channel/window_report.hpp"
#include "common/io/transport_driver.hpp"
#include "common/log.hpp"

#include <algorithm>
#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <unordered_map>

namespace boost::asio {
class io_context;
}

namespace longhaul {

class connection_runner;

class channel_handler {
public:
    virtual ~channel_handler() = default;
    virtual void on_open_confirmed(byte_span /*type_specific*/) {}
    virtual void on_open_failed(std::uint32_t /*reason*/, std::string_view /*text*/) {}
    // Data for the channel: the handler passes it to its sink and reports
    // what the sink took with runner.consumed() (now or later).
    virtual void on_data(byte_span data, std::uint32_t extended) = 0;
    virtual void on_eof() {}
    // The peer closed the channel. The handler closes its side when ready.
    virtual void on_close() {}
    // Default: refuse requests the handler does not know.
    virtual void on_request(std::string_view name, bool want_reply, byte_span data);
    virtual void on_request_reply(bool /*success*/) {}
    // The peer's window opened, or the transport output drained: send more.
    virtual void on_writable() {}

    connection_runner* runner = nullptr;
    channel_id id = 0;
};

class connection_runner {
public:
    connection_runner(boost::asio::io_context& io, transport_driver& driver, connection& conn);
    ~connection_runner();

    boost::asio::io_context& io() noexcept { return io_; }
    connection& conn() noexcept { return conn_; }
    transport& core() noexcept { return conn_.core(); }
    transport_driver& driver() noexcept { return driver_; }

    void attach(channel_id id, std::shared_ptr<channel_handler> h);
    void detach(channel_id id);
    channel_handler* handler(channel_id id);

    // A connection event for a channel (or a global reply), as the session
    // layer returns it: goes to the channel's handler. The peer's channel
    // opens and global requests are answered by the session layer's
    // tables (channel/channel_types.hpp); given here they are refused.
    void dispatch(const connection_event& e);

    // Replies to our global requests (keepalives).
    std::function<void(bool success, byte_span data)> on_global_reply;
    // A channel carried no data for its inactivity timeout
    // (connection::idle_expired, checked at every tick): the program
    // closes it as it closes that kind of channel. Unset: never checked.
    std::function<void(channel_id)> on_idle_timeout;

    // Backpressure: above the high-water mark sources stop reading; they are
    // woken (on_writable) when the output falls below a quarter of it. The
    // mark is a time, not a size: about 20 ms of what the connection has
    // recently drained (64 KiB to 4 MiB), so a slow path does not hold
    // seconds of bulk data in front of a keystroke or a window adjust.
    bool congested() const noexcept;
    // A source that had emptied its descriptor (a request, a keystroke) may
    // send up to small_send_bytes past the mark, once per wake-up, so it
    // does not wait behind the bulk channels' turns (each of which refills
    // the queue); never beyond twice the mark.
    static constexpr std::size_t small_send_bytes = 16 * 1024;
    bool room_for_small_send() const noexcept;
    void wake_when_drained(channel_id id);
    void consumed(channel_id id, std::size_t n);
    void flush() { driver_.flush(); }
    std::size_t output_high_water() const noexcept { return high_water_; }

    static constexpr std::size_t min_output_high_water = 64 * 1024;
    static constexpr std::size_t max_output_high_water = 4 * 1024 * 1024;
    static constexpr std::uint64_t output_queue_us = 20'000;

    // The kernel's share (TCP_NOTSENT_LOWAT) follows the same rate: 20 ms
    // of it, 256 KiB to 32 MiB. The kernel wakes the writer when half is
    // left, so the socket runs dry only if the process is late by 10 ms.
    // A fixed 256 KiB ran dry after 1 ms at 1 Gbit/s with two busy cores;
    // each dry moment marks TCP's delivery-rate samples app-limited, BBR
    // ignores those and stayed in its startup (pacing at 2.89x the link)
    // for a whole 10 s transfer, losing 13 % of the packets at the
    // bottleneck: 0.87 of raw TCP at 100 ms (docs/PERFORMANCE.md).
    static constexpr std::size_t max_unsent_limit = 32 * 1024 * 1024;
    static constexpr std::uint64_t queue_bytes_for(std::uint64_t bytes_per_second)
    {
        // 2^40 bytes/s (8.8 Tbit/s) keeps the product far from overflow.
        return std::min<std::uint64_t>(bytes_per_second, std::uint64_t(1) << 40) * output_queue_us / 1'000'000;
    }
    static constexpr std::size_t output_high_water_for(std::uint64_t bytes_per_second)
    {
        return static_cast<std::size_t>(
            std::clamp<std::uint64_t>(queue_bytes_for(bytes_per_second), min_output_high_water, max_output_high_water));
    }
    static constexpr std::size_t unsent_limit_for(std::uint64_t bytes_per_second)
    {
        return static_cast<std::size_t>(std::clamp<std::uint64_t>(queue_bytes_for(bytes_per_second),
                                                                  transport_driver::unsent_low_water, max_unsent_limit));
    }

    // Starts the periodic timer: window ticks, RTT sampling and channels'
    // inactivity timeouts.
    void start_timers();
    void stop();

    // Where window changes (debug1) and each channel's summary at close
    // (VERBOSE) are logged; none when null.
    void set_logger(logger* log);
    // Appends one line per channel every `interval` to `path` (ssh_config
    // Metrics). False (and the reason in `error`) if the file cannot be opened.
    bool enable_metrics(const std::string& path, std::chrono::seconds interval, std::string& error);

private:
    void drained();
    void sample_rtt();
    void sample_drain_rate();
    void write_metrics();

    boost::asio::io_context& io_;
    transport_driver& driver_;
    connection& conn_;
    logger* log_ = nullptr;
    window_log_filter window_log_; // which window changes get a -v line
    std::size_t high_water_ = min_output_high_water;
    std::uint64_t last_written_ = 0;
    std::chrono::steady_clock::time_point last_rate_sample_{};
    // Bytes per second drained in each of the last ten periods (two seconds).
    std::uint64_t drain_rates_[10] = {};
    unsigned drain_index_ = 0;
    struct metrics_file;
    std::unique_ptr<metrics_file> metrics_;
    std::unordered_map<channel_id, std::shared_ptr<channel_handler>> handlers_;
    std::deque<channel_id> waiting_;
    bool drain_armed_ = false;
    struct timer_state;
    std::shared_ptr<timer_state> timer_;
};

} // namespace longhaul
