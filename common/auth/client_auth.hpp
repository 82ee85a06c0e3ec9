// The client side of SSH user authentication (RFC 4252, RFC 4256, RFC 8308
// server-sig-algs) as a sans-I/O machine that behaves like OpenSSH 9.x's
// ssh: methods in PreferredAuthentications order among those the server
// allows, identities tried one by one (query first, private key loaded
// only when the server accepts the public one), RSA signatures with
// rsa-sha2-512/256, user certificates (client_certificates.hpp: offered
// with their *-cert-v01@openssh.com algorithm, signed by the identity that
// holds their key), hostbased with the host's keys signed by ssh-keysign,
// password and keyboard-interactive prompts, partial
// success, and -v output in OpenSSH's words.
//
// The machine owns no terminal, socket or agent connection: prompts,
// agent signatures and key files are the program's, asked through events
// or the identity's loader.
//
//   client_auth auth(config, client_auth_session_from(transport));
//   auth.start();
//   on transport ext_info:           auth.update_session(client_auth_session_from(transport));
//   on transport payload 5..6, 50..79: auth.handle(ev.payload, ev.seq);
//   loop: ev = auth.poll()
//     send          -> transport.send(ev.payload)
//     log           -> print "debug1: " + text etc. per LogLevel (info/error: stderr)
//     banner        -> print ev.text to stderr (unless LogLevel < INFO)
//     prompt        -> ask on /dev/tty or SSH_ASKPASS; auth.answer_prompt(...) / cancel_prompt()
//     sign          -> agent SIGN_REQUEST, or the security key's middleware (ev.security_key);
//                      auth.answer_signature(sig) / signature_failed(why)
//     keysign       -> run ssh-keysign on ev.data; auth.answer_host_signature(sig) / host_signature_failed()
//     authenticated -> transport.user_authenticated(); open channels
//     failed        -> print ev.text ("alice@host: Permission denied (publickey)."), close, exit 255
//     disconnect    -> transport.disconnect(ev.reason, ev.text); print, exit 255
#pragma once

#include "common/auth/auth_common.hpp"
#include "common/auth/messages.hpp"
#include "common/keys/openssh_key_v1.hpp"
#include "common/keys/private_key.hpp"

#include <deque>
#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace longhaul {

class certificate;
class transport;

// One key to try, in the order the program decided (agent keys, then
// files; IdentitiesOnly is the program's business).
struct client_identity {
    // What OpenSSH prints for it: the file path, or the agent's comment.
    std::string name;
    // From -i or IdentityFile (" explicit" in -v output).
    bool user_provided = false;
    // Held by the agent: signatures are asked for with `sign` events.
    bool agent = false;
    // On a PKCS#11 token (ssh -I): signed by the program, also through
    // `sign` events (" token" in -v output, as OpenSSH's SSHKEY_FLAG_EXT).
    bool token = false;
    // The public half when known (from the agent, a .pub file, or the
    // unencrypted header of an openssh-key-v1 file). Without it the private
    // key is loaded before trying ("Trying private key: ...").
    std::optional<public_key> key;
    // A private key already in memory.
    std::shared_ptr<const private_key> loaded;
    // A user certificate for `key` (which then holds the certified key):
    // offered with the certificate blob and algorithm, signed by this
    // identity's private key or, as OpenSSH does, by another identity
    // holding the same key (client_certificates.hpp).
    std::shared_ptr<const certificate> cert;
    // Loads the private key from its file, with the passphrase the user
    // typed (nullopt on the first try). Errors: passphrase_required or
    // wrong_passphrase ask again; anything else skips the identity.
    std::function<result<private_key>(std::optional<std::string_view> passphrase)> load;
    // A FIDO security-key file (sk-ssh-ed25519@openssh.com, ...): there is
    // no private key to load, only what the authenticator needs (key
    // handle, flags), read with the passphrase as `load` does. The
    // signature is then the program's, asked for with a `sign` event that
    // carries this record (client_auth_event::security_key), as agent keys
    // are.
    std::function<result<openssh_security_key>(std::optional<std::string_view> passphrase)> load_security_key;
};

