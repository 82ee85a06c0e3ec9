// sftp's command line, as OpenSSH's sftp.c reads it: getopt over
// "1246AafhNpqrvCc:D:i:l:o:s:S:b:B:F:J:P:R:X:", then the destination
// ([user@]host[:path], or sftp://[user@]host[:port][/path]) and an
// optional local path.
#pragma once

#include "ssh/sftp_client/ssh_process.hpp"

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace longhaul::sftp_cli {

struct sftp_options {
    sftp::ssh_invocation ssh;
    std::string batch_file;      // -b ("-": stdin)
    bool batch = false;
    bool quiet = false;
    bool show_progress = true;
    bool resume = false;         // -a
    bool fsync = false;          // -f
    bool preserve = false;       // -p
    bool recursive = false;      // -r
    int verbose = 0;
    std::uint32_t buffer_size = 0;  // -B
    std::uint32_t num_requests = 0; // -R
    std::uint64_t limit_kbps = 0;   // -l
    int port = -1;
    std::string sftp_direct;     // -D
    std::string server;          // -s subsystem or server path
    // The destination.
    std::string user, host, file1, file2;
};

struct usage_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};
struct option_error : std::runtime_error {
    using std::runtime_error::runtime_error;
};

const char* usage_text() noexcept;
sftp_options parse_command_line(int argc, char** argv);
// ssh's argv for the session.
std::vector<std::string> ssh_argv(const sftp_options& o);

} // namespace longhaul::sftp_cli
