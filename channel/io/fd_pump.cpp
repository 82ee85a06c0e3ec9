#include "channel/io/fd_pump.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/post.hpp>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace longhaul {

namespace asio = boost::asio;

namespace {

// Packets per wake-up before yielding to other channels and events.
constexpr int max_packets_per_turn = 64;

bool pollable(int fd)
{
    struct stat st {};
    if (fstat(fd, &st) != 0)
        return false;
    // epoll refuses regular files and directories; /dev/null and friends
    // are always ready, which for our purposes is the same thing.
    return !S_ISREG(st.st_mode) && !S_ISDIR(st.st_mode) && !(S_ISCHR(st.st_mode) && !isatty(fd));
}

} // namespace

int private_nonblocking_fd(int fd, bool for_write)
{
    struct stat st {};
    // The client's stdin or stdout as a pipe (`tar c | ssh host`, `ssh host
    // cat | sink`): a 64 KiB pipe is half a millisecond at 1 Gbit/s, so ssh
    // and the other program would take turns that often; grow it (best
    // effort, up to pipe-max-size). It is the same pipe for both ends.
    const bool known = fstat(fd, &st) == 0;
    if (known && S_ISFIFO(st.st_mode))
        (void)::fcntl(fd, F_SETPIPE_SZ, 1024 * 1024);
    if (known && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))) {
        // A fresh open of a pipe or tty is a new open file description: its
        // O_NONBLOCK is ours alone.
        const std::string path = "/proc/self/fd/" + std::to_string(fd);
        int nfd = ::open(path.c_str(), (for_write ? O_WRONLY : O_RDONLY) | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
        if (nfd >= 0)
            return nfd;
    }
    int nfd = ::fcntl(fd, F_DUPFD_CLOEXEC, 3);
    if (nfd < 0)
        return -1;
    if (S_ISSOCK(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode))
        ::fcntl(nfd, F_SETFL, ::fcntl(nfd, F_GETFL) | O_NONBLOCK);
    return nfd;
}

void restore_blocking(int fd)
{
    int fl = ::fcntl(fd, F_GETFL);
    if (fl >= 0 && (fl & O_NONBLOCK))
        ::fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
}

// Readiness notifications for a descriptor the pump owns itself: Asio must
// not close it.
struct fd_watcher {
    fd_watcher(asio::io_context& io, int fd) : d(io, fd) {}
    ~fd_watcher() { d.release(); }
    asio::posix::stream_descriptor d;
};
struct fd_source::watcher : fd_watcher {
    using fd_watcher::fd_watcher;
};
struct fd_sink::watcher : fd_watcher {
    using fd_watcher::fd_watcher;
};

namespace {

// One wait for the descriptor to become ready; `ready` runs on the pump
// only if it still exists (the callback may outlive it).
template <class Pump, class Ready>
void wait_while_alive(fd_watcher& w, asio::posix::stream_descriptor::wait_type what, std::weak_ptr<Pump> self,
                      Ready ready)
{
    w.d.async_wait(what, [self = std::move(self), ready](const boost::system::error_code& ec) {
        if (auto s = self.lock())
            ready(*s, ec);
    });
}

// Stops watching (a pending wait ends with operation_aborted) and closes
// the descriptor if the pump owns it: what stopping a source and closing a
// sink have in common.
template <class Watcher>
void release_fd(std::unique_ptr<Watcher>& watcher, int& fd, bool owns_fd)
{
    if (watcher) {
        boost::system::error_code ignored;
        watcher->d.cancel(ignored);
    }
    watcher.reset();
    if (owns_fd && fd >= 0)
        ::close(fd);
    fd = -1;
}

} // namespace

// ---------------------------------------------------------------- source

fd_source::fd_source(connection_runner& runner, channel_id id, int fd, std::uint32_t extended, bool owns_fd)
    : runner_(runner), id_(id), fd_(fd), extended_(extended), owns_fd_(owns_fd), pollable_(pollable(fd))
{
    if (pollable_)
        watcher_ = std::make_unique<watcher>(runner.io(), fd_);
}

fd_source::~fd_source() { stop(); }

void fd_source::stop()
{
    stopped_ = true;
    release_fd(watcher_, fd_, owns_fd_);
}

void fd_source::start() { pump(); }

void fd_source::finish_when_drained()
{
    drain_only_ = true;
    pump();
}

void fd_source::finish(int error)
{
    if (finished_)
        return;
    finished_ = true;
    auto cb = on_eof;
    if (cb)
        cb(error);
}

void fd_source::wait_readable()
{
    if (waiting_ || !watcher_)
        return;
    waiting_ = true;
    wait_while_alive(*watcher_, asio::posix::stream_descriptor::wait_read, weak_from_this(),
                     [](fd_source& s, const boost::system::error_code& ec) {
                         s.waiting_ = false;
                         if (!ec && !s.stopped_)
                             s.pump();
                     });
}

