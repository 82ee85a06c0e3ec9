#include "ssh/sftp_client/session.hpp"

#include <fcntl.h>
#include <poll.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <optional>

namespace longhaul::sftp {

namespace {

// OpenSSH's client caps a read or write at this much below its 256 KiB
// message limit (room for the headers).
constexpr std::uint32_t header_room = 1024;
// Without limits@openssh.com: OpenSSH's defaults (32 KiB, 64 requests).
constexpr std::uint32_t default_chunk = 32 * 1024;
constexpr std::uint32_t default_requests = 64;
// Reads of at least this much from the pipe (a DATA reply is up to 256 KiB).
constexpr std::size_t read_size = 1024 * 1024;

void set_nonblocking(int fd)
{
    const int flags = ::fcntl(fd, F_GETFL);
    if (flags >= 0 && (flags & O_NONBLOCK) == 0)
        ::fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

} // namespace

// --- fd_link -----------------------------------------------------------------

fd_link::fd_link(int in_fd, int out_fd, std::function<void()> close_out)
    : in_(in_fd), out_(out_fd), close_out_(std::move(close_out))
{
    set_nonblocking(in_);
    if (out_ != in_)
        set_nonblocking(out_);
}

void fd_link::pump(client_core& core, int timeout_ms)
{
    // Write first: requests queued since the last pump go out at once.
    bool moved = false;
    while (out_ >= 0 && !core.output().empty()) {
        const auto o = core.output();
        const ssize_t n = ::write(out_, o.data(), o.size());
        if (n > 0) {
            core.consume_output(std::size_t(n));
            moved = true;
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            break;
        // EPIPE: the ssh process is gone; what it sent is still read below.
        core.consume_output(o.size());
        core.input_closed();
        return;
    }
    if (ending_ && out_ >= 0 && core.output().empty()) {
        close_out_();
        out_ = -1;
    }
    // Once the server's stream has ended (the end expected, and the disk
    // still writing what came), only the disk's completions wake us.
    if (core.closed() && wake_fd_ < 0)
        return;
    struct pollfd pfd[3] = {{core.closed() ? -1 : in_, POLLIN, 0}, {wake_fd_, POLLIN, 0}, {out_, POLLOUT, 0}};
    const int nfds = core.output().empty() || out_ < 0 ? 2 : 3;
    const int r = ::poll(pfd, nfds, moved ? 0 : timeout_ms);
    if (r < 0)
        return; // EINTR (SIGINT, SIGWINCH): the caller looks at its flags
    if ((pfd[0].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        for (int i = 0; i < 16; ++i) {
            auto space = core.input_space(read_size);
            const ssize_t n = ::read(in_, space.data(), space.size());
            if (n > 0) {
                core.commit_input(std::size_t(n));
                if (std::size_t(n) < space.size())
                    break;
                continue;
            }
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
                break;
            core.process();
            core.input_closed();
            return;
        }
        core.process();
    }
    if (nfds == 3 && (pfd[2].revents & (POLLERR | POLLHUP)) != 0 && (pfd[2].revents & POLLOUT) == 0) {
        core.input_closed();
    }
}

// --- session -------------------------------------------------------------------

session::session(link& l, session_options o, clock_fn clock)
    : link_(l), options_(o), clock_(std::move(clock)), disk_(std::make_unique<disk_io>(o.threaded_io))
{
    link_.set_wake_fd(disk_->wake_fd());
    configure_window();
}

void session::copy_reply(const reply& r, reply_copy& out)
{
    out.value = r;
    if (auto* d = std::get_if<data_reply>(&*out.value)) {
        out.storage.assign(d->data.begin(), d->data.end());
        d->data = out.storage;
    } else if (auto* e = std::get_if<extended_reply>(&*out.value)) {
        out.storage.assign(e->data.begin(), e->data.end());
        e->data = out.storage;
    }
}

bool session::init(const std::function<void()>& alongside)
{
    core_.start();
    // limits@openssh.com goes out right behind INIT instead of a round
    // trip later: a server processes requests in order (OpenSSH's and ours
    // do), and one that does not know the extension must answer
    // OP_UNSUPPORTED (draft-ietf-secsh-filexfer-02, section 8); the answer
    // is in the same flight as VERSION, and is used only when VERSION
    // offers the extension. Waiting for it leaves no request behind.
    const auto limits_reply = send(limits_request{});
    if (alongside)
        alongside();
    run_until([&] { return core_.initialised() && limits_reply->has_value(); });
    if (!core_.initialised() || !limits_reply->has_value())
        return false;
    if (core_.has_extension(ext::limits, "1")) {
        if (auto* e = (*limits_reply)->get<extended_reply>()) {
            wire_reader rd(e->data);
            const std::uint64_t packet = rd.u64(), read = rd.u64(), write = rd.u64(), handles = rd.u64();
            if (rd.finish()) {
                if (packet != 0)
                    limits_.max_packet_length = std::uint32_t(std::min<std::uint64_t>(packet, UINT32_MAX));
                if (read != 0)
                    limits_.max_read_length = std::uint32_t(std::min<std::uint64_t>(read, UINT32_MAX));
                if (write != 0)
                    limits_.max_write_length = std::uint32_t(std::min<std::uint64_t>(write, UINT32_MAX));
                limits_.max_open_handles = handles;
            }
        } else if (!ok()) {
            return false;
        }
        // A server that states its limits is taken at its word, up to
        // what our reply buffer takes (packet limit minus headers).
        const std::uint32_t ceiling = std::max<std::uint32_t>(limits_.max_packet_length, 4096) - header_room;
        read_chunk_ = std::max<std::uint32_t>(64, std::min(limits_.max_read_length, ceiling));
        write_chunk_ = std::max<std::uint32_t>(64, std::min(limits_.max_write_length, ceiling));
        read_chunk_ = std::min<std::uint32_t>(read_chunk_, default_max_packet_length);
        write_chunk_ = std::min<std::uint32_t>(write_chunk_, default_max_packet_length);
    }
    configure_window();
    return ok();
}

void session::configure_window()
{
    if (options_.buffer_size != 0) {
        // -B wins, but never beyond what a server that states its limits
        // reads and writes.
        read_chunk_ = write_chunk_ = options_.buffer_size;
        if (core_.has_extension(ext::limits, "1")) {
            read_chunk_ = std::min(read_chunk_, limits_.max_read_length);
            write_chunk_ = std::min(write_chunk_, limits_.max_write_length);
        }
    }
    window_settings w;
    w.chunk = std::max(read_chunk_, write_chunk_);
    w.max = options_.window_budget != 0 ? options_.window_budget : default_window_budget();
    if (options_.num_requests != 0) {
        w.fixed = true;
        w.max_requests = options_.num_requests;
    } else if (options_.buffer_size != 0) {
        // -B alone: OpenSSH's 64 requests of that size, adapted from there.
        w.initial = std::uint64_t(default_requests) * w.chunk;
    } else {
        // Four times what OpenSSH's client keeps in flight (at least 32
        // requests): a request costs the server a queued message, not
        // memory, and the window still has to double a few times to fill
        // a long fat pipe. Slow start on the SSH channel and on TCP paces
        // the data anyway.
        w.initial = std::max<std::uint64_t>(4ull * default_requests * default_chunk, 32ull * w.chunk);
    }
    window_ = std::make_unique<transfer_window>(w);
    engine_ = std::make_unique<transfer_engine>(core_, *window_, clock_);
    engine_->set_disk(disk_.get());
    engine_->set_interrupt(interrupt_);
    if (options_.limit_bps != 0) {
        limiter_ = std::make_unique<bandwidth_limiter>(options_.limit_bps);
        engine_->set_limiter(limiter_.get());
    }
}

std::size_t session::max_parallel_files() const noexcept
{
    // Half the server's handles (a tree transfer also opens directories),
    // at most 128 files at once.
    std::size_t n = 128;
    if (limits_.max_open_handles != 0)
        n = std::min<std::size_t>(n, std::max<std::uint64_t>(1, limits_.max_open_handles / 2));
    return n;
}

void session::run_until(const std::function<bool()>& done)
{
    for (;;) {
        engine_->fill();
        if (done() || core_.failed())
            return;
        int timeout = tick_ ? tick_ms_ : -1;
        const auto next = engine_->next_send_time();
        if (next != transfer_clock::time_point::min()) {
            const auto now = clock_();
            if (next > now) {
                const auto wait = std::chrono::duration_cast<std::chrono::milliseconds>(next - now).count() + 1;
                timeout = timeout < 0 ? int(wait) : std::min<int>(timeout, int(wait));
            }
        }
        link_.pump(core_, timeout);
        disk_->drain();
        if (tick_) {
            const auto now = clock_();
            if (now - last_tick_ >= std::chrono::milliseconds(tick_ms_)) {
                last_tick_ = now;
                tick_();
            }
        }
    }
}

} // namespace longhaul::sftp
