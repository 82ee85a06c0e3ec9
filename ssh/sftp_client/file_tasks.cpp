#include "ssh/sftp_client/file_tasks.hpp"

#include "ssh/sftp_client/prefix_check.hpp"
#include "ssh/sftp_client/text.hpp"

#include <fcntl.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <functional>
#include <memory>

namespace longhaul::sftp {

void file_task::finish(int r)
{
    finished_ = true;
    result_ = r;
}

namespace {

std::uint32_t status_of(const reply& r) noexcept
{
    if (const auto* s = std::get_if<status_reply>(&r))
        return s->code;
    return static_cast<std::uint32_t>(status_code::bad_message);
}

// The session died under the request: OpenSSH's client would already have
// exited with "Connection closed"; the program reports that once.
bool lost(session& s, const reply& r) noexcept
{
    return !s.ok() && status_of(r) == static_cast<std::uint32_t>(status_code::connection_lost);
}

} // namespace

open_request download_open_request(const std::string& remote_path)
{
    return open_request{.id = 0, .path = remote_path, .pflags = fxf::read, .attributes = {}};
}

open_request upload_open_request(const std::string& remote_path, const struct stat& local, const transfer_flags& f)
{
    // A resume reads the remote prefix back (check_prefix) and writes at
    // explicit offsets, so the file is opened for both, without O_APPEND
    // (OpenSSH appends).
    open_request r{.id = 0,
                   .path = remote_path,
                   .pflags = f.resume ? (fxf::read | fxf::write | fxf::creat) : (fxf::write | fxf::creat | fxf::trunc),
                   .attributes = attrs::from_stat(local)};
    r.attributes.flags &= ~(attr::size | attr::uidgid);
    r.attributes.permissions &= 0777;
    if (!f.preserve)
        r.attributes.flags &= ~attr::acmodtime;
    return r;
}

std::optional<open_request> upload_open_ahead(const std::string& local, const std::string& remote_path,
                                              const transfer_flags& f)
{
    if (f.resume)
        return std::nullopt;
    // (O_NONBLOCK: opening a FIFO must not wait for a writer here.)
    const int fd = ::open(local.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0)
        return std::nullopt;
    struct stat st{};
    const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
    ::close(fd);
    if (!regular)
        return std::nullopt;
    return upload_open_request(remote_path, st, f);
}

namespace {

// --- download ------------------------------------------------------------------

class download_task final : public file_task {
public:
    download_task(remote_fs& fs, std::string remote, std::string local, std::optional<attrs> a, transfer_flags f)
        : file_task(fs), remote_(std::move(remote)), local_(std::move(local)), a_(std::move(a)), f_(f)
    {
        meter_file = meter_name(remote_);
    }
    ~download_task() override
    {
        job_.reset();
        if (fd_ >= 0)
            ::close(fd_);
    }

    void start() override
    {
        if (a_) {
            have_attrs();
            return;
        }
        sess().core().request(stat_request{.id = 0, .path = remote_}, [this](const reply& r) {
            if (const auto* at = std::get_if<attrs_reply>(&r)) {
                a_ = at->attributes;
                have_attrs();
                return;
            }
            if (!lost(sess(), r))
                err(strprintf("stat remote: %s", fx2txt(status_of(r))));
            finish(-1);
        });
    }

    void poll()
    {
        if (job_ && job_->done() && !data_done_) {
            data_done_ = true;
            if (after_abandon_)
                after_abandon_();
            else
                after_data();
        }
    }

private:
    void have_attrs()
    {
        // Set[ug]id bits are not kept: ownership is not either.
        mode_ = a_->has(attr::permissions) ? (a_->permissions & 0777) : 0666;
        if (a_->has(attr::permissions) && !S_ISREG(a_->permissions)) {
            err(strprintf("download %s: not a regular file", remote_.c_str()));
            finish(-1);
            return;
        }
        size_ = a_->has(attr::size) ? a_->size : 0;
        if (!f_.resume && sess().core().has_extension(ext::open_named, "1")) {
            open_named();
            return;
        }
        fs_.open_async(download_open_request(remote_), [this](const reply& r) {
            if (const auto* h = std::get_if<handle_reply>(&r)) {
                handle_ = h->handle;
                opened();
                return;
            }
            if (!lost(sess(), r))
                err(strprintf("remote open \"%s\": %s", remote_.c_str(),
                              fx2txt(status_of(r))));
            finish(-1);
        });
    }

