// Making peer-supplied text safe to print (the role of OpenSSH's strnvis):
// a hostile server must not be able to drive the user's terminal.
#pragma once

#include <string>
#include <string_view>

namespace longhaul {

// Printable ASCII and spaces pass; other bytes become \ooo (octal), except
// that tab and (when keep_newlines) CR/LF pass through.
std::string printable(std::string_view s, bool keep_newlines = false);

} // namespace longhaul
