// session-bind@openssh.com (OpenSSH's PROTOCOL.agent): ssh tells the agent
// which host a connection authenticates to. The agent checks the host's
// signature over the session id and records the binding per connection,
// as OpenSSH keeps them: a connection cannot be re-bound after
// authentication. Destination-constrained keys (agent_destination) are
// checked against these bindings.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/result.hpp"

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace longhaul {
class wire_reader;
}

namespace longhaul::agent {

// OpenSSH's AGENT_MAX_SID_LEN and AGENT_MAX_SESSION_IDS.
inline constexpr std::size_t max_session_id = 128;
inline constexpr std::size_t max_session_bindings = 16;

struct session_binding {
    bytes host_key_blob;
    public_key host_key; // the key itself (a certificate's key)
    std::optional<certificate> host_cert; // when the host bound with a certificate
    bytes session_id;
    bool forwarded = false;
};

struct connection_state {
    std::vector<session_binding> bindings;
    // A session-bind was received, even one refused: constrained keys are
    // then unusable until one succeeds (OpenSSH's session_bind_attempted).
    bool bind_attempted = false;
};

// Parses the extension's contents (after its name) and verifies the
// signature: signature_invalid, malformed or too_large on failure;
// `error` says why for the log.
result<session_binding> parse_session_bind(wire_reader& r, std::string& error);

// Records `b` on `conn` as OpenSSH does: the same binding twice is fine; a
// connection already bound for authentication (not forwarded) takes no
// more; a session id seen with another host key, or a 17th binding, is
// refused.
result<void> record_session_bind(connection_state& conn, session_binding b, std::string& error);

} // namespace longhaul::agent
