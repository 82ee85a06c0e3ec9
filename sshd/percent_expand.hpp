// OpenSSH's percent_expand: "%h" style tokens in AuthorizedKeysFile,
// AuthorizedKeysCommand and similar settings.
#pragma once

#include "common/result.hpp"

#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace longhaul {

struct percent_token {
    char key;
    std::string value;
};

// Replaces "%%" with '%' and "%<key>" with its value. An unknown key or a
// trailing '%' is an error (invalid_argument) with OpenSSH's wording in
// `error` ("percent_expand: unknown key %x", "percent_expand: invalid format").
result<std::string> percent_expand(std::string_view s, const std::vector<percent_token>& tokens, std::string& error);

} // namespace longhaul
