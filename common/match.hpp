// Pattern matching as OpenSSH does it (match.c, addrmatch.c) for Host/Match
// blocks, known_hosts, AllowUsers and authorized_keys from=: '*' and '?'
// wildcards, comma separated lists with '!' negation, and address lists
// mixing patterns and CIDR blocks.
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

// True when `cidr` ("a.b.c.d/n", "x::/n" or a plain address) is well formed.
bool valid_cidr(std::string_view cidr) noexcept;

// OpenSSH's addr_match_list: a list mixing CIDR blocks ("10.0.0.0/8",
// "2001:db8::/32", "!192.168.1.1") and wildcard patterns. An entry that is
// not an address (with an optional decimal mask up to 128) is a pattern
// (from="host.example", Match Address 192.168.*); only an address with an
// inconsistent mask ("10.0.0.1/8", "10.0.0.0/33") makes the list invalid.
enum class addr_list_result { invalid = -2, negated = -1, none = 0, positive = 1 };
// `address` may be empty to check the list's syntax only (then the result
// is none or invalid).
addr_list_result addr_match_list(std::string_view address, std::string_view list);

// OpenSSH's match_host_and_ip for authorized_keys from= and AllowUsers
// user@host: 1 when the host name or the address matches positively and
// neither is negated, 0 when not, -1 when the list is invalid.
int match_host_and_ip(std::string_view host, std::string_view address, std::string_view patterns);

// AllowUsers/DenyUsers "user@host" patterns (OpenSSH's match_user): 1 when
// the user (and host or address after '@') match, 0 when not, -1 for an
// invalid address list after '@'.
int match_user_pattern(std::string_view user, std::string_view host, std::string_view address,
                       std::string_view pattern);

} // namespace longhaul
