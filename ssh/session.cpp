#include "ssh/session.hpp"

#include "channel/forward/forward_messages.hpp"

#include "channel/messages.hpp"
#include "common/text.hpp"

#include <fcntl.h>
#include <unistd.h>

namespace longhaul {

client_session::client_session(session_params params, logger& log) : params_(std::move(params)), log_(log)
{
    if (params_.want_tty && params_.escape_char >= 0)
        escapes_ = std::make_unique<escape_filter>(params_.escape_char);
}

client_session::~client_session()
{
    if (params_.owns_fds) {
        for (int fd : {params_.stdin_fd, params_.stdout_fd, params_.stderr_fd})
            if (fd >= 0)
                ::close(fd);
    }
}

void client_session::on_open_confirmed(byte_span)
{
    connection& c = runner->conn();
    // OpenSSH's ssh_session2_setup asks for X11, then the agent, before the pty.
    if (params_.x11) {
        c.send_request(id, forward::x11_request_name, true, params_.x11->encode());
        pending_replies_.push_back("X11 forwarding");
    }
    if (params_.forward_agent) {
        log_.debug("Requesting authentication agent forwarding.");
        c.send_request(id, forward::agent_request_name, false);
    }
    if (params_.want_tty) {
        pty_request p{params_.term, params_.size.cols, params_.size.rows, params_.size.width_px,
                      params_.size.height_px, params_.modes};
        c.send_request(id, "pty-req", true, p.encode());
        pending_replies_.push_back("pty-req");
    }
    for (const auto& [name, value] : params_.env) {
        log_.debug("channel 0: setting env " + name + " = \"" + value + "\"");
        c.send_request(id, "env", false, env_request{name, value}.encode());
    }
    switch (params_.kind) {
    case session_kind::shell:
        log_.debug("Requesting shell.");
        c.send_request(id, "shell", true);
        pending_replies_.push_back("shell");
        break;
    case session_kind::exec:
        log_.debug("Sending command: " + params_.command);
        c.send_request(id, "exec", true, string_request{params_.command}.encode());
        pending_replies_.push_back("exec");
        break;
    case session_kind::subsystem:
        log_.debug("Sending subsystem: " + params_.command);
        c.send_request(id, "subsystem", true, string_request{params_.command}.encode());
        pending_replies_.push_back("subsystem");
        break;
    }
    start_streams();
    runner->flush();
    if (on_opened)
        on_opened(true);
}

void client_session::on_open_failed(std::uint32_t reason, std::string_view text)
{
    if (on_opened) {
        auto cb = std::move(on_opened);
        on_opened = nullptr;
        cb(false);
    }
    fail("channel 0: open failed: " + std::to_string(reason) + ": " + std::string(text));
}

void client_session::start_streams()
{
    // Private descriptions of our stdio: non-blocking mode stays ours.
    const int in = params_.stdin_null ? ::open("/dev/null", O_RDONLY | O_CLOEXEC)
                                      : private_nonblocking_fd(params_.stdin_fd, false);
    stdin_ = std::make_shared<fd_source>(*runner, id, in, 0, true);
    if (escapes_) {
        stdin_->filter = [this](byte_span input, bytes& out) {
            std::vector<escape_action> actions;
            escapes_->feed(input, out, actions);
            for (auto a : actions) {
                if (const std::string echo = escape_echo(a, escapes_->escape_char()); !echo.empty())
                    (void)!::write(params_.stderr_fd, echo.data(), echo.size());
                if (a == escape_action::help) {
                    const std::string help = escapes_->help_text(params_.escape_command_line);
                    (void)!::write(params_.stderr_fd, help.data(), help.size());
                } else if (a == escape_action::send_break) {
                    send_break();
                } else if (on_escape) {
                    on_escape(a);
                }
            }
            if (end_input_) {
                out.push_back(0x04);
                stdin_->end_after_filter();
            }
        };
    }
    stdin_->on_eof = [this](int) {
        runner->conn().send_eof(id);
        runner->flush();
    };
    stdout_ = std::make_shared<fd_sink>(*runner, id, private_nonblocking_fd(params_.stdout_fd, true), true);
    stderr_ = std::make_shared<fd_sink>(*runner, id, private_nonblocking_fd(params_.stderr_fd, true), true);
    stdout_->on_drained = [this] { maybe_done(); };
    stderr_->on_drained = [this] { maybe_done(); };
    stdout_->on_error = [this](int) {
        // Nobody reads our stdout: tell the server to stop sending (eow@openssh.com).
        runner->conn().send_request(id, "eow@openssh.com", false);
    };
    stdin_->start();
}

void client_session::on_data(byte_span data, std::uint32_t extended)
{
    if (!stdout_) {
        runner->consumed(id, data.size());
        return;
    }
    (extended == extended_data_stderr ? stderr_ : stdout_)->write(data);
}

void client_session::on_eof()
{
    if (stdout_)
        stdout_->eof();
    if (stderr_)
        stderr_->eof();
}

void client_session::on_close()
{
    closed_ = true;
    if (stdin_)
        stdin_->stop();
    runner->conn().close(id);
    runner->flush();
    on_eof();
    maybe_done();
}

void client_session::on_request(std::string_view name, bool want_reply, byte_span data)
{
    if (name == "exit-status") {
        if (auto r = exit_status_request::decode(data))
            exit_status_ = static_cast<int>(r->status & 0xff);
        log_.debug("client_input_channel_req: channel 0 rtype exit-status reply " + std::to_string(want_reply));
    } else if (name == "exit-signal") {
        if (auto r = exit_signal_request::decode(data))
            log_.debug("Remote command terminated by signal " + printable(r->signal));
        exit_status_ = 255;
    } else if (name == "eow@openssh.com") {
        if (stdin_)
            stdin_->stop();
    }
    if (want_reply)
        runner->conn().reply(id, false);
}

void client_session::on_request_reply(bool success)
{
    if (pending_replies_.empty())
        return;
    const std::string what = pending_replies_.front();
    pending_replies_.erase(pending_replies_.begin());
    if (success) {
        log_.debug("channel 0: " + what + " request accepted");
        return;
    }
    if (what == "X11 forwarding") {
        log_.error("X11 forwarding request failed on channel 0");
        return;
    }
    if (what == "pty-req") {
        if (on_error)
            on_error("PTY allocation request failed on channel " + std::to_string(id));
        else
            log_.error("PTY allocation request failed on channel 0");
        if (on_tty_failed)
            on_tty_failed();
        return;
    }
    fail(what == "shell" || what == "exec" ? what + " request failed on channel 0"
                                            : "subsystem request failed on channel 0");
}

void client_session::on_writable()
{
    if (stdin_)
        stdin_->pump();
}

void client_session::window_changed()
{
    if (!params_.want_tty || closed_)
        return;
    auto sz = query_terminal_size(params_.stdin_fd);
    if (!sz)
        return;
    window_change_request w{sz->cols, sz->rows, sz->width_px, sz->height_px};
    runner->conn().send_request(id, "window-change", false, w.encode());
    runner->flush();
}

void client_session::send_break()
{
    std::uint8_t ms[4] = {0, 0, 0x03, 0xe8}; // 1000 ms, as ssh sends
    runner->conn().send_request(id, "break", false, byte_span(ms, 4));
    runner->flush();
}

void client_session::maybe_done()
{
    if (done_ || !closed_)
        return;
    if ((stdout_ && !stdout_->drained()) || (stderr_ && !stderr_->drained()))
        return;
    done_ = true;
    if (on_done)
        on_done(exit_status_.value_or(255));
}

void client_session::close_channel()
{
    if (closed_ || !runner)
        return;
    if (stdin_)
        stdin_->stop();
    runner->conn().close(id);
    runner->flush();
}

void client_session::fail(std::string message)
{
    if (on_error)
        on_error(message);
    else
        log_.error(message);
    done_ = true;
    if (on_done)
        on_done(255);
}

} // namespace longhaul
