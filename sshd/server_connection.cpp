#include "sshd/server_connection.hpp"

#include "channel/connection.hpp"
#include "channel/io/connection_runner.hpp"
#include "common/auth/server_auth.hpp"
#include "common/physical_memory.hpp"
#include "common/random.hpp"
#include "common/text.hpp"
#include "sshd/pam_backend.hpp"
#include "sshd/password_backend.hpp"
#include "sshd/privileges.hpp"
#include "sshd/server_session.hpp"
#include "sshd/sshd_algorithms.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <sys/select.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <deque>
#include <map>

namespace longhaul {

namespace asio = boost::asio;

namespace {

// Queued output bounds per connection (see run()).
constexpr std::size_t output_pause_above = 8 * 1024 * 1024;
constexpr std::size_t output_resume_below = 4 * 1024 * 1024;
constexpr std::size_t output_hard_cap = 32 * 1024 * 1024;

class server_connection {
public:
    server_connection(const server_context& ctx, int read_fd, int write_fd, int startup_fd, connection_facts facts)
        : ctx_(ctx), cfg_(ctx.config->global()), log_(*ctx.log), facts_(std::move(facts)), startup_fd_(startup_fd),
          read_fd_(read_fd), write_fd_(write_fd), policy_(*ctx.config, facts_, log_), signals_(io_),
          grace_timer_(io_), release_timer_(io_), alive_timer_(io_), unused_timer_(io_)
    {
        if (ctx.log_level_from_config)
            policy_.on_user_config = [this](const server_config& c) { log_.set_level(to_log_level(c.log_level)); };
    }

    int run();

private:
    transport_config make_transport_config();
    void on_transport_event(const transport_event& ev);
    void start_auth();
    void pump_auth();
    void queue_auth_output(server_auth_event ev);
    void release_auth_output();
    void check_password(const server_auth_event& ev);
    void start_pam(pam_mode mode, const std::string& user, const std::string& password);
    void watch_pam();
    void pam_event_ready();
    void on_authenticated(const server_auth_event& ev);
    bool enter_user_session();
    void log_pam_account_refusal(const pam_event& ev, std::string_view user);
    void start_channels();
    void reap_children();
    void arm_client_alive();
    void arm_unused_timeout();
    void report_disconnect(const transport_event& ev);
    std::chrono::steady_clock::time_point account_check_deadline() const;
    void notify_startup(char c);

