// File reads and writes off the event loop. A download's replies are
// written by a worker thread, an upload's file is read ahead by it, and
// the loop hears of each completion through an eventfd it polls beside
// the ssh pipes: a slow disk (writeback under memory pressure, a cold
// cache, a network file system) never keeps the loop from answering the
// server and keeping the pipeline full. The backlog is bounded: above
// max_backlog bytes queued the engine sends no more READs, so memory
// stays bounded while the disk catches up.
//
// Without a thread (the unit tests over a simulated clock) every
// operation runs at once on the caller's thread, with the same
// callbacks, so both modes share one code path above this class.
#pragma once

#include "common/bytes.hpp"

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

namespace longhaul::sftp {

class disk_io {
public:
    // err: 0 or an errno; n: bytes written or read (a read shorter than
    // asked means the file ended there).
    using write_done = std::function<void(int err, std::size_t n)>;
    using read_done = std::function<void(int err, bytes data)>;

    disk_io(bool threaded, std::size_t max_backlog = 64 * 1024 * 1024);
    ~disk_io();
    disk_io(const disk_io&) = delete;
    disk_io& operator=(const disk_io&) = delete;

    bool threaded() const noexcept { return threaded_; }
    // pwrite of `data` at `offset` (copied when threaded).
    void write(int fd, std::uint64_t offset, byte_span data, write_done done);
    // pread of up to `length` bytes at `offset`.
    void read(int fd, std::uint64_t offset, std::size_t length, read_done done);
    // SHA-256 of [offset, offset + length) (a resume's check of what is
    // already there): read in chunks of one small buffer, so a range of
    // gigabytes costs the worker's time but neither memory nor the loop's
    // time. EIO when the file ends before the range does. Not counted in
    // backlog(): it holds no data.
    void hash(int fd, std::uint64_t offset, std::uint64_t length, read_done done);

    // Bytes queued or in progress; full() stops new READ requests.
    std::size_t backlog() const;
    bool full() const { return backlog() >= max_backlog_; }
    // Readable when completions wait for drain() (-1 without a thread).
    int wake_fd() const noexcept { return wake_fd_; }
    // Runs the completed operations' callbacks (on the loop's thread).
    void drain();
    // Waits until nothing is queued or in progress, then drains: a file
    // is closed only when no write to it is pending.
    void wait_idle();

private:
    enum class op_kind : std::uint8_t { write, read, hash };
    struct op {
        op_kind kind;
        int fd;
        std::uint64_t offset;
        std::uint64_t length;
        bytes data;
        write_done wdone;
        read_done rdone;
        int err = 0;
        std::size_t n = 0;
        std::size_t counted = 0; // bytes of backlog() it holds
    };
    static void execute_hash(op& o);
    void worker();
    static void execute(op& o);
    void complete(op& o);

    bool threaded_;
    std::size_t max_backlog_;
    int wake_fd_ = -1;
    mutable std::mutex mu_;
    std::condition_variable cv_;      // work for the worker
    std::condition_variable idle_cv_; // an operation finished
    std::deque<op> queue_;
    std::deque<op> done_;
    std::size_t backlog_ = 0;
    std::size_t in_progress_ = 0;
    bool stop_ = false;
    std::thread thread_;
};

} // namespace longhaul::sftp
