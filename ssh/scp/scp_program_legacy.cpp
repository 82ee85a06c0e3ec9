// scp's legacy rcp protocol (-O) as the client: the remote scp's
// command line, uploads and downloads over one ssh each, and
// remote-to-remote copies through here (-3) with the two ssh joined.
// The protocol itself is in scp_legacy.cpp and scp_legacy_sink.cpp.
#include "ssh/scp/scp_program.hpp"

#include "ssh/scp/scp_legacy.hpp"
#include "ssh/scp/scp_program_io.hpp"

namespace longhaul::scp {

using program_io::to_stderr;

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