    // A server that takes open-named (Longhaul's): the OPEN names its
    // handle, so the first READs go in the same flight instead of a round
    // trip after its answer. The answer still comes first, and the local
    // file is opened only then, as OpenSSH's do_download does (a remote
    // file that cannot be opened leaves the local one untouched).
    void open_named()
    {
        handle_ = sess().new_handle_name();
        const open_request o = download_open_request(remote_);
        sess().core().request(
            open_named_request{.id = 0, .handle = handle_, .path = o.path, .pflags = o.pflags, .attributes = {}},
            [this](const reply& r) {
                const auto* h = std::get_if<handle_reply>(&r);
                if (h != nullptr && h->handle == handle_) {
                    named_opened();
                    return;
                }
                if (h != nullptr) {
                    sess().core().fail("Server answered open-named with another handle");
                } else if (!lost(sess(), r)) {
                    err(strprintf("remote open \"%s\": %s", remote_.c_str(), fx2txt(status_of(r))));
                }
                handle_.clear(); // nothing to close
                give_up(-1);
            });
        create_job(0);
    }

    void named_opened()
    {
        if (!open_local())
            return give_up(-1);
        job_->set_fd(fd_);
        start_meter(0);
    }

    // The READs of a named handle that can no longer be used: taken and
    // dropped, then the remote handle closed (when there is one).
    void give_up(int result)
    {
        job_->abandon();
        after_abandon_ = [this, result] { close_remote(result); };
    }

    bool open_local()
    {
        const int trunc = (f_.resume || f_.inplace) ? 0 : O_TRUNC;
        // Read-write for a resume: check_prefix() reads the part already there.
        const int access = f_.resume ? O_RDWR : O_WRONLY;
        fd_ = ::open(local_.c_str(), access | O_CREAT | O_CLOEXEC | trunc, mode_ | S_IWUSR);
        if (fd_ < 0) {
            err(strprintf("open local \"%s\": %s", local_.c_str(), std::strerror(errno)));
            return false;
        }
        return true;
    }

    void opened()
    {
        if (!open_local()) {
            close_remote(-1);
            return;
        }
        std::uint64_t offset = 0;
        if (f_.resume) {
            struct stat st{};
            if (::fstat(fd_, &st) == -1) {
                err(strprintf("stat local \"%s\": %s", local_.c_str(), std::strerror(errno)));
                close_remote(-1);
                return;
            }
            if (std::uint64_t(st.st_size) > size_) {
                err(strprintf("Unable to resume download of \"%s\": local file is larger than remote",
                              local_.c_str()));
                close_remote(-1);
                return;
            }
            offset = std::uint64_t(st.st_size);
        }
        if (f_.resume && offset > 0) {
            check_prefix(sess(), handle_, fd_, offset, [this, offset](const prefix_verdict& v) {
                if (v.lost) {
                    finish(-1);
                    return;
                }
                debug(strprintf("\"%s\": %s", local_.c_str(), v.how.c_str()));
                std::uint64_t from = offset;
                if (!v.same) {
                    info(strprintf("\"%s\" does not match \"%s\" in the part already transferred: "
                                   "transferring it whole",
                                   local_.c_str(), remote_.c_str()));
                    if (::ftruncate(fd_, 0) == -1) {
                        err(strprintf("local ftruncate \"%s\": %s", local_.c_str(), std::strerror(errno)));
                        close_remote(-1);
                        return;
                    }
                    from = 0;
                }
                start_data(from);
            });
            return;
        }
        start_data(offset);
    }

    void start_data(std::uint64_t offset)
    {
        start_meter(offset);
        create_job(offset);
    }

    void start_meter(std::uint64_t offset)
    {
        progress.store(offset);
        meter_size = size_;
        meter_wanted = size_ != 0;
        data_started = true;
    }

