#include "sshd/server_connection.hpp"

#include "common/physical_memory.hpp"
#include "common/socket_tos.hpp"
#include "common/text.hpp"
#include "sshd/auth_info.hpp"
#include "sshd/chroot_directory.hpp"
#include "sshd/connection_log.hpp"
#include "sshd/detail/server_connection.hpp"
#include "sshd/privileges.hpp"
#include "sshd/sshd_algorithms.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstring>

namespace longhaul::detail {

namespace {

// Queued output bounds per connection (see run()).
constexpr std::size_t output_pause_above = 8 * 1024 * 1024;
constexpr std::size_t output_resume_below = 4 * 1024 * 1024;
constexpr std::size_t output_hard_cap = 32 * 1024 * 1024;

} // namespace

transport_config server_connection::make_transport_config()
{
    transport_config tc;
    tc.role = transport_role::server;
    tc.software_version = "Longhaul_0.1";
    if (!cfg_.version_addendum.empty() && cfg_.version_addendum != "none")
        tc.version_comments = cfg_.version_addendum;
    tc.kex_algorithms = cfg_.kex_algorithms;
    tc.host_key_algorithms = cfg_.host_key_algorithms;
    tc.ciphers = cfg_.ciphers;
    tc.macs = cfg_.macs;
    tc.compression = cfg_.compression == compression_mode::delayed ? "none,zlib@openssh.com" : "none";
    tc.host_keys = ctx_.host_keys;
    // With keys only the agent holds, every signature goes through this
    // process's signer, so that the core offers them all, in one list.
    if (!ctx_.agent_host_keys.empty()) {
        for (const auto& k : ctx_.host_keys)
            tc.host_public_keys.push_back(k->public_part());
        tc.host_public_keys.insert(tc.host_public_keys.end(), ctx_.agent_host_keys.begin(),
                                   ctx_.agent_host_keys.end());
        tc.host_keys.clear();
        tc.host_key_signer = [this](const public_key& key, std::string_view alg, byte_span data) {
            return sign_with_host_key(key, alg, data);
        };
    }
    // Certificates are offered only when HostCertificate gave some, next
    // to the keys they certify (OpenSSH's order) and as HostKeyAlgorithms
    // allows.
    if (!ctx_.host_certificates.empty() && !cfg_.host_certificate_algorithms.empty()) {
        tc.host_certificates = ctx_.host_certificates;
        tc.host_key_algorithms = cfg_.host_certificate_algorithms + "," + cfg_.host_key_algorithms;
    }
    if (ctx_.moduli)
        tc.gex_groups = make_gex_group_provider(ctx_.moduli, rng_, [this](const log_message& m) {
            log_.log(to_log_level(m.level), m.text);
        });
    tc.rekey_limit_bytes = cfg_.rekey_limit;
    tc.rekey_interval = std::chrono::seconds(cfg_.rekey_interval);
    tc.crypto_threads = cfg_.crypto_threads;
    tc.server_sig_algs = sshd_server_sig_algs(cfg_.pubkey_accepted_algorithms);
    // What OpenSSH's sshd also announces: we verify host-bound publickey requests.
    tc.extra_extensions = {{"publickey-hostbound@openssh.com", "0"}};
    return tc;
}

int server_connection::run()
{
    log_.verbose("Connection from " + facts_.remote_address + " port " + std::to_string(facts_.remote_port) + " on " +
                 facts_.local_address + " port " + std::to_string(facts_.local_port) + " rdomain \"\"");
    // Everything before authentication happens in the sandboxed child;
    // this process answers it as the monitor, then carries on the
    // connection the child hands over.
    if (!run_preauth())
        return 0;
    // The user's RekeyLimit (a Match block's), as OpenSSH's
    // do_authenticated() sets it: the interval counts from here.
    transport_config tc = make_transport_config();
    tc.rekey_limit_bytes = policy_.user_config().rekey_limit;
    tc.rekey_interval = std::chrono::seconds(policy_.user_config().rekey_interval);
    core_ = std::make_unique<transport>(std::move(tc), rng_, std::chrono::steady_clock::now(), std::move(*handoff_));
    handoff_.reset();
    driver_ = std::make_unique<transport_driver>(io_, read_fd_, write_fd_, *core_);
    layer_ = std::make_unique<session_layer>(*core_, session_role::server);
    layer_->resume_authenticated();
    // A client that sends requests (global requests, channel requests) and
    // never reads would grow this process without bound. Channel sources
    // already stop at the runner's high-water mark (4 MiB at most), so
    // only such a client gets past twice that: stop reading from it until
    // the queue is back at the mark, and drop it if our own output ever
    // reaches the hard cap.
    driver_->limit_output(output_pause_above, output_resume_below, output_hard_cap);
    driver_->start([this](const transport_event& ev) { on_transport_event(ev); },
                   [this](std::error_code ec) {
                       if (ec == std::error_code(ENOBUFS, std::system_category()))
                           log_.info("Disconnecting " + facts_.remote_address + " port " +
                                     std::to_string(facts_.remote_port) +
                                     ": output buffer over its limit, the client is not reading");
                       done_ = true;
                       io_.stop();
                   });
    server_auth_event ev;
    ev.type = server_auth_event_type::authenticated;
    ev.user = mon_.user;
    ev.methods = mon_.successes;
    on_authenticated(ev);
    // What the child had read beyond the SUCCESS.
    if (!done_)
        driver_->process_input();
    io_.run();
    if (runner_)
        runner_->stop();
    if (sessions_)
        sessions_->hang_up();
    // ExposeAuthInfo's file goes with the connection (OpenSSH's
    // do_cleanup); this process made it, as the user.
    if (!session_env_.auth_info_file.empty())
        ::unlink(session_env_.auth_info_file.c_str());
    if (pam_session_open_) {
        pam_->close_session();
        pam_->delete_credentials();
    }
    return 0;
}

void server_connection::notify_startup(char c)
{
    if (startup_fd_ < 0)
        return;
    (void)!::write(startup_fd_, &c, 1);
    if (c == 'a') {
        ::close(startup_fd_);
        startup_fd_ = -1;
    }
}

void server_connection::on_transport_event(const transport_event& ev)
{
    on_session_event(layer_->handle(ev, std::chrono::steady_clock::now()));
    pump_session();
}

void server_connection::on_session_event(const session_event& e)
{
    switch (e.type) {
    case session_event_type::transport:
        if (e.transport->type == transport_event_type::peer_version)
            log_.debug("Remote protocol version " + core_->peer_identification().proto + ", remote software version " +
                       printable(core_->peer_identification().software));
        else if (e.transport->type == transport_event_type::disconnected)
            report_disconnect(*e.transport);
        break;
    case session_event_type::channel: runner_->dispatch(e.channel); break;
    default: break;
    }
}

void server_connection::pump_session()
{
    for (;;) {
        if (done_)
            return;
        const session_event e = layer_->poll(std::chrono::steady_clock::now());
        if (e.type == session_event_type::none)
            break;
        on_session_event(e);
    }
    driver_->flush();
}

void server_connection::report_disconnect(const transport_event& ev)
{
    log_disconnect(log_, facts_, ev, nullptr, authenticated_ ? &session_env_.user->name : nullptr);
}

// ---------------------------------------------------------------- after authentication

void server_connection::on_authenticated(const server_auth_event& ev)
{
    authenticated_ = true;
    notify_startup('a');
    // The session layer sent what it held (the SUCCESS) and told the
    // transport (compression, automatic rekeys) before this event.
    const auto& account = policy_.account();
    if (!account) {
        core_->disconnect(disconnect_reason::by_application, "internal error: no account");
        return;
    }
    session_env_.user = &*account;
    session_env_.config = &policy_.user_config();
    session_env_.facts = facts_;
    session_env_.log = &log_;
    // Every key's options apply (AuthenticationMethods publickey,publickey),
    // merged restrictively as OpenSSH's auth_activate_options() does; the
    // first key's are the primary ones.
    for (const auto& m : ev.methods) {
        if (!m.key_options)
            continue;
        auto options = std::static_pointer_cast<const authorized_key_match>(m.key_options);
        if (!session_env_.key) {
            session_env_.key = options;
            continue;
        }
        std::string error;
        auto merged = merge_key_options(*session_env_.key, *options, error);
        if (!merged) {
            log_.error("Inconsistent authentication options: " + error);
            core_->disconnect(disconnect_reason::by_application, "Inconsistent authentication options");
            return;
        }
        session_env_.key = std::make_shared<const authorized_key_match>(std::move(*merged));
    }
    if (!enter_user_session() || !prepare_session_settings())
        return;
    start_channels();
}

// What the sessions take from the user's settings once this process is
// the user, before any channel opens: ChannelTimeout's rules (OpenSSH's
// process_channel_timeouts) and ExposeAuthInfo's file, which OpenSSH's
// prepare_auth_info_file() also makes in the process that is already the
// user (a failure is logged and the sessions go without it, as there).
bool server_connection::prepare_session_settings()
{
    const server_config& c = *session_env_.config;
    auto rules = parse_channel_timeouts(c.channel_timeouts);
    if (!rules) {
        log_.error("fatal: process_channel_timeouts: internal error: bad ChannelTimeout");
        core_->disconnect(disconnect_reason::by_application, "internal error");
        return false;
    }
    session_env_.channel_timeouts = std::move(*rules);
    session_env_.set_qos = [this, interactive_tos = c.ipqos_interactive, bulk_tos = c.ipqos_bulk](bool interactive) {
        const auto r = set_socket_tos(read_fd_, interactive ? interactive_tos : bulk_tos);
        if (!r.done.empty())
            log_.debug3(r.done);
        if (r.error)
            log_.error(*r.error);
    };
    if (c.expose_auth_info) {
        system_random rng; // not rng_: fork copied its buffered bytes into the root parent
        std::string error;
        if (auto path = write_auth_info_file(mon_.auth_info, rng, error))
            session_env_.auth_info_file = std::move(*path);
        else
            log_.error("prepare_auth_info_file: " + error);
    }
    return true;
}

// For a user who is not root, a root parent stays for the session's
// lifetime, as OpenSSH's monitor does: it keeps the private host keys and
// signs the key re-exchanges of the connection, and closes the PAM
// session at the end; the connection continues in a child that drops the
// private keys and becomes the user. A root login (or an sshd not started
// as root) is served by this one process.
bool server_connection::enter_user_session()
{
    const user_account& user = *session_env_.user;
    // ChrootDirectory, from the user's Match-applied configuration. Only
    // root can chroot; OpenSSH then skips it silently, but serving the
    // session unconfined would give more than the administrator allowed:
    // refuse it, before any PAM session is opened.
    const std::string& chroot_value = session_env_.config->chroot_directory;
    const bool chrooted = chroot_requested(chroot_value);
    if (chrooted && geteuid() != 0) {
        log_.error("ChrootDirectory needs sshd to run as root: refusing the session of " + user.name);
        core_->disconnect(disconnect_reason::by_application, "ChrootDirectory needs sshd to run as root");
        return false;
    }
    if (cfg_.use_pam && pam_) {
        pam_->establish_credentials();
        if (int rc = pam_->open_session(); rc != 0)
            log_.error("pam_open_session(): " + pam_->strerror(rc));
        else
            pam_session_open_ = true;
        session_env_.pam_env = pam_->environment();
    }
    if (geteuid() != 0) {
        set_pty_source(); // serving our own user: nothing to switch
        return true;
    }
    if (user.uid != 0) {
        auto pair = privsep::make_monitor_socketpair();
        if (!pair) {
            log_.error(std::string("socketpair: ") + std::strerror(errno));
            core_->disconnect(disconnect_reason::by_application, "internal error");
            return false;
        }
        driver_->flush();
        pid_t pid = fork();
        if (pid < 0) {
            log_.error(std::string("fork: ") + std::strerror(errno));
            core_->disconnect(disconnect_reason::by_application, "fork failed");
            return false;
        }
        if (pid > 0) {
            // The parent never touches the connection again: the child owns it.
            // No unwinding either, so nothing here shuts the socket down.
            ::close(read_fd_);
            if (write_fd_ != read_fd_)
                ::close(write_fd_);
            ::close(pair->child_end);
            serve_postauth_monitor(pair->monitor_end, pid, user.uid, user.gid);
        }
        io_.notify_fork(asio::io_context::fork_child);
        ::close(pair->monitor_end);
        postauth_monitor_ = std::make_unique<privsep::monitor_channel>(pair->child_end);
        if (!core_->use_host_key_signer([this](const public_key& key, std::string_view alg, byte_span data) {
                return sign_through_monitor(key, alg, data);
            })) {
            log_.error("fatal: cannot hand the host keys to the monitor during a key exchange");
            _exit(255);
        }
        ctx_.host_keys.clear();
        host_key_agent_.forget();
        // The parent closes the PAM session and ends PAM; this copy of the
        // handle must do neither, or the session is closed twice (the
        // second time as the user).
        if (pam_)
            pam_->forget_after_fork();
        pam_session_open_ = false;
    }
    // The chroot happens here, in the process that becomes the user, after
    // initgroups (which reads /etc/group) and before setuid, as in OpenSSH's
    // do_setusercontext(); the root monitor forked above keeps the real
    // root. A root login has no monitor: this one process is chrooted.
    set_pty_source();
    bool chroot_failed = false;
    before_setuid_step chroot_step;
    if (chrooted) {
        chroot_step = [&](std::string& err) -> result<void> {
            chroot_failed = true;
            const home_lookup home_of = [](std::string_view name) -> std::optional<std::string> {
                auto other = lookup_user(std::string(name));
                return other ? std::optional<std::string>(other->home) : std::nullopt;
            };
            auto path = expand_chroot_directory(chroot_value, user, home_of, err);
            if (!path)
                return errc::invalid_argument;
            if (auto r = enter_chroot_directory(*path, err); !r)
                return r;
            chroot_failed = false;
            log_.verbose("Changed root directory to \"" + *path + "\"");
            session_env_.chrooted = true;
            return {};
        };
    }
    std::string error;
    if (!become_user(user, error, chroot_step)) {
        if (chroot_failed)
            log_.error("fatal: " + error);
        else
            log_.error("fatal: setreuid/setuid failed for " + user.name + ": " + error);
        // A root login runs in this one process, which also holds the PAM
        // session: end the connection the ordinary way so it is closed.
        if (chroot_failed && user.uid == 0) {
            core_->disconnect(disconnect_reason::by_application, "chroot failed");
            return false;
        }
        _exit(255);
    }
    return true;
}

server_connection::~server_connection()
{
    remote_forwards_.reset();
    direct_forwards_.reset();
    if (tunnel_forwards_)
        tunnel_forwards_->stop_all();
    tunnel_forwards_.reset();
    sessions_.reset();
    x11_.reset();
    agent_.reset();
    runner_.reset();
}

void server_connection::start_channels()
{
    connection_config cc;
    const server_config& uc = policy_.user_config();
    cc.window = window_limits(uc.channel_window_max, uc.connection_window_max, physical_memory_bytes());
    if (!session_env_.channel_timeouts.empty())
        cc.idle_timeout_for = [this](std::string_view type) -> std::chrono::milliseconds {
            return channel_timeout_for(session_env_.channel_timeouts, channel_timeout_type(type));
        };
    conn_ = &layer_->open_connection(cc);
    runner_ = std::make_unique<connection_runner>(io_, *driver_, *conn_);
    runner_->set_logger(&log_);
    agent_ = std::make_unique<agent_forwarding>(io_, *runner_, session_env_);
    session_env_.agent = agent_.get();
    x11_ = std::make_unique<x11_forwarding>(io_, *runner_, session_env_);
    session_env_.x11 = x11_.get();
    // What the client may open and ask: sessions, and (issue 11) the
    // forwarding kinds, each an entry of its own; the rest is refused.
    sessions_ = std::make_unique<session_channels>(io_, *runner_, session_env_);
    sessions_->on_released = [this] { last_busy_ = std::chrono::steady_clock::now(); };
    sessions_->register_in(layer_->channel_types());
    direct_forwards_ = std::make_unique<direct_forwarding>(*runner_, session_env_);
    direct_forwards_->register_in(layer_->channel_types());
    tunnel_forwards_ = std::make_unique<tunnel_forwarding>(*runner_, session_env_);
    tunnel_forwards_->register_in(layer_->channel_types());
    layer_->channel_types().set_unknown([this](connection& conn, channel_id id, std::string_view type, byte_span) {
        refuse_unknown_channel(conn, id, type);
    });
    remote_forwards_ = std::make_unique<remote_forwarding>(io_, *runner_, session_env_);
    remote_forwards_->register_in(layer_->global_requests());
    runner_->on_idle_timeout = [this](channel_id id) { close_idle_channel(id); };
    runner_->start_timers();
    signals_.add(SIGCHLD);
    on_sigchld_ = [this](const boost::system::error_code& ec, int) {
        if (ec)
            return;
        reap_children();
        signals_.async_wait(on_sigchld_);
    };
    signals_.async_wait(on_sigchld_);
    // A child may have exited before the handler existed.
    reap_children();
    arm_client_alive();
    last_busy_ = std::chrono::steady_clock::now();
    arm_unused_timeout();
    driver_->flush();
}

void server_connection::refuse_unknown_channel(connection& conn, channel_id id, std::string_view type)
{
    log_.verbose("refused channel open of type " + printable(type) + ": not supported yet");
    conn.reject(id, open_failure_reason::administratively_prohibited, "open failed");
}

// ChannelTimeout: a channel that carried no data for its type's timeout is
// closed as OpenSSH's channel_force_close() closes it: EOF and CLOSE to the
// client, with no message of its own, what either side had queued dropped.
// Every channel sshd serves is a session or a socket_channel (the
// forwarding kinds, agent and X11 connections), or a tunnel's, which has
// nothing queued to drop: it is closed as it stands, and its device with
// the client's CLOSE (tun_channel::on_close).
void server_connection::close_idle_channel(channel_id id)
{
    const auto seconds = std::chrono::duration_cast<std::chrono::seconds>(conn_->idle_timeout(id)).count();
    log_.verbose("channel " + std::to_string(id) + ": closing after " + std::to_string(seconds) +
                 " seconds of inactivity");
    channel_handler* h = runner_->handler(id);
    if (auto* session = dynamic_cast<server_session*>(h)) {
        session->abandon();
    } else if (auto* forwarded = dynamic_cast<socket_channel*>(h)) {
        forwarded->abandon();
    } else {
        // Nothing of ours behind it: the channel itself is all there is to close.
        conn_->send_eof(id);
        conn_->close(id);
    }
    driver_->flush();
}

void server_connection::reap_children()
{
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0)
        sessions_->child_exited(pid, status);
}

