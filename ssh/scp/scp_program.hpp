// scp as OpenSSH's scp.c runs it: the last operand decides the direction
// (toremote / tolocal), local-to-local copies are cp(1), remote-to-remote
// copies go through this host over two SFTP connections (-3, the
// default) or, with -R, run scp on the origin host; everything else goes
// over SFTP (the default) or the legacy rcp protocol (-O). Exit status:
// 0, 1 when anything failed, 255 when the connection failed (fatal).
#pragma once

#include "ssh/scp/scp_args.hpp"
#include "ssh/sftp_client/connection.hpp"
#include "ssh/sftp_client/progress_meter.hpp"
#include "ssh/sftp_client/tree.hpp"

#include <memory>
#include <string>

namespace longhaul::scp {

struct legacy_settings;
class legacy_peer;

// Thrown to end the program with a status after its message was printed
// (OpenSSH's fatal() and killchild()).
struct exit_now {
    int code;
};

class scp_program {
public:
    explicit scp_program(scp_options o);
    int run();

private:
    void to_remote();
    void to_local();
    void local_copy(const std::string& src, const std::string& dst);
    void remote_to_remote(const operand& src, const operand& dst);

    // SFTP mode.
    // `first_stat`: the path the caller looks up first, stat'ed in the
    // same flight as INIT when a new connection starts (empty: none);
    // `first_open`: an OPEN sent right behind it (remote_fs::prefetch_open).
    sftp::connection& connect(const operand& where, const std::string& first_stat = {},
                              const std::optional<sftp::open_request>& first_open = std::nullopt);
    // The OPEN of an upload of one regular file, known before the target's
    // stat: the target is then either that file or a directory (whose
    // OPEN fails without effect), as in OpenSSH's scp.
    std::optional<sftp::open_request> upload_first_open(const std::string& target) const;
    // Runs what the batch still holds and closes the connection (counting
    // ssh's exit status); nothing without one. Before another host's
    // connection, a local copy, and at the end.
    void finish_connection();
    void source_sftp(const std::string& src, const operand& dst);
    void sink_sftp(const std::string& dst, const operand& src);
    std::optional<std::string> prepare_remote_path(sftp::remote_fs& fs, const std::string& path);
    // The ssh (or -D server) command line and the settings of an SFTP
    // connection to `where`.
    std::vector<std::string> sftp_argv(const operand& where) const;
    sftp::session_options sftp_session_options() const;
    // -3 (the default for two remote hosts): the origin's files copied to
    // the destination through this process (sftp/crossload.hpp).
    void through_local_sftp(const operand& src, const operand& dst);
    // prepare_remote_path() for paths that need no expand-path (all but
    // ~user/...): nullopt for those.
    static std::optional<std::string> plain_remote_path(const std::string& path);
    int run_batch();

    // Legacy mode.
    void legacy_to_remote(const std::vector<std::string>& sources, const operand& dst);
    void legacy_to_local(const operand& src, const std::string& dst);
    // -3 -O: `scp -f` on the origin and `scp -t` on the target speak to
    // each other through this host's pipes (OpenSSH's do_cmd + do_cmd2).
    void legacy_through_local(const operand& src, const operand& dst);
    // The settings both directions and the remote side take from the options.
    legacy_settings legacy_defaults() const;
    // After a legacy transfer: the peer's errors, then ssh's exit status.
    void end_legacy(legacy_peer& peer, sftp::child_process& child);

    // "scp" and the flags the remote scp inherits (-v -r -p -d).
    std::string remote_scp() const;
    std::string remote_command(char direction, const std::string& path) const;
    // cp, ssh: started with pipes, or nullopt after the reason on stderr.
    std::optional<sftp::child_process> spawn_child(const std::vector<std::string>& argv) const;
    void run_err(const std::string& m);

    scp_options o_;
    sftp::output_sink out_;
    std::unique_ptr<sftp::progress_meter> meter_;
    std::unique_ptr<sftp::connection> conn_;
    std::string conn_key_;
    std::unique_ptr<sftp::transfer_batch> batch_;
    // toremote: the target resolved once for every source.
    std::optional<std::string> target_;
    bool target_is_dir_ = false;
    int errs_ = 0;
};

} // namespace longhaul::scp
