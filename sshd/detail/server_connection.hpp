// The state of one sshd connection process (sshd/server_connection.hpp):
// the class behind serve_connection(), its member functions split by
// responsibility between server_connection.cpp (transport, session layer,
// channels, timers), server_connection_monitor.cpp (the monitor of the
// sandboxed pre-authentication child: its requests and the record of what
// succeeded), server_connection_postauth.cpp (the root parent after
// authentication: signatures, ptys, login records) and
// server_connection_auth.cpp (authentication backends: shadow passwords,
// PAM).
#pragma once

#include "channel/io/connection_runner.hpp"
#include "channel/session/session_layer.hpp"
#include "common/io/alive_check.hpp"
#include "common/random.hpp"
#include "common/transport/transport_state.hpp"
#include "sshd/monitor_verdicts.hpp"
#include "sshd/pam_backend.hpp"
#include "sshd/password_backend.hpp"
#include "sshd/server_connection.hpp"
#include "sshd/agent_forwarding.hpp"
#include "sshd/host_key_agent.hpp"
#include "sshd/x11_forwarding.hpp"
#include "sshd/direct_forwarding.hpp"
#include "sshd/tunnel_forwarding.hpp"
#include "sshd/login_record.hpp"
#include "sshd/remote_forwarding.hpp"
#include "sshd/server_session.hpp"
#include "sshd/session_channels.hpp"
#include "sshd/privsep/monitor_channel.hpp"
#include "sshd/privsep/monitor_messages.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <chrono>
#include <functional>
#include <memory>

namespace longhaul::detail {

namespace asio = boost::asio;

// A monitor's answer to one request of the pre-authentication child: a
// reply to send, nothing (one-way messages), a request that breaks the
// rules (the connection ends), or the hand-off accepted.
struct monitor_answer {
    enum class kind { reply, none, violation, handed_off } what = kind::none;
    bytes reply;
};

inline monitor_answer reply(bytes b) { return {monitor_answer::kind::reply, std::move(b)}; }
inline monitor_answer violation() { return {monitor_answer::kind::violation, {}}; }

// The method a signed USERAUTH_REQUEST names (after string session_id,
// byte 50, string user, string service); empty when it is not one.
std::string_view signed_method(byte_span signed_data);

// What the monitor saw during authentication; only this decides a login.
struct monitor_state {
    bytes session_id;   // the exchange hash of the one signature made
    bytes host_key_blob; // the key that made it
    bool user_looked_up = false;
    bool moduli_asked = false; // the one group exchange before authentication
    std::string user;
    user_lookup lookup;
    server_auth_policy backend;
    struct allowed_key {
        bytes blob;
        std::shared_ptr<const void> options;
        bool forced_command = false;
        sk_requirements security_key;
    };
    std::vector<allowed_key> allowed_keys; // allowed for a signed request
    struct allowed_host {
        bytes blob;
        std::string client_host, client_user; // as the client sent them
    };
    std::vector<allowed_host> allowed_hosts; // hostbased: allowed for a signed request
    std::vector<bytes> used_keys;          // proved: may not count twice
    std::vector<authenticated_method> successes;
    std::vector<bool> forced_command; // of each success
    std::string auth_info;            // ExposeAuthInfo: a line for each success
    int failures = 0; // failed passwords, conversations and signatures
    int requests = 0; // authentication requests of any kind
    int password_requests = 0;
    bool grace_logged = false; // "Timeout before authentication" written
    std::optional<monitor_verdicts> verdicts; // what the monitor logs of them
};

class server_connection {
public:
    server_connection(server_context& ctx, int read_fd, int write_fd, int startup_fd, connection_facts facts)
        : ctx_(ctx), cfg_(ctx.config->global()), log_(*ctx.log), facts_(std::move(facts)), startup_fd_(startup_fd),
          read_fd_(read_fd), write_fd_(write_fd), host_key_agent_(ctx.host_key_agent_socket),
          policy_(*ctx.config, facts_, log_), signals_(io_),
          alive_timer_(io_), unused_timer_(io_)
    {
        if (ctx.log_level_from_config)
            policy_.on_user_config = [this](const server_config& c) { log_.set_level(to_log_level(c.log_level)); };
    }

    // The sessions end first, while what they use as they end (the
    // monitor channel or the local recorder, for their logout records)
    // still exists: the runner holds them too, and it is older than both.
    ~server_connection();
    server_connection(const server_connection&) = delete;
    server_connection& operator=(const server_connection&) = delete;

