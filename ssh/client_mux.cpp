// Connection multiplexing in the ssh client (ControlMaster, ControlPath,
// ControlPersist, -M -S -O), as OpenSSH's ssh does it: first the mux
// client (a master at ControlPath takes the -O command or the session),
// then, after authentication, the master's side: the ControlPath
// listener, the passenger sessions it opens on this connection with the
// descriptors its clients pass, and ControlPersist's fork into the
// background. Protocol, sockets and listener: ssh/mux/.
#include "common/match.hpp"
#include "ssh/detail/mux_master_state.hpp"
#include "ssh/detail/ssh_client.hpp"
#include "ssh/mux/mux_client.hpp"
#include "ssh/mux/mux_socket.hpp"
#include "ssh/mux_forward_spec.hpp"
#include "ssh/prompt/prompt.hpp"

#include <boost/asio/post.hpp>

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace longhaul::detail {

namespace {

// The pieces of OpenSSH's messages that print the path cut it at 100 bytes.
std::string short_path(const std::string& p)
{
    return p.substr(0, 100);
}

// OpenSSH's fatal() on stderr ends its line in "\r\n" (our logger's "\n"):
// the -O failures scripts compare are printed as OpenSSH prints them.
void fatal_line(logger& log, const std::string& text)
{
    if (log.enabled(log_level::fatal))
        std::fprintf(stderr, "%s\r\n", text.c_str());
}

// -n: the session (or forward) reads nothing.
void stdin_to_null()
{
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0 && null != STDIN_FILENO) {
        ::dup2(null, STDIN_FILENO);
        ::close(null);
    }
}

bool is_master_mode(control_master m)
{
    return m == control_master::yes || m == control_master::ask;
}

// NEW_SESSION as OpenSSH's mux client fills it in.
mux::new_session session_request(const client_invocation& inv)
{
    const client_config& cfg = *inv.cfg;
    mux::new_session r;
    r.subsystem = inv.subsystem || cfg.session_type.value_or(session_type::normal) == session_type::subsystem;
    r.command = inv.command;
    if (!inv.have_command && cfg.remote_command && *cfg.remote_command != "none")
        r.command = *cfg.remote_command;
    r.want_tty = inv.tty;
    r.want_agent = cfg.forward_agent.value_or(false);
    const int esc = cfg.escape_char.value_or('~');
    r.escape_char = esc == escape_char_none ? mux::no_escape_char : static_cast<std::uint32_t>(esc);
    const char* term = std::getenv("TERM");
    r.term = term ? term : "";
    for (const auto& s : cfg.set_env)
        if (s.rfind("TERM=", 0) == 0 && s.size() > 5)
            r.term = s.substr(5);
    if (!cfg.send_env.empty()) {
        for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
            const std::string_view kv(*e);
            const auto eq = kv.find('=');
            if (eq != std::string_view::npos && send_env_permitted(kv.substr(0, eq), cfg.send_env))
                r.env.emplace_back(kv);
        }
    }
    for (const auto& s : cfg.set_env)
        r.env.push_back(s);
    return r;
}

// OPEN_FWD (or CLOSE_FWD) for each of our -L, -D and -R, as OpenSSH's
// mux_client_forwards: all are tried; false if any failed.
bool mux_forwards(mux::mux_client& client, const client_config& cfg, mux::msg type, bool print_port)
{
    bool ok = true;
    auto one = [&](const forward_spec& f, bool remote) {
        const auto kind = mux_forward_kind(f, remote);
        if (!client.forward(mux_forward_request(type, kind, f),
                            describe_mux_forward(kind, f, cfg.gateway_ports.value_or(false)), print_port))
            ok = false;
    };
    for (const auto& f : cfg.local_forwards)
        one(f, false);
    for (const auto& f : cfg.remote_forwards)
        one(f, true);
    return ok;
}

