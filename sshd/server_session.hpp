// sshd's session channel: pty-req, env, x11-req, exec/shell/subsystem, window-change,
// signal and break requests; the user's program on a pty or pipes, its output
// streamed with backpressure, and exit-status/exit-signal, EOF and CLOSE in
// an order that never loses trailing output.
#pragma once

#include "channel/io/fd_pump.hpp"
#include "common/log.hpp"
#include "sshd/auth_policy.hpp"
#include "sshd/channel_timeouts.hpp"
#include "sshd/pty.hpp"
#include "sshd/session_process.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace longhaul {

// A session's pty, and what its login shell shows first.
struct pty_grant {
    pty_pair pty;
    std::string login_message; // PrintLastLog's "Last login:" line, or empty
};

// What every session of one authenticated connection shares.
class agent_forwarding;
class x11_display;
class x11_forwarding;

struct session_environment {
    const user_account* user = nullptr;
    const server_config* config = nullptr;
    std::shared_ptr<const authorized_key_match> key; // the key that logged in, if any
    connection_facts facts;
    std::vector<std::string> pam_env; // "NAME=value" from pam_getenvlist
    logger* log = nullptr;
    int session_number = 0;
    bool chrooted = false; // ChrootDirectory entered: paths are inside the jail
    // Where ptys come from: the root parent when this process may not open
    // them itself (OpenSSH's monitor opens them too, outside any chroot),
    // which also records the login (utmp, wtmp, lastlog). Unset:
    // pty_pair::allocate here, no records.
    std::function<result<pty_grant>(std::string& error)> allocate_pty;
    // The session of a granted pty is over: its logout is recorded.
    std::function<void(const std::string& tty)> release_pty;
    // The connection's agent forwarding (auth-agent-req@openssh.com and
    // SSH_AUTH_SOCK); unset: refused.
    agent_forwarding* agent = nullptr;
    // The connection's X11 forwarding (x11-req, DISPLAY); unset: refused.
    x11_forwarding* x11 = nullptr;
    // ExposeAuthInfo: the file SSH_USER_AUTH names; empty: none.
    std::string auth_info_file;
    // ChannelTimeout (the user's, after Match): a session looks its timeout
    // up again once its request names it (session:shell, ...).
    std::vector<channel_timeout_rule> channel_timeouts;
    // The tunnel interfaces this connection opened (ssh -w), comma-separated:
    // SSH_TUNNEL for the sessions started after them, as OpenSSH sets it.
    std::string tunnel_interfaces;
    // IPQoS: the connection's TOS for a session that starts, interactive
    // (a pty, or X11) or bulk (OpenSSH's do_exec_pty/do_exec_no_pty);
    // unset: left alone.
    std::function<void(bool interactive)> set_qos;
};

class server_session : public channel_handler, public std::enable_shared_from_this<server_session> {
public:
    explicit server_session(const session_environment& env);
    ~server_session() override;

    void on_data(byte_span data, std::uint32_t extended) override;
    void on_eof() override;
    void on_close() override;
    void on_request(std::string_view name, bool want_reply, byte_span data) override;
    void on_writable() override;

    // ChannelTimeout expired: as OpenSSH's channel_force_close() with
    // session_close_by_channel(force), the program's descriptors are closed
    // (a pty's hang-up signals its shell), EOF and CLOSE go out (with no
    // exit status unless the program has ended), and the program is left
    // to run, as OpenSSH leaves it
    // ("shell processes ... may continue to execute", sshd_config(5)). The
    // session ends when the client's CLOSE comes back.
    void abandon();

    pid_t pid() const noexcept { return pid_; }
    // The connection reaped our process.
    void child_exited(int wait_status);
    // The session is over (channel closed and process gone).
    std::function<void()> on_finished;

private:
    bool start_program(std::string_view kind, std::string client_command);
    std::vector<std::pair<std::string, std::string>> build_environment(const std::string& original_command) const;
    void maybe_finish();
    void send_exit_and_close();
    void send_exit_status();

    const session_environment& env_;
    std::unique_ptr<x11_display> x11_; // x11-req granted: its listeners
    std::optional<pty_pair> pty_;
    int pty_master_ = -1; // the program's pty master once started
    std::string term_;
    std::string login_message_; // shown by a login shell on the pty
    std::vector<std::pair<std::string, std::string>> client_env_;
    std::size_t client_env_bytes_ = 0; // names and values taken so far
    pid_t pid_ = -1;
    std::optional<int> wait_status_;
    std::shared_ptr<fd_sink> stdin_;
    std::shared_ptr<fd_source> stdout_, stderr_;
    bool stdout_done_ = false, stderr_done_ = false;
    bool exit_sent_ = false;
    bool closed_by_peer_ = false;
    bool finished_ = false;
    bool abandoned_ = false; // closed for inactivity (abandon())
};

} // namespace longhaul
