// The constraints of ADD_ID_CONSTRAINED (PROTOCOL.agent): lifetime and
// confirm are honoured; everything else is refused, so that a key the
// user meant to restrict is never held unrestricted: maxsign (XMSS keys
// only in OpenSSH), and the extensions restrict-destination-v00
// (ssh-add -h), sk-provider (security keys) and associated-certs-v00.
#pragma once

#include "common/result.hpp"

#include <cstdint>
#include <optional>
#include <string>

namespace longhaul {
class wire_reader;
}

namespace longhaul::agent {

struct add_constraints {
    std::optional<std::uint32_t> lifetime; // seconds
    bool confirm = false;
};

// Reads constraints up to the end of `r`. On refusal `error` says why
// (OpenSSH's wording where it has one): unsupported for a constraint this
// agent does not implement, malformed for a broken or repeated one.
result<add_constraints> parse_key_constraints(wire_reader& r, std::string& error);

} // namespace longhaul::agent
