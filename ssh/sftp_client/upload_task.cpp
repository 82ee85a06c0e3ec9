// do_upload() as a chain of requests (file_tasks.hpp).
#include "ssh/sftp_client/file_tasks.hpp"

#include "ssh/sftp_client/file_task_detail.hpp"
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

using detail::lost;
using detail::status_of;

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

    void poll() override
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

} // namespace

std::unique_ptr<file_task> make_upload(remote_fs& fs, std::string local_path, std::string remote_path,
                                       transfer_flags f)
{
    return std::make_unique<upload_task>(fs, std::move(local_path), std::move(remote_path), f);
}

} // namespace longhaul::sftp
