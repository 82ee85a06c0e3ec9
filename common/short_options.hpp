// The command-line scan of OpenSSH's getopt(3). OpenSSH builds with
// openbsd-compat's BSD getopt on every platform: options end at the first
// operand or at "--" (glibc's reordering never applies), letters group
// ("-vk"), and an option's argument is the rest of its word or the next
// word. Every program here scans its options with this one function, with
// no process-wide state (optind, optarg), so a program can scan twice (ssh
// after the destination) and a test can call it with any words.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

// Called once per option in order: the letter and its argument (empty for
// a letter that takes none). Returning false stops the scan there (the
// caller's own error, or an option such as ssh's -V that ends parsing).
using short_option_handler = std::function<bool(char option, const std::string& argument)>;

struct short_option_scan {
    // The first word not taken: an operand, the word after "--", or the
    // end; where the scan stopped when `stopped` or `error` is set.
    std::size_t next = 0;
    // getopt's complaint at the first bad option, ending with its letter:
    // "unknown option -- x" or "option requires an argument -- x".
    std::string error;
    // The handler returned false.
    bool stopped = false;

    bool ok() const noexcept { return error.empty() && !stopped; }
};

// Scans words[first..] with a getopt(3) option string, as OpenSSH's
// programs spell theirs ("vkE:t:": -v, -k, and -E and -t with an
// argument); any other letter (':' included) is an unknown option. The
// handler has run for every option before a bad one.
short_option_scan scan_short_options(const std::vector<std::string>& words, std::size_t first,
                                     std::string_view optstring, const short_option_handler& on);

} // namespace longhaul
