// The server side of SSH user authentication (RFC 4252, RFC 4256) as a
// sans-I/O machine that behaves like OpenSSH 9.x's sshd: the ssh-userauth
// service, none/publickey/password/keyboard-interactive, MaxAuthTries,
// AuthenticationMethods, PermitRootLogin, banners, invalid users treated
// like valid ones on the wire, and log lines worded as sshd writes them.
//
// The machine opens no file and calls no system service. User lookup and
// authorized_keys decisions are synchronous policy callbacks; password
// checks and keyboard-interactive devices (PAM) are events the program
// answers whenever it likes.
//
//   server_auth auth(config, policy);
//   on transport payload 5..6, 50..79:  auth.handle(ev.payload, ev.seq);
//   loop: ev = auth.poll()
//     send            -> transport.send(ev.payload)   (after ev.min_elapsed, see below)
//     log             -> syslog(ev.level, ev.text)
//     check_password  -> later: auth.answer_password(ok)
//     kbdint_start / kbdint_respond -> later: auth.answer_kbdint(reply)
//     kbdint_abort    -> free the PAM conversation
//     unimplemented   -> transport.send_unimplemented(ev.seq)
//     authenticated   -> transport.user_authenticated(); start the connection layer
//     disconnect      -> transport.disconnect(ev.reason, ev.text)
#pragma once

#include "common/auth/auth_common.hpp"
#include "common/auth/messages.hpp"
#include "common/auth/methods_list.hpp"
#include "common/auth/sk_policy.hpp"
#include "common/keys/certificate.hpp"

#include <chrono>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul {

enum class permit_root_login { yes, prohibit_password, forced_commands_only, no };

// The sshd_config keywords that govern authentication (after Match).
struct server_auth_settings {
    bool pubkey_authentication = true;
    bool password_authentication = true;
    bool kbd_interactive_authentication = true;
    bool permit_empty_passwords = false;
    permit_root_login root_login = permit_root_login::prohibit_password;
    // AuthenticationMethods; empty or {"any"}: any single method.
    std::vector<std::string> authentication_methods;
    int max_auth_tries = 6;
    std::string pubkey_accepted_algorithms = default_pubkey_accepted_algorithms();
    // HostbasedAuthentication and HostbasedAcceptedAlgorithms.
    bool hostbased_authentication = false;
    std::string hostbased_accepted_algorithms = default_pubkey_accepted_algorithms();
    // CASignatureAlgorithms: what a user or host certificate's CA may have
    // signed it with (OpenSSH's default, restricted to the key types this
    // build implements, leaves out ssh-rsa).
    std::string ca_signature_algorithms =
        "ssh-ed25519,ecdsa-sha2-nistp256,ecdsa-sha2-nistp384,ecdsa-sha2-nistp521,rsa-sha2-512,rsa-sha2-256";
    // Banner file contents (the program reads the file); empty: no banner.
    std::string banner;
    // The keyboard-interactive device, logged as "keyboard-interactive/pam";
    // empty when there is none (keyboard-interactive then always fails, as
    // sshd's does without PAM on Linux).
    std::string kbdint_device = "pam";
};

enum class user_status {
    valid,   // exists and may log in
    unknown, // no such user: the machine logs "Invalid user ..."
    refused, // exists but AllowUsers/DenyUsers/... refuse: the program logged why
};

struct user_lookup {
    user_status status = user_status::unknown;
    bool is_root = false; // uid 0, for PermitRootLogin
    // Settings after "Match User" etc.; nullopt keeps the configured ones.
    std::optional<server_auth_settings> settings;
};

struct key_decision {
    bool allowed = false;
    // The authorized_keys line forces a command (PermitRootLogin
    // forced-commands-only).
    bool forced_command = false;
    // The program's parsed key options, handed back in `authenticated`.
    std::shared_ptr<const void> options;
    // What a security key's signature must show, from those options and
    // PubkeyAuthOptions; other keys ignore it.
    sk_requirements security_key;
};

struct account_decision {
    bool allowed = true;
    std::string message; // sent to the client as a banner when refused
};

