// Pattern matching as OpenSSH does it for Host/Match blocks, known_hosts,
// AllowUsers and authorized_keys from=: '*' and '?' wildcards, comma
// separated lists with '!' negation, and CIDR address lists.
#pragma once

#include <string_view>

namespace longhaul {

// '*' matches any run of characters, '?' any one character.
bool match_pattern(std::string_view s, std::string_view pattern) noexcept;

enum class list_match { none = 0, positive = 1, negated = -1 };

// Matches `s` against a comma-separated pattern list. A matching negated
// pattern ("!pat") wins over everything (OpenSSH's -1); otherwise any
// matching positive pattern gives `positive`. With `fold_case` both sides are
// compared lowercase (host names).
list_match match_pattern_list(std::string_view s, std::string_view list, bool fold_case) noexcept;

// Host names: case-insensitive list matching.
inline list_match match_hostname(std::string_view host, std::string_view list) noexcept
{
    return match_pattern_list(host, list, true);
}

// Address lists mixing wildcard patterns and CIDR blocks ("10.0.0.0/8",
// "2001:db8::/32", "!192.168.1.1"). `ok` is false when the list holds an
// invalid CIDR entry (OpenSSH then rejects the whole list).
list_match match_address_list(std::string_view address, std::string_view list, bool& ok) noexcept;

// True when `cidr` ("a.b.c.d/n", "x::/n" or a plain address) is well formed.
bool valid_cidr(std::string_view cidr) noexcept;

} // namespace longhaul
