#include "ssh/sftp_client/prefix_check.hpp"

#include "ssh/sftp_client/text.hpp"

#include <unistd.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

namespace longhaul::sftp {

namespace {

bool prefix_session_lost(session& s, const reply& r) noexcept
{
    const auto* st = std::get_if<status_reply>(&r);
    return !s.ok() && st != nullptr && st->code == static_cast<std::uint32_t>(status_code::connection_lost);
}

// The first and last 64 KiB of [0, n), read back and compared here.
void check_prefix_samples(session& s, const bytes& handle, int fd, std::uint64_t n, std::string how,
                          std::function<void(const prefix_verdict&)> done)
{
    const std::uint64_t block = std::min<std::uint64_t>(64 * 1024, s.read_chunk());
    struct state {
        int pending = 0;
        prefix_verdict verdict;
        std::function<void(const prefix_verdict&)> done;
    };
    auto st = std::make_shared<state>();
    st->verdict.same = true;
    st->verdict.how = std::move(how);
    st->done = std::move(done);
    std::vector<std::pair<std::uint64_t, std::uint64_t>> ranges{{0, std::min(block, n)}};
    if (n > block)
        ranges.emplace_back(n - block, block);
    st->pending = int(ranges.size());
    for (const auto& [off, len] : ranges) {
        s.core().request(read_request{.id = 0, .handle = handle, .offset = off, .length = std::uint32_t(len)},
                         [st, fd, off = off, &s](const reply& r) {
                             if (const auto* d = std::get_if<data_reply>(&r)) {
                                 bytes local(d->data.size());
                                 const ssize_t got = ::pread(fd, local.data(), local.size(), off_t(off));
                                 if (d->data.empty() || got != ssize_t(local.size()) ||
                                     !std::equal(local.begin(), local.end(), d->data.begin()))
                                     st->verdict.same = false;
                             } else if (prefix_session_lost(s, r)) {
                                 st->verdict.lost = true;
                             } else {
                                 st->verdict.same = false; // EOF or an error: not the file we had
                             }
                             if (--st->pending == 0)
                                 st->done(st->verdict);
                         });
    }
}

// SHA-256 of both sides, piece by piece.
class hashed_prefix_check : public std::enable_shared_from_this<hashed_prefix_check> {
public:
    hashed_prefix_check(session& s, bytes handle, int fd, std::uint64_t n, std::uint64_t piece,
                        std::function<void(const prefix_verdict&)> done)
        : s_(s), handle_(std::move(handle)), fd_(fd), n_(n), piece_(std::max<std::uint64_t>(1, piece)),
          done_(std::move(done))
    {
    }

    void pump()
    {
        while (!differ_ && !refused_ && !lost_ && pending_ < 2 * prefix_check_in_flight && next_ < n_) {
            const std::uint64_t off = next_;
            const std::uint64_t len = std::min(piece_, n_ - off);
            next_ += len;
            auto p = std::make_shared<piece_state>();
            pending_ += 2;
            auto self = shared_from_this();
            s_.core().request(check_file_handle_request{.id = 0, .handle = handle_, .algorithms = "sha256",
                                                        .start_offset = off, .length = len, .block_size = 0},
                              [self, p](const reply& r) { self->remote_done(*p, r); });
            s_.engine().disk().hash(fd_, off, len, [self, p](int err, bytes digest) {
                self->local_done(*p, err, std::move(digest));
            });
        }
        if (pending_ == 0)
            finish();
    }

private:
    struct piece_state {
        bytes local, remote;
        bool local_in = false, remote_in = false;
    };

    void remote_done(piece_state& p, const reply& r)
    {
        --pending_;
        if (const auto* e = std::get_if<extended_reply>(&r)) {
            auto c = check_file_reply::decode_body(e->id, e->data);
            if (c && c->algorithm == "sha256")
                p.remote = std::move(c->hashes);
            else
                refuse("check-file-handle: unexpected reply");
        } else if (prefix_session_lost(s_, r)) {
            lost_ = true;
        } else if (const auto* eof = std::get_if<status_reply>(&r);
                   eof != nullptr && eof->code == static_cast<std::uint32_t>(status_code::eof)) {
            differ_ = true; // the remote file ends before the prefix does
        } else {
            const auto* st = std::get_if<status_reply>(&r);
            refuse(st != nullptr ? strprintf("check-file-handle refused (%s)", fx2txt(st->code))
                                 : std::string("check-file-handle: unexpected reply"));
        }
        p.remote_in = true;
        compare(p);
    }

    void local_done(piece_state& p, int err, bytes digest)
    {
        --pending_;
        // A local file that cannot be read to n is not the prefix it was.
        if (err != 0)
            differ_ = true;
        p.local = std::move(digest);
        p.local_in = true;
        compare(p);
    }

    void compare(piece_state& p)
    {
        // A hash of the wrong size (or none) from the server is no match:
        // only equal digests let the prefix stand.
        if (p.local_in && p.remote_in && !refused_ && !lost_ && p.local != p.remote)
            differ_ = true;
        pump();
    }

    void refuse(std::string why)
    {
        if (!refused_)
            refusal_ = std::move(why);
        refused_ = true;
    }

    void finish()
    {
        if (finished_)
            return;
        finished_ = true;
        if (refused_ && !lost_) {
            // Samples, as with a server without the extension.
            check_prefix_samples(s_, handle_, fd_, n_, refusal_ + ": comparing samples of the prefix", done_);
            return;
        }
        prefix_verdict v;
        v.lost = lost_;
        v.same = !differ_ && !lost_;
        v.how = strprintf("sha256 of the first %llu bytes compared with the server's (check-file-handle): %s",
                          static_cast<unsigned long long>(n_), v.same ? "same" : "different");
        done_(v);
    }

    session& s_;
    bytes handle_;
    int fd_;
    std::uint64_t n_;
    std::uint64_t piece_;
    std::function<void(const prefix_verdict&)> done_;
    std::uint64_t next_ = 0;
    int pending_ = 0;
    bool differ_ = false, refused_ = false, lost_ = false, finished_ = false;
    std::string refusal_;
};

} // namespace

void check_prefix(session& s, const bytes& handle, int fd, std::uint64_t n,
                  std::function<void(const prefix_verdict&)> done, std::uint64_t piece)
{
    if (!s.core().has_extension(ext::check_file_handle)) {
        check_prefix_samples(s, handle, fd, n, "server lacks check-file-handle: comparing samples of the prefix",
                             std::move(done));
        return;
    }
    auto check = std::make_shared<hashed_prefix_check>(s, handle, fd, n, piece, std::move(done));
    check->pump();
}

} // namespace longhaul::sftp
