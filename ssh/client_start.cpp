// What ssh does once the user is authenticated: the mux master's
// listener, -f's fork into the background, the forwards (-L, -R, -D, -W)
// and the session channel with its environment, terminal and streams.
#include "common/match.hpp"
#include "common/socket_tos.hpp"
#include "common/text.hpp"
#include "ssh/detail/ssh_client.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

extern char** environ;

namespace longhaul {

bool decide_tty(const client_config& cfg, bool have_command, mux_command mux, logger& log)
{
    const auto rt = cfg.request_tty.value_or(request_tty::automatic);
    const auto type = cfg.session_type.value_or(session_type::normal);
    const bool remote_command = cfg.remote_command && *cfg.remote_command != "none";
    bool tty = rt == request_tty::yes || rt == request_tty::force;
    if (!have_command && !remote_command && type != session_type::subsystem)
        tty = rt != request_tty::no;
    if (rt == request_tty::no || mux != mux_command::none || type == session_type::none)
        tty = false;
    if ((isatty(STDIN_FILENO) == 0 || cfg.stdin_null.value_or(false)) && rt != request_tty::force) {
        if (tty)
            log.info("Pseudo-terminal will not be allocated because stdin is not a terminal.");
        tty = false;
    }
    return tty;
}

} // namespace longhaul

