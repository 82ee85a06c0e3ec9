// The remote file operations of OpenSSH's sftp-client.c (do_stat,
// do_mkdir, do_rename, ...) over a session, with its error messages in
// its words, so scp and sftp report failures exactly as OpenSSH's do.
// Every call blocks until its reply; transfers are in file_tasks.hpp.
#pragma once

#include "ssh/sftp_client/session.hpp"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::sftp {

// Where the client's messages go: error() always, info() unless -q,
// debug(level, ...) with -v (level 1..3). The programs add their prefixes.
struct output_sink {
    std::function<void(const std::string&)> error;
    std::function<void(const std::string&)> info;
    std::function<void(int, const std::string&)> debug;
    // Progress lines for stdout ("Retrieving DIR", "Entering DIR").
    std::function<void(const std::string&)> print;

    void err(const std::string& m) const
    {
        if (error)
            error(m);
    }
    void inf(const std::string& m) const
    {
        if (info)
            info(m);
    }
    void say(const std::string& m) const
    {
        if (print)
            print(m);
    }
    void dbg(int level, const std::string& m) const
    {
        if (debug)
            debug(level, m);
    }
};

class remote_fs {
public:
    remote_fs(session& s, const output_sink& out) : s_(s), out_(out) {}

    session& sess() noexcept { return s_; }
    const output_sink& out() const noexcept { return out_; }

    // do_stat / do_lstat: "stat remote: %s" unless quiet.
    std::optional<attrs> stat(const std::string& path, bool quiet);
    // Send STAT (REALPATH) of `path` now without waiting: the next stat()
    // (realpath()) of the same path takes the answer, provided no other
    // request went out in between (nothing of ours can have changed the
    // file since). For a program's first lookup, sent with INIT
    // (session::init). Any other request that goes out drops it.
    void prefetch_stat(const std::string& path);
    void prefetch_realpath(const std::string& path);
    // Several may go out together (sftp: REALPATH "." and the first
    // command's stat): each is used while nothing but them went out. A
    // relative path's early stat is the same file as that path under the
    // server's starting directory: rebase_prefetched(dir), with `dir` from
    // the REALPATH "." of the same flight, lets the stat of the absolute
    // path take it (and an early OPEN of a relative path likewise).
    void rebase_prefetched(const std::string& dir);
    // Send OPEN now, in the same flight as the first lookup (scp's copy of
    // one file, whose OPEN would otherwise wait a round trip for the
    // stat): the first open_async() of exactly this request takes its
    // answer. Only for an OPEN that does what the copy would do anyway if
    // the stat allows it (read; or write of the one destination, which
    // fails without effect on a directory). A prefetched stat sent just
    // before still counts as fresh: the server answers it first.
    void prefetch_open(const open_request& r);
    // OPEN for a transfer: `done` gets the answer, the prefetched one when
    // `r` is the request prefetched. A prefetched OPEN that is not wanted
    // (another request, or drop_prefetched_open) has its handle closed.
    void open_async(open_request r, std::function<void(const reply&)> done);
    void drop_prefetched_open();
    bool has_prefetched_open() const noexcept { return prefetched_open_ != nullptr; }
    std::optional<attrs> lstat(const std::string& path, bool quiet);
    std::optional<attrs> fstat(const bytes& handle, bool quiet);
    // do_realpath / do_expand_path: "realpath PATH: MSG".
    std::optional<std::string> realpath(const std::string& path);
    std::optional<std::string> expand_path(const std::string& path);
    bool can_expand_path() const noexcept;
    std::optional<std::string> readlink(const std::string& path);

    // 0 or -1, with OpenSSH's message on failure.
    int remove(const std::string& path);
    int mkdir(const std::string& path, const attrs& a, bool print_flag);
    int rmdir(const std::string& path);
    int rename(const std::string& from, const std::string& to, bool force_legacy);
    int symlink(const std::string& target, const std::string& link_path);
    int hardlink(const std::string& from, const std::string& to);
    int setstat(const std::string& path, const attrs& a);
    int lsetstat(const std::string& path, const attrs& a);
    int fsetstat(const bytes& handle, const attrs& a);
    int fsync(const bytes& handle);
    // copy-data (the cp command): "Couldn't copy file ..." on failure.
    int copy(const std::string& from, const std::string& to);

    // do_readdir: every entry of a directory (opendir, readdir until EOF,
    // close). Names with a '/' are dropped, as OpenSSH does.
    std::optional<std::vector<name_entry>> readdir(const std::string& path, bool quiet = false);
    std::optional<statvfs_reply> statvfs(const std::string& path, bool quiet);

    // send_open: "%s open \"%s\": %s" (tag: "remote", "dest").
    std::optional<bytes> open(const std::string& path, std::uint32_t pflags, const attrs& a, const char* tag);
    // do_close: "close remote: %s".
    int close(const bytes& handle);

    // remote_is_dir(): stat follows links; false when it cannot tell.
    bool is_dir(const std::string& path);

    // Names for ls -l (users-groups-by-id@openssh.com): looked up in one
    // request for the ids not yet cached; nullptr when unknown.
    bool can_get_users_groups() const noexcept;
    void prefetch_names(const std::vector<std::uint32_t>& uids, const std::vector<std::uint32_t>& gids);
    const std::string* user_name(std::uint32_t uid) const;
    const std::string* group_name(std::uint32_t gid) const;

private:
    int expect_status(const reply_copy& r) const noexcept;
    std::optional<attrs> decode_stat(const reply_copy& r, bool quiet);

    struct prefetched_answer {
        std::uint8_t type = 0; // the request's SSH_FXP_* type
        std::string path;
        std::shared_ptr<std::optional<reply_copy>> answer; // session::send's slot
    };

    struct prefetched_open {
        open_request request;
        std::optional<reply_copy> answer;
        std::function<void(const reply&)> waiter; // open_async() came first
        bool unwanted = false; // close the handle when it comes
    };
    void discard(prefetched_open& p);

    session& s_;
    const output_sink& out_;
    std::shared_ptr<prefetched_open> prefetched_open_;
    std::map<std::uint32_t, std::string> users_, groups_;
    std::vector<prefetched_answer> prefetched_;
    // core().requests_sent() right after the last early request: while it
    // still is, nothing else went out and every early answer is fresh.
    std::uint64_t prefetched_at_ = 0;
    template <class Request>
    void prefetch(const std::string& path);
    // The early answer to `type` for `path`, if there is one to use.
    std::optional<reply_copy> take_prefetched(std::uint8_t type, const std::string& path);
};

// OpenSSH's path_append(): "a" + "/" + "b" without doubling the slash.
std::string path_append(const std::string& a, const std::string& b);
// basename(3) as OpenSSH uses it (trailing slashes ignored; "/" for "/").
std::string path_basename(const std::string& p);

} // namespace longhaul::sftp
