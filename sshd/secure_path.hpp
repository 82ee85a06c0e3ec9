// StrictModes: OpenSSH's safe_path checks on a user's authorized_keys (and
// similar) files, and auth_openfile's way of opening them.
#pragma once

#include "sshd/sshd_config.hpp"
#include "sshd/user_account.hpp"

#include <sys/stat.h>

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// The file (after resolving symlinks) must be a regular file owned by root
// or `uid` and not writable by group or others; so must every directory
// above it up to and including `home` (or up to "/" for files outside the
// home directory). nullopt when all is well, else OpenSSH's reason:
// "bad ownership or modes for file /home/x/.ssh/authorized_keys",
// "bad ownership or modes for directory /home/x/.ssh",
// "/home/x/.ssh/authorized_keys is not a regular file",
// "realpath /x failed: No such file or directory".
std::optional<std::string> secure_path_problem(const std::string& path, const struct stat& st, const std::string& home,
                                               uid_t uid);

struct user_file {
    std::optional<std::string> contents; // nullopt: missing, refused or unreadable
    std::vector<log_message> log;
};

// Opens a user's file as OpenSSH's auth_openfile does: non-blocking open
// (a FIFO cannot hang sshd), regular files only ("User 'x' authorized keys
// '/path' is not a regular file"), StrictModes ("Authentication refused:
// bad ownership or modes for directory /home/x/.ssh"), and reads at most
// `max_size` bytes. Runs with the caller's credentials: sshd switches to
// the user before calling it, as OpenSSH does.
user_file read_user_file(const std::string& path, const user_account& user, bool strict_modes,
                         std::string_view file_type = "authorized keys", bool log_missing = false,
                         std::size_t max_size = 16 * 1024 * 1024);

} // namespace longhaul