// A key file identity as ssh reads one: the public key from `path`.pub or
// from the file itself where the format allows; the private key is read by
// `load` only when needed. A missing file still gives an identity (OpenSSH
// lists default key files that do not exist and skips them when trying).
// Permission checks on the file are the program's, in a loader of its own.
client_identity identity_from_key_file(const std::filesystem::path& path, bool user_provided);

namespace agent {
struct identity;
}
// An agent-held key (from agent_client::request_identities): named by its
// comment, signed through `sign` events. The identity must have a key.
client_identity identity_from_agent(const agent::identity& id);

// OpenSSH 9.x's client default PubkeyAcceptedAlgorithms restricted to what
// this build implements: the certificate algorithms first, then the plain
// ones, security keys included. (The server's default is
// default_pubkey_accepted_algorithms().)
std::string default_client_pubkey_accepted_algorithms();

// One of the client host's keys for hostbased authentication (ssh reads
// the public halves from /etc/ssh; ssh-keysign holds the private ones).
struct client_host_key {
    std::string path; // the file it came from, for -v output
    public_key key;   // the plain key (a certificate's certified key)
    std::shared_ptr<const certificate> cert;
    const bytes& blob() const;        // what the request carries: the certificate or the key
    std::string_view type_name() const; // "ssh-ed25519" or "ssh-ed25519-cert-v01@openssh.com"
};

// ssh_config keywords that drive authentication, and who we are talking to.
struct client_auth_config {
    std::string user; // the remote user name
    // The host as OpenSSH names it in messages (HostName, after
    // canonicalisation), and HostKeyAlias, which prompts prefer when set.
    std::string host;
    std::string host_key_alias;
    std::string remote_ip; // for "Authenticated to host ([ip]:port) ..."
    int remote_port = 22;
    bool via_proxy = false; // ProxyCommand/ProxyJump: "Authenticated to host (via proxy) ..."
    std::string service = std::string(connection_service);
    std::string preferred_authentications = "gssapi-with-mic,hostbased,publickey,keyboard-interactive,password";
    bool pubkey_authentication = true;
    bool password_authentication = true;
    bool kbd_interactive_authentication = true;
    std::string kbd_interactive_devices; // KbdInteractiveDevices, sent as submethods
    int number_of_password_prompts = 3;
    bool batch_mode = false; // no prompts: password and keyboard-interactive are skipped
    std::string pubkey_accepted_algorithms = default_client_pubkey_accepted_algorithms();
    // Use publickey-hostbound-v00@openssh.com when the server offers it.
    bool hostbound = true;
    std::vector<client_identity> identities;
    // HostbasedAuthentication (RFC 4252 §9): the host keys are tried in
    // HostbasedAcceptedAlgorithms order, each at most once, and signed by
    // ssh-keysign through `keysign` events. local_host is the name the
    // helper finds for the connection (OpenSSH's get_local_name), sent with
    // a trailing dot; local_user is the account running ssh.
    bool hostbased_authentication = false;
    std::string hostbased_accepted_algorithms = default_client_pubkey_accepted_algorithms();
    std::vector<client_host_key> host_keys; // certificates first, as OpenSSH loads them
    std::string local_host;
    std::string local_user;
};

// What the transport learned that authentication needs.
struct client_auth_session {
    bytes session_id;
    // The server's server-sig-algs extension; nullopt when it sent none.
    std::optional<std::string> server_sig_algs;
    // The server offered publickey-hostbound@openssh.com version "0".
    bool hostbound_offered = false;
    // Blob of the server's host key from the initial key exchange.
    bytes host_key_blob;
};

client_auth_session client_auth_session_from(const transport& t);

