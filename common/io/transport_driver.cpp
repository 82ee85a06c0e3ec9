#include "common/io/transport_driver.hpp"

#include "common/crypto/crypto_engine.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/steady_timer.hpp>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cerrno>

namespace longhaul {

namespace asio = boost::asio;

struct transport_driver::impl : std::enable_shared_from_this<impl> {
    impl(asio::io_context& io, int read_fd, int write_fd, transport& core)
        : stream(io, read_fd), out(io, write_fd == read_fd ? ::dup(write_fd) : write_fd), timer(io), core(core),
          socket(write_fd == read_fd)
    {
        // One descriptor for both directions is duplicated so that each Asio
        // object owns its own; a socket is shut down at the end.
    }

    asio::posix::stream_descriptor stream; // read side
    asio::posix::stream_descriptor out;    // write side
    asio::steady_timer timer;
    transport& core;
    bool socket;
    // Parallel packet crypto (issue 13), when CryptoThreads allows more
    // than one thread. Lent to the core, which uses it only after user
    // authentication; its helper threads start with the first batch worth
    // splitting, so an interactive session never has any.
    std::unique_ptr<crypto_engine> engine;
    event_handler on_event;
    close_handler on_close;
    std::function<void()> on_drained;
    std::size_t drain_low_water = 0;
    bool reading = false;
    bool writing = false;
    bool rest_posted = false; // process() left events for a turn of their own
    bool read_paused = false;
    // limit_output(): reading stopped because the peer does not read.
    std::size_t output_pause_above = 0, output_resume_below = 0, output_hard_cap = 0;
    bool output_full = false;
    bool closing = false;
    bool finished = false;
    bool eof = false;
    // acknowledge_now() still to be tried: false once the descriptor
    // refuses it (not TCP: a ProxyCommand's pipe, a -J hop's channel).
    bool quick_ack_usable = true;
    std::uint64_t written = 0;
    std::chrono::steady_clock::time_point last_input{};
    // TCP_NOTSENT_LOWAT in force; 0 once setting it failed (not TCP).
    std::size_t unsent_limit = 0;
    std::error_code error;

    void start_read()
    {
        // Input already read waits for its turn (post_rest): read more only
        // after it, so the core's input stays within one read's worth.
        if (reading || read_paused || eof || finished || rest_posted)
            return;
        if (output_pause_above != 0 && core.queued_size() > output_pause_above)
            output_full = true;
        if (output_full)
            return; // flush() resumes below output_resume_below
        reading = true;
        stream.async_wait(asio::posix::stream_descriptor::wait_read,
                          [self = shared_from_this()](const boost::system::error_code& ec) { self->readable(ec); });
    }

    // What was read is acknowledged at once, not after the kernel's
    // delayed-ACK timer (40 ms), and the socket leaves the kernel's
    // "interactive" mode, in which it holds ACKs back for a reply to carry.
    // A peer with Nagle on (OpenSSH without a tty: its sshd serving
    // forwards and commands, its ssh without -t) holds the short tail of
    // what it sends until everything before it is acknowledged:
    // - in a login, KEXDH_INIT behind KEXINIT and the message after
    //   hostkeys-00 (40 of Debian's 180 ms login);
    // - on the data path, the end of each reply: one -L stream of 64 KiB
    //   requests and replies through Debian's sshd moved 4 MiB/s with the
    //   rule applied to the login alone (docs/PERFORMANCE.md, where bulk
    //   throughput and CPU with this call after every read are measured).
    // A wakeup that sent something needs no call: its first segment
    // carried the ACK, and skipping it there (window adjusts of a
    // download, a bulk sender's reads of them) took 7-9% off both ends'
    // CPU in downloads over the emulated WAN.
    void acknowledge_now()
    {
        if (!quick_ack_usable)
            return;
        const int one = 1;
        if (::setsockopt(stream.native_handle(), IPPROTO_TCP, TCP_QUICKACK, &one, sizeof one) != 0)
            quick_ack_usable = false;
    }

