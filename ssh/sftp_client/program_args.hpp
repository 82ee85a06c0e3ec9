// Command-line pieces that scp and sftp share (common/short_options scans
// their options): both follow OpenSSH's scp.c and sftp.c, which read
// numbers with strtonum(3)-like bounds and hand a common set of options to
// ssh unchanged ("stay in sync with sftp.c", as scp.c says).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace longhaul::sftp {

// A decimal number in [lo, hi]; ok false for anything else (empty, a sign,
// trailing text, out of range).
std::uint64_t parse_bounded_number(const std::string& s, std::uint64_t lo, std::uint64_t hi, bool& ok);

// strtonum(3)'s reason for refusing `s` as a number in [lo, hi]
// ("invalid", "too small", "too large"), or empty when it is one.
std::string bounded_number_error(const std::string& s, std::uint64_t lo, std::uint64_t hi);

// Requests in flight that -R and -X nrequests= may ask for: OpenSSH takes up
// to 262144 (its -R any number), which at 256 KiB a request could hold 64
// GiB of replies; more than this many are taken as this many (1 GiB).
inline constexpr std::uint32_t max_requests_in_flight = 4096;
inline constexpr std::uint64_t openssh_max_requests = 256 * 1024;
// The largest -B / -X buffer= size used: the largest read OpenSSH's
// sftp-server serves (its limits@openssh.com reply); a larger one is
// taken as this.
inline constexpr std::uint32_t max_buffer_size = 256 * 1024;

// OpenSSH's sftp -B and -R: what strtol(3) reads, not 0 and with nothing
// after it ("Invalid buffer size" / "Invalid number of requests"
// otherwise); a negative number (huge in OpenSSH's size_t) or one above
// `cap` is taken as `cap`.
std::optional<std::uint32_t> parse_sftp_size_option(const std::string& s, std::uint32_t cap);

// -X buffer=N / nrequests=N, as OpenSSH's scp and sftp read it (the buffer
// size as scan_scaled reads it: "64K"): sets one of the two and returns an
// empty string, or returns OpenSSH's fatal message (without the program's
// name): 'Invalid buffer size "0": Invalid argument', 'Invalid number of requests "0": too small', "Invalid -X
// option". Requests above max_requests_in_flight are taken as that many.
std::string apply_sftp_x_option(const std::string& arg, std::uint32_t& buffer_size, std::uint32_t& num_requests);

// The options scp and sftp pass to ssh as they are: -4 -6 -C, -c -F -i -o
// with their argument, and -J as -oProxyJump. Appends ssh's words to
// `ssh_args` and returns true for those; false (nothing appended) for any
// other option.
bool ssh_passthrough_option(char option, const std::string& argument, std::vector<std::string>& ssh_args);

} // namespace longhaul::sftp
