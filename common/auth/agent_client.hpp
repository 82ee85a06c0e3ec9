// A blocking ssh-agent client over the agent's Unix socket (SSH_AUTH_SOCK):
// list identities, sign (ssh), and add, remove, lock (ssh-add). ssh asks it
// a handful of times per connection, so each call simply waits, bounded by
// a timeout; message sizes are bounded by agent::max_message.
//
//   auto agent = agent_client::connect(getenv("SSH_AUTH_SOCK"));
//   auto ids = agent->request_identities();        // keys + comments
//   auto sig = agent->sign(blob, data, agent::sign_flags_for("rsa-sha2-512"));
//   agent->add_identity(key, nullptr, "comment", {.lifetime_seconds = 600});
#pragma once

#include "common/auth/agent_protocol.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/openssh_key_v1.hpp"
#include "common/keys/private_key.hpp"

#include <chrono>
#include <string>

namespace longhaul {

class agent_client {
public:
    // errc::invalid_argument for an empty or over-long path, io_error when
    // the socket cannot be reached, timeout when connecting takes too long.
    static result<agent_client> connect(const std::string& socket_path,
                                        std::chrono::milliseconds timeout = std::chrono::seconds(30));

    agent_client(agent_client&& o) noexcept;
    agent_client& operator=(agent_client&& o) noexcept;
    agent_client(const agent_client&) = delete;
    agent_client& operator=(const agent_client&) = delete;
    ~agent_client();

    // REQUEST_IDENTITIES. Keys of types this build cannot parse come back
    // with key == nullopt.
    result<std::vector<agent::identity>> request_identities();
    // SIGN_REQUEST; returns the signature blob (string algorithm, string
    // signature). errc::unsupported when the agent refuses.
    result<bytes> sign(byte_span key_blob, byte_span data, std::uint32_t flags);
    // session-bind@openssh.com: binds this agent connection to the host
    // that signed `session_id` (agent::encode_session_bind).
    // errc::unsupported when the agent refuses or lacks the extension.
    result<void> bind_session(byte_span host_key_blob, byte_span session_id, byte_span signature, bool forwarding);

    // ADD_IDENTITY / ADD_ID_CONSTRAINED (ssh-add): `key`, certified by
    // `cert` when not null, with `comment` and the constraints.
    // errc::unsupported when the agent refuses.
    result<void> add_identity(const private_key& key, const certificate* cert, std::string_view comment,
                              const agent::key_constraints& constraints = {});
    // The same for a FIDO security key (the agent signs through the
    // provider that constraints.sk_provider names, as ssh-add sends it).
    result<void> add_security_key(const openssh_security_key& key, const certificate* cert, std::string_view comment,
                                  const agent::key_constraints& constraints);
    // REMOVE_IDENTITY of a key or certificate blob (unsupported: refused,
    // e.g. the agent does not hold it).
    // ssh-add -s / -e: the agent loads (with `pin` and the constraints)
    // or unloads the PKCS#11 module `provider`.
    result<void> update_card(bool add, std::string_view provider, byte_span pin,
                             const agent::key_constraints& constraints);
    result<void> remove_identity(byte_span key_blob);
    // REMOVE_ALL_IDENTITIES, then SSH1's REMOVE_ALL_RSA_IDENTITIES whose
    // answer is ignored, as ssh-add -D does for old agents.
    result<void> remove_all_identities();
    // LOCK (locking == true) or UNLOCK with `password`.
    result<void> lock(std::string_view password, bool locking);
    // The "query" extension: the extension names the agent supports.
    result<std::vector<std::string>> query_extensions();

    // Timeout for each request/reply exchange.
    void set_timeout(std::chrono::milliseconds t) noexcept { timeout_ = t; }
    int native_handle() const noexcept { return fd_; }
    // Gives the connection away (non-blocking, close-on-exec), e.g. to be
    // joined to a forwarded agent channel; -1 once closed.
    int release() noexcept
    {
        const int fd = fd_;
        fd_ = -1;
        return fd;
    }

private:
    explicit agent_client(int fd, std::chrono::milliseconds timeout) : fd_(fd), timeout_(timeout) {}
    // Writes a framed request and reads one framed reply body. Any failure
    // closes the connection: the byte stream can no longer be trusted.
    result<bytes> transact(byte_span request);
    void close() noexcept;

    int fd_ = -1;
    std::chrono::milliseconds timeout_;
};

} // namespace longhaul
