// Destination constraints (restrict-destination-v00@openssh.com, what
// ssh-add -h sends; PROTOCOL.agent and openssh.com/agent-restrict.html),
// enforced as OpenSSH 9.2's ssh-agent does: a constrained key signs only
// SSH2 userauth requests for the most recent session bound on the
// connection, and only when every recorded hop (origin > host > ...) is
// one the constraint lists. Everything here is pure: parsing, the
// userauth parser and hop matching take their inputs (the wall clock for
// host certificates included) and return what the caller logs.
#pragma once

#include "common/bytes.hpp"
#include "common/keys/certificate.hpp"
#include "common/keys/public_key.hpp"
#include "common/log.hpp"
#include "common/result.hpp"
#include "ssh/agent/agent_session_bind.hpp"

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::agent {

// Bounds on what a peer may send. OpenSSH's AGENT_MAX_DEST_CONSTRAINTS is
// 1024; it bounds neither keys per hop nor names, so these are ours (far
// above what ssh-add -h builds from a known_hosts file).
inline constexpr std::size_t max_dest_constraints = 1024;
inline constexpr std::size_t max_hop_keys = 1024;
inline constexpr std::size_t max_hop_name = 1024; // user and hostname

struct hop_key {
    public_key key;
    bool is_ca = false; // a @cert-authority key: matches host certificates it signed
};

struct dest_hop {
    std::string user;     // empty: any user (a pattern otherwise)
    std::string hostname; // empty: the origin ("from") or any host ("to")
    std::vector<hop_key> keys;
};

struct dest_constraint {
    dest_hop from;
    dest_hop to;
};

// Parses the extension's data (after its name): one string holding the
// constraints, each a string of (string from-hop, string to-hop, string
// reserved). Refuses what OpenSSH refuses (non-empty reserved fields, a
// "from" with a user or with a hostname but no keys, a "to" without a
// hostname or keys) and what passes our bounds. `error` says why.
result<std::vector<dest_constraint>> parse_dest_constraints(wire_reader& r, std::string& error);

// A SIGN_REQUEST's data read as an SSH2 USERAUTH_REQUEST for publickey (or
// publickey-hostbound-v00@openssh.com, which names the host key).
struct userauth_request {
    std::string user;
    bytes session_id;
    std::optional<bytes> host_key_blob; // hostbound method only
};

// OpenSSH's parse_userauth_request: the request must be for service
// ssh-connection with a signature following, a known algorithm name, the
// key `expected_key_blob` (the identity's blob) and nothing after it.
result<userauth_request> parse_userauth_request(byte_span data, byte_span expected_key_blob);

// OpenSSH's match_key_hop: does the bound host key (a plain key, or a host
// certificate: a CA key of the hop signed it, for the hop's hostname, and
// it is valid at `wall_now`) match one of the hop's keys?
bool match_key_hop(const session_binding& host, const dest_hop& hop, std::uint64_t wall_now);

// OpenSSH's permitted_by_dest_constraints: is the step from `from` (null:
// the origin) to `to` (null: anywhere) for `user` (null: any user) allowed
// by one of the constraints?
bool permitted_by_dest_constraints(const session_binding* from, const session_binding* to,
                                   const std::vector<dest_constraint>& constraints, const std::string* user,
                                   std::uint64_t wall_now);

struct refusal {
    log_level level;
    std::string message;
};

// OpenSSH's identity_permitted: may a key with `constraints` be used on
// `conn` (to sign for `user`, or, user null, to be listed/removed)?
// Nothing when permitted; otherwise what to log.
std::optional<refusal> identity_permitted(const std::vector<dest_constraint>& constraints,
                                          const connection_state& conn, const std::string* user,
                                          std::uint64_t wall_now);

// For the add log and tests: "(ORIGIN) (0 keys) > user@host (2 keys)".
std::string describe(const dest_constraint& c);

} // namespace longhaul::agent
