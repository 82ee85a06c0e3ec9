// The constraints of ADD_ID_CONSTRAINED (PROTOCOL.agent): lifetime,
// confirm and restrict-destination-v00 (ssh-add -h; agent_destination)
// are honoured, and sk-provider names a security key's provider;
// everything else is refused, so that a key the user meant to restrict is
// never held unrestricted: maxsign (XMSS keys only in OpenSSH) and the
// extension associated-certs-v00.
#pragma once

#include "common/result.hpp"
#include "ssh/agent/agent_destination.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace longhaul {
class wire_reader;
}

namespace longhaul::agent {

// A provider path (sk-provider constraint, ssh-add -s/-e; OpenSSH reads it
// as a C string): at most PATH_MAX, no NUL.
inline constexpr std::size_t max_provider_path = 4096;

struct add_constraints {
    std::optional<std::uint32_t> lifetime; // seconds
    bool confirm = false;
    std::vector<dest_constraint> destinations; // none: unrestricted
    bool has_destinations = false;             // the extension was given (once only)
    std::optional<std::string> sk_provider;    // sk-provider@openssh.com (security keys)
};

// Reads constraints up to the end of `r`. On refusal `error` says why
// (OpenSSH's wording where it has one): unsupported for a constraint this
// agent does not implement, malformed for a broken or repeated one.
result<add_constraints> parse_key_constraints(wire_reader& r, std::string& error);

} // namespace longhaul::agent