void fd_source::pump()
{
    if (finished_ || stopped_ || fd_ < 0)
        return;
    connection& conn = runner_.conn();
    // Past the output mark, a source that was idle still sends this much
    // now (request/response latency under bulk load, issue 11); a bulk
    // source waits for its round-robin turn.
    std::size_t small_left = idle_ ? connection_runner::small_send_bytes : 0;
    for (int turn = 0; turn < max_packets_per_turn; ++turn) {
        std::size_t cap = conn.send_capacity(id_);
        const bool past_mark = runner_.congested();
        if (past_mark) {
            if (small_left == 0 || !runner_.room_for_small_send()) {
                idle_ = false;
                runner_.wake_when_drained(id_);
                return;
            }
            cap = std::min(cap, small_left);
        }
        if (cap == 0)
            return; // on_writable() when the peer opens the window
        ssize_t n;
        if (filter) {
            std::uint8_t buf[4096];
            // A filtered byte may expand to two (an escape character passed through).
            n = ::read(fd_, buf, std::min<std::size_t>(sizeof buf, cap > 1 ? cap / 2 : 1));
            if (n > 0) {
                filtered_.clear();
                filter(byte_span(buf, static_cast<std::size_t>(n)), filtered_);
                if (!filtered_.empty())
                    (void)conn.send_data(id_, filtered_, extended_);
                if (stopped_)
                    return;
                if (end_after_filter_) {
                    stop();
                    return finish(0); // on_eof sends the EOF (and flushes)
                }
            }
        } else {
            auto room = conn.prepare_data(id_, cap, extended_);
            n = ::read(fd_, room.data(), room.size());
            (void)conn.commit_data(id_, n > 0 ? static_cast<std::size_t>(n) : 0);
        }
        if (n > 0) {
            bytes_ += static_cast<std::uint64_t>(n);
            idle_ = false;
            small_left = past_mark ? small_left - std::size_t(n) : 0; // n <= cap <= small_left
            if ((turn & 7) == 7)
                runner_.flush(); // keep the receiver busy rather than bursting
            continue;
        }
        if (n == 0)
            return finish(0);
        if (errno == EINTR)
            continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            idle_ = true;
            runner_.flush();
            if (drain_only_)
                return finish(0);
            return wait_readable();
        }
        // A pty master reads EIO once the last slave descriptor is closed: that is its EOF.
        return finish(errno == EIO ? 0 : errno);
    }
    // Yield to other channels, then carry on.
    runner_.flush();
    asio::post(runner_.io(), [self = weak_from_this()] {
        if (auto s = self.lock())
            s->pump();
    });
}

// ---------------------------------------------------------------- sink

fd_sink::fd_sink(connection_runner& runner, channel_id id, int fd, bool owns_fd)
    : runner_(runner), id_(id), fd_(fd), owns_fd_(owns_fd), pollable_(pollable(fd))
{
    if (pollable_)
        watcher_ = std::make_unique<watcher>(runner.io(), fd_);
}

fd_sink::~fd_sink() { close_fd(); }

void fd_sink::close_fd()
{
    release_fd(watcher_, fd_, owns_fd_);
}

std::size_t fd_sink::write_some(byte_span data, int& error)
{
    std::size_t done = 0;
    error = 0;
    while (done < data.size()) {
        ssize_t n = ::write(fd_, data.data() + done, data.size() - done);
        if (n > 0) {
            done += static_cast<std::size_t>(n);
            continue;
        }
        if (n < 0 && errno == EINTR)
            continue;
        error = n < 0 ? errno : EIO;
        break;
    }
    return done;
}

void fd_sink::broken(int error)
{
    if (failed_)
        return;
    failed_ = true;
    // Nobody reads any more: drop the backlog but keep returning window so
    // the peer is never stuck waiting for credit.
    const std::size_t dropped = pending_.size() - pending_off_;
    pending_.clear();
    pending_off_ = 0;
    runner_.consumed(id_, dropped);
    close_fd();
    if (on_error)
        on_error(error);
    if (eof_ && on_drained)
        on_drained();
}

void fd_sink::write(byte_span data)
{
    if (failed_ || fd_ < 0) {
        runner_.consumed(id_, data.size());
        return;
    }
    if (pending_.size() == pending_off_) {
        pending_.clear();
        pending_off_ = 0;
        int err = 0;
        const std::size_t n = write_some(data, err);
        if (n > 0)
            runner_.consumed(id_, n);
        data = data.subspan(n);
        if (err != 0 && err != EAGAIN && err != EWOULDBLOCK)
            return broken(err);
        if (data.empty())
            return;
    }
    pending_.insert(pending_.end(), data.begin(), data.end());
    wait_writable();
}

void fd_sink::wait_writable()
{
    if (waiting_ || !watcher_)
        return;
    waiting_ = true;
    wait_while_alive(*watcher_, asio::posix::stream_descriptor::wait_write, weak_from_this(),
                     [](fd_sink& s, const boost::system::error_code& ec) {
                         s.waiting_ = false;
                         if (!ec)
                             s.flush();
                     });
}

void fd_sink::flush()
{
    if (fd_ < 0)
        return;
    int err = 0;
    const std::size_t n = write_some(byte_span(pending_).subspan(pending_off_), err);
    pending_off_ += n;
    if (n > 0)
        runner_.consumed(id_, n);
    if (err != 0 && err != EAGAIN && err != EWOULDBLOCK)
        return broken(err);
    if (pending_off_ < pending_.size()) {
        // Compact once half the buffer is written, so it cannot grow forever.
        if (pending_off_ > pending_.size() / 2) {
            pending_.erase(pending_.begin(), pending_.begin() + static_cast<std::ptrdiff_t>(pending_off_));
            pending_off_ = 0;
        }
        runner_.flush();
        return wait_writable();
    }
    pending_.clear();
    pending_off_ = 0;
    runner_.flush();
    if (eof_) {
        close_fd();
        if (on_drained)
            on_drained();
    }
}

void fd_sink::eof()
{
    if (eof_)
        return;
    eof_ = true;
    if (failed_) {
        if (on_drained)
            on_drained();
        return;
    }
    if (pending_.size() == pending_off_) {
        close_fd();
        if (on_drained)
            on_drained();
    }
}

} // namespace longhaul
