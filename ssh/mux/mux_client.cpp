#include "ssh/mux/mux_client.hpp"

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <unistd.h>

namespace longhaul::mux {

namespace {

std::string hex32(std::uint32_t v)
{
    char b[16];
    std::snprintf(b, sizeof b, "0x%08x", static_cast<unsigned>(v));
    return b;
}

// Signal state of the waiting passenger. Static because signal handlers
// can reach nothing else; only run_session() installs the handlers.
volatile std::sig_atomic_t g_terminating = 0;
volatile std::sig_atomic_t g_master_pid = 0;

extern "C" void on_terminate_signal(int sig)
{
    g_terminating = sig;
}

// OpenSSH's mux client does not send window changes itself: it passes
// SIGWINCH on to the master, which reads every session's terminal size.
extern "C" void on_winch(int sig)
{
    if (g_master_pid > 0)
        ::kill(static_cast<pid_t>(g_master_pid), sig);
}

void install(int sig, void (*handler)(int))
{
    struct sigaction sa {};
    sa.sa_handler = handler;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = 0; // no SA_RESTART: a blocked read returns EINTR
    ::sigaction(sig, &sa, nullptr);
}

} // namespace

std::optional<message> mux_client::reply(const char* what)
{
    auto r = sock_.receive();
    if (!r) {
        if (r.error() == errc::connection_closed || r.error() == errc::io_error)
            log_.error(std::string(what) + ": read from master failed: " +
                       (sock_.error() != 0 ? std::strerror(sock_.error()) : "Broken pipe"));
        else
            log_.error(std::string(what) + ": master sent a malformed message (" + std::string(to_string(r.error())) +
                       ")");
        return std::nullopt;
    }
    return std::move(*r);
}

bool mux_client::check_id(std::uint32_t id, const char* what)
{
    if (id == request_id_)
        return true;
    log_.fatal(std::string(what) + ": out of sequence reply: my id " + std::to_string(request_id_) + " theirs " +
               std::to_string(id));
    return false;
}

bool mux_client::hello_exchange()
{
    if (!sock_.send(hello{})) {
        log_.error(std::string("mux_client_hello_exchange: write packet: ") + std::strerror(sock_.error()));
        return false;
    }
    auto m = reply("mux_client_hello_exchange");
    if (!m)
        return false;
    const auto* h = std::get_if<hello>(&*m);
    if (h == nullptr) {
        log_.error("mux_client_hello_exchange: expected HELLO (1) got " +
                   std::to_string(static_cast<std::uint32_t>(type_of(*m))));
        return false;
    }
    if (h->version != protocol_version) {
        log_.error("Unsupported multiplexing protocol version " + std::to_string(h->version) + " (expected " +
                   std::to_string(protocol_version) + ")");
        return false;
    }
    log_.debug2("mux_client_hello_exchange: master version " + std::to_string(h->version));
    for (const auto& [name, value] : h->extensions)
        log_.debug2("mux_client_hello_exchange: Unrecognised master extension \"" + name + "\"");
    return true;
}

std::optional<std::uint32_t> mux_client::alive_check()
{
    const char* fn = "mux_client_request_alive";
    if (!sock_.send(simple_request{msg::alive_check, request_id_})) {
        log_.fatal(std::string(fn) + ": write packet: " + std::strerror(sock_.error()));
        return std::nullopt;
    }
    auto m = reply(fn);
    if (!m)
        return std::nullopt;
    if (const auto* e = std::get_if<error_reply>(&*m)) {
        log_.fatal(std::string(fn) + ": master returned error: " + e->reason);
        return std::nullopt;
    }
    const auto* a = std::get_if<alive>(&*m);
    if (a == nullptr) {
        log_.fatal(std::string(fn) + ": unexpected response from master " +
                   hex32(static_cast<std::uint32_t>(type_of(*m))));
        return std::nullopt;
    }
    if (!check_id(a->request_id, fn))
        return std::nullopt;
    ++request_id_;
    master_pid_ = a->pid;
    log_.debug3(std::string(fn) + ": done pid = " + std::to_string(a->pid));
    return a->pid;
}

bool mux_client::terminate()
{
    const char* fn = "mux_client_request_terminate";
    if (!sock_.send(simple_request{msg::terminate, request_id_})) {
        log_.fatal(std::string(fn) + ": write packet: " + std::strerror(sock_.error()));
        return false;
    }
    auto r = sock_.receive();
    if (!r) {
        // The master may exit before its answer is written: that is success.
        if (r.error() == errc::connection_closed)
            return true;
        log_.fatal(std::string(fn) + ": read from master failed: " + std::strerror(sock_.error()));
        return false;
    }
    const message& m = *r;
    if (const auto* ok = std::get_if<status_reply>(&m); ok != nullptr && ok->type == msg::ok) {
        if (!check_id(ok->request_id, fn))
            return false;
        ++request_id_;
        return true;
    }
    if (const auto* e = std::get_if<error_reply>(&m)) {
        if (!check_id(e->request_id, fn))
            return false;
        log_.fatal(e->type == msg::permission_denied ? "Master refused termination request: " + e->reason
                                                     : std::string(fn) + ": termination request failed: " + e->reason);
        return false;
    }
    log_.fatal(std::string(fn) + ": unexpected response from master " + hex32(static_cast<std::uint32_t>(type_of(m))));
    return false;
}

bool mux_client::stop_listening()
{
    const char* fn = "mux_client_request_stop_listening";
    if (!sock_.send(simple_request{msg::stop_listening, request_id_})) {
        log_.fatal(std::string(fn) + ": write packet: " + std::strerror(sock_.error()));
        return false;
    }
    auto m = reply(fn);
    if (!m)
        return false;
    if (const auto* ok = std::get_if<status_reply>(&*m); ok != nullptr && ok->type == msg::ok) {
        if (!check_id(ok->request_id, fn))
            return false;
        ++request_id_;
        return true;
    }
    if (const auto* e = std::get_if<error_reply>(&*m)) {
        if (!check_id(e->request_id, fn))
            return false;
        log_.fatal(e->type == msg::permission_denied ? "Master refused stop listening request: " + e->reason
                                                     : std::string(fn) + ": stop listening request failed: " + e->reason);
        return false;
    }
    log_.fatal(std::string(fn) + ": unexpected response from master " + hex32(static_cast<std::uint32_t>(type_of(*m))));
    return false;
}

bool mux_client::send_fds(std::initializer_list<int> fds, const char* fn)
{
    for (int fd : fds) {
        if (!sock_.send_fd(fd)) {
            log_.fatal(std::string(fn) + ": send fds failed: " + std::strerror(sock_.error()));
            return false;
        }
    }
    return true;
}

void mux_client::catch_signals()
{
    g_terminating = 0;
    g_master_pid = static_cast<std::sig_atomic_t>(master_pid_);
    install(SIGHUP, on_terminate_signal);
    install(SIGINT, on_terminate_signal);
    install(SIGTERM, on_terminate_signal);
    install(SIGWINCH, on_winch);
    sock_.interrupt_on(&g_terminating);
}

bool mux_client::forward(forward_request request, const std::string& description, bool print_port)
{
    const char* fn = "mux_client_forward";
    const bool cancel = request.type == msg::close_fwd;
    log_.debug(std::string("Requesting ") + (cancel ? "cancellation of " : "forwarding of ") + description);
    request.request_id = request_id_;
    if (!sock_.send(request)) {
        log_.fatal(std::string(fn) + ": write packet: " + std::strerror(sock_.error()));
        return false;
    }
    auto r = sock_.receive();
    if (!r) {
        if (r.error() != errc::connection_closed)
            log_.error(std::string(fn) + ": master sent a malformed message (" + std::string(to_string(r.error())) +
                       ")");
        return false;
    }
    const message& m = *r;
    if (const auto* ok = std::get_if<status_reply>(&m); ok != nullptr && ok->type == msg::ok) {
        if (!check_id(ok->request_id, fn))
            return false;
    } else if (const auto* p = std::get_if<remote_port>(&m)) {
        if (!check_id(p->request_id, fn))
            return false;
        if (cancel) {
            log_.fatal(std::string(fn) + ": got MUX_S_REMOTE_PORT for cancel");
            return false;
        }
        log_.verbose("Allocated port " + std::to_string(p->port) + " for remote forward to " +
                     (request.connect_host) + ":" + std::to_string(static_cast<int>(request.connect_port)));
        if (print_port) {
            std::fprintf(stdout, "%u\n", static_cast<unsigned>(p->port));
            std::fflush(stdout);
        }
    } else if (const auto* e = std::get_if<error_reply>(&m)) {
        if (!check_id(e->request_id, fn))
            return false;
        if (e->type == msg::permission_denied)
            log_.error("Master refused forwarding request: " + e->reason);
        else
            log_.error(std::string(fn) + ": forwarding request failed: " + e->reason);
        return false;
    } else {
        log_.fatal(std::string(fn) + ": unexpected response from master " + hex32(static_cast<std::uint32_t>(type_of(m))));
        return false;
    }
    ++request_id_;
    return true;
}

std::optional<int> mux_client::run_stdio_forward(const std::string& host, std::uint32_t port)
{
    const char* fn = "mux_client_request_stdio_fwd";
    if (!alive_check()) {
        log_.error(std::string(fn) + ": master alive request failed");
        return std::nullopt;
    }
    stdio_forward request;
    request.request_id = request_id_;
    request.host = host;
    request.port = port;
    if (!sock_.send(request)) {
        log_.fatal(std::string(fn) + ": write packet: " + std::strerror(sock_.error()));
        return 255;
    }
    if (!send_fds({STDIN_FILENO, STDOUT_FILENO}, fn))
        return 255;
    log_.debug3(std::string(fn) + ": stdio forward request sent");
    auto m = reply(fn);
    if (!m)
        return std::nullopt;
    if (const auto* o = std::get_if<session_opened>(&*m)) {
        if (!check_id(o->request_id, fn))
            return 255;
        log_.debug(std::string(fn) + ": master session id: " + std::to_string(o->session_id));
    } else if (const auto* e = std::get_if<error_reply>(&*m)) {
        if (!check_id(e->request_id, fn))
            return 255;
        log_.fatal(e->type == msg::permission_denied ? "Master refused stdio forwarding request: " + e->reason
                                                     : "Stdio forwarding request failed: " + e->reason);
        return 255;
    } else {
        log_.error(std::string(fn) + ": unexpected response from master " +
                   hex32(static_cast<std::uint32_t>(type_of(*m))));
        return std::nullopt;
    }
    ++request_id_;
    catch_signals();
    // The master closes our connection when the forward is over; it sends
    // nothing else.
    auto r = sock_.receive();
    sock_ = control_socket();
    if (!r && (r.error() == errc::connection_closed || g_terminating != 0))
        return 0;
    if (!r) {
        log_.fatal(std::string(fn) + ": mux_client_read_packet: " + std::strerror(EIO));
        return 255;
    }
    log_.fatal(std::string(fn) + ": master returned unexpected message " +
               std::to_string(static_cast<std::uint32_t>(type_of(*r))));
    return 255;
}

std::optional<int> mux_client::run_session(new_session request, const session_hooks& hooks)
{
    const char* fn = "mux_client_request_session";
    // As OpenSSH: the master's pid first, for relaying SIGWINCH.
    if (!alive_check()) {
        log_.error(std::string(fn) + ": master alive request failed");
        return std::nullopt;
    }
    request.request_id = request_id_;
    if (!sock_.send(request)) {
        log_.error(std::string(fn) + ": write packet: " + std::strerror(sock_.error()));
        return std::nullopt;
    }
    if (!send_fds({STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}, fn))
        return 255;
    log_.debug3(std::string(fn) + ": session request sent");
    auto m = reply(fn);
    if (!m)
        return std::nullopt;
    std::uint32_t session_id = 0;
    if (const auto* o = std::get_if<session_opened>(&*m)) {
        if (!check_id(o->request_id, fn))
            return 255;
        session_id = o->session_id;
        log_.debug(std::string(fn) + ": master session id: " + std::to_string(session_id));
    } else if (const auto* e = std::get_if<error_reply>(&*m)) {
        if (e->type == msg::permission_denied)
            log_.error("Master refused session request: " + e->reason);
        else
            log_.error(std::string(fn) + ": session request failed: " + e->reason);
        return std::nullopt;
    } else {
        log_.error(std::string(fn) + ": unexpected response from master " +
                   hex32(static_cast<std::uint32_t>(type_of(*m))));
        return std::nullopt;
    }
    ++request_id_;

    catch_signals();
    bool raw = request.want_tty;
    if (raw && hooks.set_raw)
        hooks.set_raw(true);

    // Until the master closes the socket; it says the exit status first.
    std::optional<std::uint32_t> status;
    for (;;) {
        auto r = sock_.receive();
        if (!r)
            break;
        if (const auto* t = std::get_if<tty_alloc_fail>(&*r)) {
            if (t->session_id != session_id) {
                log_.fatal(std::string(fn) + ": tty alloc fail on unknown session: my id " +
                           std::to_string(session_id) + " theirs " + std::to_string(t->session_id));
                status.reset();
                break;
            }
            if (raw && hooks.set_raw)
                hooks.set_raw(false);
            raw = false;
            continue;
        }
        if (const auto* x = std::get_if<exit_message>(&*r)) {
            if (x->session_id != session_id) {
                log_.fatal(std::string(fn) + ": exit on unknown session: my id " + std::to_string(session_id) +
                           " theirs " + std::to_string(x->session_id));
                status.reset();
                break;
            }
            if (status) {
                log_.fatal(std::string(fn) + ": exitval sent twice");
                status.reset();
                break;
            }
            status = x->status;
            continue;
        }
        log_.fatal(std::string(fn) + ": unexpected response from master " +
                   hex32(static_cast<std::uint32_t>(type_of(*r))));
        status.reset();
        break;
    }
    sock_ = control_socket();
    if (raw && hooks.set_raw)
        hooks.set_raw(false);
    int exit_status = 255;
    if (g_terminating != 0)
        log_.debug2(std::string("Exiting on signal: ") + strsignal(g_terminating));
    else if (!status)
        log_.debug2("Control master terminated unexpectedly");
    else {
        exit_status = static_cast<int>(*status);
        log_.debug2("Received exit status from master " + std::to_string(exit_status));
    }
    if (!hooks.closed_message.empty() && log_.enabled(log_level::info))
        std::fprintf(stderr, "%s\r\n", hooks.closed_message.c_str());
    return exit_status;
}

} // namespace longhaul::mux
