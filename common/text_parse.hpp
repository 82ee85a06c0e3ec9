// Small text parsers that ssh_config, sshd_config, authorized_keys and the
// command lines share. OpenSSH keeps these in misc.c, which the client and
// the server link alike, so one implementation here serves both sides and
// follows OpenSSH 9.2's behaviour (and error wording) for each.
#pragma once

#include <string>
#include <string_view>

namespace longhaul {

// ASCII case-insensitive equality, as strcasecmp(a, b) == 0.
bool iequals(std::string_view a, std::string_view b) noexcept;

// `s` with its letters lowercased (host names, keywords, Match attributes).
std::string lowercase(std::string_view s);

} // namespace longhaul