    const server_context& ctx_;
    const server_config& cfg_;
    logger& log_;
    connection_facts facts_;
    int startup_fd_;
    int read_fd_, write_fd_;
    sshd_auth_policy policy_;
    asio::io_context io_;
    asio::signal_set signals_;
    asio::steady_timer grace_timer_;
    asio::steady_timer release_timer_;
    asio::steady_timer alive_timer_;
    asio::steady_timer unused_timer_;
    // UnusedConnectionTimeout: when a channel was last open.
    std::chrono::steady_clock::time_point last_busy_{};
    system_random rng_;
    std::unique_ptr<transport> core_;
    std::unique_ptr<transport_driver> driver_;
    std::unique_ptr<server_auth> auth_;
    std::unique_ptr<pam_authenticator> pam_;
    std::unique_ptr<asio::posix::stream_descriptor> pam_watch_;
    password_backend shadow_;
    enum class pam_purpose { none, password, kbdint, account };
    pam_purpose pam_purpose_ = pam_purpose::none;
    bool pam_account_ok_ = false;        // pam_acct_mgmt accepted the user already
    bool pam_session_open_ = false;      // this process must close it at the end
    // Authentication output held until its minimum delay has passed.
    struct held {
        std::chrono::steady_clock::time_point at;
        server_auth_event ev;
    };
    std::deque<held> held_;
    std::chrono::steady_clock::time_point request_time_{};
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    // After authentication.
    std::unique_ptr<connection> conn_;
    std::unique_ptr<connection_runner> runner_;
    session_environment session_env_;
    std::map<channel_id, std::shared_ptr<server_session>> sessions_;
    int session_counter_ = 0;
    bool authenticated_ = false;
    bool done_ = false;
    int alive_misses_ = 0;
    std::uint64_t alive_bytes_ = 0;
    std::function<void(const boost::system::error_code&, int)> on_sigchld_;
};

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
    if (ctx_.moduli)
        tc.gex_groups = make_gex_group_provider(ctx_.moduli, rng_, [this](const log_message& m) {
            log_.log(to_log_level(m.level), m.text);
        });
    tc.rekey_limit_bytes = cfg_.rekey_limit;
    tc.rekey_interval = std::chrono::seconds(cfg_.rekey_interval);
    tc.crypto_threads = cfg_.crypto_threads;
    tc.server_sig_algs = sshd_supported_only(sshd_algorithm_list::key, cfg_.pubkey_accepted_algorithms);
    // What OpenSSH's sshd also announces: we verify host-bound publickey requests.
    tc.extra_extensions = {{"publickey-hostbound@openssh.com", "0"}};
    return tc;
}

int server_connection::run()
{
    log_.verbose("Connection from " + facts_.remote_address + " port " + std::to_string(facts_.remote_port) + " on " +
                 facts_.local_address + " port " + std::to_string(facts_.local_port) + " rdomain \"\"");
    core_ = std::make_unique<transport>(make_transport_config(), rng_, std::chrono::steady_clock::now());
    driver_ = std::make_unique<transport_driver>(io_, read_fd_, write_fd_, *core_);
    // A client that sends requests (UNIMPLEMENTED before authentication,
    // global request replies after) and never reads would grow this root
    // process without bound. Channel sources already stop at the runner's
    // high-water mark (4 MiB at most), so only such a client gets past
    // twice that: stop reading from it until the queue is back at the
    // mark, and drop it if our own output ever reaches the hard cap.
    driver_->limit_output(output_pause_above, output_resume_below, output_hard_cap);
    if (cfg_.login_grace_time > 0) {
        grace_timer_.expires_after(std::chrono::seconds(cfg_.login_grace_time));
        grace_timer_.async_wait([this](const boost::system::error_code& ec) {
            if (ec || authenticated_ || done_)
                return;
            log_.info(auth_ ? auth_->timeout_line()
                            : "Timeout before authentication for " + facts_.remote_address + " port " +
                                  std::to_string(facts_.remote_port));
            done_ = true;
            io_.stop();
        });
    }
    driver_->start([this](const transport_event& ev) { on_transport_event(ev); },
                   [this](std::error_code ec) {
                       if (ec == std::error_code(ENOBUFS, std::system_category()))
                           log_.info("Disconnecting " + facts_.remote_address + " port " +
                                     std::to_string(facts_.remote_port) +
                                     ": output buffer over its limit, the client is not reading" +
                                     (authenticated_ ? "" : " [preauth]"));
                       done_ = true;
                       io_.stop();
                   });
    io_.run();
    for (auto& [id, s] : sessions_)
        if (s->pid() > 0)
            ::kill(-s->pid(), SIGHUP);
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
    switch (ev.type) {
    case transport_event_type::peer_version:
        log_.debug("Remote protocol version " + core_->peer_identification().proto + ", remote software version " +
                   printable(core_->peer_identification().software));
        break;
    case transport_event_type::kex_complete:
        if (!auth_)
            start_auth();
        break;
    case transport_event_type::payload: {
        const std::uint8_t type = ev.payload[0];
        if (!authenticated_) {
            if (auth_ && (type == msg::service_request || type == msg::service_accept || (type >= 50 && type < 80))) {
                request_time_ = std::chrono::steady_clock::now();
                auth_->handle(ev.payload, ev.seq);
                pump_auth();
            } else {
                // Nothing but authentication before authentication.
                core_->send_unimplemented(ev.seq);
            }
        } else if (msg::is_connection_message(type) && runner_) {
            alive_misses_ = 0;
            runner_->handle_payload(ev.payload);
        } else {
            // A second authentication after success is ignored, as sshd does.
            if (!(type >= 50 && type < 80))
                core_->send_unimplemented(ev.seq);
        }
        break;
    }
    case transport_event_type::disconnected: report_disconnect(ev); break;
    default: break;
    }
}

void server_connection::report_disconnect(const transport_event& ev)
{
    const std::string peer = facts_.remote_address + " port " + std::to_string(facts_.remote_port);
    if (!ev.local) {
        log_.info("Received disconnect from " + peer + ":" + std::to_string(static_cast<std::uint32_t>(ev.reason)) +
                  ": " + std::string(ev.text) + (authenticated_ ? "" : " [preauth]"));
        if (authenticated_)
            log_.info("Disconnected from user " + session_env_.user->name + " " + peer);
        else if (auth_)
            log_.info(auth_->disconnected_line());
    } else if (ev.error == errc::connection_closed) {
        if (authenticated_)
            log_.info("Connection closed by " + peer);
        else if (auth_)
            log_.info(auth_->connection_closed_line());
        else
            log_.info("Connection closed by " + peer + " [preauth]");
    } else if (ev.error != errc::ok) {
        if (ev.error == errc::bad_version)
            log_.error("kex_exchange_identification: " + std::string(ev.text));
        else if (ev.error == errc::strict_kex_violation)
            // OpenSSH's ssh_packet_disconnect(): the line fail2ban filters match.
            log_.info("Disconnecting " + peer + ": " + std::string(ev.text) + (authenticated_ ? "" : " [preauth]"));
        else if (ev.error == errc::no_matching_algorithm)
            log_.error("Unable to negotiate with " + peer + ": " + std::string(ev.text) +
                       (authenticated_ ? "" : " [preauth]"));
        else
            log_.error(std::string(ev.text) + (authenticated_ ? "" : " [preauth]"));
    }
}

// ---------------------------------------------------------------- authentication

void server_connection::start_auth()
{
    server_auth_config ac;
    ac.settings = policy_.settings_for(cfg_);
    ac.remote_ip = facts_.remote_address;
    ac.remote_port = facts_.remote_port;
    ac.session_id = to_bytes(core_->session_id());
    ac.host_key_blob = server_host_key_blob(*core_);
    std::uint8_t secret[8];
    rng_.fill(secret);
    std::memcpy(&ac.timing_secret, secret, sizeof secret);
    server_auth_policy p = policy_.make_policy();
    if (cfg_.use_pam) {
        // After a method succeeds, PAM's account management has the last word
        // (and its handle carries on into the session).
        p.account_check = [this](std::string_view user) -> account_decision {
            // Password and keyboard-interactive ran pam_acct_mgmt already.
            if (pam_account_ok_)
                return {true, ""};
            // Any other transaction is a method that did not succeed: a
            // failed password, or a keyboard-interactive conversation the
            // client left for this method, still waiting for answers that
            // will never come. Waiting on it would hang this connection
            // (and hold a MaxStartups slot): discard it and ask PAM's
            // account management afresh, as OpenSSH's sshpam_cleanup() +
            // do_pam_account() do.
            if (pam_ && pam_purpose_ != pam_purpose::account) {
                pam_watch_.reset();
                pam_.reset(); // cancels a pending conversation; never blocks
            }
            if (!pam_) {
                pam_purpose_ = pam_purpose::account;
                start_pam(pam_mode::account_only, std::string(user), "");
                if (!pam_)
                    return {false, ""};
            }
            // The worker runs pam_acct_mgmt; wait for its verdict here, but
            // no longer than the login may still take.
            const auto deadline = account_check_deadline();
            for (;;) {
                if (auto ev = pam_->poll()) {
                    if (ev->kind == pam_event::type::done) {
                        log_pam_account_refusal(*ev, user);
                        return {ev->success, ""};
                    }
                    pam_->cancel();
                    return {false, ""};
                }
                const auto left = deadline - std::chrono::steady_clock::now();
                if (left <= std::chrono::steady_clock::duration::zero()) {
                    log_.error("PAM account check for " + std::string(user) + " from " + facts_.remote_address +
                               " port " + std::to_string(facts_.remote_port) +
                               " did not finish in time: access refused [preauth]");
                    pam_.reset();
                    return {false, ""};
                }
                const auto us = std::chrono::duration_cast<std::chrono::microseconds>(left).count();
                timeval tv{static_cast<time_t>(us / 1000000), static_cast<suseconds_t>(us % 1000000)};
                fd_set rd;
                FD_ZERO(&rd);
                FD_SET(pam_->event_fd(), &rd);
                ::select(pam_->event_fd() + 1, &rd, nullptr, nullptr, &tv);
            }
        };
    }
    auth_ = std::make_unique<server_auth>(std::move(ac), std::move(p));
}

// The PAM account check blocks the event loop, so it gets what is left of
// LoginGraceTime (at least a second), or two minutes when there is none.
std::chrono::steady_clock::time_point server_connection::account_check_deadline() const
{
    const auto now = std::chrono::steady_clock::now();
    if (cfg_.login_grace_time <= 0)
        return now + std::chrono::minutes(2);
    return std::max(started_ + std::chrono::seconds(cfg_.login_grace_time), now + std::chrono::seconds(1));
}

void server_connection::pump_auth()
{
    for (;;) {
        if (done_)
            return;
        server_auth_event ev = auth_->poll();
        switch (ev.type) {
        case server_auth_event_type::none: driver_->flush(); return;
        case server_auth_event_type::send:
        case server_auth_event_type::disconnect: queue_auth_output(std::move(ev)); break;
        case server_auth_event_type::log: log_.log(to_log_level(ev.level), ev.text); break;
        case server_auth_event_type::check_password: check_password(ev); break;
        case server_auth_event_type::kbdint_start:
            if (!cfg_.use_pam) {
                auth_->answer_kbdint({});
                break;
            }
            pam_.reset();
            pam_purpose_ = pam_purpose::kbdint;
            start_pam(pam_mode::keyboard_interactive, ev.user, "");
            if (!pam_)
                auth_->answer_kbdint({});
            break;
        case server_auth_event_type::kbdint_respond: {
            std::vector<std::string> answers;
            for (const auto& r : ev.responses)
                answers.emplace_back(as_string_view(r.span()));
            if (!pam_ || !pam_->respond(std::move(answers)))
                auth_->answer_kbdint({});
            for (auto& a : answers)
                cleanse(a.data(), a.size());
            break;
        }
        case server_auth_event_type::kbdint_abort:
            if (pam_ && !pam_->finished())
                pam_->cancel();
            break;
        case server_auth_event_type::unimplemented: core_->send_unimplemented(ev.seq); break;
        case server_auth_event_type::authenticated: on_authenticated(ev); return;
        }
    }
}

void server_connection::queue_auth_output(server_auth_event ev)
{
    auto at = request_time_ + ev.min_elapsed;
    if (!held_.empty())
        at = std::max(at, held_.back().at);
    held_.push_back({at, std::move(ev)});
    release_auth_output();
}

void server_connection::release_auth_output()
{
    const auto now = std::chrono::steady_clock::now();
    while (!held_.empty() && held_.front().at <= now) {
        server_auth_event ev = std::move(held_.front().ev);
        held_.pop_front();
        if (ev.type == server_auth_event_type::send) {
            (void)core_->send(ev.payload);
        } else {
            if (auth_ && auth_->max_tries_exceeded())
                notify_startup('f');
            core_->disconnect(ev.reason, ev.text);
        }
    }
    driver_->flush();
    if (!held_.empty()) {
        release_timer_.expires_at(held_.front().at);
        release_timer_.async_wait([this](const boost::system::error_code& ec) {
            if (!ec)
                release_auth_output();
        });
    }
}

void server_connection::check_password(const server_auth_event& ev)
{
    const std::string pw(as_string_view(ev.password.span()));
    // Under UsePAM every user goes through PAM, invalid ones too (the auth
    // core has replaced what they typed), so PAM's timing and failure delay
    // are the same whether or not the user exists, as in OpenSSH.
    if (cfg_.use_pam) {
        pam_.reset();
        pam_purpose_ = pam_purpose::password;
        start_pam(pam_mode::password, ev.user, pw);
        if (!pam_)
            auth_->answer_password(false);
        return;
    }
    auto r = shadow_.check_password(ev.user, pw, ev.user_valid, policy_.user_config().permit_empty_passwords,
                                    std::time(nullptr));
    for (const auto& m : r.log)
        log_.log(to_log_level(m.level), m.text);
    // OpenSSH lets an expired password in only to run passwd(1) on a tty.
    // That forced change is not implemented here, and a session with an
    // expired password must not be an ordinary one: refuse it.
    if (r.success && r.password_expired) {
        log_.info("Refusing password login for " + ev.user.substr(0, 100) +
                  ": the password has expired and must be changed (not supported without PAM)");
        auth_->answer_password(false);
        return;
    }
    auth_->answer_password(r.success);
}

void server_connection::start_pam(pam_mode mode, const std::string& user, const std::string& password)
{
    auto pam = std::make_unique<pam_authenticator>();
    pam_start_options o;
    o.service = ctx_.pam_service;
    o.user = user;
    o.remote_host = facts_.remote_host;
    o.ssh_connection = facts_.remote_address + " " + std::to_string(facts_.remote_port) + " " + facts_.local_address +
                       " " + std::to_string(facts_.local_port);
    o.mode = mode;
    o.password = password;
    o.disallow_null_authtok = !policy_.user_config().permit_empty_passwords;
    std::string error;
    if (!pam->start(o, error)) {
        log_.error("PAM: " + error);
        return;
    }
    pam_ = std::move(pam);
    if (mode != pam_mode::account_only)
        watch_pam();
}

void server_connection::watch_pam()
{
    pam_watch_ = std::make_unique<asio::posix::stream_descriptor>(io_, ::dup(pam_->event_fd()));
    pam_watch_->async_wait(asio::posix::stream_descriptor::wait_read,
                           [this](const boost::system::error_code& ec) {
                               if (!ec)
                                   pam_event_ready();
                           });
}

void server_connection::log_pam_account_refusal(const pam_event& ev, std::string_view user)
{
    if (ev.password_change_required)
        log_.error("Password change required for " + std::string(user) +
                   ", which only keyboard-interactive can do here (not supported yet for other methods)");
    else if (ev.account_failed)
        log_.error("Access denied for user " + std::string(user) + " by PAM account configuration [preauth]");
}

void server_connection::pam_event_ready()
{
    if (!pam_)
        return;
    while (auto ev = pam_->poll()) {
        if (ev->kind == pam_event::type::prompts) {
            // The password method answers PAM's password prompt itself; any
            // other question means PAM wants a conversation: give up.
            if (pam_purpose_ != pam_purpose::kbdint) {
                pam_->cancel();
                continue;
            }
            kbdint_reply reply;
            reply.result = kbdint_reply::kind::prompts;
            for (std::size_t i = 0; i < ev->prompts.size(); ++i)
                reply.prompts.push_back({kbdint_prompt_text(*ev, i), ev->prompts[i].echo});
            auth_->answer_kbdint(std::move(reply));
            continue;
        }
        if (!ev->success && !ev->error.empty())
            log_.debug("PAM: " + ev->error);
        if (ev->success)
            pam_account_ok_ = true;
        log_pam_account_refusal(*ev, auth_->user());
        if (pam_purpose_ == pam_purpose::password) {
            auth_->answer_password(ev->success);
        } else if (pam_purpose_ == pam_purpose::kbdint) {
            kbdint_reply reply;
            reply.result = ev->success ? kbdint_reply::kind::success : kbdint_reply::kind::failure;
            auth_->answer_kbdint(std::move(reply));
        }
    }
    pump_auth();
    if (pam_ && !pam_->finished() && pam_watch_)
        pam_watch_->async_wait(asio::posix::stream_descriptor::wait_read,
                               [this](const boost::system::error_code& ec) {
                                   if (!ec)
                                       pam_event_ready();
                               });
}

// ---------------------------------------------------------------- after authentication

void server_connection::on_authenticated(const server_auth_event& ev)
{
    authenticated_ = true;
    grace_timer_.cancel();
    notify_startup('a');
    while (!held_.empty()) {
        // Anything held (the SUCCESS) goes out now, before the keys change use.
        held_.front().at = std::chrono::steady_clock::now();
        release_auth_output();
    }
    core_->user_authenticated();
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
    if (!enter_user_session())
        return;
    start_channels();
}

// Something must stay root for the session's lifetime only when a PAM
// session has to be closed as root for a user who is not root: then a root
// parent keeps the PAM handle and waits, and the connection continues in a
// child that becomes the user (as OpenSSH's monitor does). Otherwise the
// connection process itself becomes the user: one process per session.
bool server_connection::enter_user_session()
{
    const user_account& user = *session_env_.user;
    // From the user's Match-applied configuration. Serving the session
    // unconfined would give more than the administrator allowed: refuse it.
    const std::string& chroot = session_env_.config->chroot_directory;
    if (!chroot.empty() && chroot != "none") {
        log_.error("ChrootDirectory is not supported yet: refusing the session of " + user.name);
        core_->disconnect(disconnect_reason::by_application, "ChrootDirectory is not supported yet");
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
    if (geteuid() != 0)
        return true; // serving our own user: nothing to switch
    if (pam_session_open_ && user.uid != 0) {
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
            int status = 0;
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
            }
            pam_->close_session();
            pam_->delete_credentials();
            _exit(0);
        }
        io_.notify_fork(asio::io_context::fork_child);
        // The parent closes the PAM session and ends PAM; this copy of the
        // handle must do neither, or the session is closed twice (the
        // second time as the user).
        pam_->forget_after_fork();
        pam_session_open_ = false;
    }
    std::string error;
    if (!become_user(user, error)) {
        log_.error("fatal: setreuid/setuid failed for " + user.name + ": " + error);
        _exit(255);
    }
    return true;
}