// The passenger: our forwards added to the master at `sock`, then a
// session through it, or (-W) a stdio forward. nullopt when the master
// refused (ssh then connects by itself, as OpenSSH's does).
std::optional<int> run_passenger(mux::control_socket sock, client_invocation& inv)
{
    logger& log = *inv.log;
    const client_config& cfg = *inv.cfg;
    mux::mux_client client(std::move(sock), log);
    if (!client.hello_exchange()) {
        log.error("muxclient: master hello exchange failed");
        return std::nullopt;
    }
    if (cfg.stdio_forward_host) {
        if (cfg.stdin_null.value_or(false))
            stdin_to_null();
        // OpenSSH's muxclient() leaves with 0 whatever the forward did.
        const int port = cfg.stdio_forward_port;
        return client.run_stdio_forward(*cfg.stdio_forward_host, port == port_streamlocal
                                                                     ? mux::port_streamlocal
                                                                     : static_cast<std::uint32_t>(port));
    }
    if (!mux_forwards(client, cfg, mux::msg::open_fwd, false)) {
        log.error("muxclient: master forward request failed");
        return std::nullopt;
    }
    if (cfg.stdin_null.value_or(false)) {
        stdin_to_null();
    }
    mux::new_session req = session_request(inv);
    std::unique_ptr<raw_terminal> raw;
    mux::mux_client::session_hooks hooks;
    hooks.set_raw = [&](bool on) {
        if (on && isatty(STDIN_FILENO) != 0) {
            raw = std::make_unique<raw_terminal>(STDIN_FILENO);
        } else if (!on && raw) {
            raw.reset();
        }
    };
    if (req.want_tty)
        hooks.closed_message = "Shared connection to " + cfg.hostname.value_or(cfg.host_arg) + " closed.";
    return client.run_session(std::move(req), hooks);
}

// -O check / exit / stop.
int run_control_command(mux::control_socket sock, client_invocation& inv)
{
    logger& log = *inv.log;
    mux::mux_client client(std::move(sock), log);
    if (!client.hello_exchange()) {
        log.fatal("muxclient: master hello exchange failed");
        return 255;
    }
    const bool quiet = !log.enabled(log_level::info);
    switch (inv.mux) {
    case mux_command::check: {
        auto pid = client.alive_check();
        if (!pid) {
            log.fatal("muxclient: master alive check failed");
            return 255;
        }
        std::fprintf(stderr, "Master running (pid=%u)\r\n", static_cast<unsigned>(*pid));
        return 0;
    }
    case mux_command::exit:
        if (!client.terminate())
            return 255;
        if (!quiet)
            std::fprintf(stderr, "Exit request sent.\r\n");
        return 0;
    case mux_command::stop:
        if (!client.stop_listening())
            return 255;
        if (!quiet)
            std::fprintf(stderr, "Stop listening request sent.\r\n");
        return 0;
    case mux_command::forward:
        // -O forward: the port of a -R 0 on stdout.
        if (!mux_forwards(client, *inv.cfg, mux::msg::open_fwd, true)) {
            fatal_line(log, "muxclient: master forward request failed");
            return 255;
        }
        return 0;
    case mux_command::cancel:
        if (!mux_forwards(client, *inv.cfg, mux::msg::close_fwd, false))
            log.error("muxclient: master cancel forward request failed");
        return 0;
    default: log.fatal("multiplexing control command not supported yet"); return 255;
    }
}

} // namespace

// OpenSSH's muxclient(): what a master at ControlPath does for us.
std::optional<int> try_mux_client(client_invocation& inv)
{
    const client_config& cfg = *inv.cfg;
    logger& log = *inv.log;
    if (inv.mux != mux_command::none && !cfg.control_path) {
        fatal_line(log, "No ControlPath specified for \"-O\" command");
        return 255;
    }
    if (!cfg.control_path)
        return std::nullopt;
    const auto cm = cfg.control_master.value_or(control_master::no);
    if (is_master_mode(cm))
        return std::nullopt;
    if (cm == control_master::automatic || cm == control_master::autoask)
        log.debug("auto-mux: Trying existing master");
    const std::string& path = *cfg.control_path;
    if (path.size() >= mux::max_socket_path()) {
        log.fatal("ControlPath too long ('" + path + "' >= " + std::to_string(mux::max_socket_path()) + " bytes)");
        return 255;
    }
    mux::control_socket sock = mux::control_socket::connect_to(path);
    if (!sock.valid()) {
        const int err = sock.error();
        if (inv.mux != mux_command::none) {
            fatal_line(log, "Control socket connect(" + short_path(path) + "): " + std::strerror(err));
            return 255;
        }
        if (err == ECONNREFUSED && cm != control_master::no) {
            log.debug("Stale control socket " + short_path(path) + ", unlinking");
            ::unlink(path.c_str());
        } else if (err == ENOENT) {
            log.debug("Control socket \"" + short_path(path) + "\" does not exist");
        } else {
            log.error("Control socket connect(" + short_path(path) + "): " + std::strerror(err));
        }
        return std::nullopt;
    }
    if (inv.mux != mux_command::none)
        return run_control_command(std::move(sock), inv);
    return run_passenger(std::move(sock), inv);
}

