// Secrets from and to text, for tests that write passwords and answers as
// string literals.
#pragma once

#include "common/bytes.hpp"

#include <string>
#include <string_view>

namespace longhaul::test {

inline secret_bytes secret(std::string_view s) { return secret_bytes(as_bytes(s)); }
inline std::string str(const secret_bytes& s) { return std::string(as_string_view(s.span())); }

} // namespace longhaul::test
