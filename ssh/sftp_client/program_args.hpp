// Command-line pieces that scp and sftp share (common/short_options scans
// their options): both follow OpenSSH's scp.c and sftp.c, which read
// numbers with strtonum(3)-like bounds and hand a common set of options to
// ssh unchanged ("stay in sync with sftp.c", as scp.c says).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace longhaul::sftp {

// A decimal number in [lo, hi]; ok false for anything else (empty, a sign,
// trailing text, out of range).
std::uint64_t parse_bounded_number(const std::string& s, std::uint64_t lo, std::uint64_t hi, bool& ok);

// strtonum(3)'s reason for refusing `s` as a number in [lo, hi]
// ("invalid", "too small", "too large"), or empty when it is one.
std::string bounded_number_error(const std::string& s, std::uint64_t lo, std::uint64_t hi);

// -X buffer=N / nrequests=N, as OpenSSH's scp and sftp read it: sets one of
// the two and returns an empty string, or returns OpenSSH's fatal message
// (without the program's name): 'Invalid buffer size "0": Invalid
// argument', 'Invalid number of requests "0": too small', "Invalid -X
// option". Requests are capped at 4096 (OpenSSH takes up to 262144).
std::string apply_sftp_x_option(const std::string& arg, std::uint32_t& buffer_size, std::uint32_t& num_requests);

// The options scp and sftp pass to ssh as they are: -4 -6 -C, -c -F -i -o
// with their argument, and -J as -oProxyJump. Appends ssh's words to
// `ssh_args` and returns true for those; false (nothing appended) for any
// other option.
bool ssh_passthrough_option(char option, const std::string& argument, std::vector<std::string>& ssh_args);

} // namespace longhaul::sftp