void mux_master_deleter::operator()(mux_master_state* p) const noexcept
{
    delete p;
}

void ssh_client::start_mux_master()
{
    if (!cfg_.control_path || *cfg_.control_path == "none")
        return;
    const auto cm = cfg_.control_master.value_or(control_master::no);
    if (cm == control_master::no)
        return;
    const std::string path = *cfg_.control_path;
    int error = 0;
    const int fd = mux::listen_control_path(path, error);
    if (fd < 0) {
        if (error == EEXIST || error == EADDRINUSE)
            log_.error("ControlSocket " + path + " already exists, disabling multiplexing");
        else if (error == ENAMETOOLONG)
            log_.error("ControlPath " + path + " too long, disabling multiplexing");
        else
            log_.error("ControlSocket " + path + ": " + std::strerror(error) + ", disabling multiplexing");
        return;
    }
    log_.debug("setting up multiplex master socket");
    mux_.reset(new mux_master_state());
    mux_->listener = std::make_unique<mux::master_listener>(io_, fd, path, log_);
    mux_->listener->on_client = [this](std::shared_ptr<mux::control_client> c) { accept_mux_client(c); };
    mux_->listener->start();
    mux_->persist = cfg_.control_persist.value_or(false);
    mux_->persist_timeout = cfg_.control_persist_timeout;
    if (!mux_->persist)
        return;
    mux_->persist_timer = std::make_unique<asio::steady_timer>(io_);
    const bool wants_session = cfg_.session_type.value_or(session_type::normal) != session_type::none;
    // With -W the forward goes through the master too (OpenSSH does not
    // start it in a master that persists): this process becomes its mux
    // client.
    const bool detach =
        !cfg_.fork_after_authentication.value_or(false) && (wants_session || cfg_.stdio_forward_host.has_value());
    // The master goes to the background in any case (the -f of
    // on_authenticated() is done here, with the daemon's stdio).
    cfg_.fork_after_authentication = false;
    // As OpenSSH's control_persist_detach(): the child is the master and
    // continues; this process becomes a mux client of it for its session
    // (or, with -f or nothing to run, just leaves).
    const pid_t pid = fork();
    if (pid < 0) {
        log_.error(std::string("fork: ") + std::strerror(errno));
        return;
    }
    if (pid > 0 && !detach)
        _exit(0);
    if (pid > 0) {
        log_.debug2("control_persist_detach: background process is " + std::to_string(pid));
        // Nothing of the connection is ours any more: no disconnect, no
        // unlink; leave at once with the passenger's status.
        mux::control_socket sock = mux::control_socket::connect_to(path);
        std::optional<int> status;
        if (sock.valid())
            status = run_passenger(std::move(sock), inv_);
        if (!status)
            log_.fatal("Failed to connect to new control master");
        std::fflush(stdout);
        std::fflush(stderr);
        _exit(status.value_or(255));
    }
    io_.notify_fork(asio::io_context::fork_child);
    setsid();
    stdio_to_null();
    cfg_.session_type = session_type::none;
    cfg_.stdio_forward_host.reset();
    cfg_.stdin_null = true;
    arm_persist_timer();
}

void ssh_client::accept_mux_client(const std::shared_ptr<mux::control_client>& c)
{
    const std::uint32_t id = c->id();
    log_.debug2("mux_master_control_cb: accepted mux client " + std::to_string(id));
    mux_->peers[id].control = c;
    if (mux_->persist_timer)
        mux_->persist_timer->cancel();
    c->on_request = [this, id](const mux::message& m, mux::passed_fds fds) { on_mux_request(id, m, std::move(fds)); };
    c->on_closed = [this, id] {
        auto it = mux_->peers.find(id);
        if (it == mux_->peers.end())
            return;
        it->second.control_closed = true;
        // The client is gone: so is its session (OpenSSH's
        // mux_master_control_cleanup_cb).
        if (it->second.session && !it->second.session_done)
            it->second.session->close_channel();
        if (it->second.stdio && !it->second.session_done)
            it->second.stdio->abandon();
        mux_peer_done(id);
    };
    c->start();
}

