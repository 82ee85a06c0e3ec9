// OpenSSH's %-token and ${VARIABLE} expansion (misc.c's
// vdollar_percent_expand), shared by ssh_config values (ssh/tokens.hpp) and
// sshd's AuthorizedKeysFile and AuthorizedKeysCommand.
#pragma once

#include "common/result.hpp"

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// A letter and its replacement. Only listed letters are valid after '%'
// ("%%" always is): which letters a setting accepts is the caller's choice.
struct percent_token {
    char key;
    std::string value;
};
using percent_tokens = std::vector<percent_token>;

// Looks up an environment variable; nullopt when unset.
using env_lookup = std::function<std::optional<std::string>(const std::string&)>;

struct percent_expansion {
    std::string text;
    bool malformed = true;    // bad text (unknown %x, lone '%', bad ${}): no result
    bool missing_var = false; // a ${VAR} was unset: no result either
    // Why, in OpenSSH's words less its "vdollar_percent_expand: " prefix:
    // "unknown key %x", "invalid format", "zero-length environment
    // variable", "env var ${X} has no value", "environment variable 'X'
    // missing closing '}'". The first problem is reported.
    std::string reason;
};

// "%x" for each key in `tokens` and "%%" -> "%" when `tokens` is given;
// "${VAR}" from `env` when `env` is given; everything else is copied.
percent_expansion vdollar_percent_expand(std::string_view s, const percent_tokens* tokens, const env_lookup* env);

// %-tokens only, for callers that log and go on rather than stop (sshd).
// On failure `error` is "percent_expand: " and the reason.
result<std::string> percent_expand(std::string_view s, const percent_tokens& tokens, std::string& error);

} // namespace longhaul
