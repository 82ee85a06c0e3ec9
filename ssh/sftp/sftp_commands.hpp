// The sftp command language: OpenSSH's makeargv() tokenising (quotes,
// backslashes, glob characters escaped inside quotes), the prefixes '-'
// (ignore an error) and '@' (no echo), one table of commands (name,
// flags, help text, handler), and the handlers with OpenSSH's messages.
// The interpreter knows nothing of terminals: the line source (a batch
// file, stdin, libedit) is the caller's.
#pragma once

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

// makeargv(): words of a command line. Glob characters that were quoted
// or escaped come back escaped with a backslash (for remote_glob);
// undo_glob_escape() removes that for paths that are not globbed. A
// '#' outside quotes starts a comment. nullopt: unterminated quote.
std::optional<std::vector<std::string>> split_words(const std::string& line, std::string& error);
std::string undo_glob_escape(const std::string& s);
std::string escape_glob(const std::string& s);

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

class sftp_shell;

struct command_spec {
    const char* name;
    int id;
    // Completion: what the first path argument names (OpenSSH's LOCAL/REMOTE).
    enum path_kind { none, local, remote } completes;
};
// The table, in OpenSSH's order (help and completion read it).
const std::vector<command_spec>& command_table();

class sftp_shell {
public:
    sftp_shell(sftp::connection& conn, shell_settings s, const sftp::output_sink& out,
               std::atomic<bool>* interrupted);

    // The starting directory (realpath ".").
    bool start();
    // Runs one line: 0 ok (or an ignored error), -1 an error that ends a
    // batch, 1 quit.
    int run_line(const std::string& line);
    const std::string& pwd() const noexcept { return pwd_; }
    sftp::connection& conn() noexcept { return conn_; }
    // sftp host:dir or host:file: cd there, or fetch the file and stop.
    // 0/-1 as run_line; `done` true when the session should end.
    int initial_path(const std::string& file1, const std::string& file2, bool& done);

private:
    struct args {
        int id = 0;
        std::string name;
        bool a = false, f = false, h = false, i = false, p = false, r = false, s = false, l_flag = false;
        ls_flags ls;
        unsigned long n = 0;
        std::optional<std::string> path1, path2;
        std::string rest; // lls / ! : the rest of the line
    };
    int parse(const std::string& line, args& a, bool& ignore_errors, bool& no_echo, bool& blank);
    int dispatch(args& a, bool err_abort);

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
};

// Runs a local command through the shell (! and lls): OpenSSH's
// local_do_shell(). An empty command starts an interactive shell.
void local_shell(const std::string& command, const sftp::output_sink& out);

} // namespace longhaul::sftp_cli
