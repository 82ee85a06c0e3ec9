#include "ssh/sftp_client/tree.hpp"

#include "ssh/sftp_client/text.hpp"

#include <dirent.h>
#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/time.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

namespace longhaul::sftp {

namespace {

// OpenSSH's MAX_DIR_DEPTH: a loop of links or a hostile server cannot
// recurse for ever.
constexpr int max_dir_depth = 64;

} // namespace

namespace {

class group_end_task final : public file_task {
public:
    group_end_task(remote_fs& fs, std::shared_ptr<std::vector<char>> outcome, std::size_t from, std::size_t to,
                   bool walk_failed, std::string message)
        : file_task(fs), outcome_(std::move(outcome)), from_(from), to_(to), walk_failed_(walk_failed),
          message_(std::move(message))
    {
    }
    void start() override { finish(0); }
    void before_report() override
    {
        bool failed = walk_failed_;
        for (std::size_t i = from_; i < to_ && i < outcome_->size(); ++i)
            failed = failed || (*outcome_)[i] != 0;
        if (failed) {
            err(message_);
            finish(-1);
        }
    }

private:
    std::shared_ptr<std::vector<char>> outcome_;
    std::size_t from_, to_;
    bool walk_failed_;
    std::string message_;
};

} // namespace

void transfer_batch::add(std::unique_ptr<file_task> t)
{
    // Each task's outcome lands in the table when it reports, in queue
    // order, so a group end sees every task before it.
    outcome_->push_back(0);
    const std::size_t index = queued_++;
    t->set_report_hook([outcome = outcome_, index](const file_task& done) {
        (*outcome)[index] = done.result() != 0 ? 1 : 0;
    });
    runner_.add(std::move(t));
}

void transfer_batch::end_group(std::size_t mark, bool walk_failed, std::string message)
{
    add(std::make_unique<group_end_task>(fs_, outcome_, mark, queued_, walk_failed, std::move(message)));
}

void transfer_batch::error(std::string m, bool counts_as_failure)
{
    add(make_note(fs_, {file_task::message::error, std::move(m)}, counts_as_failure ? -1 : 0));
}

void transfer_batch::print(std::string m)
{
    add(make_note(fs_, {file_task::message::print, std::move(m)}, 0));
}

void transfer_batch::info(std::string m)
{
    add(make_note(fs_, {file_task::message::info, std::move(m)}, 0));
}

void transfer_batch::download_file(const std::string& src, const std::string& dst, std::optional<attrs> a,
                                   const transfer_flags& f, std::string on_failure)
{
    auto t = make_download(fs_, src, dst, std::move(a), f);
    t->on_failure = std::move(on_failure);
    add(std::move(t));
}

void transfer_batch::upload_file(const std::string& src, const std::string& dst, const transfer_flags& f,
                                 std::string on_failure)
{
    auto t = make_upload(fs_, src, dst, f);
    t->on_failure = std::move(on_failure);
    add(std::move(t));
}

int transfer_batch::download_dir(const std::string& src, const std::string& dst, const tree_options& o)
{
    const auto canon = fs_.realpath(src);
    if (!canon) {
        error(strprintf("download \"%s\": path canonicalization failed", src.c_str()));
        return -1;
    }
    const int r = download_walk(*canon, dst, 0, std::nullopt, o);
    if (r != 0)
        status_ = -1;
    return r;
}

int transfer_batch::download_walk(const std::string& src, const std::string& dst, int depth,
                                  std::optional<attrs> dir_attrs, const tree_options& o)
{
    if (depth >= max_dir_depth) {
        error(strprintf("Maximum directory depth exceeded: %d levels", depth));
        return -1;
    }
    if (!dir_attrs) {
        dir_attrs = fs_.stat(src, true);
        if (!dir_attrs) {
            error(strprintf("stat remote \"%s\" directory failed", src.c_str()));
            return -1;
        }
    }
    if (!S_ISDIR(dir_attrs->permissions)) {
        error(strprintf("\"%s\" is not a directory", src.c_str()));
        return -1;
    }
    if (o.print)
        print(strprintf("Retrieving %s", src.c_str()));
    mode_t mode = 0777, tmpmode = 0777;
    if (dir_attrs->has(attr::permissions)) {
        mode = dir_attrs->permissions & 01777;
        tmpmode = mode | S_IWUSR | S_IXUSR;
    }
    if (::mkdir(dst.c_str(), tmpmode) == -1 && errno != EEXIST) {
        error(strprintf("mkdir %s: %s", dst.c_str(), std::strerror(errno)));
        return -1;
    }
    const auto entries = fs_.readdir(src, true);
    if (!entries) {
        error(strprintf("remote readdir \"%s\" failed", src.c_str()));
        return -1;
    }
    int ret = 0;
    for (const auto& e : *entries) {
        if (fs_.sess().interrupted() || !fs_.sess().ok())
            break;
        const std::string new_src = path_append(src, e.filename), new_dst = path_append(dst, e.filename);
        std::optional<attrs> a = e.attributes;
        if (S_ISLNK(a->permissions)) {
            if (!o.follow_links)
                continue;
            a = fs_.stat(new_src, true);
            if (!a) {
                ret = -1;
                continue;
            }
        }
        if (S_ISDIR(a->permissions)) {
            if (e.filename == "." || e.filename == "..")
                continue;
            if (download_walk(new_src, new_dst, depth + 1, a, o) == -1)
                ret = -1;
        } else if (S_ISREG(a->permissions)) {
            download_file(new_src, new_dst, a, o.flags,
                          strprintf("Download of file %s to %s failed", new_src.c_str(), new_dst.c_str()));
        } else {
            info(strprintf("download \"%s\": not a regular file", new_src.c_str()));
        }
    }
    // Times and the final mode once every file below is written.
    const attrs da = *dir_attrs;
    const bool preserve = o.flags.preserve;
    finalizers_.push_back([this, da, dst, mode, tmpmode, preserve] {
        if (preserve) {
            if (da.has(attr::acmodtime)) {
                struct timeval tv[2] = {{time_t(da.atime), 0}, {time_t(da.mtime), 0}};
                if (::utimes(dst.c_str(), tv) == -1) {
                    fs_.out().err(strprintf("local set times on \"%s\": %s", dst.c_str(), std::strerror(errno)));
                }
            } else {
                fs_.out().dbg(1, strprintf("Server did not send times for directory \"%s\"", dst.c_str()));
            }
        }
        if (mode != tmpmode && ::chmod(dst.c_str(), mode) == -1)
            fs_.out().err(strprintf("local chmod directory \"%s\": %s", dst.c_str(), std::strerror(errno)));
    });
    return ret;
}

int transfer_batch::upload_dir(const std::string& src, const std::string& dst, const tree_options& o)
{
    const auto canon = fs_.realpath(dst);
    if (!canon) {
        error(strprintf("upload \"%s\": path canonicalization failed", dst.c_str()));
        return -1;
    }
    const int r = upload_walk(src, *canon, 0, o);
    if (r != 0)
        status_ = -1;
    return r;
}

int transfer_batch::upload_walk(const std::string& src, const std::string& dst, int depth, const tree_options& o)
{
    if (depth >= max_dir_depth) {
        error(strprintf("Maximum directory depth exceeded: %d levels", depth));
        return -1;
    }
    struct stat sb{};
    if (::stat(src.c_str(), &sb) == -1) {
        error(strprintf("stat local \"%s\": %s", src.c_str(), std::strerror(errno)));
        return -1;
    }
    if (!S_ISDIR(sb.st_mode)) {
        error(strprintf("\"%s\" is not a directory", src.c_str()));
        return -1;
    }
    if (o.print)
        print(strprintf("Entering %s", src.c_str()));
    attrs a = attrs::from_stat(sb);
    a.flags &= ~(attr::size | attr::uidgid);
    a.permissions &= 01777;
    if (!o.flags.preserve)
        a.flags &= ~attr::acmodtime;
    // Writable while we fill it; the real mode is set at the end. SFTP has
    // no "already exists" status, so a failed mkdir is checked with stat.
    attrs creating = a;
    creating.permissions |= S_IWUSR | S_IXUSR;
    if (fs_.mkdir(dst, creating, false) != 0) {
        const auto d = fs_.stat(dst, false);
        if (!d)
            return -1;
        if (!S_ISDIR(d->permissions)) {
            error(strprintf("\"%s\" exists but is not a directory", dst.c_str()));
            return -1;
        }
    }
    DIR* dir = ::opendir(src.c_str());
    if (dir == nullptr) {
        error(strprintf("local opendir \"%s\": %s", src.c_str(), std::strerror(errno)));
        return -1;
    }
    std::unique_ptr<DIR, int (*)(DIR*)> closer(dir, ::closedir);
    int ret = 0;
    while (const dirent* dp = ::readdir(dir)) {
        if (fs_.sess().interrupted() || !fs_.sess().ok())
            break;
        if (dp->d_ino == 0)
            continue;
        const std::string filename = dp->d_name;
        const std::string new_src = path_append(src, filename), new_dst = path_append(dst, filename);
        struct stat st{};
        if (::lstat(new_src.c_str(), &st) == -1) {
            info(strprintf("local lstat \"%s\": %s", filename.c_str(), std::strerror(errno)));
            ret = -1;
            continue;
        }
        if (S_ISLNK(st.st_mode)) {
            if (!o.follow_links) {
                info(strprintf("%s: not a regular file", filename.c_str()));
                continue;
            }
            if (::stat(new_src.c_str(), &st) == -1) {
                info(strprintf("local stat \"%s\": %s", filename.c_str(), std::strerror(errno)));
                ret = -1;
                continue;
            }
        }
        if (S_ISDIR(st.st_mode)) {
            if (filename == "." || filename == "..")
                continue;
            if (upload_walk(new_src, new_dst, depth + 1, o) == -1)
                ret = -1;
        } else if (S_ISREG(st.st_mode)) {
            upload_file(new_src, new_dst, o.flags,
                        strprintf("upload \"%s\" to \"%s\" failed", new_src.c_str(), new_dst.c_str()));
        } else {
            info(strprintf("%s: not a regular file", filename.c_str()));
        }
    }
    finalizers_.push_back([this, a, dst] { (void)fs_.setstat(dst, a); });
    ++remote_finalizers_;
    return ret;
}

int transfer_batch::run()
{
    // Directories' remote attributes are set after the files: then the
    // files' last requests are not the connection's.
    runner_.set_last_batch(last_ && remote_finalizers_ == 0);
    if (runner_.run() != 0)
        status_ = -1;
    if (fs_.sess().ok() && !fs_.sess().interrupted()) {
        for (auto& f : finalizers_)
            f();
    }
    finalizers_.clear();
    remote_finalizers_ = 0;
    const int r = status_;
    status_ = 0;
    return r;
}

// --- glob ------------------------------------------------------------------------

bool has_glob_magic(const std::string& p)
{
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i] == '\\' && i + 1 < p.size()) {
            ++i;
            continue;
        }
        if (p[i] == '*' || p[i] == '?' || p[i] == '[')
            return true;
    }
    return false;
}

