// do_download() as a chain of requests (file_tasks.hpp).
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

open_request download_open_request(const std::string& remote_path)
{
    return open_request{.id = 0, .path = remote_path, .pflags = fxf::read, .attributes = {}};
}

namespace {

using detail::lost;
using detail::status_of;

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

    void poll() override
    {
        if (job_ && job_->done() && !data_done_) {
            data_done_ = true;
            if (gave_up_)
                close_remote(-1);
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
            report_open_failure(r);
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
                if (h != nullptr)
                    sess().core().fail("Server answered open-named with another handle");
                else
                    report_open_failure(r);
                handle_.clear(); // nothing to close
                give_up();
            });
        create_job(0);
    }

    void named_opened()
    {
        if (!open_local())
            return give_up();
        job_->set_fd(fd_);
        start_meter(0);
    }

    // The READs of a named handle that can no longer be used: taken and
    // dropped, then the remote handle closed (when there is one).
    void give_up()
    {
        job_->abandon();
        gave_up_ = true;
    }

    void report_open_failure(const reply& r)
    {
        if (!lost(sess(), r))
            err(strprintf("remote open \"%s\": %s", remote_.c_str(), fx2txt(status_of(r))));
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
    bool gave_up_ = false; // give_up(): the task fails once the abandoned job is done
};

} // namespace

std::unique_ptr<file_task> make_download(remote_fs& fs, std::string remote_path, std::string local_path,
                                         std::optional<attrs> a, transfer_flags f)
{
    return std::make_unique<download_task>(fs, std::move(remote_path), std::move(local_path), std::move(a), f);
}

} // namespace longhaul::sftp
