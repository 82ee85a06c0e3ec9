// Small text parsers that ssh_config, sshd_config, authorized_keys and the
// command lines share. OpenSSH keeps these in misc.c, which the client and
// the server link alike, so one implementation here serves both sides and
// follows OpenSSH 9.2's behaviour (and error wording) for each.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace longhaul {

// ASCII case-insensitive equality, as strcasecmp(a, b) == 0.
bool iequals(std::string_view a, std::string_view b) noexcept;

// `s` with its letters lowercased (host names, keywords, Match attributes).
std::string lowercase(std::string_view s);

// OpenBSD's scan_scaled(3), as OpenSSH 9.2 reads RekeyLimit on both sides:
// "[+|-]N[.F][BKMGTPE]" in powers of 1024. The fraction only counts with a
// unit, and is cut to fit as scan_scaled cuts it ("1.25E" is not 1.25 * 2^60
// but 1383505805528216371); a unit may be followed by punctuation ("1K!")
// but not by a letter or digit; no digits at all reads as 0 ("K", "."). On
// failure `why` is the strerror text OpenSSH prints: "Invalid argument" or
// "Numerical result out of range".
std::optional<long long> scan_scaled(std::string_view s, const char*& why);

} // namespace longhaul