namespace {

std::string unescape(const std::string& p)
{
    std::string out;
    for (std::size_t i = 0; i < p.size(); ++i) {
        if (p[i] == '\\' && i + 1 < p.size())
            ++i;
        out += p[i];
    }
    return out;
}

struct candidate {
    std::string path;
    std::optional<attrs> a; // lstat-like attributes from a listing
};

} // namespace

namespace {

std::vector<std::string> glob_components(const std::string& pattern)
{
    std::vector<std::string> parts;
    std::size_t start = 0;
    while (start <= pattern.size()) {
        const auto slash = pattern.find('/', start);
        const std::string part = pattern.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
        if (!part.empty())
            parts.push_back(part);
        if (slash == std::string::npos)
            break;
        start = slash + 1;
    }
    return parts;
}

} // namespace

std::optional<std::string> glob_literal_path(const std::string& pattern)
{
    const auto parts = glob_components(pattern);
    if (parts.empty())
        return std::nullopt;
    std::string path = !pattern.empty() && pattern[0] == '/' ? "/" : "";
    for (const auto& part : parts) {
        if (has_glob_magic(part))
            return std::nullopt;
        const std::string lit = unescape(part);
        path = path.empty() ? lit : path_append(path, lit);
    }
    return path;
}

glob_result remote_glob(remote_fs& fs, const std::string& pattern, bool mark, bool nocheck)
{
    glob_result out;
    const std::vector<std::string> parts = glob_components(pattern);
    const bool absolute = !pattern.empty() && pattern[0] == '/';
    std::vector<candidate> current{{absolute ? "/" : "", std::nullopt}};
    bool any_magic = false;
    for (std::size_t i = 0; i < parts.size() && !current.empty(); ++i) {
        std::vector<candidate> next;
        if (!has_glob_magic(parts[i])) {
            const std::string lit = unescape(parts[i]);
            for (auto& c : current)
                next.push_back({c.path.empty() ? lit : path_append(c.path, lit), std::nullopt});
        } else {
            any_magic = true;
            for (auto& c : current) {
                const auto entries = fs.readdir(c.path.empty() ? "." : c.path, true);
                if (!entries)
                    continue;
                std::vector<candidate> matches;
                for (const auto& e : *entries) {
                    if (e.filename == "." || e.filename == "..") {
                        if (parts[i][0] != '.')
                            continue;
                    }
                    if (::fnmatch(parts[i].c_str(), e.filename.c_str(), FNM_PERIOD) != 0)
                        continue;
                    matches.push_back({c.path.empty() ? e.filename : path_append(c.path, e.filename),
                                       e.attributes});
                }
                std::sort(matches.begin(), matches.end(),
                          [](const candidate& x, const candidate& y) { return x.path < y.path; });
                for (auto& m : matches)
                    next.push_back(std::move(m));
            }
        }
        current = std::move(next);
    }
    (void)any_magic;
    if (parts.empty() && !current.empty() && current[0].path.empty())
        current[0].path = pattern.empty() ? "." : pattern;
    for (auto& c : current) {
        std::optional<attrs> a = c.a;
        if (!a || (mark && S_ISLNK(a->permissions))) {
            // A literal last component is checked; GLOB_MARK follows links.
            a = mark ? fs.stat(c.path, true) : fs.lstat(c.path, true);
            if (!a && !c.a)
                continue;
        }
        std::string p = c.path;
        if (mark && a && S_ISDIR(a->permissions) && (p.empty() || p.back() != '/'))
            p += '/';
        out.paths.push_back(std::move(p));
        // lstat's answers (mark unset) and a link whose target is gone
        // describe the link, not what a transfer would open.
        const bool followed = mark && a && !S_ISLNK(a->permissions);
        out.attributes.push_back(followed ? a : std::nullopt);
    }
    out.matched = out.paths.size();
    if (out.paths.empty() && nocheck) {
        out.paths.push_back(pattern);
        out.attributes.emplace_back();
    }
    return out;
}

} // namespace longhaul::sftp
