// One SFTP connection as the programs hold it: the ssh subprocess (or a
// local server program for -D), the link over its pipes, the session and
// the remote operations. Shared by scp and sftp.
#pragma once

#include "ssh/sftp_client/remote_fs.hpp"
#include "ssh/sftp_client/session.hpp"
#include "ssh/sftp_client/ssh_process.hpp"

#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace longhaul::sftp {

class connection {
public:
    // Starts argv (ssh ... -s host sftp, or the -D server) and runs
    // INIT/VERSION and limits. nullptr when the program could not start
    // or the session did not come up; `error` then says why ("Connection
    // closed" when ssh exited: ssh has printed its own reason).
    // `first_lookup`, when set, sends the program's first lookup in the
    // same flight as INIT (remote_fs::prefetch_stat, prefetch_realpath).
    static std::unique_ptr<connection> open(const std::vector<std::string>& argv, const session_options& o,
                                            const output_sink& out, std::string& error,
                                            bool ignore_sigint = false,
                                            const std::function<void(remote_fs&)>& first_lookup = {});

    session& sess() noexcept { return *session_; }
    remote_fs& fs() noexcept { return *fs_; }
    // Closes the pipes and waits for the child: its exit status.
    int close();
    ~connection();

private:
    connection() = default;
    child_process child_;
    std::unique_ptr<fd_link> link_;
    std::unique_ptr<session> session_;
    std::unique_ptr<remote_fs> fs_;
    bool closed_ = false;
};

} // namespace longhaul::sftp