void ssh_client::on_mux_request(std::uint32_t peer, const mux::message& m, mux::passed_fds fds)
{
    auto& control = mux_->peers[peer].control;
    auto fail = [&](std::uint32_t rid, const std::string& why) {
        control->send(mux::error_reply{mux::msg::failure, rid, why});
    };
    if (const auto* s = std::get_if<mux::new_session>(&m)) {
        open_mux_session(peer, *s, std::move(fds));
    } else if (const auto* r = std::get_if<mux::simple_request>(&m)) {
        switch (r->type) {
        case mux::msg::alive_check:
            control->send(mux::alive{r->request_id, static_cast<std::uint32_t>(::getpid())});
            break;
        case mux::msg::terminate: {
            if (!mux_permitted("Terminate shared connection to " + host_ + "? ", "terminate request")) {
                control->send(mux::error_reply{mux::msg::permission_denied, r->request_id, "Permission denied"});
                break;
            }
            // As OpenSSH: OK, then the master quits at once, sessions and all.
            log_.debug2("mux: terminate request from mux client " + std::to_string(peer));
            control->send_now(mux::status_reply{mux::msg::ok, r->request_id});
            finish(255);
            break;
        }
        case mux::msg::stop_listening:
            if (!mux_permitted("Disable further multiplexing on shared connection to " + host_ + "? ",
                               "stop listen")) {
                control->send(mux::error_reply{mux::msg::permission_denied, r->request_id, "Permission denied"});
                break;
            }
            if (mux_->listener)
                mux_->listener->stop();
            // Under ControlPersist the master then ends with its last session.
            if (mux_->persist)
                mux_->exit_when_idle = true;
            control->send(mux::status_reply{mux::msg::ok, r->request_id});
            break;
        default: fail(r->request_id, "proxy mode (MUX_C_PROXY) is not supported yet"); break;
        }
    } else if (const auto* f = std::get_if<mux::forward_request>(&m)) {
        if (f->type == mux::msg::open_fwd)
            mux_open_forward(peer, *f);
        else
            mux_close_forward(peer, *f);
    } else if (const auto* w = std::get_if<mux::stdio_forward>(&m)) {
        open_mux_stdio(peer, *w, std::move(fds));
    } else {
        log_.error("mux: unexpected message 0x" + std::to_string(static_cast<std::uint32_t>(mux::type_of(m))) +
                   " from mux client");
        control->close();
    }
}

void ssh_client::open_mux_session(std::uint32_t peer_id, const mux::new_session& req, mux::passed_fds fds)
{
    auto& peer = mux_->peers[peer_id];
    auto control = peer.control;
    if (peer.session || peer.stdio) {
        control->send(mux::error_reply{mux::msg::failure, req.request_id, "Multiple sessions not supported"});
        return;
    }
    if (!mux_permitted("Allow shared connection to " + host_ + "? ", "session")) {
        control->send(mux::error_reply{mux::msg::permission_denied, req.request_id, "Permission denied"});
        return; // the descriptors close with `fds`
    }
    log_.debug2("mux: new session: tty " + std::to_string(req.want_tty) + ", subsys " + std::to_string(req.subsystem) +
                ", term \"" + req.term + "\", cmd \"" + req.command + "\", env " + std::to_string(req.env.size()));
    session_params sp;
    sp.kind = req.subsystem ? session_kind::subsystem : req.command.empty() ? session_kind::shell : session_kind::exec;
    sp.command = req.command;
    sp.want_tty = req.want_tty;
    const std::vector<int> fd = fds.release();
    sp.stdin_fd = fd[0];
    sp.stdout_fd = fd[1];
    sp.stderr_fd = fd[2];
    sp.owns_fds = true;
    if (req.want_tty) {
        sp.term = req.term;
        if (auto sz = query_terminal_size(sp.stdin_fd))
            sp.size = *sz;
        sp.modes = encode_local_terminal_modes(sp.stdin_fd);
    }
    sp.escape_char = req.escape_char == mux::no_escape_char ? -1 : static_cast<int>(req.escape_char & 0xff);
    // The client's variables pass the master's SendEnv; then its SetEnv.
    for (const auto& e : req.env) {
        const auto eq = e.find('=');
        if (eq != std::string::npos && send_env_permitted(e.substr(0, eq), cfg_.send_env))
            sp.env.emplace_back(e.substr(0, eq), e.substr(eq + 1));
    }
    for (const auto& s : cfg_.set_env)
        if (auto eq = s.find('='); eq != std::string::npos)
            sp.env.emplace_back(s.substr(0, eq), s.substr(eq + 1));
    sp.host = host_;
    if (req.want_agent) {
        if (std::string agent = agent_forwarding_socket(cfg_); !agent.empty()) {
            agent_forwards_->enable(std::move(agent), agent_binding_of());
            sp.forward_agent = true;
        }
    }
    const int err_fd = sp.stderr_fd;
    auto s = std::make_shared<client_session>(std::move(sp), log_);
    peer.session = s;
    const std::uint32_t request_id = req.request_id;
    s->on_opened = [peer_id, control, request_id](bool opened) {
        if (opened)
            control->send(mux::session_opened{request_id, peer_id});
        else
            control->send(mux::error_reply{mux::msg::failure, request_id, "Session open refused by peer"});
        control->resume();
    };
    s->on_tty_failed = [control, peer_id] { control->send(mux::tty_alloc_fail{peer_id}); };
    s->on_error = [err_fd](const std::string& text) {
        const std::string line = text + "\r\n";
        (void)!::write(err_fd, line.data(), line.size());
    };
    std::weak_ptr<client_session> weak = s;
    s->on_escape = [weak, err_fd](escape_action a) {
        auto self = weak.lock();
        if (!self)
            return;
        if (a == escape_action::disconnect) {
            self->close_channel();
            return;
        }
        const std::string text = "This escape is not supported for multiplexing connections\r\n";
        (void)!::write(err_fd, text.data(), text.size());
    };
    s->on_done = [this, peer_id, control](int) {
        auto it = mux_->peers.find(peer_id);
        if (it == mux_->peers.end())
            return;
        it->second.session_done = true;
        // The exit status when the server sent one (none for a signal:
        // the client then exits 255, as with OpenSSH's master).
        if (auto st = it->second.session->exit_status())
            control->send(mux::exit_message{peer_id, static_cast<std::uint32_t>(*st)});
        control->close_after_output();
        mux_peer_done(peer_id);
    };
    auto id = conn_->open("session");
    if (!id) {
        control->send(mux::error_reply{mux::msg::failure, request_id, "cannot open a session channel"});
        peer.session.reset();
        return;
    }
    control->pause();
    runner_->attach(*id, s);
    driver_->flush();
}

