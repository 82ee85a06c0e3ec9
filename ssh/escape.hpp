// The client's escape sequences (ssh(1) ESCAPE CHARACTERS): recognised only
// at the start of a line, the escape character followed by one command
// character. A pure filter over the bytes read from the terminal: it returns
// the bytes to send and the actions to take.
#pragma once

#include "common/bytes.hpp"

#include <string>
#include <vector>

namespace longhaul {

enum class escape_action {
    disconnect,      // ~.
    suspend,         // ~^Z
    background,      // ~&
    list_forwardings,// ~#
    help,            // ~?
    send_break,      // ~B
    rekey,           // ~R
    less_verbose,    // ~V (OpenSSH: V lowers the LogLevel, v raises it)
    more_verbose,    // ~v
    command_line,    // ~C
};

class escape_filter {
public:
    // escape_char < 0: no escape character ("EscapeChar none").
    explicit escape_filter(int escape_char) : escape_(escape_char) {}

    // Processes terminal input; bytes to forward are appended to `out`,
    // actions to `actions` in order.
    void feed(byte_span in, bytes& out, std::vector<escape_action>& actions);

    // The help text for ~? with the configured escape character, as
    // OpenSSH prints it (~C only when EnableEscapeCommandline is on).
    std::string help_text(bool command_line) const;
    int escape_char() const noexcept { return escape_; }

private:
    int escape_;
    bool at_line_start_ = true;
    bool pending_ = false; // saw the escape character at a line start
};

// The line OpenSSH writes to stderr when it takes an escape, before acting
// on it ("~#\r\n", "~B\r\n"; "" for those it does not echo, such as ~C).
std::string escape_echo(escape_action a, int escape_char);

// "~" for '~', "^X" for control characters, "none" for -1.
std::string escape_char_name(int c);
// Parses ssh's -e / EscapeChar value: "none", a single character, or "^X".
// Returns -2 on a bad value.
int parse_escape_char(std::string_view v);

} // namespace longhaul
