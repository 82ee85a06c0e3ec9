#include "ssh/sftp_client/transfer.hpp"

#include "ssh/sftp_client/bandwidth_limiter.hpp"
#include "ssh/sftp_client/disk_io.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>

namespace longhaul::sftp {

// --- engine ----------------------------------------------------------------

transfer_engine::transfer_engine(client_core& core, transfer_window& window, clock_fn clock)
    : core_(core), window_(window), clock_(std::move(clock)), inline_disk_(std::make_unique<disk_io>(false))
{
    disk_ = inline_disk_.get();
}

void transfer_engine::add(data_job* job)
{
    jobs_.push_back(job);
}

void transfer_engine::remove(data_job* job) noexcept
{
    jobs_.remove(job);
}

void transfer_engine::fill()
{
    // Reply handlers call fill() too; one pass at a time.
    if (filling_ || core_.failed())
        return;
    filling_ = true;
    bool any_wants = false;
    for (auto* job : jobs_) {
        while (job->want_send()) {
            // The disk is behind: no more data until it catches up (its
            // completions call fill() again).
            if (disk_->full()) {
                filling_ = false;
                return;
            }
            any_wants = true;
            // The SSH layer is behind: the window is not what limits this
            // round (see max_unsent_output); the link's drain calls fill().
            if (core_.output().size() >= max_unsent_output) {
                window_.note_app_limited();
                filling_ = false;
                return;
            }
            const std::uint32_t n = job->next_size();
            if (!window_.may_send(n)) {
                filling_ = false;
                return;
            }
            if (limiter_ != nullptr) {
                const auto now = clock_();
                if (now < next_send_) {
                    filling_ = false;
                    return;
                }
                next_send_ = limiter_->account(n, now);
            }
            job->send_one();
            if (core_.failed()) {
                filling_ = false;
                return;
            }
        }
    }
    // Window left over and nothing to put in it: the rate this round says
    // nothing about the link.
    if (!jobs_.empty() || any_wants)
        window_.note_app_limited();
    filling_ = false;
}

// --- download --------------------------------------------------------------

download_job::download_job(transfer_engine& engine, bytes handle, int fd, std::uint64_t offset,
                           std::uint64_t expected_size, std::uint32_t chunk, std::atomic<std::uint64_t>* progress)
    : engine_(engine), handle_(std::move(handle)), fd_(fd), next_offset_(offset), expected_(expected_size),
      progress_(progress), chunk_(std::max<std::uint32_t>(chunk, 1)), contiguous_(offset)
{
    engine_.add(this);
}

download_job::~download_job()
{
    // Callbacks still queued find the job gone; a write in progress must
    // finish before the caller closes the file.
    alive_.reset();
    if (writes_pending_ > 0)
        engine_.disk().wait_idle();
    engine_.remove(this);
}

void download_job::set_final_size(std::function<void()> on_last_sent)
{
    if (expected_ == 0)
        return;
    final_size_ = true;
    eof_at_ = std::min(eof_at_, expected_);
    on_last_sent_ = std::move(on_last_sent);
}

bool download_job::stopped() const noexcept
{
    return abandoned_ || !status_.ok() || engine_.interrupted();
}

bool download_job::want_send() const
{
    if (stopped())
        return false;
    if (!retry_.empty())
        return true;
    if (next_offset_ >= eof_at_)
        return false;
    if (expected_ != 0 && next_offset_ >= expected_)
        return probes_ == 0; // one read past the expected end finds EOF (or growth)
    return true;
}

std::uint32_t download_job::next_size() const
{
    if (!retry_.empty())
        return retry_.front().length;
    if (expected_ != 0 && next_offset_ < expected_)
        return static_cast<std::uint32_t>(std::min<std::uint64_t>(chunk_, expected_ - next_offset_));
    return chunk_;
}

void download_job::send_one()
{
    if (!retry_.empty()) {
        const range r = retry_.front();
        retry_.pop_front();
        send_read(r);
        return;
    }
    const range r{next_offset_, next_size()};
    next_offset_ += r.length;
    send_read(r);
    if (final_size_ && next_offset_ >= eof_at_ && on_last_sent_) {
        auto last_sent = std::move(on_last_sent_);
        on_last_sent_ = nullptr;
        last_sent();
    }
}

void download_job::send_read(range r)
{
    if (expected_ != 0 && r.offset >= expected_)
        ++probes_;
    ++outstanding_;
    const auto ticket = engine_.window().on_send(r.length, engine_.now());
    std::weak_ptr<bool> alive = alive_;
    engine_.core().request(read_request{.id = 0, .handle = handle_, .offset = r.offset, .length = r.length},
                           [this, alive, r, ticket](const reply& rep) {
                               if (alive.expired())
                                   return;
                               on_reply(r, ticket, rep);
                           });
}

void download_job::on_reply(range r, const transfer_window::ticket& t, const reply& rep)
{
    --outstanding_;
    if (expected_ != 0 && r.offset >= expected_ && probes_ > 0)
        --probes_;
    std::uint64_t delivered = 0;
    if (const auto* d = std::get_if<data_reply>(&rep)) {
        const auto data = d->data;
        if (data.size() > r.length) {
            char m[96];
            std::snprintf(m, sizeof m, "Received more data than asked for %zu > %u", data.size(), r.length);
            status_.protocol_error = true;
            engine_.core().fail(m);
            return;
        }
        if (fd_ < 0 && !abandoned_) {
            // Only a named handle's READs go out before the descriptor
            // (set_fd), and the server answers the open first.
            status_.protocol_error = true;
            engine_.core().fail("Received data before the file was opened");
            return;
        }
        if (data.empty()) {
            // Not EOF by the letter, but nothing can follow it either.
            eof_at_ = std::min(eof_at_, r.offset);
        } else if (abandoned_) {
            // Owed to a job that gave up: taken and dropped.
        } else if (status_.local_errno == 0) {
            // Written at its offset by the disk worker (or now, inline);
            // counted as written when the write completes.
            ++writes_pending_;
            std::weak_ptr<bool> walive = alive_;
            const std::uint64_t off = r.offset;
            engine_.disk().write(fd_, off, data, [this, walive, off](int err, std::size_t n) {
                if (walive.expired())
                    return;
                --writes_pending_;
                if (err != 0 && status_.local_errno == 0)
                    status_.local_errno = err;
                if (n > 0) {
                    wrote_ = true;
                    record(off, n);
                    if (progress_ != nullptr)
                        progress_->fetch_add(n, std::memory_order_relaxed);
                }
                if (engine_.disk().threaded())
                    engine_.fill();
            });
            delivered = data.size();
            if (data.size() < r.length && final_size_) {
                // The file shrank: it ends here (no request follows the
                // last one, which may have ended the server's input).
                eof_at_ = std::min(eof_at_, r.offset + data.size());
            } else if (data.size() < r.length) {
                // A short read: the rest is still owed, unless the file
                // ends there (the re-request then finds EOF).
                ++short_reads_;
                retry_.push_back(range{r.offset + data.size(), std::uint32_t(r.length - data.size())});
            } else if (expected_ != 0 && r.offset >= expected_) {
                // The probe found data: the file grew; read on with the
                // whole window.
                expected_ = 0;
            }
        }
    } else if (const auto* s = std::get_if<status_reply>(&rep)) {
        if (s->code == static_cast<std::uint32_t>(status_code::eof)) {
            eof_at_ = std::min(eof_at_, r.offset);
        } else if (s->code == static_cast<std::uint32_t>(status_code::connection_lost) && engine_.core().failed()) {
            status_.protocol_error = true;
        } else if (status_.remote_status == 0) {
            status_.remote_status = s->code == 0 ? static_cast<std::uint32_t>(status_code::failure) : s->code;
        }
    } else {
        char m[64];
        std::snprintf(m, sizeof m, "Unexpected reply %u", static_cast<unsigned>(rep.index()));
        status_.protocol_error = true;
        engine_.core().fail(m);
        return;
    }
    // Requests for data past the end are no longer owed.
    while (!retry_.empty() && retry_.back().offset >= eof_at_)
        retry_.pop_back();
    engine_.window().on_reply(t, delivered, engine_.now());
    engine_.fill();
}

void download_job::record(std::uint64_t offset, std::uint64_t length)
{
    const std::uint64_t end = offset + length;
    if (offset != contiguous_) {
        if (offset > contiguous_)
            reordered_ = true;
        if (end <= contiguous_)
            return;
        auto& e = islands_[std::max(offset, contiguous_)];
        e = std::max(e, end);
        return;
    }
    contiguous_ = end;
    // Islands that now touch the contiguous part join it.
    for (auto it = islands_.begin(); it != islands_.end() && it->first <= contiguous_;) {
        contiguous_ = std::max(contiguous_, it->second);
        it = islands_.erase(it);
    }
}

bool download_job::done() const
{
    if (outstanding_ > 0 || writes_pending_ > 0)
        return false;
    if (stopped())
        return true;
    return retry_.empty() && next_offset_ >= eof_at_;
}

// --- upload ----------------------------------------------------------------

upload_job::upload_job(transfer_engine& engine, bytes handle, int fd, std::uint64_t offset, std::uint32_t chunk,
                       std::atomic<std::uint64_t>* progress, std::uint64_t size_hint)
    : engine_(engine), handle_(std::move(handle)), fd_(fd), next_offset_(offset), progress_(progress),
      chunk_(std::max<std::uint32_t>(chunk, 1)), next_read_(offset), size_hint_(size_hint)
{
    engine_.add(this);
    if (engine_.disk().threaded())
        prefetch();
}

upload_job::~upload_job()
{
    for (const auto& r : ready_)
        engine_.add_read_ahead(-std::int64_t(r.second.size()));
    alive_.reset();
    if (reads_in_flight_ > 0)
        engine_.disk().wait_idle();
    engine_.remove(this);
}

void upload_job::prefetch()
{
    // Enough read ahead to cover the disk's latency at link speed
    // (32 chunks: 8 MiB of 256 KiB writes), never past the end.
    constexpr std::size_t read_ahead = 32;
    constexpr std::uint64_t all_files = 64 * 1024 * 1024;
    while (!stopped() && next_read_ < read_end_ && reads_in_flight_ + ready_.size() < read_ahead &&
           (next_read_ < size_hint_ || (reads_in_flight_ == 0 && ready_.empty())) &&
           (engine_.read_ahead() < all_files || next_read_ == next_offset_)) {
        const std::uint64_t off = next_read_;
        next_read_ += chunk_;
        ++reads_in_flight_;
        std::weak_ptr<bool> alive = alive_;
        engine_.disk().read(fd_, off, chunk_, [this, alive, off](int err, bytes data) {
            if (alive.expired())
                return;
            --reads_in_flight_;
            if (err != 0) {
                if (status_.local_errno == 0)
                    status_.local_errno = err;
            } else {
                if (data.size() < chunk_)
                    read_end_ = std::min(read_end_, off + data.size());
                if (!data.empty()) {
                    engine_.add_read_ahead(std::int64_t(data.size()));
                    ready_.emplace(off, std::move(data));
                }
            }
            prefetch();
            engine_.fill();
        });
    }
}

void upload_job::send_prefetched()
{
    auto it = ready_.find(next_offset_);
    bytes data = std::move(it->second);
    ready_.erase(it);
    engine_.add_read_ahead(-std::int64_t(data.size()));
    auto& core = engine_.core();
    auto space = core.prepare_write(handle_, next_offset_, data.size());
    if (space.size() < data.size()) {
        status_.local_errno = ENOMEM;
        return;
    }
    std::copy(data.begin(), data.end(), space.begin());
    const std::size_t got = data.size();
    next_offset_ += got;
    ++outstanding_;
    const auto ticket = engine_.window().on_send(got, engine_.now());
    std::weak_ptr<bool> alive = alive_;
    core.commit_write(got, [this, alive, ticket, got](const reply& rep) {
        if (alive.expired())
            return;
        on_write_reply(rep, ticket, got);
    });
    prefetch();
}

bool upload_job::stopped() const noexcept
{
    return !status_.ok() || engine_.interrupted();
}

bool upload_job::want_send() const
{
    if (stopped())
        return false;
    if (engine_.disk().threaded())
        return ready_.count(next_offset_) != 0;
    return !eof_;
}

std::uint32_t upload_job::next_size() const
{
    return chunk_;
}

void upload_job::send_one()
{
    if (engine_.disk().threaded()) {
        send_prefetched();
        return;
    }
    auto& core = engine_.core();
    auto space = core.prepare_write(handle_, next_offset_, chunk_);
    if (space.empty()) {
        status_.local_errno = ENOMEM;
        return;
    }
    // The file is read straight into the WRITE packet.
    std::size_t got = 0;
    while (got < space.size()) {
        const ssize_t n = ::pread(fd_, space.data() + got, space.size() - got, off_t(next_offset_ + got));
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            status_.local_errno = errno;
            return;
        }
        if (n == 0) {
            eof_ = true;
            break;
        }
        got += std::size_t(n);
    }
    if (got == 0)
        return;
    const std::uint64_t offset = next_offset_;
    next_offset_ += got;
    ++outstanding_;
    const auto ticket = engine_.window().on_send(got, engine_.now());
    std::weak_ptr<bool> alive = alive_;
    (void)offset;
    core.commit_write(got, [this, alive, ticket, got](const reply& rep) {
        if (alive.expired())
            return;
        on_write_reply(rep, ticket, got);
    });
}

void upload_job::on_write_reply(const reply& rep, const transfer_window::ticket& ticket, std::size_t got)
{
    --outstanding_;
    std::uint64_t delivered = 0;
    if (const auto* s = std::get_if<status_reply>(&rep)) {
        if (s->code == 0) {
            delivered = got;
            if (progress_ != nullptr)
                progress_->fetch_add(got, std::memory_order_relaxed);
        } else if (s->code == static_cast<std::uint32_t>(status_code::connection_lost) && engine_.core().failed()) {
            status_.protocol_error = true;
        } else if (status_.remote_status == 0) {
            status_.remote_status = s->code;
        }
    } else {
        status_.protocol_error = true;
        engine_.core().fail("Expected SSH2_FXP_STATUS reply to a write");
        return;
    }
    engine_.window().on_reply(ticket, delivered, engine_.now());
    engine_.fill();
}

bool upload_job::all_sent() const
{
    if (engine_.disk().threaded())
        return reads_in_flight_ == 0 &&
               (stopped() || (next_read_ >= read_end_ && ready_.empty() && next_offset_ >= read_end_));
    return stopped() || eof_;
}

bool upload_job::done() const
{
    return outstanding_ == 0 && all_sent();
}

} // namespace longhaul::sftp
