// The sftp command interpreter: each command of the line parsed by
// sftp_command_line.hpp run with OpenSSH's messages (help text,
// get/put, ls, df, the remote and local file operations). It knows
// nothing of terminals: the line source (a batch file, stdin, libedit) is
// the caller's.
#pragma once

#include "ssh/sftp/sftp_command_line.hpp"
#include "ssh/sftp/sftp_listing.hpp"
#include "ssh/sftp_client/connection.hpp"
#include "ssh/sftp_client/progress_meter.hpp"

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::sftp_cli {

struct shell_settings {
    bool batch = false;       // -b: errors end the session
    bool quiet = false;       // no "Fetching ..." lines
    bool show_progress = false;
    bool preserve = false;    // -p
    bool recursive = false;   // -r
    bool resume = false;      // -a
    bool fsync = false;       // -f
    bool echo = false;        // batch files echo "sftp> command"
};

class sftp_shell {
public:
    sftp_shell(sftp::connection& conn, shell_settings s, const sftp::output_sink& out,
               std::atomic<bool>* interrupted);

    // What a batch's first command looks up first, to go out with INIT
    // (main.cpp) instead of a round trip after it: get and reget stat their
    // path when it has no wildcards; put and reput to a named target stat
    // it and, for one local file, send the OPEN do_put sends ahead. Paths
    // as typed: a relative one means the starting directory, as the
    // server resolves it, and start() rebases them there.
    struct early_lookups {
        std::optional<std::string> stat_path;
        std::optional<sftp::open_request> open;
    };
    static early_lookups first_flight(const std::string& line, const shell_settings& s);
    // The starting directory (realpath ".").
    bool start();
    // Runs one line: 0 ok (or an ignored error), -1 an error that ends a
    // batch, 1 quit.
    int run_line(const std::string& line);
    // The line run next is the session's last (a batch file with nothing
    // after it): its transfers may end the connection's input with their
    // last requests (transfer_batch::set_last), as scp's do.
    void set_last_line(bool last) noexcept { last_line_ = last; }
    const std::string& pwd() const noexcept { return pwd_; }
    sftp::connection& conn() noexcept { return conn_; }
    // sftp host:dir or host:file: cd there, or fetch the file and stop.
    // 0/-1 as run_line; `done` true when the session should end.
    int initial_path(const std::string& file1, const std::string& file2, bool& done);

private:
    int dispatch(command_args& a, bool err_abort);

    int do_get(const std::string& src, const std::optional<std::string>& dst, bool preserve, bool recursive,
               bool resume, bool fsync);
    int do_put(const std::string& src, const std::optional<std::string>& dst, bool preserve, bool recursive,
               bool resume, bool fsync);
    int do_ls_dir(const std::string& path, const std::string& strip, const ls_flags& f);
    int do_globbed_ls(const std::string& path, const std::string* strip, const ls_flags& f);
    int do_df(const std::string& path, bool human, bool inodes);
    // rm, chmod: `op` on each remote match of a pattern until ^C, or until
    // the first failure in a batch that aborts on errors; the last status.
    int for_each_match(const std::string& pattern, bool err_abort, const std::function<int(const std::string&)>& op);
    void print(const std::string& s);
    void help();
    std::string make_absolute(const std::string& p) const;
    std::string make_absolute_pwd_glob(const std::string& p) const;
    bool interrupted() const noexcept { return interrupted_ != nullptr && interrupted_->load(); }

    sftp::connection& conn_;
    shell_settings s_;
    const sftp::output_sink& out_;
    std::atomic<bool>* interrupted_;
    std::string pwd_, startdir_;
    std::unique_ptr<sftp::progress_meter> meter_;
    bool last_line_ = false;
};

// Runs a local command through the shell (! and lls): OpenSSH's
// local_do_shell(). An empty command starts an interactive shell.
void local_shell(const std::string& command, const sftp::output_sink& out);

} // namespace longhaul::sftp_cli
