// Directory trees and globs, shared by scp -r and sftp's get -r / put -r:
// OpenSSH's download_dir(), upload_dir() and remote_glob() in its words,
// but pipelined. A transfer_batch walks the trees first (creating the
// directories as it goes, one round trip per directory), queues every
// file as a task on one task_runner, and only then runs it, so the opens,
// writes and closes of many files overlap (a tree of 10,000 small files
// costs the round trips of its directories, not of its files). Messages
// of the walk are queued as tasks too, so everything comes out in the
// order a one-file-at-a-time client prints it. Directory modes and times
// are set last, deepest first, once nothing more is written below them.
#pragma once

#include "ssh/sftp_client/file_tasks.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::sftp {

struct tree_options {
    transfer_flags flags;
    bool print = false;        // "Entering"/"Retrieving" lines (sftp), not scp
    bool follow_links = false; // -L / scp: symlinks in a tree are followed
};

class transfer_batch {
public:
    transfer_batch(remote_fs& fs, progress_meter* meter) : fs_(fs), runner_(fs, meter) {}

    // One file each way; `on_failure` is printed after the file's own
    // messages if it fails.
    void download_file(const std::string& src, const std::string& dst, std::optional<attrs> a,
                       const transfer_flags& f, std::string on_failure = {});
    void upload_file(const std::string& src, const std::string& dst, const transfer_flags& f,
                     std::string on_failure = {});
    // download_dir()/upload_dir(): paths are canonicalised first. Returns
    // -1 when the walk itself failed (the files run later, in run()).
    int download_dir(const std::string& src, const std::string& dst, const tree_options& o);
    int upload_dir(const std::string& src, const std::string& dst, const tree_options& o);
    // A group of tasks (one scp operand): end_group() prints `message`
    // as an error, in order, if the walk failed or any task queued since
    // begin_group() failed.
    std::size_t begin_group() noexcept { return queued_; }
    void end_group(std::size_t mark, bool walk_failed, std::string message);
    // A message in order with the files.
    void error(std::string m, bool counts_as_failure = true);
    void info(std::string m);
    // A line for stdout, in order ("Retrieving DIR").
    void print(std::string m);

    // Runs every queued file, then the directories' final attributes.
    // 0 when everything (walks included) succeeded, else -1.
    int run();
    // The next run() ends the connection: nothing is sent after it.
    void set_last(bool last) noexcept { last_ = last; }

private:
    int download_walk(const std::string& src, const std::string& dst, int depth, std::optional<attrs> dir_attrs,
                      const tree_options& o);
    int upload_walk(const std::string& src, const std::string& dst, int depth, const tree_options& o);

    remote_fs& fs_;
    task_runner runner_;
    // Directory attribute updates, in the order the walks finished them
    // (children before parents).
    std::vector<std::function<void()>> finalizers_;
    int status_ = 0;
    std::size_t queued_ = 0; // tasks added so far
    bool last_ = false;
    std::size_t remote_finalizers_ = 0; // of finalizers_, those that send requests
    // Per queued task (by position): failed or not, filled in at report time.
    std::shared_ptr<std::vector<char>> outcome_ = std::make_shared<std::vector<char>>();
    void add(std::unique_ptr<file_task> t);
};

struct glob_result {
    std::vector<std::string> paths;
    // Beside each path: its attributes with links followed, when the walk
    // learned them (a stat, or a listing entry that is not a link), so
    // that a download need not stat it again (a round trip per file).
    std::vector<std::optional<attrs>> attributes;
    std::size_t matched = 0; // paths that exist (0 with nocheck: the pattern itself)
};

// glob(3) over SFTP: '*', '?', '[...]' in any component (a leading '.'
// only matched by a '.'), backslash escapes, results sorted per
// component; `mark` appends '/' to directories; `nocheck` returns the
// pattern when nothing matches. An error reading a directory (no such
// directory, permission) matches nothing there, as glob(3) does.
glob_result remote_glob(remote_fs& fs, const std::string& pattern, bool mark, bool nocheck);
// The one path remote_glob() stats for a pattern without wildcards (its
// first request), or nullopt when the pattern has any.
std::optional<std::string> glob_literal_path(const std::string& pattern);
// True when the pattern has unescaped glob characters.
bool has_glob_magic(const std::string& pattern);

} // namespace longhaul::sftp
