// scp's command line and its operands, as OpenSSH's scp.c reads them:
// getopt over "12346ABCTdfOpqRrstvD:F:J:M:P:S:c:i:l:o:X:", the
// [user@]host:path and scp://[user@]host[:port][/path] forms, and the
// options handed on to ssh.
#pragma once

#include "ssh/sftp_client/ssh_process.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace longhaul::scp {

enum class transfer_mode { sftp, legacy };

struct scp_options {
    transfer_mode mode = transfer_mode::sftp;
    sftp::ssh_invocation ssh;           // program and pass-through options
    std::vector<std::string> remote_remote_args; // -R: options for the ssh on the origin host
    bool preserve = false;      // -p
    bool recursive = false;     // -r
    bool quiet = false;         // -q
    int verbose = 0;            // -v
    bool through_local = true;  // remote-to-remote through this host (-3, the default); -R turns it off
    bool strict_names = true;   // -T turns the legacy filename check off
    bool resume = false;        // -a: continue what already arrived
    bool target_must_be_dir = false; // -d (remote side) or more than one source
    bool server_to = false;     // -t: the remote side of a legacy upload
    bool server_from = false;   // -f: the remote side of a legacy download
    std::uint64_t limit_kbps = 0; // -l, Kbit/s
    int port = -1;              // -P
    std::string sftp_direct;    // -D: a local sftp-server instead of ssh
    std::uint32_t buffer_size = 0; // -X buffer=
    std::uint32_t num_requests = 0; // -X nrequests=
    std::vector<std::string> operands;
    // argv[0] as invoked: OpenSSH's log lines start with it.
    std::string progname = "scp";
};

// A bad command line: `message` (may be empty) then the usage, exit 1.
struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
// OpenSSH's fatal(): "<argv[0]>: <message>" and CR LF, exit 255.
struct option_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

const char* usage_text() noexcept;

// Throws usage_error / option_error. argv0 locates the default ssh.
scp_options parse_command_line(int argc, char** argv);

// An operand: remote when host is set.
struct operand {
    std::string user, host, path;
    int port = -1;
};
// OpenSSH's colon(): the position of the host/path separator, or npos
// for a local path (a '/' before any ':' makes it local, [v6] brackets).
std::size_t find_colon(const std::string& arg) noexcept;
// parse_scp_uri() then parse_user_host_path(); nullopt: an invalid URI.
std::optional<operand> parse_operand(const std::string& arg);
// okname(): a user name safe to put on a remote command line.
bool ok_user_name(const std::string& user);

} // namespace longhaul::scp