    // The data phase from `offset` (fd_ may come later: named_opened).
    void create_job(std::uint64_t offset)
    {
        job_ = std::make_unique<download_job>(sess().engine(), handle_, fd_, offset, size_, sess().read_chunk(),
                                              &progress);
        // The connection's last file, from a server that answers what came
        // before the end of its input: the copy is of the size stat gave
        // (as legacy scp's), so its last READ is known when it goes out,
        // and the CLOSE and the end of the input go right behind it. The
        // server then exits behind the last data, and ssh with it: a round
        // trip sooner than ending the input once the data is in.
        if (size_ > offset && sess().last_request() && sess().core().has_extension(ext::drain_at_eof, "1")) {
            job_->set_final_size([this] {
                closed_early_ = true;
                sess().core().request(close_request{.id = 0, .handle = handle_}, [](const reply&) {});
                sess().end_output();
            });
        }
    }

    void after_data()
    {
        transfer_status st = job_->status();
        // OpenSSH fails a transfer that was interrupted, however far it got.
        st.interrupted = sess().interrupted();
        if (st.protocol_error) {
            finish(-1);
            return;
        }
        if (!st.ok()) {
            if (job_->reordered() && f_.resume)
                err(strprintf("Unable to resume download of \"%s\": server reordered requests", local_.c_str()));
            // Up to the first hole only, so that a resume continues exactly.
            if (::ftruncate(fd_, off_t(job_->contiguous())) == -1)
                err(strprintf("local ftruncate \"%s\": %s", local_.c_str(), std::strerror(errno)));
        }
        if (st.remote_status != 0) {
            err(strprintf("read remote \"%s\" : %s", remote_.c_str(), fx2txt(st.remote_status)));
            close_remote(-1);
            return;
        }
        if (st.local_errno != 0) {
            err(strprintf("write local \"%s\": %s", local_.c_str(), std::strerror(st.local_errno)));
            close_remote(-1);
            return;
        }
        if (f_.inplace && !st.interrupted && job_->end() != UINT64_MAX) {
            // Written over an existing file: cut it where the remote one ended.
            struct stat sb{};
            if (::fstat(fd_, &sb) == 0 && S_ISREG(sb.st_mode) && std::uint64_t(sb.st_size) > job_->contiguous())
                (void)::ftruncate(fd_, off_t(job_->contiguous()));
        }
        const bool interrupted = st.interrupted;
        if (closed_early_) {
            // The CLOSE went with the last READ; nothing more can be sent.
            if (interrupted)
                finish(-1);
            else
                finish_local(0);
            return;
        }
        if (!interrupted && sess().last_request()) {
            // The connection's last request: the CLOSE goes out with the
            // end of the server's input, and the copy is complete without
            // its answer (a read handle's close changes nothing on disk),
            // which spares a round trip before ssh can exit. OpenSSH's
            // sftp-server may well exit on that EOF before answering; the
            // handle closes with it.
            sess().core().request(close_request{.id = 0, .handle = handle_}, [](const reply&) {});
            sess().end_output();
            finish_local(0);
            return;
        }
        sess().core().request(close_request{.id = 0, .handle = handle_}, [this, interrupted](const reply& r) {
            if (lost(sess(), r)) {
                finish(-1);
                return;
            }
            int result = 0;
            if (status_of(r) != 0) {
                err(strprintf("close remote: %s", fx2txt(status_of(r))));
                result = -1;
            }
            if (interrupted)
                result = -1;
            if (!interrupted)
                finish_local(result);
            else
                finish(result);
        });
    }

    void finish_local(int result)
    {
        if (f_.preserve && ::fchmod(fd_, mode_) == -1)
            err(strprintf("local chmod \"%s\": %s", local_.c_str(), std::strerror(errno)));
        if (f_.preserve && a_->has(attr::acmodtime)) {
            struct timeval tv[2] = {{time_t(a_->atime), 0}, {time_t(a_->mtime), 0}};
            if (::utimes(local_.c_str(), tv) == -1)
                err(strprintf("local set times \"%s\": %s", local_.c_str(), std::strerror(errno)));
        }
        if (f_.resume && !job_->wrote_anything()) {
            info(strprintf("File \"%s\" was not modified", local_.c_str()));
        } else if (f_.fsync) {
            if (::fsync(fd_) == -1)
                err(strprintf("local sync \"%s\": %s", local_.c_str(), std::strerror(errno)));
        }
        ::close(fd_);
        fd_ = -1;
        finish(result);
    }

