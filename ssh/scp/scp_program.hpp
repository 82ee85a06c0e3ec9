// scp as OpenSSH's scp.c runs it: the last operand decides the direction
// (toremote / tolocal), local-to-local copies are cp(1), remote-to-remote
// copies with -R run scp on the origin host, and everything else goes
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
    sftp::connection& connect(const operand& where);
    void close_connection();
    void source_sftp(const std::string& src, const operand& dst);
    void sink_sftp(const std::string& dst, const operand& src);
    std::optional<std::string> prepare_remote_path(const std::string& path);
    int run_batch();

    // Legacy mode.
    void legacy_to_remote(const std::vector<std::string>& sources, const operand& dst);
    void legacy_to_local(const operand& src, const std::string& dst);

    std::string remote_command(char direction, const std::string& path) const;
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
