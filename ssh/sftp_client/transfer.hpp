// The data phase of file transfers: READs of an open remote handle written
// into a local file with pwrite at their offsets (download_job), and the
// local file read with pread straight into WRITE packets (upload_job).
// Jobs send requests only when the shared transfer_window allows, so any
// number of files can be in their data phase at once: the engine serves
// the oldest job first and lets later files fill what window is left
// (a tree of small files keeps the link as full as one large file).
//
// Correctness rules (as OpenSSH's do_download/do_upload, and more):
// - replies may come in any order; data lands at its own offset;
// - a short read (less than asked, not at the end) asks again for the rest;
// - EOF is a STATUS for a read at or past the end; the job stops asking
//   once it knows where the file ends, and finishes when every request is
//   answered (replies to requests past the end are EOF too);
// - the first error (remote status, local write or read error, an
//   interruption) stops new requests; the ones in flight are drained;
// - `contiguous()` is the end of the data written without a hole, for
//   truncating an interrupted download so that a resume is exact.
#pragma once

#include "common/bytes.hpp"
#include "ssh/sftp_client/client_core.hpp"
#include "ssh/sftp_client/transfer_window.hpp"

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <string>

namespace longhaul::sftp {

class bandwidth_limiter;
class disk_io;
class transfer_engine;

class data_job {
public:
    virtual ~data_job() = default;
    // Another request could go out now (the window permitting).
    virtual bool want_send() const = 0;
    // Bytes the next request would carry or ask for.
    virtual std::uint32_t next_size() const = 0;
    virtual void send_one() = 0;
    virtual bool done() const = 0;
};

// Bytes of requests waiting in this process (the session's output, not
// yet taken by ssh) beyond which no more go out. When the SSH layer is the
// limit (its channel window, the pipe to ssh), requests past it would only
// queue here: memory up to the whole transfer window, and a queueing delay
// that the window would read as round trip. 4 MiB keeps the pipe to ssh
// full (it drains in microseconds) and is nothing beside a long path's
// window.
inline constexpr std::size_t max_unsent_output = 4 * 1024 * 1024;

class transfer_engine {
public:
    using clock_fn = std::function<transfer_clock::time_point()>;

    transfer_engine(client_core& core, transfer_window& window, clock_fn clock);

    void add(data_job* job);
    void remove(data_job* job) noexcept;
    // Sends requests of active jobs, oldest first, while the window allows.
    void fill();

    client_core& core() noexcept { return core_; }
    transfer_window& window() noexcept { return window_; }
    transfer_clock::time_point now() const { return clock_(); }

    // -l: requests wait for the limiter (bits per second; 0: none).
    void set_limiter(bandwidth_limiter* l) noexcept { limiter_ = l; }
    // When a limited engine may send next (time_point::min() when now).
    transfer_clock::time_point next_send_time() const noexcept { return next_send_; }
    // File reads and writes (inline, or on a worker thread). Until set,
    // the engine runs them inline.
    void set_disk(disk_io* d) noexcept { disk_ = d; }
    disk_io& disk() noexcept { return *disk_; }
    // Bytes read ahead by upload jobs and not yet sent (bounded for all
    // files together, however many are open).
    std::uint64_t read_ahead() const noexcept { return read_ahead_; }
    void add_read_ahead(std::int64_t n) noexcept { read_ahead_ = std::uint64_t(std::int64_t(read_ahead_) + n); }
    // The interruption flag (sftp's SIGINT): set, jobs stop asking.
    void set_interrupt(const std::atomic<bool>* flag) noexcept { interrupted_ = flag; }
    bool interrupted() const noexcept { return interrupted_ != nullptr && interrupted_->load(); }

private:
    client_core& core_;
    transfer_window& window_;
    clock_fn clock_;
    std::list<data_job*> jobs_;
    bandwidth_limiter* limiter_ = nullptr;
    disk_io* disk_ = nullptr;
    std::unique_ptr<disk_io> inline_disk_;
    std::uint64_t read_ahead_ = 0;
    transfer_clock::time_point next_send_ = transfer_clock::time_point::min();
    const std::atomic<bool>* interrupted_ = nullptr;
    bool filling_ = false;
};

struct transfer_status {
    std::uint32_t remote_status = 0; // first non-OK remote status (0: none)
    int local_errno = 0;             // first local read/write error
    bool interrupted = false;
    bool protocol_error = false;     // the session failed under the job
    bool ok() const noexcept { return remote_status == 0 && local_errno == 0 && !interrupted && !protocol_error; }
};

class download_job final : public data_job {
public:
    // Reads `handle` from `offset` into descriptor `fd` at the same
    // offsets. `expected_size` (from stat) lets the job pipeline right up
    // to the end and send a single probe past it; 0 means unknown (the job
    // then reads until EOF with the whole window). `progress` counts bytes
    // written (the progress meter reads it).
    download_job(transfer_engine& engine, bytes handle, int fd, std::uint64_t offset, std::uint64_t expected_size,
                 std::uint32_t chunk, std::atomic<std::uint64_t>* progress);
    ~download_job() override;

