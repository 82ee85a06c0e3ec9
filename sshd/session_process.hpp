// Starting the user's program for a session: the login shell, a command
// through the shell, or a subsystem binary, on a pty or on pipes.
#pragma once

#include "common/result.hpp"
#include "sshd/privileges.hpp"
#include "sshd/pty.hpp"

#include <sys/types.h>

#include <functional>
#include <string>
#include <utility>
#include <vector>

namespace longhaul {

// A forwarded X11 display's cookie, for the user's xauthority (OpenSSH's
// do_rc_files): the rc file that runs gets "protocol cookie" on its stdin;
// with no rc file, `xauth -q -` gets "remove auth_display" and "add
// auth_display protocol cookie". Unset protocol: no X11 forwarding.
struct session_x11_auth {
    std::string protocol;
    std::string cookie;
    std::string auth_display;
    std::string xauth; // XAuthLocation; empty: none
};

struct session_spawn {
    const user_account* user = nullptr;
    // Empty: an interactive login shell. Otherwise run with "shell -c command".
    std::string command;
    std::vector<std::pair<std::string, std::string>> environment;
    pty_pair* pty = nullptr; // pty session when set, pipes otherwise
    // ~/.ssh/rc before the program. When it is not allowed (PermitUserRC,
    // no-user-rc, ForceCommand, subsystems) or absent, /etc/ssh/sshrc runs
    // instead if it exists, as in OpenSSH's do_rc_files().
    bool run_user_rc = true;
    // Before the rc files, unless ~/.hushlogin exists (OpenSSH's
    // do_login(), for a login shell on a pty): the "Last login:" line, then
    // /etc/motd when print_motd.
    std::string login_message;
    bool print_motd = false;
    std::string system_rc = "/etc/ssh/sshrc";
    session_x11_auth x11;
    // Inside ChrootDirectory a missing home directory is usual (an sftp
    // jail): the session starts in "/" without the "Could not chdir to home
    // directory" line, as OpenSSH's do_child() suppresses it there.
    bool in_chroot = false;
    // internal-sftp: after the same set-up (session, descriptors, home
    // directory, rc files, environment) the child runs this instead of
    // exec'ing the shell and exits with what it returns. No exec, so it
    // needs no binary (ChrootDirectory). sshd's session process is
    // single-threaded by then (and glibc's allocator is fork-safe), so
    // ordinary code may run after fork.
    std::function<int()> run_in_process;
};

// The caller owns the descriptors (for pty sessions the master moves here
// out of the pty_pair).
struct spawned_session {
    pid_t pid = -1;
    int in = -1;  // write end to the program's stdin (pty master for pty sessions)
    int out = -1; // read end of its stdout (pty master duplicate for pty sessions)
    int err = -1; // read end of its stderr (-1 for pty sessions: stderr shares the pty)
};

// Forks the session child: new session (setsid), controlling terminal for
// pty sessions, descriptors 0-2 wired, every other descriptor closed, the
// home directory as cwd, then exec. The caller already runs as the user.
result<spawned_session> spawn_session(const session_spawn& req, std::string& error);

// "NAME=value" strings for execve from pairs.
std::vector<std::string> environment_strings(const std::vector<std::pair<std::string, std::string>>& env);

} // namespace longhaul
