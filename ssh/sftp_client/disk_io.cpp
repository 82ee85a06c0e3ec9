#include "ssh/sftp_client/disk_io.hpp"

#include "common/crypto/hash.hpp"

#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace longhaul::sftp {

disk_io::disk_io(bool threaded, std::size_t max_backlog) : threaded_(threaded), max_backlog_(max_backlog)
{
    if (threaded_) {
        wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
        if (wake_fd_ < 0) {
            threaded_ = false; // no eventfd: run inline, correct if slower
        } else {
            thread_ = std::thread([this] { worker(); });
        }
    }
}

disk_io::~disk_io()
{
    if (thread_.joinable()) {
        {
            std::lock_guard<std::mutex> l(mu_);
            stop_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }
    if (wake_fd_ >= 0)
        ::close(wake_fd_);
}

void disk_io::execute_hash(op& o)
{
    constexpr std::size_t chunk = 1024 * 1024;
    hasher h(hash_alg::sha256);
    bytes buf(static_cast<std::size_t>(std::min<std::uint64_t>(chunk, std::max<std::uint64_t>(o.length, 1))));
    std::uint64_t done = 0;
    while (done < o.length) {
        const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(buf.size(), o.length - done));
        const ssize_t n = ::pread(o.fd, buf.data(), want, off_t(o.offset + done));
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            o.err = n < 0 ? errno : EIO;
            return;
        }
        h.update(byte_span(buf.data(), std::size_t(n)));
        done += std::uint64_t(n);
    }
    o.data = h.finish();
    o.n = o.data.size();
}

void disk_io::execute(op& o)
{
    if (o.kind == op_kind::hash) {
        execute_hash(o);
        return;
    }
    if (o.kind == op_kind::write) {
        std::size_t done = 0;
        while (done < o.data.size()) {
            const ssize_t n = ::pwrite(o.fd, o.data.data() + done, o.data.size() - done, off_t(o.offset + done));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                o.err = n < 0 ? errno : EIO;
                break;
            }
            done += std::size_t(n);
        }
        o.n = done;
        return;
    }
    const auto length = std::size_t(o.length);
    o.data.resize(length);
    std::size_t got = 0;
    while (got < length) {
        const ssize_t n = ::pread(o.fd, o.data.data() + got, length - got, off_t(o.offset + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            o.err = errno;
            break;
        }
        if (n == 0)
            break;
        got += std::size_t(n);
    }
    o.data.resize(got);
    o.n = got;
}

void disk_io::complete(op& o)
{
    if (o.kind == op_kind::write) {
        if (o.wdone)
            o.wdone(o.err, o.n);
    } else if (o.rdone) {
        o.rdone(o.err, std::move(o.data));
    }
}

void disk_io::write(int fd, std::uint64_t offset, byte_span data, write_done done)
{
    op o{op_kind::write, fd, offset, data.size(), {}, std::move(done), {}};
    if (!threaded_) {
        // Inline: straight from the caller's buffer.
        std::size_t w = 0;
        int err = 0;
        while (w < data.size()) {
            const ssize_t n = ::pwrite(fd, data.data() + w, data.size() - w, off_t(offset + w));
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0) {
                err = n < 0 ? errno : EIO;
                break;
            }
            w += std::size_t(n);
        }
        if (o.wdone)
            o.wdone(err, w);
        return;
    }
    o.data.assign(data.begin(), data.end());
    o.counted = data.size();
    {
        std::lock_guard<std::mutex> l(mu_);
        backlog_ += data.size();
        queue_.push_back(std::move(o));
    }
    cv_.notify_one();
}

void disk_io::read(int fd, std::uint64_t offset, std::size_t length, read_done done)
{
    op o{op_kind::read, fd, offset, length, {}, {}, std::move(done)};
    if (!threaded_) {
        execute(o);
        complete(o);
        return;
    }
    o.counted = length;
    {
        std::lock_guard<std::mutex> l(mu_);
        backlog_ += length;
        queue_.push_back(std::move(o));
    }
    cv_.notify_one();
}

void disk_io::hash(int fd, std::uint64_t offset, std::uint64_t length, read_done done)
{
    op o{op_kind::hash, fd, offset, length, {}, {}, std::move(done)};
    if (!threaded_) {
        execute(o);
        complete(o);
        return;
    }
    {
        std::lock_guard<std::mutex> l(mu_);
        queue_.push_back(std::move(o));
    }
    cv_.notify_one();
}

std::size_t disk_io::backlog() const
{
    std::lock_guard<std::mutex> l(mu_);
    return backlog_;
}

void disk_io::worker()
{
    std::unique_lock<std::mutex> l(mu_);
    for (;;) {
        cv_.wait(l, [this] { return stop_ || !queue_.empty(); });
        if (stop_)
            return;
        op o = std::move(queue_.front());
        queue_.pop_front();
        ++in_progress_;
        l.unlock();
        execute(o);
        l.lock();
        --in_progress_;
        done_.push_back(std::move(o));
        const std::uint64_t one = 1;
        (void)!::write(wake_fd_, &one, sizeof one);
        idle_cv_.notify_all();
    }
}

void disk_io::drain()
{
    if (!threaded_)
        return;
    std::uint64_t v = 0;
    (void)!::read(wake_fd_, &v, sizeof v);
    std::deque<op> ready;
    {
        std::lock_guard<std::mutex> l(mu_);
        ready.swap(done_);
        for (const auto& o : ready)
            backlog_ -= o.counted;
    }
    for (auto& o : ready)
        complete(o);
}

void disk_io::wait_idle()
{
    if (!threaded_)
        return;
    {
        std::unique_lock<std::mutex> l(mu_);
        idle_cv_.wait(l, [this] { return queue_.empty() && in_progress_ == 0; });
    }
    drain();
}

} // namespace longhaul::sftp
