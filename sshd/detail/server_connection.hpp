// The state of one sshd connection process (sshd/server_connection.hpp):
// the class behind serve_connection(), its member functions split by
// responsibility between server_connection.cpp (transport, session layer,
// channels, timers) and server_connection_auth.cpp (authentication
// backends: shadow passwords, PAM).
#pragma once

#include "channel/io/connection_runner.hpp"
#include "channel/session/session_layer.hpp"
#include "common/random.hpp"
#include "sshd/pam_backend.hpp"
#include "sshd/password_backend.hpp"
#include "sshd/server_connection.hpp"
#include "sshd/direct_forwarding.hpp"
#include "sshd/remote_forwarding.hpp"
#include "sshd/server_session.hpp"
#include "sshd/session_channels.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/posix/stream_descriptor.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>

namespace longhaul::detail {

namespace asio = boost::asio;

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
    void on_session_event(const session_event& e);
    void pump_session();
    void arm_release_timer();
    void start_auth();
    void on_auth_event(server_auth_event& ev);
    void check_password(const server_auth_event& ev);
    void start_pam(pam_mode mode, const std::string& user, const std::string& password);
    void watch_pam();
    void pam_event_ready();
    void on_authenticated(const server_auth_event& ev);
    void refuse_unknown_channel(connection& conn, channel_id id, std::string_view type);
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
    // Transport, authentication and connection glue.
    std::unique_ptr<session_layer> layer_;
    server_auth* auth() noexcept { return layer_ ? layer_->server_auth_machine() : nullptr; }
    std::unique_ptr<pam_authenticator> pam_;
    std::unique_ptr<asio::posix::stream_descriptor> pam_watch_;
    password_backend shadow_;
    enum class pam_purpose { none, password, kbdint, account };
    pam_purpose pam_purpose_ = pam_purpose::none;
    bool pam_account_ok_ = false;        // pam_acct_mgmt accepted the user already
    bool pam_session_open_ = false;      // this process must close it at the end
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    // After authentication.
    connection* conn_ = nullptr; // the session layer's, once the channels run
    std::unique_ptr<connection_runner> runner_;
    session_environment session_env_;
    std::unique_ptr<session_channels> sessions_;
    std::unique_ptr<direct_forwarding> direct_forwards_; // -L, -D, -W through this server
    std::unique_ptr<remote_forwarding> remote_forwards_; // -R: listeners for the client
    bool authenticated_ = false;
    bool done_ = false;
    int alive_misses_ = 0;
    std::uint64_t alive_bytes_ = 0;
    std::function<void(const boost::system::error_code&, int)> on_sigchld_;
};

} // namespace longhaul::detail
