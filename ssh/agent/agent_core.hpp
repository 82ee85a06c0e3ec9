// ssh-agent's protocol core, sans I/O: one request body in, one reply body
// out (PROTOCOL.agent, draft-miller-ssh-agent), as OpenSSH 9.2's agent
// answers them. The clock is passed in, the user's confirmation
// (ssh-add -c) is a callback, and the driver (agent_server) frames
// messages, holds replies that must wait and runs the expiry timer.
#pragma once

#include "common/keys/fingerprint.hpp"
#include "common/log.hpp"
#include "common/random.hpp"
#include "ssh/agent/agent_keystore.hpp"
#include "ssh/agent/agent_lock.hpp"
#include "ssh/agent/agent_session_bind.hpp"

#include <array>
#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <variant>

namespace longhaul {
class wire_reader;
}

namespace longhaul::agent {

struct agent_settings {
    // ssh-agent -t: the lifetime of keys added without one (0: forever).
    std::chrono::seconds default_lifetime{0};
    // ssh-agent -E: the hash of the fingerprints in logs and prompts.
    fingerprint_hash hash = fingerprint_hash::sha256;
    // ssh-agent -P: where security-key providers may live (patterns over
    // the provider's canonical path).
    std::string allowed_providers = "/usr/lib*/*,/usr/local/lib*/*";
    // ssh-agent -O no-restrict-websafe turns this off: a security key whose
    // application is not "ssh:..." (a web origin's) signs only SSH login
    // requests and SSHSIG data, never arbitrary data a web page could pass
    // off as a WebAuthn challenge.
    bool restrict_websafe = true;
    // ssh-agent -O allow-remote-pkcs11: providers may be named over a
    // connection that ssh has bound to a session (a forwarded agent).
    bool allow_remote_providers = false;
};

// What the core needs from outside to hold security keys: the file
// system (a provider's canonical path) and the provider itself.
struct security_key_hooks {
    // realpath(3): the canonical path, or nullopt with the reason in `error`.
    std::function<std::optional<std::string>(const std::string& path, std::string& error)> canonical_path;
    // A signature of `data` by the key through its provider (with the touch
    // notice, its text ending in `notice_suffix`, and the PIN asked if the
    // authenticator wants one): the blob, or OpenSSH's words for the failure.
    std::function<std::variant<bytes, std::string>(const security_key_identity& key, byte_span data,
                                                   const std::string& notice_suffix)>
        sign;
};

// What the core needs from outside to hold PKCS#11 tokens' keys (ssh-add
// -s): the modules themselves, loaded, used and unloaded by the program.
struct token_key {
    public_key key;
    std::string label;
};
struct pkcs11_hooks {
    // Loads the module at canonical path `provider`, logging in to each
    // token with `pin`: its keys, or nullopt (logged) when it cannot be
    // loaded or is loaded already.
    std::function<std::optional<std::vector<token_key>>(const std::string& provider, const secret_bytes& pin)> load;
    // Unloads it; false when it was not loaded.
    std::function<bool(const std::string& provider)> unload;
    // A signature by `key` of the loaded module with SSH algorithm `alg`:
    // the blob, or nullopt (logged).
    std::function<std::optional<bytes>(const std::string& provider, const public_key& key, std::string_view alg,
                                       byte_span data)>
        sign;
};

struct agent_reply {
    // The reply message (type, contents) without its length prefix.
    bytes body;
    // Hold the reply this long (a failed unlock).
    std::chrono::milliseconds delay{0};
    // The request could not be read at all: drop the connection (OpenSSH
    // closes it too).
    bool close = false;
};

class agent_core {
public:
    // Asked before each signature with a confirm-constrained key; true
    // allows it.
    using confirm_fn = std::function<bool(const std::string& prompt)>;

    agent_core(agent_settings settings, random_source& random, confirm_fn confirm, logger& log);

    // `body`: one message without its length prefix. Expired keys are
    // removed first.
    agent_reply handle(byte_span body, connection_state& conn, agent_clock::time_point now);

    // Removes the keys whose lifetime is over; returns the next deadline,
    // for the driver's timer.
    std::optional<agent_clock::time_point> expire(agent_clock::time_point now);

    void set_security_key_hooks(security_key_hooks hooks) { sk_hooks_ = std::move(hooks); }
    void set_pkcs11_hooks(pkcs11_hooks hooks) { pkcs11_hooks_ = std::move(hooks); }

    bool locked() const noexcept { return lock_.locked(); }
    const keystore& keys() const noexcept { return keys_; }

private:
    struct request {
        wire_reader& r;
        connection_state& conn;
        agent_clock::time_point now;
        agent_reply& reply;
    };
    using handler = void (agent_core::*)(request&);

    void on_request_identities(request& q);
    void on_sign_request(request& q);
    void on_add_identity(request& q);
    void on_add_id_constrained(request& q);
    void on_remove_identity(request& q);
    void on_remove_all_identities(request& q);
    void on_lock(request& q);
    void on_unlock(request& q);
    // ADD_SMARTCARD_KEY[_CONSTRAINED] and REMOVE_SMARTCARD_KEY
    // (agent_smartcard.cpp).
    void on_add_smartcard(request& q);
    void on_remove_smartcard(request& q);
    // A PKCS#11 module's canonical path when it may be named here (not
    // over a forwarded agent unless -O allow-remote-pkcs11, allowed by
    // -P; both only when `adding`), else nullopt after OpenSSH's log line.
    std::optional<std::string> accepted_module(const std::string& provider, const connection_state& conn,
                                               bool adding);
    void on_extension(request& q);

    void add(request& q, bool constrained);
    void lock_or_unlock(request& q, bool lock);
    std::string fingerprint(const stored_identity& id) const;
    // Destination constraints (agent_destination): may `id` be used on
    // `conn` (to sign for `user`; null: to list or remove)? Logs a refusal
    // as OpenSSH does.
    bool usable(const stored_identity& id, const connection_state& conn, const std::string* user);
    // The checks of a SIGN_REQUEST with a destination-constrained key;
    // on success `dest` says what the confirmation prompt adds.
    bool constrained_sign_allowed(const stored_identity& id, byte_span data, const connection_state& conn,
                                  std::string& dest);

    static const std::array<handler, 256>& table();
    // The provider a security key is added with (OpenSSH's checks and log
    // lines): "internal" as given, a canonical path allowed by -P, or
    // nullopt when refused.
    std::optional<std::string> accepted_provider(const std::string& provider, const public_key& key, bool certified,
                                                 const connection_state& conn);
    // A security-key signature (SIGN_REQUEST): the websafe rule, then the
    // provider. Empty on failure (logged).
    std::optional<bytes> sign_with_security_key(const stored_identity& id, byte_span data, const std::string& dest);

    agent_settings settings_;
    random_source& random_;
    confirm_fn confirm_;
    logger& log_;
    keystore keys_;
    agent_lock lock_;
    security_key_hooks sk_hooks_;
    pkcs11_hooks pkcs11_hooks_;
};

} // namespace longhaul::agent
