#include "ssh/sftp/sftp_commands.hpp"

#include "ssh/sftp_client/program_args.hpp"
#include "ssh/sftp_client/text.hpp"
#include "ssh/sftp_client/tree.hpp"

#include <glob.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>

namespace longhaul::sftp_cli {

using sftp::strprintf;

namespace {

const char* const help_text =
    "Available commands:\n"
    "bye                                Quit sftp\n"
    "cd path                            Change remote directory to 'path'\n"
    "chgrp [-h] grp path                Change group of file 'path' to 'grp'\n"
    "chmod [-h] mode path               Change permissions of file 'path' to 'mode'\n"
    "chown [-h] own path                Change owner of file 'path' to 'own'\n"
    "copy oldpath newpath               Copy remote file\n"
    "cp oldpath newpath                 Copy remote file\n"
    "df [-hi] [path]                    Display statistics for current directory or\n"
    "                                   filesystem containing 'path'\n"
    "exit                               Quit sftp\n"
    "get [-afpR] remote [local]         Download file\n"
    "help                               Display this help text\n"
    "lcd path                           Change local directory to 'path'\n"
    "lls [ls-options [path]]            Display local directory listing\n"
    "lmkdir path                        Create local directory\n"
    "ln [-s] oldpath newpath            Link remote file (-s for symlink)\n"
    "lpwd                               Print local working directory\n"
    "ls [-1afhlnrSt] [path]             Display remote directory listing\n"
    "lumask umask                       Set local umask to 'umask'\n"
    "mkdir path                         Create remote directory\n"
    "progress                           Toggle display of progress meter\n"
    "put [-afpR] local [remote]         Upload file\n"
    "pwd                                Display remote working directory\n"
    "quit                               Quit sftp\n"
    "reget [-fpR] remote [local]        Resume download file\n"
    "rename oldpath newpath             Rename remote file\n"
    "reput [-fpR] local [remote]        Resume upload file\n"
    "rm path                            Delete remote file\n"
    "rmdir path                         Remove remote directory\n"
    "symlink oldpath newpath            Symlink remote file\n"
    "version                            Show SFTP version\n"
    "!command                           Execute 'command' in local shell\n"
    "!                                  Escape to local shell\n"
    "?                                  Synonym for help\n";

bool local_is_dir(const std::string& p)
{
    struct stat st{};
    return ::stat(p.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

} // namespace

sftp_shell::sftp_shell(sftp::connection& conn, shell_settings s, const sftp::output_sink& out,
                       std::atomic<bool>* interrupted)
    : conn_(conn), s_(s), out_(out), interrupted_(interrupted)
{
    meter_ = std::make_unique<sftp::progress_meter>();
}

namespace {

// The one local path `src` names (glob(3), as put expands it), if exactly
// one exists.
std::optional<std::string> one_local_match(const std::string& src)
{
    glob_t g{};
    std::optional<std::string> out;
    struct stat st{};
    if (::glob(src.c_str(), GLOB_NOCHECK | GLOB_MARK, nullptr, &g) == 0 && g.gl_pathc == 1 &&
        ::stat(g.gl_pathv[0], &st) == 0)
        out = g.gl_pathv[0];
    ::globfree(&g);
    return out;
}

} // namespace

sftp_shell::early_lookups sftp_shell::first_flight(const std::string& line, const shell_settings& s)
{
    command_args a;
    line_marks m;
    early_lookups out;
    if (parse_command_line(line, a, m, sftp::output_sink{}) != 0 || m.blank || !a.path1)
        return out;
    if (a.id == i_get || a.id == i_reget) {
        out.stat_path = sftp::glob_literal_path(*a.path1);
    } else if ((a.id == i_put || a.id == i_reput) && a.path2) {
        out.stat_path = *a.path2;
        sftp::transfer_flags f;
        f.preserve = a.p || s.preserve;
        f.resume = a.id == i_reput || a.a || s.resume;
        if (const auto src = one_local_match(*a.path1))
            out.open = sftp::upload_open_ahead(*src, *a.path2, f);
    }
    return out;
}

bool sftp_shell::start()
{
    const auto p = conn_.fs().realpath(".");
    if (!p) {
        out_.err("Need cwd");
        return false;
    }
    pwd_ = startdir_ = *p;
    // A stat of the first command's relative path, sent with INIT, was of
    // that path here.
    conn_.fs().rebase_prefetched(pwd_);
    return true;
}

void sftp_shell::print(const std::string& s)
{
    std::fputs(s.c_str(), stdout);
    std::fflush(stdout);
}

std::string sftp_shell::make_absolute(const std::string& p) const
{
    if (!p.empty() && p[0] == '/')
        return p;
    return sftp::path_append(pwd_, p);
}

std::string sftp_shell::make_absolute_pwd_glob(const std::string& p) const
{
    if (!p.empty() && p[0] == '/')
        return p;
    return sftp::path_append(escape_glob(pwd_), p);
}

int sftp_shell::initial_path(const std::string& file1, const std::string& file2, bool& done)
{
    const std::string dir = make_absolute(file1);
    done = false;
    if (conn_.fs().is_dir(dir) && file2.empty()) {
        if (!s_.quiet)
            print(strprintf("Changing to: %s\n", dir.c_str()));
        const shell_settings saved = s_;
        s_.batch = true;
        s_.echo = false;
        const int r = run_line("cd \"" + dir + "\"");
        s_ = saved;
        if (r != 0)
            done = true;
        return r;
    }
    done = true;
    const shell_settings saved = s_;
    s_.batch = true;
    s_.echo = false;
    const int r = run_line(std::string("get") + (s_.resume ? " -a" : "") + " " + dir + (file2.empty() ? "" : " " + file2));
    s_ = saved;
    return r;
}

int sftp_shell::run_line(const std::string& line)
{
    command_args a;
    line_marks marks;
    const int pr = parse_command_line(line, a, marks, out_);
    const bool ignore = marks.ignore_errors, blank = marks.blank;
    if (s_.echo && !marks.no_echo) {
        std::string shown = line;
        while (!shown.empty() && (shown.back() == '\n' || shown.back() == '\r'))
            shown.pop_back();
        print("sftp> " + shown + "\n");
    }
    if (pr != 0)
        return ignore ? 0 : -1;
    if (blank)
        return 0;
    const bool err_abort = s_.batch && !ignore;
    const int err = dispatch(a, err_abort);
    if (!conn_.sess().ok())
        return -1;
    if (err_abort && err != 0)
        return -1;
    if (a.id == i_quit)
        return 1;
    return 0;
}

int sftp_shell::dispatch(command_args& a, bool err_abort)
{
    auto& fs = conn_.fs();
    int err = 0;
    switch (a.id) {
    case i_reget:
        a.a = true;
        [[fallthrough]];
    case i_get:
        return do_get(*a.path1, a.path2, a.p || s_.preserve, a.r || s_.recursive, a.a || s_.resume, a.f || s_.fsync);
    case i_reput:
        a.a = true;
        [[fallthrough]];
    case i_put:
        return do_put(*a.path1, a.path2, a.p || s_.preserve, a.r || s_.recursive, a.a || s_.resume, a.f || s_.fsync);
    case i_copy:
        return fs.copy(make_absolute(*a.path1), make_absolute(*a.path2));
    case i_rename:
        return fs.rename(make_absolute(*a.path1), make_absolute(*a.path2), a.l_flag);
    case i_symlink:
        a.s = true;
        [[fallthrough]];
    case i_link: {
        const std::string p2 = make_absolute(*a.path2);
        if (a.s)
            return fs.symlink(*a.path1, p2);
        return fs.hardlink(make_absolute(*a.path1), p2);
    }
    case i_rm:
        return for_each_match(*a.path1, err_abort, [&](const std::string& p) {
            if (!s_.quiet)
                print(strprintf("Removing %s\n", p.c_str()));
            return fs.remove(p);
        });
    case i_mkdir: {
        sftp::attrs at;
        at.flags = sftp::attr::permissions;
        at.permissions = 0777;
        return fs.mkdir(make_absolute(*a.path1), at, true);
    }
    case i_rmdir:
        return fs.rmdir(make_absolute(*a.path1));
    case i_chdir: {
        const std::string p = make_absolute(a.path1 && !a.path1->empty() ? *a.path1 : startdir_);
        const auto real = fs.realpath(p);
        if (!real)
            return 1;
        const auto at = fs.stat(*real, false);
        if (!at)
            return 1;
        if (!at->has(sftp::attr::permissions)) {
            out_.err("Can't change directory: Can't check target");
            return 1;
        }
        if (!S_ISDIR(at->permissions)) {
            out_.err(strprintf("Can't change directory: \"%s\" is not a directory", real->c_str()));
            return 1;
        }
        pwd_ = *real;
        return 0;
    }
    case i_ls: {
        if (!a.path1)
            return do_ls_dir(pwd_, pwd_, a.ls);
        const bool absolute = !a.path1->empty() && (*a.path1)[0] == '/';
        return do_globbed_ls(make_absolute_pwd_glob(*a.path1), absolute ? nullptr : &pwd_, a.ls);
    }
    case i_df:
        return do_df(make_absolute(a.path1 ? *a.path1 : pwd_), a.h, a.i);
    case i_lchdir: {
        std::string p = a.path1 && !a.path1->empty() ? *a.path1 : "~";
        if (p == "~" || p.rfind("~/", 0) == 0) {
            const char* home = std::getenv("HOME");
            p = std::string(home ? home : "/") + p.substr(1);
        }
        if (::chdir(p.c_str()) == -1) {
            out_.err(strprintf("Couldn't change local directory to \"%s\": %s", p.c_str(), std::strerror(errno)));
            return 1;
        }
        return 0;
    }
    case i_lmkdir:
        if (::mkdir(a.path1->c_str(), 0777) == -1) {
            out_.err(strprintf("Couldn't create local directory \"%s\": %s", a.path1->c_str(), std::strerror(errno)));
            return 1;
        }
        return 0;
    case i_lls:
        local_shell(a.rest.empty() ? "ls" : "ls " + a.rest, out_);
        return 0;
    case i_shell:
        local_shell(a.rest, out_);
        return 0;
    case i_lumask:
        ::umask(mode_t(a.n));
        print(strprintf("Local umask: %03lo\n", a.n));
        return 0;
    case i_chmod: {
        sftp::attrs at;
        at.flags = sftp::attr::permissions;
        at.permissions = std::uint32_t(a.n);
        return for_each_match(*a.path1, err_abort, [&](const std::string& p) {
            if (!s_.quiet)
                print(strprintf("Changing mode on %s\n", p.c_str()));
            return a.h ? fs.lsetstat(p, at) : fs.setstat(p, at);
        });
    }
    case i_chown:
    case i_chgrp: {
        const auto g = sftp::remote_glob(fs, make_absolute_pwd_glob(*a.path1), false, true);
        for (const auto& p : g.paths) {
            if (interrupted())
                break;
            auto at = a.h ? fs.lstat(p, false) : fs.stat(p, false);
            if (!at) {
                if (err_abort) {
                    err = -1;
                    break;
                }
                continue;
            }
            if (!at->has(sftp::attr::uidgid)) {
                out_.err(strprintf("Can't get current ownership of remote file \"%s\"", p.c_str()));
                if (err_abort) {
                    err = -1;
                    break;
                }
                continue;
            }
            at->flags &= sftp::attr::uidgid;
            at->extended.clear();
            if (a.id == i_chown) {
                if (!s_.quiet)
                    print(strprintf("Changing owner on %s\n", p.c_str()));
                at->uid = std::uint32_t(a.n);
            } else {
                if (!s_.quiet)
                    print(strprintf("Changing group on %s\n", p.c_str()));
                at->gid = std::uint32_t(a.n);
            }
            err = a.h ? fs.lsetstat(p, *at) : fs.setstat(p, *at);
            if (err != 0 && err_abort)
                break;
        }
        return err;
    }
    case i_pwd:
        print(strprintf("Remote working directory: %s\n", pwd_.c_str()));
        return 0;
    case i_lpwd: {
        char buf[PATH_MAX];
        if (::getcwd(buf, sizeof buf) == nullptr) {
            out_.err(strprintf("Couldn't get local cwd: %s", std::strerror(errno)));
            return -1;
        }
        print(strprintf("Local working directory: %s\n", buf));
        return 0;
    }
    case i_quit:
        return 0;
    case i_help:
        help();
        return 0;
    case i_version:
        print(strprintf("SFTP protocol version %u\n", conn_.sess().core().server_version()));
        return 0;
    case i_progress:
        s_.show_progress = !s_.show_progress;
        print(s_.show_progress ? "Progress meter enabled\n" : "Progress meter disabled\n");
        return 0;
    default:
        out_.err("Command not implemented");
        return -1;
    }
}

int sftp_shell::for_each_match(const std::string& pattern, bool err_abort,
                               const std::function<int(const std::string&)>& op)
{
    const auto g = sftp::remote_glob(conn_.fs(), make_absolute_pwd_glob(pattern), false, true);
    int err = 0;
    for (const auto& p : g.paths) {
        if (interrupted())
            break;
        err = op(p);
        if (err != 0 && err_abort)
            break;
    }
    return err;
}

void sftp_shell::help()
{
    print(help_text);
}

int sftp_shell::do_get(const std::string& src, const std::optional<std::string>& dst, bool preserve, bool recursive,
                       bool resume, bool fsync)
{
    auto& fs = conn_.fs();
    const std::string abs_src = make_absolute_pwd_glob(src);
    out_.dbg(3, strprintf("Looking up %s", abs_src.c_str()));
    const auto g = sftp::remote_glob(fs, abs_src, true, false);
    if (g.paths.empty()) {
        out_.err(strprintf("File \"%s\" not found.", abs_src.c_str()));
        return -1;
    }
    if (g.matched > 1 && dst && !local_is_dir(*dst)) {
        out_.err(strprintf("Multiple source paths, but destination \"%s\" is not a directory", dst->c_str()));
        return -1;
    }
    sftp::transfer_batch batch(fs, s_.show_progress ? meter_.get() : nullptr);
    batch.set_last(last_line_);
    sftp::transfer_flags f;
    f.preserve = preserve;
    f.resume = resume;
    f.fsync = fsync;
    int err = 0;
    for (std::size_t i = 0; i < g.paths.size(); ++i) {
        if (interrupted())
            break;
        const std::string& p = g.paths[i];
        const std::string filename = sftp::path_basename(p);
        std::string abs_dst;
        if (g.matched == 1 && dst)
            abs_dst = local_is_dir(*dst) ? sftp::path_append(*dst, filename) : *dst;
        else if (dst)
            abs_dst = sftp::path_append(*dst, filename);
        else
            abs_dst = filename;
        if (!s_.quiet)
            batch.print(strprintf(resume ? "Resuming %s to %s" : "Fetching %s to %s", p.c_str(), abs_dst.c_str()));
        if (!p.empty() && p.back() == '/' && recursive) {
            sftp::tree_options t;
            t.flags = f;
            t.print = true;
            if (batch.download_dir(p, abs_dst, t) == -1)
                err = -1;
        } else {
            batch.download_file(p, abs_dst, g.attributes[i], f);
        }
    }
    if (batch.run() != 0)
        err = -1;
    return err;
}

int sftp_shell::do_put(const std::string& src, const std::optional<std::string>& dst, bool preserve, bool recursive,
                       bool resume, bool fsync)
{
    auto& fs = conn_.fs();
    std::optional<std::string> tmp_dst;
    if (dst)
        tmp_dst = make_absolute(*dst);
    out_.dbg(3, strprintf("Looking up %s", src.c_str()));
    glob_t g{};
    if (::glob(src.c_str(), GLOB_NOCHECK | GLOB_MARK, nullptr, &g) != 0) {
        out_.err(strprintf("File \"%s\" not found.", src.c_str()));
        ::globfree(&g);
        return -1;
    }
    std::vector<std::string> paths(g.gl_pathv, g.gl_pathv + g.gl_pathc);
    // glob(3) with GLOB_NOCHECK returns the pattern when nothing matched:
    // the number of real matches is what exists.
    std::size_t matched = 0;
    for (const auto& p : paths) {
        struct stat st{};
        if (::stat(p.c_str(), &st) == 0)
            ++matched;
    }
    ::globfree(&g);
    sftp::transfer_flags f;
    f.preserve = preserve;
    f.resume = resume;
    f.fsync = fsync;
    bool dst_is_dir = false;
    if (tmp_dst) {
        // One file to a named target: its OPEN goes in the same flight as
        // the stat that decides between the target and target/file (as
        // scp's): an OPEN for writing of a directory fails with nothing
        // changed, and the upload takes the answer when the target is the
        // path itself. A round trip less before the data.
        // (A batch's first put sent them with INIT: first_flight.)
        if (paths.size() == 1 && matched == 1 && !fs.has_prefetched_open()) {
            if (auto ahead = sftp::upload_open_ahead(paths[0], *tmp_dst, f)) {
                fs.prefetch_stat(*tmp_dst);
                fs.prefetch_open(*ahead);
            }
        }
        dst_is_dir = fs.is_dir(*tmp_dst);
    }
    if (matched > 1 && tmp_dst && !dst_is_dir) {
        out_.err(strprintf("Multiple paths match, but destination \"%s\" is not a directory", tmp_dst->c_str()));
        return -1;
    }
    sftp::transfer_batch batch(fs, s_.show_progress ? meter_.get() : nullptr);
    batch.set_last(last_line_);
    int err = 0;
    for (const auto& p : paths) {
        if (interrupted())
            break;
        struct stat sb{};
        if (::stat(p.c_str(), &sb) == -1) {
            err = -1;
            batch.error(strprintf("stat %s: %s", p.c_str(), std::strerror(errno)));
            continue;
        }
        const std::string filename = sftp::path_basename(p);
        std::string abs_dst;
        if (paths.size() == 1 && tmp_dst)
            abs_dst = dst_is_dir ? sftp::path_append(*tmp_dst, filename) : *tmp_dst;
        else if (tmp_dst)
            abs_dst = sftp::path_append(*tmp_dst, filename);
        else
            abs_dst = make_absolute(filename);
        if (!s_.quiet)
            batch.print(strprintf(resume ? "Resuming upload of %s to %s" : "Uploading %s to %s", p.c_str(),
                                  abs_dst.c_str()));
        if (S_ISDIR(sb.st_mode) && recursive) {
            sftp::tree_options t;
            t.flags = f;
            t.print = true;
            if (batch.upload_dir(p, abs_dst, t) == -1)
                err = -1;
        } else {
            batch.upload_file(p, abs_dst, f);
        }
    }
    if (batch.run() != 0)
        err = -1;
    return err;
}


void local_shell(const std::string& command, const sftp::output_sink& out)
{
    const char* shell = std::getenv("SHELL");
    if (shell == nullptr || *shell == '\0')
        shell = "/bin/sh";
    std::fflush(stdout);
    const pid_t pid = ::fork();
    if (pid == -1) {
        out.err(strprintf("Couldn't fork: %s", std::strerror(errno)));
        return;
    }
    if (pid == 0) {
        ::signal(SIGINT, SIG_DFL);
        ::signal(SIGPIPE, SIG_DFL);
        if (command.empty())
            ::execl(shell, shell, static_cast<char*>(nullptr));
        else
            ::execl(shell, shell, "-c", command.c_str(), static_cast<char*>(nullptr));
        std::fprintf(stderr, "Couldn't execute \"%s\": %s\n", shell, std::strerror(errno));
        ::_exit(1);
    }
    int status = 0;
    while (::waitpid(pid, &status, 0) == -1) {
        if (errno != EINTR) {
            out.err(strprintf("Couldn't wait for child: %s", std::strerror(errno)));
            return;
        }
    }
    if (!WIFEXITED(status))
        out.err("Shell exited abnormally");
    else if (WEXITSTATUS(status) != 0)
        out.err(strprintf("Shell exited with status %d", WEXITSTATUS(status)));
}

} // namespace longhaul::sftp_cli
