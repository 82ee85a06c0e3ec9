// Runs a transport core over a connected stream socket with Boost.Asio.
//
// The driver is readiness-based: it waits for the socket to become readable
// or writable and then makes non-blocking read()/write() calls straight
// into/out of the core's buffers. No buffer is handed to the kernel across an
// asynchronous operation, so the core may grow its buffers at any time, and
// one write() carries every packet queued since the last one (batching
// without copying). Reads take up to 256 KiB per call, four per wakeup;
// their events are delivered in turns (payload_per_turn).
//
// Asio stays out of this header (pimpl) so that programs including it do not
// pay for Asio's templates.
#pragma once

#include "common/transport/transport.hpp"

#include <chrono>
#include <functional>
#include <memory>
#include <system_error>

namespace boost::asio {
class io_context;
}

namespace longhaul {

class crypto_engine;

class transport_driver {
public:
    // Called for every transport event. The handler may call send() etc. on
    // the transport; the driver flushes afterwards.
    using event_handler = std::function<void(const transport_event&)>;
    // Called once when the connection is over and the socket closed.
    using close_handler = std::function<void(std::error_code io_error)>;

    // Unsent bytes the kernel may hold for a TCP socket (TCP_NOTSENT_LOWAT)
    // until set_unsent_limit() says otherwise.
    static constexpr std::size_t unsent_low_water = 256 * 1024;

    // Payload bytes delivered to the event handler per turn of the event
    // loop; what a read brought beyond that is delivered in later turns,
    // after the other ready handlers. Every handler on the loop (a small
    // request on another channel's socket, a sink that can take data) so
    // waits at most this much work, not a whole 1 MiB read's: on loopback
    // under eight bulk channels, 1 MiB turns gave 64-byte requests beside
    // them a median of 5-6 ms, 64 KiB turns 3-4 ms (docs/PERFORMANCE.md).
    static constexpr std::size_t payload_per_turn = 64 * 1024;

    // Takes ownership of `fd`, a connected socket.
    transport_driver(boost::asio::io_context& io, int fd, transport& core);
    // Separate descriptors for reading and writing (sshd -i on a pair of
    // pipes, a ProxyCommand's stdout and stdin). Takes ownership of both.
    transport_driver(boost::asio::io_context& io, int read_fd, int write_fd, transport& core);
    ~transport_driver();
    transport_driver(const transport_driver&) = delete;
    transport_driver& operator=(const transport_driver&) = delete;

    void start(event_handler on_event, close_handler on_close);
    // Writes whatever the core has queued (call after sending from outside
    // an event handler).
    void flush();
    // Processes input the core already holds (a transport imported with
    // unread bytes, see transport_state.hpp): events as if just read.
    void process_input();
    // Closes the socket after the queued output has been written.
    void close();
    // Pauses/resumes reading from the socket (backpressure from the upper layer).
    void pause_reading(bool paused);
    // Stops once the output queue is below `low_water` bytes: the upper layer
    // resumes producing data from here.
    void on_output_drained(std::size_t low_water, std::function<void()> cb);
    // A peer that sends requests and never reads what they produce would
    // otherwise grow the output queue without bound (issue 12): above
    // `pause_above` queued bytes reading stops, below `resume_below` it
    // resumes, and above `hard_cap` the connection is dropped (close
    // handler with ENOBUFS). 0 for pause_above: no limit (the default).
    void limit_output(std::size_t pause_above, std::size_t resume_below, std::size_t hard_cap);

    // TCP_NOTSENT_LOWAT of the write side: the kernel wakes the writer when
    // less than half of this is left unsent. A no-op when the descriptor is
    // not a TCP socket, or the value is the one already set.
    void set_unsent_limit(std::size_t bytes);

    transport& core() noexcept;
    // The descriptor read from (for getsockopt: TCP_INFO, addresses).
    int native_handle() const noexcept;
    // Bytes handed to the kernel so far (for the drain rate).
    std::uint64_t bytes_written() const noexcept;
    // When bytes from the peer last arrived (start() before any): what
    // ServerAlive/ClientAlive count from (alive_check.hpp).
    std::chrono::steady_clock::time_point last_input() const noexcept;
    // The crypto engine lent to the core (transport_config::crypto_threads
    // allowing two threads or more), or nullptr: for statistics.
    const crypto_engine* crypto() const noexcept;

private:
    struct impl;
    std::shared_ptr<impl> impl_;
};

} // namespace longhaul
