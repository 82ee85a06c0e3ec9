// ChrootDirectory: the value's tokens, the safety check of the path and the
// chroot itself, as OpenSSH's do_setusercontext() and safely_chroot() do
// them in the process that becomes the user, while it is still root.
#pragma once

#include "common/result.hpp"
#include "sshd/user_account.hpp"

#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

// Whether the (Match-applied) value asks for a chroot: not empty and not
// "none" in any case, as OpenSSH's strcasecmp(..., "none").
bool chroot_requested(std::string_view value);

// The home directory of another user, for "~name/..."; nullopt if unknown.
using home_lookup = std::function<std::optional<std::string>(std::string_view name)>;

// The directory to chroot to: a leading "~" or "~/" becomes the user's home
// directory and "~name/" that user's (OpenSSH's tilde_expand_filename),
// then %% %h %u %U (OpenSSH's percent_expand). Any other %x, or a trailing
// %, is refused, as OpenSSH ends the session on them. nullopt with `error`
// set when it cannot be expanded.
std::optional<std::string> expand_chroot_directory(std::string_view value, const user_account& user,
                                                   const home_lookup& home_of, std::string& error);

// stat(2) of a path: 0 and `st` filled, or the errno. stat, not lstat: a
// symlink counts as what it points to, as in OpenSSH.
using stat_function = std::function<int(const std::string& path, struct stat& st)>;
int system_stat(const std::string& path, struct stat& st);

// OpenSSH's safely_chroot() checks: the path is absolute and each component
// from "/" down to the directory itself ("/", "/srv/", "/srv/jail") is a
// directory owned by root and not writable by group or others. nullopt if
// safe, else OpenSSH's fatal text, e.g.
// "bad ownership or modes for chroot directory component \"/srv/\"",
// "chroot path \"/srv/jail\" is not a directory",
// "chroot path does not begin at root", "stat(\"/srv/x\"): No such file or directory".
std::optional<std::string> chroot_path_problem(const std::string& path, const stat_function& stat_of);

// Checks the path, then chdir(path), chroot(path), chdir("/"). Needs root.
// `error` holds OpenSSH's fatal text on failure.
result<void> enter_chroot_directory(const std::string& path, std::string& error);

} // namespace longhaul
