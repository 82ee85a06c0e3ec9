#include "ssh/escape_command.hpp"

#include "ssh/forward_spec.hpp"

#include <cctype>

namespace longhaul {

namespace {

bool is_space(char c) { return std::isspace(static_cast<unsigned char>(c)) != 0; }

std::string_view skip_isspace(std::string_view s)
{
    while (!s.empty() && is_space(s.front()))
        s.remove_prefix(1);
    return s;
}

escape_command failed(std::string text)
{
    escape_command c;
    c.what = escape_command::kind::error;
    c.text = std::move(text);
    return c;
}

} // namespace

escape_command parse_escape_command(std::string_view line, bool permit_local_command, const env_lookup& env)
{
    // The line as read, without its end.
    while (!line.empty() && (line.back() == '\n' || line.back() == '\r'))
        line.remove_suffix(1);
    std::string_view s = skip_isspace(line);
    if (!s.empty() && s.front() == '-')
        s.remove_prefix(1);
    escape_command c;
    if (s.empty())
        return c;
    if (s.front() == 'h' || s.front() == 'H' || s.front() == '?') {
        c.what = escape_command::kind::help;
        return c;
    }
    if (s.front() == '!' && permit_local_command) {
        c.what = escape_command::kind::local_command;
        c.text = std::string(s.substr(1));
        return c;
    }
    const bool cancel = s.front() == 'K';
    if (cancel)
        s.remove_prefix(1);
    if (s.empty())
        return failed("Invalid command.");
    switch (s.front()) {
    case 'L': c.dir = escape_command::direction::local; break;
    case 'R': c.dir = escape_command::direction::remote; break;
    case 'D': c.dir = escape_command::direction::dynamic; break;
    default: return failed("Invalid command.");
    }
    const std::string_view spec = skip_isspace(s.substr(1));
    const bool remote = c.dir == escape_command::direction::remote;
    if (cancel) {
        // "[bind_address:]port" or a socket path, whatever the direction.
        if (!parse_forward(spec, true, false, c.spec, env))
            return failed("Bad forwarding close specification.");
        c.what = escape_command::kind::cancel_forward;
        return c;
    }
    if (remote) {
        // -R is a forward to a target or, with a port alone, a reverse SOCKS proxy.
        if (!parse_forward(spec, false, true, c.spec, env) && !parse_forward(spec, true, true, c.spec, env))
            return failed("Bad remote forwarding specification.");
    } else if (!parse_forward(spec, c.dir == escape_command::direction::dynamic, false, c.spec, env)) {
        return failed("Bad local forwarding specification.");
    }
    c.what = escape_command::kind::add_forward;
    return c;
}

std::vector<std::string> escape_command_help(bool permit_local_command)
{
    std::vector<std::string> lines = {
        "Commands:",
        "      -L[bind_address:]port:host:hostport    Request local forward",
        "      -R[bind_address:]port:host:hostport    Request remote forward",
        "      -D[bind_address:]port                  Request dynamic forward",
        "      -KL[bind_address:]port                 Cancel local forward",
        "      -KR[bind_address:]port                 Cancel remote forward",
        "      -KD[bind_address:]port                 Cancel dynamic forward",
    };
    if (permit_local_command)
        lines.push_back("      !args                                  Execute local command");
    return lines;
}

} // namespace longhaul
