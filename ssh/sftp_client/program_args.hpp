// Command-line parsing that scp and sftp share: both follow OpenSSH's
// scp.c and sftp.c, which parse with getopt(3), read numbers with
// strtonum(3)-like bounds, and hand a common set of options to ssh
// unchanged ("stay in sync with sftp.c", as scp.c says).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

namespace longhaul::sftp {

// getopt(3) over argv[1..]: options up to the first operand or "--";
// `with_argument` lists the letters that take an argument (attached or the
// next word), `flags` those that do not. Calls `on` for each option in
// order (argument empty for a flag) and returns the index of the first
// operand; -1 with `error` set ("unknown option -- x", "option requires an
// argument -- x") at the first bad one, after `on` ran for those before it.
// The error always ends with the offending letter. The second form reads
// the words of a command typed at sftp's prompt.
int parse_short_options(int argc, char** argv, const char* with_argument, const char* flags,
                        const std::function<void(char option, const std::string& argument)>& on, std::string& error);
int parse_short_options(const std::vector<std::string>& words, const char* with_argument, const char* flags,
                        const std::function<void(char option, const std::string& argument)>& on, std::string& error);

// A decimal number in [lo, hi]; ok false for anything else (empty, a sign,
// trailing text, out of range).
std::uint64_t parse_bounded_number(const std::string& s, std::uint64_t lo, std::uint64_t hi, bool& ok);

// The options scp and sftp pass to ssh as they are: -4 -6 -C, -c -F -i -o
// with their argument, and -J as -oProxyJump. Appends ssh's words to
// `ssh_args` and returns true for those; false (nothing appended) for any
// other option.
bool ssh_passthrough_option(char option, const std::string& argument, std::vector<std::string>& ssh_args);

} // namespace longhaul::sftp