    int run();

private:
    transport_config make_transport_config();
    void on_transport_event(const transport_event& ev);
    void on_session_event(const session_event& e);
    void pump_session();
    // Privilege separation (server_connection_monitor.cpp).
    struct monitor_handler;
    static const monitor_handler* find_monitor_handler(privsep::monitor_type t);
    bool run_preauth();
    bool serve_monitor(privsep::monitor_channel& mon);
    monitor_answer monitor_sign(byte_span msg);
    // Whether a publickey-hostbound request names the host key the monitor
    // signed with (or its certificate).
    bool bound_to_our_host_key(byte_span host_blob) const;
    monitor_answer monitor_log(byte_span msg);
    monitor_answer monitor_moduli(byte_span msg);
    monitor_answer monitor_lookup_user(byte_span msg);
    monitor_answer monitor_key_allowed(byte_span msg);
    monitor_answer monitor_verify_pubkey(byte_span msg);
    // Hostbased (server_connection_hostbased.cpp): the key and names, then
    // the signature over a request that must name them.
    monitor_answer monitor_host_allowed(byte_span msg);
    monitor_answer monitor_verify_hostbased(const privsep::verify_pubkey_request& q);
    monitor_answer monitor_password(byte_span msg);
    monitor_answer monitor_kbdint_start(byte_span msg);
    monitor_answer monitor_kbdint_respond(byte_span msg);
    monitor_answer monitor_kbdint_abort(byte_span msg);
    monitor_answer monitor_account_check(byte_span msg);
    monitor_answer monitor_max_tries(byte_span msg);
    monitor_answer monitor_authenticated(byte_span msg);
    monitor_answer kbdint_answer(privsep::monitor_type request, const kbdint_reply& r);
    bool monitor_login_complete();
    bool monitor_attempt(bool failed);
    static bool root_login_permitted(permit_root_login rule, std::string_view method, bool forced_command) noexcept;
    static bool method_enabled(const server_auth_settings& s, std::string_view method) noexcept;
    // What the successes so far make of AuthenticationMethods.
    enum class methods_state { unconstrained, complete, incomplete };
    methods_state monitor_methods(const server_auth_settings& s) const;
    // The success just recorded, for the log: `shown_method` names it when
    // that is not the success's own method.
    void monitor_log_success(std::string_view shown_method = {});
    void monitor_log_child_line(log_level level, std::string_view text);
    void monitor_log_timeout();
    // After authentication (server_connection_postauth.cpp).
    [[noreturn]] void serve_postauth_monitor(int fd, pid_t child, uid_t uid, gid_t gid);
    result<bytes> sign_through_monitor(const public_key& key, std::string_view alg, byte_span data);
    // The host key `blob` names (a private one or, with HostKeyAgent, one
    // the agent holds), or nullptr when it is none of ours.
    const public_key* find_host_key(byte_span blob) const;
    // A host key signature by the private key or the agent (which then
    // logs why it failed).
    result<bytes> sign_with_host_key(const public_key& key, std::string_view alg, byte_span data);
    result<pty_grant> pty_through_monitor(std::string& error);
    login_recorder::settings login_settings() const;
    void record_failed_login(const std::string& user);
    void set_pty_source();
    // Backends (server_connection_auth.cpp).
    bool secret_methods_allowed() const;
    std::optional<pam_event> wait_pam();
    account_decision check_account();
    bool check_password(secret_bytes password);
    kbdint_reply kbdint_step();
    kbdint_reply kbdint_start();
    kbdint_reply kbdint_respond(std::vector<secret_bytes> responses);
    void start_pam(pam_mode mode, const std::string& user, std::string_view password);
    void on_authenticated(const server_auth_event& ev);
    void refuse_unknown_channel(connection& conn, channel_id id, std::string_view type);
    bool prepare_session_settings();
    void close_idle_channel(channel_id id);
    bool enter_user_session();
    void log_pam_account_refusal(const pam_event& ev, std::string_view user);
    void start_channels();
    void reap_children();
    void arm_client_alive();
    void arm_unused_timeout();
    void report_disconnect(const transport_event& ev);
    std::chrono::steady_clock::time_point account_check_deadline() const;
    void notify_startup(char c);

    server_context& ctx_; // the pre-authentication child drops the private host keys from it
    const server_config& cfg_;
    logger& log_;
    connection_facts facts_;
    int startup_fd_;
    int read_fd_, write_fd_;
    // HostKeyAgent's link, in the processes that hold the keys.
    host_key_agent_signer host_key_agent_;
    sshd_auth_policy policy_;
    asio::io_context io_;
    asio::signal_set signals_;
    asio::steady_timer alive_timer_;
    asio::steady_timer unused_timer_;
    // UnusedConnectionTimeout: when a channel was last open.
    std::chrono::steady_clock::time_point last_busy_{};
    system_random rng_;
    std::unique_ptr<transport> core_;
    std::unique_ptr<transport_driver> driver_;
    // Transport, authentication and connection glue.
    std::unique_ptr<session_layer> layer_;
    std::unique_ptr<pam_authenticator> pam_;
    password_backend shadow_;
    monitor_state mon_;
    std::optional<transport_state> handoff_; // the child's transport, once it handed off
    // The user's process: the channel to its root parent, which signs.
    std::unique_ptr<privsep::monitor_channel> postauth_monitor_;
    enum class pam_purpose { none, password, kbdint, account };
    pam_purpose pam_purpose_ = pam_purpose::none;
    bool pam_account_ok_ = false;        // pam_acct_mgmt accepted the user already
    bool pam_session_open_ = false;      // this process must close it at the end
    std::chrono::steady_clock::time_point started_ = std::chrono::steady_clock::now();
    // After authentication.
    connection* conn_ = nullptr; // the session layer's, once the channels run
    std::unique_ptr<connection_runner> runner_;
    session_environment session_env_;
    // Login records kept by this process (no root parent): before
    // sessions_, whose sessions record their logouts as they go.
    std::unique_ptr<login_recorder> local_logins_;
    std::unique_ptr<agent_forwarding> agent_; // ssh -A: SSH_AUTH_SOCK for the sessions
    std::unique_ptr<x11_forwarding> x11_;     // ssh -X: the sessions' displays' channels
    std::unique_ptr<session_channels> sessions_;
    std::unique_ptr<direct_forwarding> direct_forwards_; // -L, -D, -W through this server
    std::unique_ptr<tunnel_forwarding> tunnel_forwards_; // -w through this server
    std::unique_ptr<remote_forwarding> remote_forwards_; // -R: listeners for the client
    bool authenticated_ = false;
    bool done_ = false;
    std::optional<alive_check> alive_;
    std::chrono::steady_clock::time_point alive_next_{}; // the first expiry checks at once
    std::function<void(const boost::system::error_code&, int)> on_sigchld_;
};

} // namespace longhaul::detail