    bool want_send() const override;
    std::uint32_t next_size() const override;
    void send_one() override;
    bool done() const override;

    // The copy is of the size stat gave (as legacy scp's, whose size went
    // ahead of the data): no read past it, and a short read is where the
    // file ends now (it shrank). So the last read is known when it goes
    // out, and `on_last_sent` runs then (once): the caller may end the
    // connection's input behind it. Needs an expected size.
    void set_final_size(std::function<void()> on_last_sent);

    // For a handle named ahead of its open's answer (open-named): the READs
    // go out before there is a local file, whose descriptor comes with the
    // open's answer (which the server sends before theirs). abandon() when
    // the open failed, or the local one did: nothing more is sent, the
    // replies still owed are taken and dropped, and done() then holds.
    void set_fd(int fd) noexcept { fd_ = fd; }
    void abandon() noexcept { abandoned_ = true; }

    const transfer_status& status() const noexcept { return status_; }
    std::uint64_t contiguous() const noexcept { return contiguous_; }
    // Where the file ended (the lowest offset answered with EOF).
    std::uint64_t end() const noexcept { return eof_at_; }
    // Data arrived out of order at some point (a resume after an error
    // cannot trust more than contiguous()).
    bool reordered() const noexcept { return reordered_; }
    bool wrote_anything() const noexcept { return wrote_; }
    // Set after every reply: a short read, for tests and -vvv.
    std::uint64_t short_reads() const noexcept { return short_reads_; }

private:
    struct range {
        std::uint64_t offset;
        std::uint32_t length;
    };
    void send_read(range r);
    void on_reply(range r, const transfer_window::ticket& t, const reply& rep);
    void record(std::uint64_t offset, std::uint64_t length);
    bool stopped() const noexcept;

    transfer_engine& engine_;
    bytes handle_;
    int fd_;
    std::uint64_t next_offset_;
    std::uint64_t expected_;
    std::atomic<std::uint64_t>* progress_;
    std::uint32_t chunk_;
    std::deque<range> retry_;        // the rest of short reads, sent first
    std::uint32_t outstanding_ = 0;
    std::uint32_t writes_pending_ = 0; // replies handed to the disk, not yet written
    std::uint32_t probes_ = 0;       // reads at or past expected_ in flight
    std::uint64_t eof_at_ = UINT64_MAX;
    std::uint64_t contiguous_;
    std::map<std::uint64_t, std::uint64_t> islands_; // written ranges past contiguous_: start -> end
    bool reordered_ = false;
    bool wrote_ = false;
    bool final_size_ = false;              // set_final_size()
    bool abandoned_ = false;               // abandon()
    std::function<void()> on_last_sent_;   // run once, then cleared
    std::uint64_t short_reads_ = 0;
    transfer_status status_;
    // Replies still owed to this job hold a token; a job destroyed early
    // (after a session failure) leaves them pointing at nothing.
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

class upload_job final : public data_job {
public:
    // Writes descriptor `fd` from `offset` to the end (the end as found by
    // reading, as OpenSSH does: a file that grows is sent whole) into
    // `handle` at the same offsets. `progress` counts bytes acknowledged.
    // `size_hint` (from fstat) bounds the read-ahead of a disk thread:
    // past it one chunk at a time, to find the end or the growth.
    upload_job(transfer_engine& engine, bytes handle, int fd, std::uint64_t offset, std::uint32_t chunk,
               std::atomic<std::uint64_t>* progress, std::uint64_t size_hint = UINT64_MAX);
    ~upload_job() override;

    bool want_send() const override;
    std::uint32_t next_size() const override;
    void send_one() override;
    bool done() const override;

    // Nothing more will be sent: the file's end was found and every
    // chunk went out, or the job stopped. Replies may still be owed
    // (done() waits for them); requests on the same handle sent from now
    // on (fsetstat, close) are processed after the writes, in order.
    bool all_sent() const;

    const transfer_status& status() const noexcept { return status_; }
    std::uint64_t sent_end() const noexcept { return next_offset_; }

private:
    bool stopped() const noexcept;

    transfer_engine& engine_;
    bytes handle_;
    int fd_;
    std::uint64_t next_offset_;
    std::atomic<std::uint64_t>* progress_;
    std::uint32_t chunk_;
    std::uint32_t outstanding_ = 0;
    bool eof_ = false;
    transfer_status status_;
    // With a disk thread: chunks read ahead (offset -> data), reads in
    // flight, and where the file was found to end.
    void prefetch();
    void send_prefetched();
    void on_write_reply(const reply& rep, const transfer_window::ticket& ticket, std::size_t got);
    std::map<std::uint64_t, bytes> ready_;
    std::uint32_t reads_in_flight_ = 0;
    std::uint64_t next_read_ = 0;
    std::uint64_t read_end_ = UINT64_MAX;
    std::uint64_t size_hint_ = UINT64_MAX;
    std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

} // namespace longhaul::sftp