    void readable(const boost::system::error_code& ec)
    {
        reading = false;
        if (finished)
            return;
        if (ec) {
            if (ec != asio::error::operation_aborted)
                fatal(ec);
            return;
        }
        // Drain what the kernel has, up to a few large reads per wakeup so that
        // events are processed (and windows opened) while data keeps arriving.
        bool got = false;
        for (int i = 0; i < 4 && !read_paused; ++i) {
            auto space = core.input_space(256 * 1024);
            if (space.empty())
                break;
            ssize_t n = ::read(stream.native_handle(), space.data(), space.size());
            if (n > 0) {
                core.commit_input(static_cast<std::size_t>(n));
                got = true;
                if (static_cast<std::size_t>(n) < space.size())
                    break;
                continue;
            }
            if (n == 0) {
                eof = true;
                core.input_eof();
                break;
            }
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN || errno == EWOULDBLOCK)
                break;
            fatal(std::error_code(errno, std::system_category()));
            return;
        }
        // One clock read per wakeup, not per read.
        if (got)
            last_input = std::chrono::steady_clock::now();
        // What this wakeup sent carried the ACK already; otherwise send one.
        const std::uint64_t sent_before = written;
        process();
        if (got && written == sent_before)
            acknowledge_now();
        start_read();
    }

    // Processes the events of the input read so far, up to
    // payload_per_turn bytes of payloads; the rest waits for a posted turn
    // of its own, after the other handlers that are ready (a channel's
    // socket with a request on it, a sink that can take data). A read of up
    // to 1 MiB stays one read, so the crypto engine can open its packets
    // as one batch; only their delivery is cut into turns.
    void process()
    {
        std::size_t delivered = 0;
        for (;;) {
            if (finished)
                return;
            if (delivered >= payload_per_turn) {
                post_rest();
                break;
            }
            transport_event ev = core.poll();
            if (ev.type == transport_event_type::none)
                break;
            delivered += ev.payload.size();
            if (on_event)
                on_event(ev);
            if (ev.type == transport_event_type::disconnected)
                closing = true;
        }
        core.advance_time(std::chrono::steady_clock::now());
        arm_timer();
        flush();
    }

    void post_rest()
    {
        if (rest_posted)
            return;
        rest_posted = true;
        asio::post(stream.get_executor(), [self = shared_from_this()] {
            self->rest_posted = false;
            if (self->finished)
                return;
            self->process();
            self->start_read();
        });
    }

    void arm_timer()
    {
        auto deadline = core.next_deadline();
        if (!deadline)
            return;
        timer.expires_at(*deadline);
        timer.async_wait([self = shared_from_this()](const boost::system::error_code& ec) {
            if (!ec && !self->finished)
                self->process();
        });
    }

    // limit_output(): drop a connection whose queue passed the hard cap
    // (reading is already paused, so only our own producers can get it
    // there), and resume reading once the queue has drained.
    bool check_output_limits()
    {
        if (output_pause_above == 0)
            return true;
        const std::size_t queued = core.queued_size();
        if (output_hard_cap != 0 && queued > output_hard_cap) {
            fatal(std::error_code(ENOBUFS, std::system_category()));
            return false;
        }
        if (output_full && queued <= output_resume_below) {
            output_full = false;
            start_read();
        }
        return true;
    }

    void flush()
    {
        if (finished || writing)
            return;
        if (!check_output_limits())
            return;
        while (core.output_size() > 0) {
            auto pending = core.output();
            ssize_t n = socket ? ::send(out.native_handle(), pending.data(), pending.size(), MSG_NOSIGNAL)
                               : ::write(out.native_handle(), pending.data(), pending.size());
            if (n > 0) {
                core.consume_output(static_cast<std::size_t>(n));
                written += static_cast<std::uint64_t>(n);
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
                if (!check_output_limits())
                    return;
                writing = true;
                out.async_wait(asio::posix::stream_descriptor::wait_write,
                                  [self = shared_from_this()](const boost::system::error_code& ec) {
                                      self->writing = false;
                                      if (ec) {
                                          if (ec != asio::error::operation_aborted)
                                              self->fatal(ec);
                                          return;
                                      }
                                      self->flush();
                                  });
                return;
            }
            fatal(std::error_code(n < 0 ? errno : EPIPE, std::system_category()));
            return;
        }
        if (!check_output_limits())
            return;
        if (on_drained && core.queued_size() <= drain_low_water) {
            auto cb = std::move(on_drained);
            on_drained = nullptr;
            cb();
        }
        if ((closing || core.closed()) && core.output_size() == 0)
            finish({});
        else if (eof && !core.closed() && !rest_posted)
            process_eof();
    }

    void process_eof()
    {
        // EOF with nothing decodable left: let the core report it.
        transport_event ev = core.poll();
        if (ev.type != transport_event_type::none) {
            if (on_event)
                on_event(ev);
            if (ev.type == transport_event_type::disconnected)
                closing = true;
            flush();
        }
    }