struct server_auth_policy {
    // Once, at the first request, with the user name without ":style".
    std::function<user_lookup(std::string_view user)> lookup_user;
    // Whether `key` may authenticate `user` (authorized_keys,
    // AuthorizedKeysCommand). Called for queries and again for signed
    // requests, only for valid users.
    std::function<key_decision(std::string_view user, const public_key& key, bool with_signature)> key_allowed;
    // Whether a user certificate (publickey with a *-cert-v01@openssh.com
    // algorithm; parsed and its CA signature checked by the machine) may
    // authenticate `user` (TrustedUserCAKeys, cert-authority lines). Unset:
    // certificates are refused.
    std::function<key_decision(std::string_view user, const certificate& cert, bool with_signature)>
        certificate_allowed;
    // Whether the client host's `key` (certified by `cert` when it came in
    // a host certificate, whose CA signature the machine checked) may log
    // `user` in for `client_user` there (sshd/hostbased_auth: equiv and
    // rhosts files, known_hosts). `client_host` is as the client sent it.
    // Called only for valid users. Unset: hostbased requests are refused.
    std::function<bool(std::string_view user, const public_key& key, const certificate* cert,
                       std::string_view client_host, std::string_view client_user)>
        host_allowed;
    // Optional: account checks after a method succeeded (PAM account).
    std::function<account_decision(std::string_view user)> account_check;
    // Optional: checks a publickey or hostbased signature in place of the machine, for
    // sshd's privilege separation, where the privileged monitor verifies
    // it itself so that a compromised pre-authentication child cannot
    // claim a login. `key_blob` is the key or certificate as the client
    // sent it, `algorithm` the request's (a certificate algorithm for a
    // certificate) and `signed_data` what the signature covers.
    std::function<bool(byte_span key_blob, std::string_view algorithm, byte_span signed_data, byte_span signature)>
        verify_signature;
};

struct server_auth_config {
    server_auth_settings settings;
    std::string remote_ip;
    int remote_port = 0;
    bytes session_id;
    // Blob of the host key used in the initial key exchange, for
    // publickey-hostbound-v00@openssh.com; empty refuses that method.
    bytes host_key_blob;
    // Secret mixed into the per-user failure delay (OpenSSH's timing_secret).
    std::uint64_t timing_secret = 0;
    // sshd's privilege-separation monitor logs the verdicts (Accepted,
    // Failed, Partial), invalid users and root refusals itself; the machine
    // then logs only what the unprivileged child may say.
    bool verdicts_logged_by_monitor = false;
};

enum class server_auth_event_type {
    none,
    send,           // payload; hold it until min_elapsed has passed since the request arrived
    log,            // level, text: one sshd log line
    check_password, // user, user_valid, password: answer_password()
    kbdint_start,   // user, user_valid, submethods: answer_kbdint() with prompts, success or failure
    kbdint_respond, // responses to the last prompts: answer_kbdint()
    kbdint_abort,   // the client left keyboard-interactive: drop the device's state
    unimplemented,  // seq: the message was out of place
    authenticated,  // user, methods: authentication is complete
    disconnect,     // reason, text (after min_elapsed, like send); the machine is finished
};

struct authenticated_method {
    std::string method;
    std::string submethod;
    std::optional<public_key> key; // a certificate's certified key
    std::shared_ptr<const void> key_options;
    std::optional<certificate> cert; // publickey with a certificate
};

struct server_auth_event {
    server_auth_event_type type = server_auth_event_type::none;
    bytes payload;
    // OpenSSH delays failure replies to non-"none" requests to at least 5 ms
    // plus a per-user amount after the request arrived, so response time
    // does not tell which users exist; if that time has already passed,
    // double it until it lies ahead.
    std::chrono::microseconds min_elapsed{0};
    auth_log_level level = auth_log_level::info;
    std::string text;
    disconnect_reason reason = disconnect_reason::protocol_error;
    std::uint32_t seq = 0;
    std::string user;
    bool user_valid = false;
    secret_bytes password;
    std::string submethods;
    std::vector<secret_bytes> responses;
    std::vector<authenticated_method> methods;
};

struct kbdint_reply {
    enum class kind { prompts, success, failure };
    kind result = kind::failure;
    std::string name;
    std::string instruction;
    std::vector<kbdint_prompt> prompts;
};

class transport;

// The blob of the host key the server used in the key exchange (for
// server_auth_config::host_key_blob); call it after the first kex_complete.
// Empty when the transport has no such key.
bytes server_host_key_blob(const transport& t);

class server_auth {
public:
    server_auth(server_auth_config config, server_auth_policy policy);

    // Messages 5 and 6 and 50..79, with the transport's sequence number.
    void handle(byte_span payload, std::uint32_t seq = 0);
    server_auth_event poll();

    void answer_password(bool ok);
    void answer_kbdint(kbdint_reply reply);

