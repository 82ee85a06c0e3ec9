#include "ssh/escape.hpp"

#include <algorithm>

namespace longhaul {

void escape_filter::feed(byte_span in, bytes& out, std::vector<escape_action>& actions)
{
    for (std::uint8_t c : in) {
        if (pending_) {
            pending_ = false;
            switch (c) {
            case '.': actions.push_back(escape_action::disconnect); continue;
            case 0x1a: actions.push_back(escape_action::suspend); continue;
            case '&': actions.push_back(escape_action::background); continue;
            case '#': actions.push_back(escape_action::list_forwardings); continue;
            case '?': actions.push_back(escape_action::help); continue;
            case 'B': actions.push_back(escape_action::send_break); continue;
            case 'R': actions.push_back(escape_action::rekey); continue;
            case 'V': actions.push_back(escape_action::less_verbose); continue;
            case 'v': actions.push_back(escape_action::more_verbose); continue;
            case 'C': actions.push_back(escape_action::command_line); continue;
            default:
                // ~~ sends one escape character; anything else sends both.
                if (c != escape_)
                    out.push_back(static_cast<std::uint8_t>(escape_));
                out.push_back(c);
                at_line_start_ = c == '\r' || c == '\n';
                continue;
            }
        }
        if (at_line_start_ && escape_ >= 0 && c == escape_) {
            pending_ = true;
            continue;
        }
        out.push_back(c);
        at_line_start_ = c == '\r' || c == '\n';
    }
}

std::string escape_char_name(int c)
{
    if (c < 0)
        return "none";
    if (c < 0x20)
        return std::string("^") + static_cast<char>(c + '@');
    return std::string(1, static_cast<char>(c));
}

int parse_escape_char(std::string_view v)
{
    if (v == "none")
        return -1;
    if (v.size() == 1)
        return static_cast<unsigned char>(v[0]);
    if (v.size() == 2 && v[0] == '^') {
        const unsigned char c = static_cast<unsigned char>(v[1]);
        if (c >= '@' && c <= '_')
            return c & 0x1f;
        if (c >= 'a' && c <= 'z')
            return c & 0x1f;
    }
    return -2;
}

std::string escape_echo(escape_action a, int escape_char)
{
    const std::string e = escape_char_name(escape_char);
    switch (a) {
    case escape_action::disconnect: return e + ".\r\n";
    case escape_action::send_break: return e + "B\r\n";
    case escape_action::list_forwardings: return e + "#\r\n";
    case escape_action::help: return e + "?\r\n";
    default: return "";
    }
}

std::string escape_filter::help_text(bool command_line) const
{
    const std::string e = escape_char_name(escape_);
    std::string s = "Supported escape sequences:\r\n";
    auto line = [&](std::string seq, const char* what) {
        seq.resize(std::max<std::size_t>(seq.size(), 3), ' ');
        s += " " + e + seq + " - " + what + "\r\n";
    };
    line(".", "terminate connection (and any multiplexed sessions)");
    line("B", "send a BREAK to the remote system");
    if (command_line)
        line("C", "open a command line");
    line("R", "request rekey");
    line("V/v", "decrease/increase verbosity (LogLevel)");
    line("^Z", "suspend ssh");
    line("#", "list forwarded connections");
    line("&", "background ssh (when waiting for connections to terminate)");
    line("?", "this message");
    line(e, "send the escape character by typing it twice");
    s += "(Note that escapes are only recognized immediately after newline.)\r\n";
    return s;
}

} // namespace longhaul
