// The state of one ssh client connection (run_client() in ssh/client.hpp),
// its member functions split by responsibility between ssh/client.cpp
// (connecting, the transport and session-layer events, the session
// channel, keepalives), ssh/client_escapes.cpp (escape sequences, the ~C
// command line, LocalCommand) and ssh/client_login.cpp (user
// authentication: identities, the agent, prompts), ssh/client_start.cpp
// (once authenticated: -f, the forwards, the session) and ssh/client_mux.cpp
// (connection multiplexing: the mux client tried first, the master's
// ControlPath listener and its passenger sessions, ControlPersist) with
// ssh/client_mux_forwards.cpp (the forwards mux clients ask a master for).
#pragma once

#include "channel/io/connection_runner.hpp"
#include "channel/io/tun_channel.hpp"
#include "channel/session/session_layer.hpp"
#include "common/auth/agent_client.hpp"
#include "common/io/alive_check.hpp"
#include "common/random.hpp"
#include "ssh/client.hpp"
#include "ssh/client_agent_forwarding.hpp"
#include "ssh/client_x11.hpp"
#include "ssh/client_forwards.hpp"
#include "ssh/client_remote_forwards.hpp"
#include "ssh/connect.hpp"
#include "ssh/escape.hpp"
#include "ssh/mux/mux_master.hpp"
#include "ssh/pkcs11/pkcs11_provider.hpp"
#include "ssh/session.hpp"
#include "ssh/sk_sign.hpp"
#include "ssh/terminal.hpp"

#include <boost/asio/io_context.hpp>
#include <boost/asio/signal_set.hpp>
#include <boost/asio/steady_timer.hpp>

#include <deque>
#include <functional>
#include <memory>
#include <optional>

namespace longhaul::detail {

namespace asio = boost::asio;

struct mux_master_state; // ssh/client_mux.cpp
struct mux_master_deleter {
    void operator()(mux_master_state* p) const noexcept;
};

// SendEnv: whether the variable `name` goes to the server (patterns with a
// leading '-' remove earlier ones, as ssh 9.x). ssh/client_start.cpp.
bool send_env_permitted(std::string_view name, const std::vector<std::string>& patterns);

// Before connecting: a master at ControlPath runs the -O command or the
// session (ssh/client_mux.cpp). nullopt: connect as usual.
std::optional<int> try_mux_client(client_invocation& inv);

class ssh_client {
public:
    explicit ssh_client(client_invocation& inv)
        : inv_(inv), cfg_(*inv.cfg), log_(*inv.log), signals_(io_), banner_timer_(io_), alive_timer_(io_)
    {
        sink_ = [this](log_level l, std::string_view m) { log_.log(l, m); };
    }

