// Lexing of ssh_config / sshd_config lines, shared by the client and the
// server parsers: "Keyword value...", "Keyword=value", quoted arguments and
// comments, with OpenSSH's rules and error wording.
#pragma once

#include "common/result.hpp"

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

struct config_line {
    std::string keyword;            // lowercased
    std::vector<std::string> args;  // quotes removed
    bool empty = true;              // blank or comment line
    std::string value;              // the text after the keyword, verbatim
                                    // (ProxyCommand and friends take it whole)
};

// The keyword ends at whitespace or a single '='. The rest is split into
// arguments on whitespace; "double" or 'single' quotes group (a backslash
// escapes a quote or backslash inside them); an unquoted '#' starting an
// argument ends the line. On failure `error` says why, in OpenSSH's words
// ("no argument after keyword \"port\"", "invalid quotes").
result<config_line> lex_config_line(std::string_view line, std::string& error);

// The lowercased keyword of a line as lex_config_line() finds it (also when
// the arguments do not lex); nullopt for blank and comment lines.
std::optional<std::string> config_line_keyword(std::string_view line);

// OpenSSH's argv_split for one argument string (used by Match and similar).
result<std::vector<std::string>> split_arguments(std::string_view s, bool stop_at_comment = true);

// Yes/no values as OpenSSH accepts them ("yes"/"no" only; callers with extra
// values like "ask" check those first).
result<bool> parse_yes_no(std::string_view v);

// Time intervals: "90", "1h30m", "2d" (s, m, h, d, w); errc::malformed on junk.
result<long long> parse_time_interval(std::string_view v);

// A unit letter of OpenSSH's time intervals (s m h d w, either case): its
// length in seconds; 0 for any other character. Shared by the interval
// parsers (this one, ssh-keygen's convtime, sshd's convtime_double).
long long time_unit_seconds(char unit) noexcept;

} // namespace longhaul