    // The remote handle is closed before giving up; its status no longer matters.
    void close_remote(int result)
    {
        if (handle_.empty() || closed_early_) {
            finish(result);
            return;
        }
        sess().core().request(close_request{.id = 0, .handle = handle_}, [this, result](const reply& r) {
            if (!lost(sess(), r) && status_of(r) != 0)
                err(strprintf("close remote: %s", fx2txt(status_of(r))));
            finish(result);
        });
    }

    std::string remote_, local_;
    std::optional<attrs> a_;
    transfer_flags f_;
    mode_t mode_ = 0666;
    std::uint64_t size_ = 0;
    bytes handle_;
    int fd_ = -1;
    std::unique_ptr<download_job> job_;
    bool closed_early_ = false; // the CLOSE went out with the last READ (set_final_size)
    bool data_done_ = false;
    std::function<void()> after_abandon_; // give_up(): once the abandoned job is done
};

// --- upload --------------------------------------------------------------------

class upload_task final : public file_task {
public:
    upload_task(remote_fs& fs, std::string local, std::string remote, transfer_flags f)
        : file_task(fs), local_(std::move(local)), remote_(std::move(remote)), f_(f)
    {
        meter_file = meter_name(local_);
    }
    ~upload_task() override
    {
        job_.reset();
        if (fd_ >= 0)
            ::close(fd_);
    }

    void start() override
    {
        fd_ = ::open(local_.c_str(), O_RDONLY | O_CLOEXEC);
        if (fd_ < 0) {
            err(strprintf("open local \"%s\": %s", local_.c_str(), std::strerror(errno)));
            finish(-1);
            return;
        }
        if (::fstat(fd_, &sb_) == -1) {
            err(strprintf("fstat local \"%s\": %s", local_.c_str(), std::strerror(errno)));
            finish(-1);
            return;
        }
        if (!S_ISREG(sb_.st_mode)) {
            err(strprintf("local \"%s\" is not a regular file", local_.c_str()));
            finish(-1);
            return;
        }
        a_ = upload_open_request(remote_, sb_, f_).attributes;
        if (!f_.resume) {
            open_remote();
            return;
        }
        sess().core().request(stat_request{.id = 0, .path = remote_}, [this](const reply& r) {
            const auto* at = std::get_if<attrs_reply>(&r);
            if (at == nullptr) {
                if (!lost(sess(), r))
                    err(strprintf("stat remote: %s", fx2txt(status_of(r))));
                finish(-1);
                return;
            }
            if (std::int64_t(at->attributes.size) >= std::int64_t(sb_.st_size)) {
                err("destination file bigger or same size as source file");
                finish(-1);
                return;
            }
            offset_ = at->attributes.size;
            open_remote();
        });
    }

    void poll()
    {
        // fsetstat, fsync and close follow the last WRITE at once rather
        // than a round trip later, when its reply is in: the server runs
        // requests on a handle in order, so they still act on the whole
        // file, and a failed write is reported as before (the task waits
        // for every reply and prints in OpenSSH's order).
        if (job_ && !closing_ && job_->all_sent() && !job_->status().protocol_error)
            send_closing();
        if (job_ && job_->done() && !data_done_) {
            data_done_ = true;
            after_data();
        }
    }

private:
    void open_remote()
    {
        fs_.open_async(upload_open_request(remote_, sb_, f_), [this](const reply& r) {
            if (const auto* h = std::get_if<handle_reply>(&r)) {
                handle_ = h->handle;
                if (f_.resume && offset_ > 0) {
                    check_prefix(sess(), handle_, fd_, offset_,
                                 [this](const prefix_verdict& v) { checked(v); });
                    return;
                }
                start_data();
                return;
            }
            if (!lost(sess(), r))
                err(strprintf("dest open \"%s\": %s", remote_.c_str(),
                              fx2txt(status_of(r))));
            finish(-1);
        });
    }

    void checked(const prefix_verdict& v)
    {
        if (v.lost) {
            finish(-1);
            return;
        }
        debug(strprintf("\"%s\": %s", remote_.c_str(), v.how.c_str()));
        if (v.same) {
            start_data();
            return;
        }
        info(strprintf("\"%s\" does not match \"%s\" in the part already transferred: transferring it whole",
                       remote_.c_str(), local_.c_str()));
        attrs empty;
        empty.flags = attr::size;
        empty.size = 0;
        sess().core().request(fsetstat_request{.id = 0, .handle = handle_, .attributes = empty}, [this](const reply& r) {
            if (lost(sess(), r)) {
                finish(-1);
                return;
            }
            if (status_of(r) != 0) {
                err(strprintf("remote fsetstat: %s", fx2txt(status_of(r))));
                finish(-1);
                return;
            }
            offset_ = 0;
            start_data();
        });
    }

