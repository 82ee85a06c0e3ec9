// Whole-file transfers as chains of requests, so that many files can be in
// progress at once: OpenSSH's do_download() and do_upload() (stat, open,
// the data phase, fsetstat, fsync, close, local chmod and utimes) with
// their messages, each step sent when the previous reply arrives. The
// task_runner keeps up to session::max_parallel_files() of them going and
// reports them in order: a file's messages and its progress line come out
// when every earlier file is done, exactly as a one-at-a-time client would
// print them, while the requests of later files already fill the link
// (10,000 small files do not cost 10,000 round trips each).
#pragma once

#include "ssh/sftp_client/progress_meter.hpp"
#include "ssh/sftp_client/remote_fs.hpp"
#include "ssh/sftp_client/transfer.hpp"

#include <sys/stat.h>

#include <atomic>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::sftp {

struct transfer_flags {
    bool preserve = false; // -p: modes and times
    bool resume = false;   // -a, reget, reput: continue from what is there
    bool fsync = false;    // -f: fsync@openssh.com / fsync(2) when done
    bool inplace = false;  // scp: write into the existing file (no O_TRUNC until the end)
};

class file_task {
public:
    explicit file_task(remote_fs& fs) : fs_(fs) {}
    virtual ~file_task() = default;
    file_task(const file_task&) = delete;
    file_task& operator=(const file_task&) = delete;

    virtual void start() = 0;
    // Called by the runner while the task is unfinished, after each turn
    // of the link: a task whose data phase ended moves on from here.
    virtual void poll() {}
    // Called when the task's turn to report comes, before its messages
    // are printed (a note that depends on the tasks before it).
    virtual void before_report() {}
    // Called once the task has reported (its result is final).
    void set_report_hook(std::function<void(const file_task&)> h) { report_hook_ = std::move(h); }
    void reported() const
    {
        if (report_hook_)
            report_hook_(*this);
    }
    bool finished() const noexcept { return finished_; }
    // 0 or -1, as OpenSSH's do_download/do_upload return.
    int result() const noexcept { return result_; }

    // Output held until the task's turn: errors, info lines, and whether
    // and where the progress meter ran.
    struct message {
        enum kind { error, info, meter, print, debug } what;
        std::string text;
    };
    std::vector<message> messages;

    // The meter: name, size, bytes done; shown from the data phase on.
    std::string meter_file;
    std::uint64_t meter_size = 0;
    bool meter_wanted = false;
    std::atomic<std::uint64_t> progress{0};
    bool data_started = false;
    // Printed after the task's own messages when it fails (OpenSSH's
    // "failed to upload file X to Y" of the caller).
    std::string on_failure;

protected:
    friend class task_runner;
    void err(std::string m) { messages.push_back({message::error, std::move(m)}); }
    void info(std::string m) { messages.push_back({message::info, std::move(m)}); }
    // -v (debug level 1).
    void debug(std::string m) { messages.push_back({message::debug, std::move(m)}); }
    void finish(int r);
    session& sess() { return fs_.sess(); }
    remote_fs& fs_;

private:
    std::function<void(const file_task&)> report_hook_;
    bool finished_ = false;
    int result_ = -1;
};

// do_download(): remote_path to local_path. `a` is the remote attributes
// when known (a directory listing has them), else the task stats first.
std::unique_ptr<file_task> make_download(remote_fs& fs, std::string remote_path, std::string local_path,
                                         std::optional<attrs> a, transfer_flags f);
// A task that only prints (a message of a directory walk), so that it
// comes out in order with the files around it. result: 0 or -1.
std::unique_ptr<file_task> make_note(remote_fs& fs, file_task::message m, int result);
// The OPEN a download task sends for `remote_path`, and the one an upload
// task sends for a local file of status `local` (so that a program can
// send the same OPEN ahead: remote_fs::prefetch_open).
open_request download_open_request(const std::string& remote_path);
open_request upload_open_request(const std::string& remote_path, const struct stat& local, const transfer_flags& f);
// The OPEN an upload of `local` to `remote_path` will send, for
// remote_fs::prefetch_open (sent before the stat that decides between the
// path and a directory's entry): none for a resume (it stats the target
// first), or when `local` is not a regular file that opens for reading (the
// upload opens it first and sends nothing when that fails, so a target is
// never truncated for a source that cannot be read).
std::optional<open_request> upload_open_ahead(const std::string& local, const std::string& remote_path,
                                              const transfer_flags& f);
// do_upload(): local_path to remote_path.
std::unique_ptr<file_task> make_upload(remote_fs& fs, std::string local_path, std::string remote_path,
                                       transfer_flags f);

class task_runner {
public:
    // meter: nullptr when no progress is shown. `show_meter` per task is
    // decided by the task (a download of an empty file shows none).
    task_runner(remote_fs& fs, progress_meter* meter) : fs_(fs), meter_(meter) {}

    void add(std::unique_ptr<file_task> t) { queue_.push_back(std::move(t)); }
    bool empty() const noexcept { return queue_.empty() && running_.empty(); }
    // Tasks reported as failed so far.
    std::uint64_t failures() const noexcept { return failures_; }
    // Runs everything added; 0 when every task succeeded, else -1. Stops
    // starting new tasks once the session fails or is interrupted.
    int run();
    // Nothing will be sent on the connection after this run: the last
    // file's final request may end the server's input (session::
    // last_request, link::end_output). For the run that ends a connection.
    void set_last_batch(bool last) noexcept { last_batch_ = last; }

private:
    void flush_head();

    remote_fs& fs_;
    progress_meter* meter_;
    std::deque<std::unique_ptr<file_task>> queue_;
    std::deque<std::unique_ptr<file_task>> running_;
    file_task* metered_ = nullptr;
    int status_ = 0;
    bool last_batch_ = false;
    std::uint64_t failures_ = 0;
};

} // namespace longhaul::sftp
