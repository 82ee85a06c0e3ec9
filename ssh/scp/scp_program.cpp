#include "ssh/scp/scp_program.hpp"

#include "ssh/scp/scp_legacy.hpp"
#include "ssh/sftp_client/crossload.hpp"
#include "ssh/sftp_client/text.hpp"
#include "ssh/sftp_client/tree.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <iostream>

namespace longhaul::scp {

using sftp::strprintf;

namespace {

void to_stderr(const std::string& s)
{
    const std::string line = s + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
}

} // namespace

scp_program::scp_program(scp_options o) : o_(std::move(o))
{
    // OpenSSH's log functions end a line on stderr with CR LF; run_err()
    // (the legacy protocol's messages) with a plain LF.
    const std::string prefix = o_.progname + ": ";
    out_.error = [prefix](const std::string& m) { to_stderr(prefix + m + "\r"); };
    out_.info = [prefix](const std::string& m) { to_stderr(prefix + m + "\r"); };
    const int verbose = o_.verbose;
    out_.debug = [verbose](int level, const std::string& m) {
        if (level <= verbose)
            to_stderr(strprintf("debug%d: %s\r", level, m.c_str()));
    };
    // OpenSSH shows the meter only when stdout is a terminal.
    if (!o_.quiet && ::isatty(STDOUT_FILENO))
        meter_ = std::make_unique<sftp::progress_meter>();
}

std::optional<sftp::child_process> scp_program::spawn_child(const std::vector<std::string>& argv) const
{
    std::string error;
    auto child = sftp::child_process::spawn(argv, error);
    if (!child)
        to_stderr(error);
    return child;
}

void scp_program::run_err(const std::string& m)
{
    ++errs_;
    to_stderr(m);
}

std::string scp_program::remote_scp() const
{
    std::string cmd = "scp";
    if (o_.verbose > 0)
        cmd += " -v";
    if (o_.recursive)
        cmd += " -r";
    if (o_.preserve)
        cmd += " -p";
    if (o_.target_must_be_dir)
        cmd += " -d";
    return cmd;
}

std::string scp_program::remote_command(char direction, const std::string& path) const
{
    std::string cmd = remote_scp() + " -" + direction + " ";
    if (!path.empty() && path[0] == '-')
        cmd += "-- ";
    return cmd + path;
}

int scp_program::run()
{
    if (o_.server_to || o_.server_from) {
        // The remote side of a legacy transfer, on our stdin/stdout.
        legacy_settings s = legacy_defaults();
        s.target_must_be_dir = o_.target_must_be_dir;
        s.remote = true;
        legacy_peer peer(STDIN_FILENO, STDOUT_FILENO, s);
        try {
            if (o_.server_from) {
                (void)peer.response();
                peer.source(o_.operands);
            } else {
                if (o_.operands.size() != 1) {
                    peer.run_err("ambiguous target");
                    return 1;
                }
                peer.sink(o_.operands[0], nullptr);
            }
        } catch (const legacy_exit& e) {
            return e.code;
        }
        return peer.errors() != 0 ? 1 : 0;
    }
    if (o_.operands.size() < 2)
        throw usage_error("");
    if (o_.operands.size() > 2)
        o_.target_must_be_dir = true;
    try {
        const auto target = parse_operand(o_.operands.back());
        if (target && !target->host.empty()) {
            to_remote();
        } else {
            if (o_.target_must_be_dir) {
                struct stat st{};
                const std::string& t = o_.operands.back();
                const int e = ::stat(t.c_str(), &st) == -1 ? errno : (S_ISDIR(st.st_mode) ? 0 : ENOTDIR);
                if (e != 0) {
                    run_err(t + ": " + std::strerror(e));
                    return 1;
                }
            }
            to_local();
        }
        finish_connection();
    } catch (const exit_now& e) {
        return e.code;
    } catch (const legacy_exit& e) {
        return e.code;
    }
    return errs_ != 0 ? 1 : 0;
}

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

// --- directions ------------------------------------------------------------------------

void scp_program::to_remote()
{
    const auto dst = parse_operand(o_.operands.back());
    if (!dst) {
        to_stderr(o_.operands.back() + ": invalid uri");
        throw exit_now{1};
    }
    if (!dst->user.empty() && !ok_user_name(dst->user))
        throw exit_now{1};
    std::vector<std::string> legacy_sources;
    for (std::size_t i = 0; i + 1 < o_.operands.size(); ++i) {
        const auto src = parse_operand(o_.operands[i]);
        if (!src) {
            to_stderr(o_.operands[i] + ": invalid uri");
            ++errs_;
            continue;
        }
        if (!src->host.empty()) {
            remote_to_remote(*src, *dst);
            continue;
        }
        if (o_.mode == transfer_mode::legacy) {
            legacy_sources.push_back(o_.operands[i]);
            continue;
        }
        // source_sftp's first lookup is whether the target is a directory.
        const std::string first_stat = target_ ? std::string() : plain_remote_path(dst->path).value_or(std::string());
        connect(*dst, first_stat, upload_first_open(first_stat));
        source_sftp(o_.operands[i], *dst);
    }
    if (!legacy_sources.empty())
        legacy_to_remote(legacy_sources, *dst);
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

void scp_program::to_local()
{
    const std::string& dst = o_.operands.back();
    for (std::size_t i = 0; i + 1 < o_.operands.size(); ++i) {
        const auto src = parse_operand(o_.operands[i]);
        if (!src) {
            to_stderr(o_.operands[i] + ": invalid uri");
            ++errs_;
            continue;
        }
        if (!src->user.empty() && !ok_user_name(src->user)) {
            ++errs_;
            continue;
        }
        if (src->host.empty()) {
            local_copy(o_.operands[i], dst);
            continue;
        }
        if (o_.mode == transfer_mode::legacy) {
            legacy_to_local(*src, dst);
            continue;
        }
        // sink_sftp's first lookup is the source, when it names one file.
        const auto plain = plain_remote_path(src->path);
        connect(*src, plain ? sftp::glob_literal_path(*plain).value_or(std::string()) : std::string());
        sink_sftp(dst, *src);
    }
}

void scp_program::local_copy(const std::string& src, const std::string& dst)
{
    // A local-to-local copy is cp(1)'s job, as in OpenSSH.
    finish_connection();
    std::vector<std::string> argv{"cp"};
    if (o_.recursive)
        argv.push_back("-r");
    if (o_.preserve)
        argv.push_back("-p");
    argv.push_back("--");
    argv.push_back(src);
    argv.push_back(dst);
    auto child = spawn_child(argv);
    if (!child) {
        ++errs_;
        return;
    }
    // cp's stdin/stdout are pipes; it writes only to stderr.
    child->close_pipes();
    if (child->wait() != 0)
        ++errs_;
}

void scp_program::remote_to_remote(const operand& src, const operand& dst)
{
    if (o_.through_local) {
        if (o_.mode == transfer_mode::legacy)
            legacy_through_local(src, dst);
        else
            through_local_sftp(src, dst);
        return;
    }
    // -R: scp runs on the origin host and copies to the target itself.
    if (!dst.user.empty() && !ok_user_name(dst.user)) {
        ++errs_;
        return;
    }
    if (dst.port != -1 && dst.port != 22) {
        to_stderr("scp: target port not supported with two remote hosts and the -R option");
        throw exit_now{255};
    }
    std::vector<std::string> argv{o_.ssh.program, "-x", "-oClearAllforwardings=yes", "-n"};
    for (const auto& a : o_.remote_remote_args)
        argv.push_back(a);
    const int port = src.port != -1 ? src.port : o_.port;
    if (port != -1) {
        argv.push_back("-p");
        argv.push_back(std::to_string(port));
    }
    if (!src.user.empty()) {
        argv.push_back("-l");
        argv.push_back(src.user);
    }
    argv.push_back("--");
    argv.push_back(src.host);
    argv.push_back(remote_scp());
    argv.push_back(src.path);
    argv.push_back((dst.user.empty() ? "" : dst.user + "@") + dst.host + ":" + dst.path);
    auto child = spawn_child(argv);
    if (!child) {
        ++errs_;
        return;
    }
    child->close_pipes();
    if (child->wait() != 0)
        errs_ = 1;
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

// --- legacy --------------------------------------------------------------------------

void scp_program::legacy_to_remote(const std::vector<std::string>& sources, const operand& dst)
{
    const std::string cmd = remote_command('t', dst.path.empty() ? "." : dst.path);
    const auto argv = sftp::ssh_command_line(o_.ssh, dst.host, dst.user, dst.port != -1 ? dst.port : o_.port,
                                             false, cmd);
    auto child = spawn_child(argv);
    if (!child)
        throw exit_now{1};
    legacy_settings s = legacy_defaults();
    s.show_progress = meter_ != nullptr;
    legacy_peer peer(child->from_child(), child->to_child(), s);
    if (peer.response() < 0) {
        errs_ += peer.errors();
        throw exit_now{1};
    }
    peer.source(sources);
    end_legacy(peer, *child);
}

void scp_program::legacy_to_local(const operand& src, const std::string& dst)
{
    const std::string cmd = remote_command('f', src.path.empty() ? "." : src.path);
    const auto argv = sftp::ssh_command_line(o_.ssh, src.host, src.user, src.port != -1 ? src.port : o_.port,
                                             false, cmd);
    auto child = spawn_child(argv);
    if (!child) {
        ++errs_;
        return;
    }
    legacy_settings s = legacy_defaults();
    s.strict_names = o_.strict_names;
    s.show_progress = meter_ != nullptr;
    legacy_peer peer(child->from_child(), child->to_child(), s);
    peer.sink(dst, &src.path);
    end_legacy(peer, *child);
}

void scp_program::legacy_through_local(const operand& src, const operand& dst)
{
    if (!src.user.empty() && !ok_user_name(src.user)) {
        ++errs_;
        return;
    }
    const auto from_argv = sftp::ssh_command_line(o_.ssh, src.host, src.user, src.port != -1 ? src.port : o_.port,
                                                  false, remote_command('f', src.path.empty() ? "." : src.path));
    auto from = spawn_child(from_argv);
    if (!from)
        throw exit_now{1};
    const auto to_argv = sftp::ssh_command_line(o_.ssh, dst.host, dst.user, dst.port != -1 ? dst.port : o_.port,
                                                false, remote_command('t', dst.path.empty() ? "." : dst.path));
    // The target's ssh reads what the origin's writes and answers into the
    // origin's stdin; the bytes never pass through this process.
    std::string error;
    auto to = sftp::child_process::spawn_joined(to_argv, from->from_child(), from->to_child(), error);
    from->close_pipes();
    if (!to) {
        to_stderr(error);
        from->terminate();
        throw exit_now{1};
    }
    // OpenSSH reads the origin's status (its scp -f fails when the target
    // refused a file); a target that failed alone counts too.
    const int to_status = to->wait();
    const int from_status = from->wait();
    if (from_status != 0 || to_status != 0)
        errs_ = 1;
}

legacy_settings scp_program::legacy_defaults() const
{
    legacy_settings s;
    s.preserve = o_.preserve;
    s.recursive = o_.recursive;
    s.verbose = o_.verbose;
    s.limit_bps = o_.limit_kbps * 1024;
    return s;
}

void scp_program::end_legacy(legacy_peer& peer, sftp::child_process& child)
{
    errs_ += peer.errors();
    child.close_pipes();
    // The peer's own errors first; else a failed ssh (or remote scp) counts.
    const int status = child.wait();
    if (errs_ == 0 && status != 0)
        errs_ = 1;
}

} // namespace longhaul::scp