// ControlMaster ask and autoask: each request confirmed through askpass
// first, as OpenSSH's ask_permission() (ssh/prompt/prompt.hpp says when it can
// ask at all; when it cannot, the answer is no).
bool ssh_client::mux_permitted(const std::string& prompt, const char* what)
{
    const auto cm = cfg_.control_master.value_or(control_master::no);
    if (cm != control_master::ask && cm != control_master::autoask)
        return true;
    if (ask_permission(prompt))
        return true;
    log_.debug2(std::string("mux: ") + what + " refused by user");
    return false;
}

void ssh_client::mux_peer_done(std::uint32_t peer_id)
{
    auto it = mux_->peers.find(peer_id);
    if (it == mux_->peers.end())
        return;
    if (!it->second.control_closed || it->second.busy())
        return;
    // Not now: this may run inside the session's own callbacks.
    asio::post(io_, [this, peer_id] {
        if (!mux_)
            return;
        mux_->peers.erase(peer_id);
        if (finished_ || mux_busy())
            return;
        if (session_closed_ || mux_->exit_when_idle)
            finish_when_channels_closed();
        else
            arm_persist_timer();
    });
}

bool ssh_client::mux_busy() const
{
    return mux_ && !mux_->peers.empty();
}

void ssh_client::mux_window_changed()
{
    if (!mux_)
        return;
    for (auto& [id, p] : mux_->peers)
        if (p.session && !p.session_done)
            p.session->window_changed();
}

// ControlPersist with a time: the master leaves once it has had no mux
// client and no channel for that long.
void ssh_client::arm_persist_timer()
{
    if (!mux_ || !mux_->persist_timer || mux_->persist_timeout <= 0 || finished_ || mux_busy())
        return;
    mux_->persist_timer->expires_after(std::chrono::seconds(mux_->persist_timeout));
    mux_->persist_timer->async_wait([this](const boost::system::error_code& ec) {
        if (ec || finished_ || mux_busy())
            return;
        if (conn_->channel_count() > 0) {
            // A forwarded connection is still open: idle time starts again.
            arm_persist_timer();
            return;
        }
        log_.debug("ControlPersist timeout expired");
        finish(0);
    });
}

void ssh_client::stop_mux()
{
    if (!mux_)
        return;
    if (mux_->persist_timer)
        mux_->persist_timer->cancel();
    if (mux_->listener)
        mux_->listener->stop();
    auto peers = std::move(mux_->peers);
    mux_->peers.clear();
    for (auto& [id, p] : peers)
        if (p.control)
            p.control->close();
}

} // namespace longhaul::detail
