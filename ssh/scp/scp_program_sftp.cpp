// scp in SFTP mode (the default): one connection per remote host, kept
// for the operands that follow, and the uploads, downloads and
// remote-to-remote copies through here (-3) over it. Apart from
// scp_program.cpp, which picks each operand's direction.
#include "ssh/scp/scp_program.hpp"

#include "ssh/sftp_client/crossload.hpp"
#include "ssh/sftp_client/text.hpp"
#include "ssh/sftp_client/tree.hpp"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>

namespace longhaul::scp {

using sftp::strprintf;

// --- SFTP connections --------------------------------------------------------------

sftp::connection& scp_program::connect(const operand& where, const std::string& first_stat,
                                       const std::optional<sftp::open_request>& first_open)
{
    const std::string key = where.user + "@" + where.host + ":" + std::to_string(where.port);
    if (conn_ && key == conn_key_)
        return *conn_;
    finish_connection();
    const sftp::session_options so = sftp_session_options();
    const std::vector<std::string> argv = sftp_argv(where);
    std::string error;
    const auto lookup = [&first_stat, &first_open](sftp::remote_fs& fs) {
        if (!first_stat.empty())
            fs.prefetch_stat(first_stat);
        if (first_open)
            fs.prefetch_open(*first_open);
    };
    conn_ = sftp::connection::open(argv, so, out_, error, false, lookup);
    if (!conn_) {
        out_.err(error);
        throw exit_now{255};
    }
    conn_key_ = key;
    target_.reset();
    batch_ = std::make_unique<sftp::transfer_batch>(conn_->fs(), meter_.get());
    return *conn_;
}

std::vector<std::string> scp_program::sftp_argv(const operand& where) const
{
    if (!o_.sftp_direct.empty())
        return {"/bin/sh", "-c", "exec " + o_.sftp_direct};
    return sftp::ssh_command_line(o_.ssh, where.host, where.user, where.port != -1 ? where.port : o_.port, true,
                                  "sftp");
}

sftp::session_options scp_program::sftp_session_options() const
{
    sftp::session_options so;
    so.buffer_size = o_.buffer_size;
    so.num_requests = o_.num_requests;
    so.limit_bps = o_.limit_kbps * 1024;
    so.threaded_io = true;
    return so;
}

int scp_program::run_batch()
{
    const int r = batch_->run();
    if (!conn_->sess().ok()) {
        out_.err(conn_->sess().core().failure().empty() ? "Connection closed" : conn_->sess().core().failure());
        throw exit_now{255};
    }
    return r;
}

void scp_program::finish_connection()
{
    if (!conn_)
        return;
    // Nothing follows this batch on this connection.
    if (batch_)
        batch_->set_last(true);
    if (batch_ && run_batch() != 0)
        ++errs_;
    batch_.reset();
    // OpenSSH checks the ssh's exit status in SFTP mode.
    if (conn_->close() != 0)
        ++errs_;
    conn_.reset();
    conn_key_.clear();
}

std::optional<std::string> scp_program::prepare_remote_path(sftp::remote_fs& fs, const std::string& path)
{
    if (auto p = plain_remote_path(path))
        return p;
    if (fs.can_expand_path())
        return fs.expand_path(path);
    out_.err("server expand-path extension is required for ~user paths in SFTP mode");
    return std::nullopt;
}

std::optional<std::string> scp_program::plain_remote_path(const std::string& path)
{
    if (path.empty() || path == "~")
        return std::string(".");
    if (path[0] != '~')
        return path;
    if (path.rfind("~/", 0) == 0) {
        const std::size_t nslash = path.find_first_not_of('/', 2);
        if (nslash == std::string::npos)
            return std::string(".");
        return path.substr(nslash);
    }
    return std::nullopt;
}

std::optional<sftp::open_request> scp_program::upload_first_open(const std::string& target) const
{
    // Only a copy of one file whose target is this path or a directory
    // (not -d, where OpenSSH creates the directory first); a resume stats
    // the target before it opens it. A download never opens ahead: the
    // stat must first show a regular file (opening a FIFO or a device is
    // not harmless).
    if (target.empty() || o_.operands.size() != 2 || o_.target_must_be_dir || o_.resume)
        return std::nullopt;
    const auto src = parse_operand(o_.operands[0]);
    if (!src || !src->host.empty())
        return std::nullopt;
    sftp::transfer_flags f;
    f.preserve = o_.preserve;
    return sftp::upload_open_ahead(o_.operands[0], target, f);
}

void scp_program::through_local_sftp(const operand& src, const operand& dst)
{
    if (!src.user.empty() && !ok_user_name(src.user)) {
        ++errs_;
        return;
    }
    // The destination's connection stays for the next source, as OpenSSH
    // keeps it; the origin's is opened for each source.
    connect(dst);
    if (run_batch() != 0)
        ++errs_;
    std::string error;
    auto origin = sftp::connection::open(sftp_argv(src), sftp_session_options(), out_, error);
    if (!origin) {
        out_.err(error);
        out_.err("Unable to open origin SFTP connection");
        throw exit_now{255};
    }
    auto& from = origin->fs();
    auto& to = conn_->fs();
    const auto abs_src = prepare_remote_path(from, src.path);
    const auto target = abs_src ? prepare_remote_path(to, dst.path) : std::nullopt;
    if (!abs_src || !target)
        throw exit_now{255};
    bool failed = false;
    const bool target_is_dir = to.is_dir(*target);
    if (!target_is_dir && o_.target_must_be_dir) {
        out_.err(strprintf("%s: destination is not a directory", dst.path.c_str()));
        failed = true;
    }
    out_.dbg(3, strprintf("copying remote %s to remote %s", abs_src->c_str(), target->c_str()));
    const auto g = failed ? sftp::glob_result{} : sftp::remote_glob(from, *abs_src, true, true);
    if (!failed && g.matched == 0 && (g.paths.size() != 1 || !from.stat(g.paths[0], true))) {
        out_.err(strprintf("%s: %s", src.path.c_str(), std::strerror(ENOENT)));
        failed = true;
    }
    sftp::crossload_options c;
    c.preserve = o_.preserve;
    c.num_requests = o_.num_requests;
    c.limit_bps = o_.limit_kbps * 1024;
    for (std::size_t i = 0; !failed && i < g.paths.size(); ++i) {
        const std::string& path = g.paths[i];
        const std::string abs_dst = target_is_dir ? sftp::path_append(*target, sftp::path_basename(path)) : *target;
        out_.dbg(1, strprintf("Fetching %s to %s", path.c_str(), abs_dst.c_str()));
        // A directory without -r goes to crossload_file, which refuses it.
        const bool dir = !path.empty() && path.back() == '/' && o_.recursive;
        const int r = dir ? sftp::crossload_dir(from, to, path, abs_dst, c)
                          : sftp::crossload_file(from, to, path, abs_dst, g.attributes[i], c);
        if (r != 0)
            failed = true;
        if (!origin->sess().ok() || !conn_->sess().ok())
            break;
    }
    if (failed)
        errs_ = 1;
    if (!conn_->sess().ok()) {
        out_.err(conn_->sess().core().failure().empty() ? "Connection closed" : conn_->sess().core().failure());
        throw exit_now{255};
    }
    if (origin->close() != 0)
        ++errs_;
}

void scp_program::source_sftp(const std::string& src, const operand& dst)
{
    struct stat st{};
    if (::stat(src.c_str(), &st) != 0) {
        out_.err(strprintf("stat local \"%s\": %s", src.c_str(), std::strerror(errno)));
        throw exit_now{255};
    }
    auto& fs = conn_->fs();
    if (!target_) {
        target_ = prepare_remote_path(fs, dst.path);
        if (!target_)
            throw exit_now{255};
        target_is_dir_ = fs.is_dir(*target_);
        if (o_.target_must_be_dir && !target_is_dir_) {
            out_.dbg(1, strprintf("target directory \"%s\" does not exist", target_->c_str()));
            sftp::attrs a;
            a.flags = sftp::attr::permissions;
            a.permissions = st.st_mode | 0700;
            if (fs.mkdir(*target_, a, true) != 0)
                throw exit_now{255};
            target_is_dir_ = true;
        }
    }
    const std::string filename = sftp::path_basename(src);
    const std::string abs_dst = target_is_dir_ ? sftp::path_append(*target_, filename) : *target_;
    out_.dbg(3, strprintf("copying local %s to remote %s", src.c_str(), abs_dst.c_str()));
    sftp::transfer_flags f;
    f.preserve = o_.preserve;
    f.resume = o_.resume;
    if (S_ISDIR(st.st_mode) && o_.recursive) {
        sftp::tree_options t;
        t.flags = f;
        t.follow_links = true;
        const auto mark = batch_->begin_group();
        const bool walk_failed = batch_->upload_dir(src, abs_dst, t) != 0;
        batch_->end_group(mark, walk_failed,
                          strprintf("failed to upload directory %s to %s", src.c_str(), dst.path.c_str()));
    } else {
        batch_->upload_file(src, abs_dst, f,
                            strprintf("failed to upload file %s to %s", src.c_str(), dst.path.c_str()));
    }
}

void scp_program::sink_sftp(const std::string& dst, const operand& src)
{
    auto& fs = conn_->fs();
    const auto abs_src = prepare_remote_path(fs, src.path);
    if (!abs_src) {
        ++errs_;
        return;
    }
    out_.dbg(3, strprintf("copying remote %s to local %s", abs_src->c_str(), dst.c_str()));
    const auto g = sftp::remote_glob(fs, *abs_src, true, true);
    if (g.matched == 0 && g.paths.size() == 1) {
        // Nothing matched: the pattern itself came back; say so early.
        if (!fs.stat(g.paths[0], true)) {
            out_.err(strprintf("%s: %s", src.path.c_str(), std::strerror(ENOENT)));
            ++errs_;
            return;
        }
    }
    struct stat st{};
    const int r = ::stat(dst.c_str(), &st);
    bool dst_is_dir = r == 0 && S_ISDIR(st.st_mode);
    if (g.matched > 1 && !dst_is_dir) {
        if (r == 0) {
            out_.err(strprintf("Multiple files match pattern, but destination \"%s\" is not a directory",
                               dst.c_str()));
            ++errs_;
            return;
        }
        if (::mkdir(dst.c_str(), 0777) != 0) {
            out_.err(strprintf("local mkdir \"%s\": %s", dst.c_str(), std::strerror(errno)));
            ++errs_;
            return;
        }
        dst_is_dir = true;
    }
    sftp::transfer_flags f;
    f.preserve = o_.preserve;
    f.resume = o_.resume;
    f.inplace = !o_.resume;
    for (std::size_t i = 0; i < g.paths.size(); ++i) {
        const std::string& path = g.paths[i];
        const std::string filename = sftp::path_basename(path);
        const std::string abs_dst = dst_is_dir ? sftp::path_append(dst, filename) : dst;
        out_.dbg(1, strprintf("Fetching %s to %s", path.c_str(), abs_dst.c_str()));
        if (!path.empty() && path.back() == '/' && o_.recursive) {
            sftp::tree_options t;
            t.flags = f;
            t.follow_links = true;
            if (batch_->download_dir(path, abs_dst, t) != 0)
                ++errs_;
        } else {
            batch_->download_file(path, abs_dst, g.attributes[i], f);
        }
    }
}

} // namespace longhaul::scp