    void start_data()
    {
        progress.store(offset_);
        meter_size = std::uint64_t(sb_.st_size);
        meter_wanted = true;
        data_started = true;
        job_ = std::make_unique<upload_job>(sess().engine(), handle_, fd_, offset_, sess().write_chunk(), &progress,
                                            std::uint64_t(sb_.st_size));
    }

    // The replies of the closing requests, kept until the data phase is
    // over so that messages come out in OpenSSH's order.
    struct closing {
        int pending = 0;
        std::optional<std::uint32_t> fsetstat_status, fsync_status, close_status;
        bool lost = false;
    };

    void send_closing()
    {
        closing_ = std::make_shared<closing>();
        auto c = closing_;
        auto& core = sess().core();
        const auto answered = [this, c](std::optional<std::uint32_t> closing::*slot, const reply& r) {
            if (lost(sess(), r))
                c->lost = true;
            else
                (*c).*slot = status_of(r);
            --c->pending;
            maybe_finish();
        };
        if (f_.preserve) {
            ++c->pending;
            core.request(fsetstat_request{.id = 0, .handle = handle_, .attributes = a_},
                         [answered](const reply& r) { answered(&closing::fsetstat_status, r); });
        }
        if (f_.fsync && core.has_extension(ext::fsync, "1")) {
            ++c->pending;
            core.request(fsync_request{.id = 0, .handle = handle_},
                         [answered](const reply& r) { answered(&closing::fsync_status, r); });
        }
        ++c->pending;
        core.request(close_request{.id = 0, .handle = handle_},
                     [answered](const reply& r) { answered(&closing::close_status, r); });
        // The connection's last requests, to a server that answers what
        // came before the end of its input: that end goes out with them,
        // so the server exits right behind the last answer and ssh with
        // it, a round trip sooner. The answers are still waited for and
        // reported. (Not to other servers: OpenSSH's sftp-server exits at
        // that end with requests still queued.)
        if (sess().last_request() && core.has_extension(ext::drain_at_eof, "1"))
            sess().end_output();
    }

    void after_data()
    {
        transfer_status st = job_->status();
        st.interrupted = sess().interrupted();
        if (st.protocol_error) {
            finish(-1);
            return;
        }
        data_result_ = st.ok() ? 0 : -1;
        if (st.local_errno != 0)
            err(strprintf("read local \"%s\": %s", local_.c_str(), std::strerror(st.local_errno)));
        if (st.remote_status != 0)
            err(strprintf("write remote \"%s\": %s", remote_.c_str(), fx2txt(st.remote_status)));
        if (::close(fd_) == -1) {
            err(strprintf("close local \"%s\": %s", local_.c_str(), std::strerror(errno)));
            data_result_ = -1;
        }
        fd_ = -1;
        if (!closing_)
            send_closing();
        maybe_finish();
    }

    // Finishes once the data phase is over and every closing request is
    // answered, whatever their order (a server may answer the close
    // first; the task, which the handlers use, is gone once reported).
    void maybe_finish()
    {
        if (!data_done_ || !closing_ || closing_->pending != 0 || finished())
            return;
        const closing& c = *closing_;
        int result = data_result_;
        if (c.fsetstat_status && *c.fsetstat_status != 0)
            err(strprintf("remote fsetstat: %s", fx2txt(*c.fsetstat_status)));
        if (c.fsync_status && *c.fsync_status != 0)
            err(strprintf("remote fsync: %s", fx2txt(*c.fsync_status)));
        if (c.close_status && *c.close_status != 0) {
            err(strprintf("close remote: %s", fx2txt(*c.close_status)));
            result = -1;
        }
        if (c.lost)
            result = -1;
        finish(result);
    }

