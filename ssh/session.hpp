// The client's session channel: pty, environment and command requests, the
// local stdin/stdout/stderr streams, escape sequences, window changes, and
// the remote exit status.
#pragma once

#include "channel/forward/x11_messages.hpp"
#include "channel/io/fd_pump.hpp"
#include "common/log.hpp"
#include "ssh/escape.hpp"
#include "ssh/terminal.hpp"

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace longhaul {

enum class session_kind { shell, exec, subsystem };

struct session_params {
    session_kind kind = session_kind::shell;
    std::string command; // exec: the command; subsystem: its name
    bool want_tty = false;
    std::string term;
    terminal_size size;
    bytes modes;
    std::vector<std::pair<std::string, std::string>> env;
    bool stdin_null = false;
    bool forward_agent = false; // ask for auth-agent-req@openssh.com
    std::optional<forward::x11_request> x11; // ask for X11 forwarding (ssh/client_x11)
    int escape_char = '~'; // -1: none; only active with a tty
    bool escape_command_line = false; // EnableEscapeCommandline: ~C listed in ~?
    std::string host;      // for "Connection to host closed."
    // The local ends: ssh's own stdio, or those a mux client passed to the
    // master (owned then: closed with the session). stdin_fd's terminal
    // gives the window size.
    int stdin_fd = 0;
    int stdout_fd = 1;
    int stderr_fd = 2;
    bool owns_fds = false;
};

class client_session : public channel_handler, public std::enable_shared_from_this<client_session> {
public:
    client_session(session_params params, logger& log);
    ~client_session() override;

    // Called once: the remote program's exit status (255 for a signal or a
    // failure), after all of its output reached our stdout and stderr.
    std::function<void(int status)> on_done;
    // Escape actions that concern the whole connection (~., ~R, ~^Z, ...).
    std::function<void(escape_action)> on_escape;
    // Optional, for the master's mux sessions: the channel opened (true) or
    // was refused (false); the pty request failed; a session error to show
    // the mux client (instead of our log).
    std::function<void(bool opened)> on_opened;
    std::function<void()> on_tty_failed;
    std::function<void(const std::string&)> on_error;

    void on_open_confirmed(byte_span) override;
    void on_open_failed(std::uint32_t reason, std::string_view text) override;
    void on_data(byte_span data, std::uint32_t extended) override;
    void on_eof() override;
    void on_close() override;
    void on_request(std::string_view name, bool want_reply, byte_span data) override;
    void on_request_reply(bool success) override;
    void on_writable() override;

    void window_changed();
    bool tty() const noexcept { return params_.want_tty; }
    void send_break();
    // ~&, from on_escape: after the escape, the input ends as OpenSSH's
    // does it, with a ^D (a shell on the pty logs out) and then EOF.
    void end_input() noexcept { end_input_ = true; }
    // The exit-status the server sent, if it sent one.
    std::optional<int> exit_status() const noexcept { return exit_status_; }
    // Ends this session alone (a mux client went away, or its ~.).
    void close_channel();

private:
    void start_streams();
    void maybe_done();
    void fail(std::string message);

    session_params params_;
    logger& log_;
    std::shared_ptr<fd_source> stdin_;
    std::shared_ptr<fd_sink> stdout_, stderr_;
    std::unique_ptr<escape_filter> escapes_;
    std::vector<std::string> pending_replies_; // request names awaiting replies, in order
    std::optional<int> exit_status_;
    bool closed_ = false;
    bool done_ = false;
    bool end_input_ = false;
};

} // namespace longhaul