enum class client_auth_event_type {
    none,
    send,          // payload for transport.send()
    log,           // level, text
    banner,        // text (already sanitised)
    prompt,        // kind, prompts (+ name/instruction): answer_prompt() or cancel_prompt()
    sign,          // agent or security key: identity, algorithm, data, agent_flags or security_key:
                   // answer_signature()/signature_failed()
    keysign,       // hostbased: host_key, algorithm, data for ssh-keysign:
                   // answer_host_signature()/host_signature_failed()
    authenticated, // method
    failed,        // text: no method left
    disconnect,    // reason, text: a protocol error by the server
};

enum class prompt_kind {
    password,     // "alice@host's password: "
    passphrase,   // "Enter passphrase for key '/path': "
    kbdint,       // keyboard-interactive prompts, each "(alice@host) Password: "
    old_password, // PASSWD_CHANGEREQ: "Enter alice@host's old password: "
    new_password, // "Enter alice@host's new password: " (cancel gives up the change)
    retype_new_password,
};

struct client_auth_event {
    client_auth_event_type type = client_auth_event_type::none;
    secret_bytes payload; // send (a password request carries the password)
    auth_log_level level = auth_log_level::debug1;
    std::string text;
    disconnect_reason reason = disconnect_reason::protocol_error;
    // prompt: one entry per answer expected, text ready to display.
    prompt_kind kind = prompt_kind::password;
    std::vector<kbdint_prompt> prompts;
    std::string name, instruction; // kbdint (also logged at info before the prompt)
    // sign: the identity (valid while the machine lives) and its index in
    // client_auth_config::identities
    const client_identity* identity = nullptr;
    std::size_t identity_index = 0;
    std::string algorithm;
    bytes data;
    std::uint32_t agent_flags = 0; // SSH_AGENT_RSA_SHA2_256/512
    // A security key from a file (not the agent): what the authenticator
    // signs with. Null for agent identities.
    std::shared_ptr<const openssh_security_key> security_key;
    // keysign: the host key (valid while the machine lives)
    const client_host_key* host_key = nullptr;
    // authenticated
    std::string method;
};

class client_auth {
public:
    client_auth(client_auth_config config, client_auth_session session);

    // Sends SERVICE_REQUEST "ssh-userauth".
    void start();
    // EXT_INFO arrived (or arrived again).
    void update_session(client_auth_session session);
    // Messages 5 and 6 and 50..79, with the transport's sequence number.
    void handle(byte_span payload, std::uint32_t seq = 0);
    client_auth_event poll();

    // One response per prompt of the last prompt event.
    void answer_prompt(std::vector<secret_bytes> responses);
    // The user gave no answer (EOF, no terminal): the method moves on.
    void cancel_prompt();
    // The agent's or the security key's signature blob (string algorithm,
    // string signature, and for security keys byte flags, uint32 counter).
    void answer_signature(byte_span signature_blob);
    void signature_failed(std::string_view why);
    // ssh-keysign's signature blob for the last keysign event, or its
    // failure (already logged by the program): hostbased is then given up,
    // as OpenSSH gives it up.
    void answer_host_signature(byte_span signature_blob);
    void host_signature_failed();

    bool authenticated() const noexcept { return phase_ == phase::success; }
    // Authenticated, failed or disconnected.
    bool finished() const noexcept { return phase_ == phase::success || phase_ == phase::closed; }
    const std::string& method() const noexcept { return method_; }

private:
    enum class phase {
        idle,         // start() not called
        service,      // SERVICE_REQUEST sent
        waiting,      // a request is out, waiting for the server
        asking,       // a prompt event is out
        signing,      // a sign event is out
        host_signing, // a keysign event is out
        success,
        closed,
    };
    // Why a prompt is out: what the answer continues.
    enum class ask { none, password, passphrase, kbdint, old_password, new_password, retype_password };
    struct id_state {
        bool tried = false;
    };