void server_connection::start_channels()
{
    connection_config cc;
    const server_config& uc = policy_.user_config();
    cc.window = window_limits(uc.channel_window_max, uc.connection_window_max, physical_memory_bytes());
    conn_ = std::make_unique<connection>(*core_, cc);
    runner_ = std::make_unique<connection_runner>(io_, *driver_, *conn_);
    runner_->set_logger(&log_);
    runner_->on_open_request = [this](channel_id id, std::string_view type, byte_span) {
        if (type != "session") {
            log_.verbose("refused channel open of type " + printable(type) + ": not supported yet");
            conn_->reject(id, open_failure_reason::administratively_prohibited, "open failed");
            return;
        }
        if (static_cast<int>(sessions_.size()) >= session_env_.config->max_sessions) {
            log_.info("no more sessions");
            conn_->reject(id, open_failure_reason::administratively_prohibited, "open failed");
            return;
        }
        session_env_.session_number = session_counter_++;
        auto s = std::make_shared<server_session>(session_env_);
        s->on_finished = [this, id] {
            asio::post(io_, [this, id] {
                sessions_.erase(id);
                last_busy_ = std::chrono::steady_clock::now();
            });
        };
        conn_->accept(id);
        runner_->attach(id, s);
        sessions_[id] = s;
    };
    runner_->on_global_request = [this](std::string_view name, bool want_reply, byte_span) {
        if (name == "tcpip-forward" || name == "streamlocal-forward@openssh.com")
            log_.verbose("refused " + printable(name) + ": forwarding is not supported yet");
        if (want_reply)
            conn_->reply_global(false);
    };
    runner_->on_global_reply = [this](bool, byte_span) { alive_misses_ = 0; };
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

void server_connection::reap_children()
{
    int status = 0;
    pid_t pid;
    while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
        for (auto& [id, s] : sessions_) {
            if (s->pid() == pid) {
                s->child_exited(status);
                break;
            }
        }
    }
}

void server_connection::arm_client_alive()
{
    const int interval = session_env_.config->client_alive_interval;
    if (interval <= 0)
        return;
    alive_timer_.expires_after(std::chrono::seconds(interval));
    alive_timer_.async_wait([this, interval](const boost::system::error_code& ec) {
        if (ec || done_)
            return;
        if (core_->stats().bytes_in != alive_bytes_) {
            alive_bytes_ = core_->stats().bytes_in;
            alive_misses_ = 0;
        } else if (++alive_misses_ > session_env_.config->client_alive_count_max) {
            log_.info("Timeout, client not responding from user " + session_env_.user->name + " " +
                      facts_.remote_address + " port " + std::to_string(facts_.remote_port));
            core_->disconnect(disconnect_reason::by_application, "Timeout, your session not responding.");
            driver_->close();
            return;
        }
        conn_->send_global_request("keepalive@openssh.com", true);
        driver_->flush();
        (void)interval;
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

} // namespace

int serve_connection(const server_context& ctx, int read_fd, int write_fd, int startup_fd, connection_facts facts)
{
    server_connection c(ctx, read_fd, write_fd, startup_fd, std::move(facts));
    return c.run();
}

} // namespace longhaul
