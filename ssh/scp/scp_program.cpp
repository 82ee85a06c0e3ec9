// scp's run: the remote side of a legacy transfer, or each operand in
// turn to its direction (to a remote host, to here, remote to remote,
// local to local). The SFTP transfers are in scp_program_sftp.cpp, the
// legacy protocol's in scp_program_legacy.cpp.
#include "ssh/scp/scp_program.hpp"
#include "ssh/scp/scp_program_io.hpp"

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

namespace program_io {

void to_stderr(const std::string& s)
{
    const std::string line = s + "\n";
    (void)!::write(STDERR_FILENO, line.data(), line.size());
}

} // namespace program_io

using program_io::to_stderr;

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

} // namespace longhaul::scp