    // method selection (OpenSSH's userauth / authmethod_get)
    void next_method(std::optional<std::string> authlist);
    void continue_method() { next_method(std::nullopt); }
    const char* pick_method();
    bool method_enabled(std::string_view m) const;
    enum class started { sent, not_sent, waiting };
    started run_method(std::string_view m);
    void fail_all();

    // publickey (client_pubkey.cpp)
    void prepare_identities();
    std::string format_identity(std::size_t i) const;
    started run_publickey();
    void handle_pk_ok(byte_span payload);
    started sign_and_send(std::size_t i);
    std::size_t certificate_signer(std::size_t i);
    started sign_loaded(std::size_t i);
    started send_signed(byte_span signature);
    started load_identity(std::size_t i);
    started load_signer();
    started try_load(std::optional<std::string_view> passphrase);
    void resume(started s);
    // hostbased (client_hostbased.cpp)
    started run_hostbased();
    std::optional<std::size_t> next_host_key();

    // password and keyboard-interactive (client_interactive.cpp)
    started run_password();
    started run_kbdint();
    void handle_passwd_changereq(byte_span payload);
    void handle_info_request(byte_span payload);
    void prompt_answered(std::vector<secret_bytes> responses);
    void prompt_cancelled();

    void process(byte_span payload, std::uint32_t seq);
    void handle_failure(byte_span payload);
    void handle_success(byte_span payload);
    void handle_banner(byte_span payload);
    void drain_queue();

    void send(bytes payload);
    void send(secret_bytes payload);
    void log(auth_log_level level, std::string text);
    void prompt(prompt_kind kind, std::vector<kbdint_prompt> prompts, ask why);
    void disconnect(std::string text);
    // "alice@host" as prompts say it (HostKeyAlias when set).
    const std::string& prompt_host() const
    {
        return config_.host_key_alias.empty() ? config_.host : config_.host_key_alias;
    }
    std::string user_at_host() const { return config_.user + "@" + prompt_host(); }

    client_auth_config config_;
    client_auth_session session_;
    phase phase_ = phase::idle;
    std::deque<client_auth_event> events_;
    std::deque<std::pair<bytes, std::uint32_t>> queued_;

    // method selection
    std::vector<std::string> preferred_;
    std::size_t preferred_pos_ = 0;
    std::string authlist_;
    std::optional<std::string> supported_; // the list method selection last started from
    std::optional<std::string> selected_;  // the method authmethod_get last chose
    std::string current_;                  // method in progress
    std::map<std::string, bool, std::less<>> disabled_;
    std::string method_; // the method that succeeded

    // publickey
    bool prepared_ = false;
    std::deque<std::size_t> queue_; // identities in trying order (tried ones move to the back)
    std::vector<id_state> ids_;
    std::size_t sign_id_ = 0;       // identity being offered with a signature
    std::size_t signer_id_ = 0;     // identity whose private key signs (another one for a certificate)
    int load_attempt_ = 0;
    std::shared_ptr<const private_key> load_result_;
    std::shared_ptr<const openssh_security_key> sk_result_; // a security key file's record, for a sign event
    bool sk_loading_ = false; // the signer's file turned out to hold a security key
    std::string sign_alg_;
    userauth_request signed_request_;
    bool retried_sigtype_ = false;

    // hostbased: the algorithm list being worked through (OpenSSH's
    // ktypes and active_ktype), the keys already tried, the request out
    std::optional<std::vector<std::string>> host_algorithms_;
    std::size_t host_algorithm_ = 0;
    std::vector<bool> host_key_tried_;
    std::size_t host_key_ = 0;
    userauth_request host_request_;

    // password and keyboard-interactive
    int password_attempts_ = 0;
    int kbdint_attempts_ = 0;
    bool info_req_seen_ = false;
    ask asking_ = ask::none;
    std::size_t kbdint_expected_ = 0;
    secret_bytes change_old_, change_new_;
};

} // namespace longhaul
