// OpenSSH's address-list and host-and-address matching (addr_match_list,
// match_host_and_ip), built on common/match.hpp. Unlike a strict CIDR list,
// an entry that is not an address is a wildcard pattern (from="host.example",
// Match Address 192.168.*); only an address with an inconsistent mask
// ("10.0.0.1/8", "10.0.0.0/33") makes the list invalid.
#pragma once

#include <string_view>

namespace longhaul {

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