namespace longhaul::detail {

bool send_env_permitted(std::string_view name, const std::vector<std::string>& patterns)
{
    // A leading '-' removes the patterns it matches given so far (ssh 9.x).
    std::vector<std::string> active;
    for (const auto& p : patterns) {
        if (!p.empty() && p[0] == '-') {
            const std::string gone = p.substr(1);
            std::erase_if(active, [&](const std::string& q) { return match_pattern(q, gone); });
        } else {
            active.push_back(p);
        }
    }
    for (const auto& p : active)
        if (match_pattern(std::string(name), p))
            return true;
    return false;
}

namespace {

// SendEnv patterns (a leading '-' removes earlier patterns, as ssh 9.x) and
// SetEnv, in the order ssh sends them.
std::vector<std::pair<std::string, std::string>> session_environment(const client_config& cfg)
{
    std::vector<std::pair<std::string, std::string>> out;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
        std::string_view kv(*e);
        auto eq = kv.find('=');
        if (eq != std::string_view::npos && send_env_permitted(kv.substr(0, eq), cfg.send_env))
            out.emplace_back(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
    }
    for (const auto& s : cfg.set_env) {
        auto eq = s.find('=');
        if (eq != std::string::npos)
            out.emplace_back(s.substr(0, eq), s.substr(eq + 1));
    }
    return out;
}

} // namespace

void ssh_client::on_authenticated()
{
    // The session layer told the transport (compression, automatic rekeys).
    runner_->start_timers();
    arm_keepalive();
    start_mux_master();
    if (cfg_.fork_after_authentication.value_or(false)) {
        pid_t pid = fork();
        if (pid < 0) {
            log_.error(std::string("fork: ") + std::strerror(errno));
            finish(255);
            return;
        }
        if (pid > 0)
            _exit(0);
        setsid();
        io_.notify_fork(asio::io_context::fork_child);
        forked_ = true;
    }
    if (!start_forwards())
        return;
    // The stdio forward (-W) is the session.
    if (!cfg_.stdio_forward_host) {
        if (cfg_.session_type.value_or(session_type::normal) == session_type::none) {
            log_.debug("Not requesting a session (SessionType none / -N)");
            // OpenSSH: interactive unless this is a ControlMaster.
            set_ip_qos(cfg_.control_master.value_or(control_master::no) == control_master::no);
        } else {
            start_session();
        }
    }
    // As OpenSSH's fork_postauth: in the background, the terminal's (or a
    // calling script's) stdio is let go; the session and a -W forward hold
    // copies of their own.
    if (forked_)
        stdio_to_null();
    // As OpenSSH: once the forwards and the session are asked for.
    if (!finished_)
        run_configured_local_command();
}

// IPQoS (OpenSSH's ssh_packet_set_interactive): the interactive value for a
// session with a tty, the bulk one otherwise; TCP connections only.
void ssh_client::set_ip_qos(bool interactive)
{
    if (stream_.proxy_pid > 0)
        return;
    const int tos = interactive ? cfg_.ip_qos_interactive.value_or(0x10) : cfg_.ip_qos_bulk.value_or(0x08);
    const auto r = set_socket_tos(stream_.fd, tos);
    if (!r.done.empty())
        log_.debug3(r.done);
    if (r.error)
        log_.error(*r.error);
}

void ssh_client::stdio_to_null()
{
    const int null = ::open("/dev/null", O_RDWR);
    if (null < 0)
        return;
    ::dup2(null, STDIN_FILENO);
    ::dup2(null, STDOUT_FILENO);
    // stderr stays while -v logs there.
    if (!log_.on_stderr() || !log_.enabled(log_level::debug1))
        ::dup2(null, STDERR_FILENO);
    if (null > STDERR_FILENO)
        ::close(null);
}

bool ssh_client::start_forwards()
{
    client_forwards::settings fs;
    fs.gateway_ports = cfg_.gateway_ports.value_or(false);
    fs.stream_local_bind_mask = cfg_.stream_local_bind_mask.value_or(0177);
    fs.stream_local_bind_unlink = cfg_.stream_local_bind_unlink.value_or(false);
    forwards_ = std::make_unique<client_forwards>(*runner_, log_, fs);
    const bool exit_on_failure = cfg_.exit_on_forward_failure.value_or(false);
    if (cfg_.stdio_forward_host) {
        if (!forwards_->start_stdio(*cfg_.stdio_forward_host, cfg_.stdio_forward_port,
                                    [this](int status) { finish(status); })) {
            finish(255);
            return false;
        }
        return true;
    }
    for (const auto& f : cfg_.remote_forwards)
        remote_forwards_->request(f,
                                  exit_on_failure ? client_remote_forwards::reporting::own_exit_on_failure
                                                  : client_remote_forwards::reporting::own,
                                  [this, exit_on_failure](bool ok, int) {
                                      if (!ok && exit_on_failure)
                                          finish(255);
                                  });
    for (const auto& f : cfg_.local_forwards) {
        if (f.listen_path)
            log_.debug("Local forwarding listening on path " + printable(*f.listen_path) + ".");
        else
            log_.debug("Local connections to " + printable(f.listen_host.value_or("LOCALHOST")) + ":" +
                       std::to_string(f.listen_port) + " forwarded to remote address " +
                       (f.is_dynamic() ? std::string("socks") : printable(f.connect_path.value_or(
                                                                     f.connect_host.value_or("")))) +
                       (f.connect_path || f.is_dynamic() ? "" : ":" + std::to_string(f.connect_port)));
        if (!forwards_->listen(f)) {
            if (exit_on_failure) {
                log_.error("Could not request local forwarding.");
                finish(255);
                return false;
            }
            log_.error("Could not request local forwarding.");
        }
    }
    // As OpenSSH's ssh_init_forwarding: the tunnel after the port forwards.
    return start_tunnel();
}

void ssh_client::start_session()
{
    session_params sp;
    if (forked_) {
        // Our own copies: stdio_to_null() replaces 0, 1 and 2 next.
        sp.stdin_fd = ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3);
        sp.stdout_fd = ::fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
        sp.stderr_fd = ::fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
        sp.owns_fds = true;
    }
    const bool subsystem = inv_.subsystem || cfg_.session_type.value_or(session_type::normal) == session_type::subsystem;
    std::string command = inv_.command;
    if (!inv_.have_command && cfg_.remote_command && *cfg_.remote_command != "none")
        command = *cfg_.remote_command;
    sp.kind = subsystem ? session_kind::subsystem : command.empty() ? session_kind::shell : session_kind::exec;
    sp.command = command;
    sp.stdin_null = cfg_.stdin_null.value_or(false);
    const bool want = inv_.tty;
    const bool stdin_tty = isatty(STDIN_FILENO) != 0;
    sp.want_tty = want;
    set_ip_qos(want);
    if (want) {
        const char* term = std::getenv("TERM");
        sp.term = term ? term : "";
        if (auto sz = query_terminal_size(STDIN_FILENO))
            sp.size = *sz;
        sp.modes = encode_local_terminal_modes(STDIN_FILENO);
    }
    const int esc = cfg_.escape_char.value_or('~');
    sp.escape_char = esc == escape_char_none ? -1 : esc;
    sp.escape_command_line = cfg_.enable_escape_commandline.value_or(false);
    sp.env = session_environment(cfg_);
    sp.host = host_;
    // Read after the host key check, which turns forwarding off for a
    // changed key.
    if (std::string agent = agent_forwarding_socket(cfg_); !agent.empty()) {
        agent_forwards_->enable(std::move(agent), agent_binding_of());
        sp.forward_agent = true;
    }
    sp.x11 = x11_forwards_->prepare(cfg_);
    session_ = std::make_shared<client_session>(std::move(sp), log_);
    session_->on_done = [this](int status) {
        if (session_ && session_->tty() && raw_) {
            raw_.reset();
        }
        session_closed_ = true;
        session_status_ = status;
        finish_when_channels_closed();
    };
    session_->on_escape = [this](escape_action a) { on_escape(a); };
    auto id = conn_->open("session");
    if (!id) {
        log_.error("cannot open a session channel");
        finish(255);
        return;
    }
    runner_->attach(*id, session_);
    if (want && stdin_tty) {
        raw_ = std::make_unique<raw_terminal>(STDIN_FILENO);
    }
    driver_->flush();
}

} // namespace longhaul::detail
