// sftp-server(8) from argv to exit status: OpenSSH's options, logging, the
// user and client address, and the loop that moves bytes between the
// client's descriptors and the server core. The sftp-server program calls
// it from main(); sshd's session child calls it for internal-sftp (no exec,
// so it works inside a chroot with no binaries).
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace longhaul::sftp {

struct server_user {
    std::string name;
    uid_t uid = 0;
    std::string home;
};

struct server_invocation {
    // argv[0] names the program in logs ("sftp-server", "internal-sftp").
    std::vector<std::string> argv;
    server_user user;
    // $SSH_CONNECTION ("client port server port"); empty when unset.
    std::string ssh_connection;
    int in_fd = 0;
    int out_fd = 1;
};

// Returns the process exit status: 0 at the client's EOF, 1 for usage
// errors and I/O failures, 255 for fatal ones (as OpenSSH's).
int sftp_server_main(const server_invocation& inv);

// internal-sftp's command line ("internal-sftp -l INFO -u 022") split on
// spaces as OpenSSH's session.c does.
std::vector<std::string> split_internal_sftp_command(const std::string& command);

// OpenSSH's IS_INTERNAL_SFTP(): "internal-sftp" alone or followed by a
// space or tab.
bool is_internal_sftp(const std::string& command) noexcept;

} // namespace longhaul::sftp