    bool authenticated() const noexcept { return state_ == state::authenticated; }
    // Authenticated, or disconnected by the machine.
    bool finished() const noexcept { return state_ == state::authenticated || state_ == state::closed; }
    const std::string& user() const noexcept { return user_; }
    bool user_valid() const noexcept { return valid_; }
    int failures() const noexcept { return failures_; }
    // The connection was cut for MaxAuthTries (for per-source penalties
    // and MaxStartups-style bookkeeping in the listener).
    bool max_tries_exceeded() const noexcept { return max_tries_exceeded_; }

    // sshd's name for the peer in log lines: "authenticating user alice
    // 192.0.2.1 port 50000", "invalid user bob ...", or just the address
    // before the first request.
    std::string connection_id() const;
    // Lines sshd logs when the connection ends during authentication.
    std::string connection_closed_line() const; // "Connection closed by ... [preauth]"
    std::string disconnected_line() const;      // "Disconnected from ... [preauth]"

private:
    enum class state {
        service,          // waiting for SERVICE_REQUEST ssh-userauth
        ready,            // waiting for USERAUTH_REQUEST
        password_check,   // check_password event out
        kbdint_query,     // kbdint_start/kbdint_respond out
        kbdint_wait,      // INFO_REQUEST sent, waiting for INFO_RESPONSE
        authenticated,
        closed,
    };
    // What a method did with a request.
    enum class outcome { failed, succeeded, postponed, pending };
    struct attempt {
        std::string method;    // primary method name for logs and lists
        std::string submethod; // "pam" for keyboard-interactive
        bool log = false;      // sshd's monitor decided, so the result is logged
        std::optional<public_key> key;
        std::optional<certificate> cert; // when `key` came in a certificate
        key_decision decision;
        std::string failure_note; // after the key in a "Failed" line (hostbased's client user and host)
    };

    void process(byte_span payload, std::uint32_t seq);
    void handle_service_request(byte_span payload);
    void handle_request(byte_span payload);
    bool setup_user(const std::string& user, const std::string& service);
    outcome run_none(attempt& a);
    outcome run_publickey(const userauth_request& req, attempt& a);
    // A certificate's checks before any policy is asked (parse and the CA's
    // signature); nullopt, logged after `failure` ("userauth_pubkey: parse
    // key: " and the reason), when refused.
    std::optional<certificate> presented_certificate(byte_span blob, std::string_view failure);
    outcome run_hostbased(const userauth_request& req, attempt& a);
    outcome run_password(const userauth_request& req, attempt& a);
    outcome run_kbdint(const userauth_request& req, attempt& a);
    void handle_info_response(byte_span payload, std::uint32_t seq);
    void apply_kbdint_reply(kbdint_reply reply);
    void finish(bool authenticated, bool server_caused_failure = false);
    void log_attempt(const char* verdict, bool authenticated);
    bool root_allowed(std::string_view method, bool forced_command);
    std::string methods_list() const;
    bool method_enabled(std::string_view method) const;
    void stop_kbdint();
    void drain_queue();

    void send(bytes payload, std::chrono::microseconds min_elapsed = {});
    void log(auth_log_level level, std::string text);
    void disconnect(disconnect_reason reason, std::string text, bool log_it = true);
    void protocol_failure(std::string text);
    void too_many_failures();
    void unimplemented(std::uint32_t seq);
    std::chrono::microseconds failure_delay() const;
    // Whether a password or keyboard-interactive answer could log this user
    // in at all (a valid user, and root only with PermitRootLogin yes).
    bool password_can_succeed() const noexcept;

    server_auth_config config_;
    server_auth_policy policy_;
    server_auth_settings settings_;
    state state_ = state::service;
    std::deque<server_auth_event> events_;
    // Input held while an answer is pending; it may hold passwords.
    std::deque<std::pair<secret_bytes, std::uint32_t>> queued_;

    int attempts_ = 0;
    int failures_ = 0;
    std::string user_, service_;
    bool valid_ = false;
    bool is_root_ = false;
    bool none_enabled_ = true;
    bool user_set_up_ = false;
    bool max_tries_exceeded_ = false;
    auth_methods_lists lists_;
    std::vector<bytes> used_keys_;
    std::vector<authenticated_method> done_methods_;

    attempt current_;
    bool password_ok_ = false;           // the policy part of a pending password check
    std::string kbdint_method_;          // method name for the next kbd-int log line
    std::size_t kbdint_prompts_ = 0;     // prompts in the INFO_REQUEST outstanding
    bool kbdint_active_ = false;         // the program holds a device context
};

} // namespace longhaul