    int run();

private:
    bool connect_stream();
    transport_config make_transport_config();
    void on_transport_event(const transport_event& ev);
    void on_session_event(const session_event& e);
    void report_transport_event(const transport_event& ev);
    void on_auth_event(const client_auth_event& ev);
    void on_host_key(const public_key& key);
    void on_first_kex();
    void log_algorithms();
    void pump_session();
    void answer_prompt(const client_auth_event& ev);
    void sign_with_agent(const client_auth_event& ev);
    // AddKeysToAgent: a key just loaded from `path` handed to the agent.
    void maybe_add_key_to_agent(const std::string& path, const private_key& key);
    void set_ip_qos(bool interactive);
    void sign_with_security_key(const client_auth_event& ev);
    void sign_with_token(const client_auth_event& ev);
    std::vector<client_identity> token_identities();
    // hostbased (client_hostbased.cpp): the host's public keys, and
    // ssh-keysign's signature for a keysign event.
    std::vector<client_host_key> hostbased_keys();
    void sign_with_keysign(const client_auth_event& ev);
    void on_authenticated();
    void start_session();
    // -W, -L, -D: false when the client is finishing (ExitOnForwardFailure).
    bool start_forwards();
    // ssh/client_tunnel.cpp: -w (Tunnel): the local device and its channel;
    // false when the client is finishing (ExitOnForwardFailure).
    bool start_tunnel();
    // ssh/client_escapes.cpp: the escapes that reach the connection, the
    // ~C command line, LocalCommand.
    void on_escape(escape_action a);
    void background();
    void run_command_line();
    void run_escape_command(const std::string& line);
    void run_configured_local_command();
    void report_disconnect(const transport_event& ev);
    void arm_keepalive();
    // A global request; with want_reply, `on_reply` (may be empty) gets its reply.
    void send_global(std::string_view name, const bytes& data, std::function<void(bool, byte_span)> on_reply,
                     bool want_reply = true);
    void finish(int status);
    // 0, 1 and 2 to /dev/null (2 kept while -v logs there): a process gone
    // to the background (-f, ControlPersist) holds no caller's stdio.
    void stdio_to_null();
    // After the session: as OpenSSH, the client stays until the forwarded
    // connections still open have closed, then finishes with the session's
    // status.
    void finish_when_channels_closed();
    // ssh/client_mux.cpp: the master's side. start_mux_master() runs after
    // authentication (with ControlPersist it forks: the foreground becomes
    // a mux client and exits there).
    void start_mux_master();
    void accept_mux_client(const std::shared_ptr<mux::control_client>& c);
    void on_mux_request(std::uint32_t peer, const mux::message& m, mux::passed_fds fds);
    void open_mux_session(std::uint32_t peer, const mux::new_session& req, mux::passed_fds fds);
    // ssh/client_mux_forwards.cpp: OPEN_FWD, CLOSE_FWD and NEW_STDIO_FWD.
    void mux_open_forward(std::uint32_t peer, const mux::forward_request& req);
    void mux_close_forward(std::uint32_t peer, const mux::forward_request& req);
    void open_mux_stdio(std::uint32_t peer, const mux::stdio_forward& req, mux::passed_fds fds);
    void mux_peer_done(std::uint32_t peer);
    bool mux_permitted(const std::string& prompt, const char* what);
    void mux_window_changed();
    void arm_persist_timer();
    bool mux_busy() const;
    void stop_mux();
    std::vector<client_identity> collect_identities();
    // The server's host key, the session id and its signature, for
    // session-bind@openssh.com (client_agent_forwarding.hpp).
    agent_binding agent_binding_of() const;

    client_invocation& inv_;
    client_config& cfg_;
    logger& log_;
    log_sink sink_;
    asio::io_context io_;
    asio::signal_set signals_;
    asio::steady_timer banner_timer_;
    asio::steady_timer alive_timer_;
    system_random rng_;
    connected_stream stream_;
    std::string host_;
    int port_ = 22;
    std::unique_ptr<transport> core_;
    std::uint32_t guesses_logged_ = 0; // kex guesses the server took, logged at -v
    std::unique_ptr<transport_driver> driver_;
    // Transport, authentication and connection glue; conn_ is its connection.
    std::unique_ptr<session_layer> layer_;
    connection* conn_ = nullptr;
    std::unique_ptr<connection_runner> runner_;
    std::optional<agent_client> agent_;
    // Security keys in key files: the SecurityKeyProvider, loaded at the
    // first signature.
    std::optional<sk_login_signer> sk_signer_;
    // PKCS11Provider's module, loaded with the identities; its keys sign in-process.
    std::unique_ptr<pkcs11_provider> pkcs11_;
    std::shared_ptr<client_session> session_;
    std::unique_ptr<client_forwards> forwards_;
    std::unique_ptr<client_remote_forwards> remote_forwards_;
    std::unique_ptr<client_agent_forwarding> agent_forwards_; // -A: the server's agent opens
    std::unique_ptr<client_x11_forwarding> x11_forwards_;     // -X, -Y: the server's x11 opens
    std::shared_ptr<tun_channel> tunnel_;                     // -w
    std::string tunnel_ifname_;                               // LocalCommand's %T
    std::deque<std::function<void(bool, byte_span)>> global_replies_;
    std::unique_ptr<raw_terminal> raw_;
    bool version_seen_ = false;
    bool finished_ = false;
    bool session_closed_ = false;
    bool forked_ = false; // -f: gone to the background after authentication
    int session_status_ = 255;
    int status_ = 255;
    std::optional<alive_check> alive_;
    std::chrono::steady_clock::time_point alive_next_{}; // the first expiry checks at once
    std::unique_ptr<mux_master_state, mux_master_deleter> mux_;
};

} // namespace longhaul::detail
