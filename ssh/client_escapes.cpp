// The escapes that act on the connection (~., ~^Z, ~R, ~V/~v, ~#, ~C, ~&),
// the ~C command line that adds and cancels forwards (OpenSSH's
// process_cmdline, with its prompt and messages), and LocalCommand.
#include "ssh/detail/ssh_client.hpp"

#include "common/text.hpp"
#include "ssh/escape_command.hpp"
#include "ssh/local_command.hpp"
#include "ssh/prompt/prompt.hpp"

#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace longhaul::detail {

namespace {

void write_stderr(const std::string& s) { (void)!::write(STDERR_FILENO, s.data(), s.size()); }

} // namespace

void ssh_client::on_escape(escape_action a)
{
    switch (a) {
    case escape_action::disconnect:
        raw_.reset();
        log_.info("Connection to " + host_ + " closed.");
        finish(255);
        break;
    case escape_action::suspend:
        if (raw_)
            raw_->leave();
        ::kill(getpid(), SIGTSTP);
        if (raw_)
            raw_->enter();
        if (session_)
            session_->window_changed();
        break;
    case escape_action::rekey:
        core_->request_rekey();
        driver_->flush();
        break;
    case escape_action::less_verbose:
    case escape_action::more_verbose: {
        const bool more = a == escape_action::more_verbose;
        if (more && log_.level() < log_level::debug3)
            log_.set_level(static_cast<log_level>(static_cast<int>(log_.level()) + 1));
        if (!more && log_.level() > log_level::quiet)
            log_.set_level(static_cast<log_level>(static_cast<int>(log_.level()) - 1));
        // OpenSSH's words, on the terminal rather than through the log.
        const int esc = cfg_.escape_char.value_or('~');
        write_stderr(escape_char_name(esc) + (more ? "v" : "V") + " [LogLevel " +
                     std::string(log_level_name(log_.level())) + "]\r\n");
        break;
    }
    case escape_action::list_forwardings: {
        // OpenSSH's channel_open_message, with what the channel core knows
        // of each channel instead of OpenSSH's internal states.
        std::string s = "The following connections are open:\r\n";
        for (const auto& c : conn_->open_channels())
            s += "  #" + std::to_string(c.id) + " " + printable(c.type) + " (in " + std::to_string(c.bytes_in) +
                 " bytes, out " + std::to_string(c.bytes_out) + " bytes)\r\n";
        write_stderr(s);
        break;
    }
    case escape_action::command_line:
        if (!cfg_.enable_escape_commandline.value_or(false)) {
            write_stderr("commandline disabled\r\n");
            break;
        }
        run_command_line();
        break;
    case escape_action::background: background(); break;
    default: break;
    }
}

void ssh_client::background()
{
    // OpenSSH's ~&: the terminal back to its modes, no new forwarded
    // connections, and a child carries on in the background while the
    // parent exits 0 (so the user's shell gets the terminal back). The
    // child ends the session's input (a ^D, then EOF: a shell logs out) and,
    // like any client whose session closed, stays until the connections
    // already forwarded have closed.
    raw_.reset();
    if (forwards_)
        forwards_->stop_listening();
    write_stderr(escape_char_name(cfg_.escape_char.value_or('~')) + "& [backgrounded]\n");
    const pid_t pid = ::fork();
    if (pid < 0) {
        log_.error(std::string("fork: ") + std::strerror(errno));
        return;
    }
    if (pid > 0)
        _exit(0);
    io_.notify_fork(asio::io_context::fork_child);
    if (session_)
        session_->end_input();
}

void ssh_client::run_command_line()
{
    // As OpenSSH: cooked mode and SIGINT ignored while the line is typed;
    // the event loop waits meanwhile.
    if (raw_)
        raw_->leave();
    struct sigaction ignore {}, old_int {};
    ignore.sa_handler = SIG_IGN;
    sigemptyset(&ignore.sa_mask);
    sigaction(SIGINT, &ignore, &old_int);
    const auto line = read_line("\r\nssh> ");
    if (line)
        run_escape_command(*line);
    sigaction(SIGINT, &old_int, nullptr);
    if (raw_)
        raw_->enter();
    driver_->flush();
}

void ssh_client::run_escape_command(const std::string& line)
{
    const bool permit_local = cfg_.permit_local_command.value_or(false);
    const escape_command c = parse_escape_command(line, permit_local, inv_.env->getenv);
    using kind = escape_command::kind;
    using dir = escape_command::direction;
    switch (c.what) {
    case kind::none: return;
    case kind::error: log_.info(c.text); return;
    case kind::help:
        for (const auto& l : escape_command_help(permit_local))
            log_.info(l);
        return;
    case kind::local_command: run_local_command(c.text, inv_.env->getenv, log_); return;
    case kind::cancel_forward: {
        const bool ok = c.dir == dir::remote ? remote_forwards_->cancel(c.spec)
                                             : forwards_ && forwards_->cancel(c.spec, c.dir == dir::dynamic);
        log_.info(ok ? "Canceled forwarding." : "Unknown port forwarding.");
        return;
    }
    case kind::add_forward:
        if (c.dir == dir::remote) {
            remote_forwards_->request(c.spec, client_remote_forwards::reporting::own, nullptr);
        } else if (!forwards_ || !forwards_->listen(c.spec)) {
            log_.info("Port forwarding failed.");
            return;
        }
        log_.info("Forwarding port.");
        return;
    }
}

void ssh_client::run_configured_local_command()
{
    if (!cfg_.permit_local_command.value_or(false) || !cfg_.local_command || cfg_.local_command->empty())
        return;
    // %T: the local tunnel interface (-w), "NONE" without one.
    run_local_command(expand_local_command(cfg_, *inv_.env, tunnel_ifname_), inv_.env->getenv, log_);
}

} // namespace longhaul::detail