// ClientAliveInterval: a probe (keepalive@openssh.com, wanting a reply)
// once the client has been silent for the interval; ClientAliveCountMax of
// them unanswered end the connection (alive_check.hpp: OpenSSH's count).
void server_connection::arm_client_alive()
{
    const int interval = session_env_.config->client_alive_interval;
    if (interval <= 0)
        return;
    if (!alive_)
        alive_.emplace(std::chrono::seconds(interval), session_env_.config->client_alive_count_max);
    alive_timer_.expires_at(alive_next_);
    alive_timer_.async_wait([this](const boost::system::error_code& ec) {
        if (ec || done_)
            return;
        const auto step = alive_->on_timer(driver_->last_input(), std::chrono::steady_clock::now());
        if (step.what == alive_check::action::give_up) {
            log_.info("Timeout, client not responding from user " + session_env_.user->name + " " +
                      facts_.remote_address + " port " + std::to_string(facts_.remote_port));
            core_->disconnect(disconnect_reason::by_application, "Timeout, your session not responding.");
            driver_->close();
            return;
        }
        if (step.what == alive_check::action::probe) {
            conn_->send_global_request("keepalive@openssh.com", true);
            driver_->flush();
        }
        alive_next_ = step.next;
        arm_client_alive();
    });
}

// UnusedConnectionTimeout: a connection with no open channel for this long
// is closed, as OpenSSH's server_loop2() does (no message to the client).
void server_connection::arm_unused_timeout()
{
    const int timeout = session_env_.config->unused_connection_timeout;
    if (timeout <= 0)
        return;
    unused_timer_.expires_at(last_busy_ + std::chrono::seconds(timeout));
    unused_timer_.async_wait([this, timeout](const boost::system::error_code& ec) {
        if (ec || done_)
            return;
        const auto now = std::chrono::steady_clock::now();
        if (conn_->channel_count() > 0)
            last_busy_ = now;
        if (conn_->channel_count() > 0 || now < last_busy_ + std::chrono::seconds(timeout)) {
            arm_unused_timeout();
            return;
        }
        log_.info("terminating inactive connection from user " + session_env_.user->name + " " +
                  facts_.remote_address + " port " + std::to_string(facts_.remote_port));
        done_ = true;
        io_.stop();
    });
}

} // namespace longhaul::detail

namespace longhaul {

int serve_connection(server_context& ctx, int read_fd, int write_fd, int startup_fd, connection_facts facts)
{
    detail::server_connection c(ctx, read_fd, write_fd, startup_fd, std::move(facts));
    return c.run();
}

} // namespace longhaul