    std::string local_, remote_;
    transfer_flags f_;
    struct stat sb_{};
    attrs a_;
    std::uint64_t offset_ = 0;
    bytes handle_;
    int fd_ = -1;
    std::unique_ptr<upload_job> job_;
    std::shared_ptr<closing> closing_;
    int data_result_ = 0;
    bool data_done_ = false;
};

class note_task final : public file_task {
public:
    note_task(remote_fs& fs, message m, int result) : file_task(fs), result_(result) { messages.push_back(std::move(m)); }
    void start() override { finish(result_); }

private:
    int result_;
};

void poll_task(file_task* t)
{
    if (auto* d = dynamic_cast<download_task*>(t))
        d->poll();
    else if (auto* u = dynamic_cast<upload_task*>(t))
        u->poll();
}

} // namespace

std::unique_ptr<file_task> make_download(remote_fs& fs, std::string remote_path, std::string local_path,
                                         std::optional<attrs> a, transfer_flags f)
{
    return std::make_unique<download_task>(fs, std::move(remote_path), std::move(local_path), std::move(a), f);
}

std::unique_ptr<file_task> make_note(remote_fs& fs, file_task::message m, int result)
{
    return std::make_unique<note_task>(fs, std::move(m), result);
}

std::unique_ptr<file_task> make_upload(remote_fs& fs, std::string local_path, std::string remote_path,
                                       transfer_flags f)
{
    return std::make_unique<upload_task>(fs, std::move(local_path), std::move(remote_path), f);
}

// --- runner ----------------------------------------------------------------------

void task_runner::flush_head()
{
    while (!running_.empty()) {
        file_task* head = running_.front().get();
        if (meter_ != nullptr && head->data_started && head->meter_wanted && metered_ != head) {
            meter_->start(head->meter_file, head->meter_size, &head->progress);
            metered_ = head;
        }
        if (!head->finished())
            return;
        if (metered_ == head) {
            meter_->stop();
            metered_ = nullptr;
        }
        head->before_report();
        for (const auto& m : head->messages) {
            if (m.what == file_task::message::error)
                fs_.out().err(m.text);
            else if (m.what == file_task::message::info)
                fs_.out().inf(m.text);
            else if (m.what == file_task::message::print)
                fs_.out().say(m.text);
            else if (m.what == file_task::message::debug)
                fs_.out().dbg(1, m.text);
        }
        if (head->result() != 0) {
            status_ = -1;
            ++failures_;
            if (!head->on_failure.empty())
                fs_.out().err(head->on_failure);
        }
        head->reported();
        running_.pop_front();
    }
}

int task_runner::run()
{
    session& s = fs_.sess();
    const std::size_t limit = std::max<std::size_t>(1, s.max_parallel_files());
    if (meter_ != nullptr)
        s.set_tick([this] {
            if (metered_ != nullptr)
                meter_->refresh();
        });
    if (last_batch_) {
        // The caller's request is the last when nothing is queued and no
        // other task is still waiting for the server.
        s.set_last_request_check([this] {
            if (!queue_.empty())
                return false;
            std::size_t unfinished = 0;
            for (const auto& t : running_)
                unfinished += t->finished() ? 0 : 1;
            return unfinished == 1;
        });
    }
    auto finished_count = [&] {
        std::size_t n = 0;
        for (auto& t : running_) {
            if (!t->finished())
                poll_task(t.get());
            if (t->finished())
                ++n;
        }
        return n;
    };
    for (;;) {
        while (running_.size() < limit && !queue_.empty() && s.ok() && !s.interrupted()) {
            running_.push_back(std::move(queue_.front()));
            queue_.pop_front();
            running_.back()->start();
        }
        if (!s.ok() || s.interrupted()) {
            if (!queue_.empty())
                status_ = -1;
            queue_.clear();
        }
        flush_head();
        if (running_.empty()) {
            if (queue_.empty())
                break;
            continue;
        }
        // Until one more file finishes (which may free a slot or let the
        // head be reported). A failed session answers everything at once.
        const std::size_t before = finished_count();
        s.run_until([&] { return finished_count() > before || !s.ok(); });
        if (!s.ok() && finished_count() < running_.size()) {
            // Nothing more can arrive; what is still unfinished failed.
            for (auto& t : running_)
                if (!t->finished())
                    status_ = -1;
            running_.clear();
            metered_ = nullptr;
        }
    }
    if (meter_ != nullptr)
        s.set_tick(nullptr);
    s.set_last_request_check(nullptr);
    return status_;
}

} // namespace longhaul::sftp
