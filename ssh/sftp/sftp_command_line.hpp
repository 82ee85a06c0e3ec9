// The sftp command line: OpenSSH's makeargv() tokenising (quotes,
// backslashes, glob characters escaped inside quotes), the prefixes '-'
// (ignore an error) and '@' (no echo), the table of commands (names,
// what their path argument completes), and each command's flags and
// arguments checked with OpenSSH's messages. No I/O but those messages:
// the shell (sftp_commands.hpp) runs what this parses.
#pragma once

#include "ssh/sftp/sftp_listing.hpp"
#include "ssh/sftp_client/remote_fs.hpp"

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

enum command_id {
    i_chdir = 1, i_chgrp, i_chmod, i_chown, i_copy, i_df, i_get, i_help, i_lchdir, i_link, i_lls, i_lmkdir,
    i_lpwd, i_ls, i_lumask, i_mkdir, i_put, i_pwd, i_quit, i_reget, i_rename, i_reput, i_rm, i_rmdir,
    i_shell, i_symlink, i_version, i_progress,
};

struct command_spec {
    const char* name;
    int id; // command_id
    // Completion: what the first path argument names (OpenSSH's LOCAL/REMOTE).
    enum path_kind { none, local, remote } completes;
};
// The table, in OpenSSH's order (help and completion read it).
const std::vector<command_spec>& command_table();

// One parsed command: its id, flags and paths.
struct command_args {
    int id = 0;
    std::string name;
    bool a = false, f = false, h = false, i = false, p = false, r = false, s = false, l_flag = false;
    ls_flags ls;
    unsigned long n = 0;
    std::optional<std::string> path1, path2;
    std::string rest; // lls / ! : the rest of the line
};
// The line's prefixes, and whether it holds no command at all.
struct line_marks {
    bool ignore_errors = false; // '-'
    bool no_echo = false;       // '@'
    bool blank = false;         // empty or a comment
};

// 0, or -1 after OpenSSH's message for the error (to `out`).
int parse_command_line(const std::string& line, command_args& a, line_marks& m, const sftp::output_sink& out);

} // namespace longhaul::sftp_cli