    void fatal(std::error_code ec)
    {
        if (!error)
            error = ec;
        if (!core.closed()) {
            core.input_eof();
            // The socket is gone: nothing more can be sent. Report the loss.
            transport_event ev = core.poll();
            while (ev.type != transport_event_type::none) {
                if (on_event)
                    on_event(ev);
                if (ev.type == transport_event_type::disconnected)
                    break;
                ev = core.poll();
            }
        }
        finish(ec);
    }

    void finish(std::error_code ec)
    {
        if (finished)
            return;
        finished = true;
        timer.cancel();
        boost::system::error_code ignored;
        stream.cancel(ignored);
        out.cancel(ignored);
        if (socket)
            ::shutdown(stream.native_handle(), SHUT_RDWR);
        stream.close(ignored);
        out.close(ignored);
        if (on_close) {
            auto cb = std::move(on_close);
            cb(error ? error : ec);
        }
    }
};

transport_driver::transport_driver(asio::io_context& io, int fd, transport& core)
    : transport_driver(io, fd, fd, core)
{
}

transport_driver::transport_driver(asio::io_context& io, int read_fd, int write_fd, transport& core)
    : impl_(std::make_shared<impl>(io, read_fd, write_fd, core))
{
    const int configured = core.config().crypto_threads;
    if (const unsigned threads = crypto_threads_for(configured); threads > 1) {
        // A number in the configuration forces the pool for every batch; automatic
        // lets the engine measure whether the pool pays.
        impl_->engine = std::make_unique<crypto_engine>(threads, configured > 0);
        core.set_crypto_engine(impl_->engine.get());
    }
    impl_->stream.non_blocking(true);
    impl_->out.non_blocking(true);
    // Keep at most this much unsent data in the kernel (the rest waits in
    // the transport's own queue, where backpressure sees it): a deep socket
    // buffer would add its drain time to every round trip a window adjust
    // makes, and keep an interactive channel's keystrokes behind megabytes
    // of bulk data. Not a TCP socket (a pipe, a socketpair): no effect.
    const int lowat = static_cast<int>(unsent_low_water);
    if (::setsockopt(write_fd, IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat) == 0)
        impl_->unsent_limit = unsent_low_water;
}

void transport_driver::set_unsent_limit(std::size_t bytes)
{
    if (impl_->unsent_limit == 0 || impl_->unsent_limit == bytes)
        return;
    const int lowat = static_cast<int>(std::min<std::size_t>(bytes, INT_MAX));
    if (::setsockopt(impl_->out.native_handle(), IPPROTO_TCP, TCP_NOTSENT_LOWAT, &lowat, sizeof lowat) == 0)
        impl_->unsent_limit = bytes;
}

transport_driver::~transport_driver()
{
    // The core may outlive this driver (and the engine may outlive both,
    // held by pending handlers): it must not keep the engine.
    if (impl_ && impl_->engine)
        impl_->core.set_crypto_engine(nullptr);
    if (impl_ && !impl_->finished) {
        impl_->on_event = nullptr;
        impl_->on_close = nullptr;
        impl_->finish({});
    }
}

void transport_driver::start(event_handler on_event, close_handler on_close)
{
    impl_->on_event = std::move(on_event);
    impl_->on_close = std::move(on_close);
    impl_->last_input = std::chrono::steady_clock::now();
    impl_->flush();
    impl_->start_read();
}

void transport_driver::flush() { impl_->flush(); }

void transport_driver::process_input() { impl_->process(); }

std::uint64_t transport_driver::bytes_written() const noexcept { return impl_->written; }

std::chrono::steady_clock::time_point transport_driver::last_input() const noexcept { return impl_->last_input; }

const crypto_engine* transport_driver::crypto() const noexcept { return impl_->engine.get(); }

void transport_driver::close()
{
    impl_->closing = true;
    impl_->flush();
}

void transport_driver::pause_reading(bool paused)
{
    impl_->read_paused = paused;
    if (!paused)
        impl_->start_read();
}

void transport_driver::limit_output(std::size_t pause_above, std::size_t resume_below, std::size_t hard_cap)
{
    impl_->output_pause_above = pause_above;
    impl_->output_resume_below = std::min(resume_below, pause_above);
    impl_->output_hard_cap = hard_cap;
}

void transport_driver::on_output_drained(std::size_t low_water, std::function<void()> cb)
{
    impl_->drain_low_water = low_water;
    impl_->on_drained = std::move(cb);
    // Always: whoever waits for the drain may have queued the output
    // without flushing it, and only flush() or a writable socket fires the callback.
    impl_->flush();
}

transport& transport_driver::core() noexcept { return impl_->core; }
int transport_driver::native_handle() const noexcept { return impl_->stream.native_handle(); }

} // namespace longhaul
