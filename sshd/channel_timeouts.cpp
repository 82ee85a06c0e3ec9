#include "sshd/channel_timeouts.hpp"

#include "common/config_line.hpp"
#include "common/match.hpp"

namespace longhaul {

result<std::vector<channel_timeout_rule>> parse_channel_timeouts(const std::vector<std::string>& values)
{
    std::vector<channel_timeout_rule> rules;
    for (const std::string& v : values) {
        if (v == "none")
            continue;
        // OpenSSH's parse_timeout: the type runs to the first '=', the
        // interval is the rest.
        const auto eq = v.find('=');
        if (eq == 0 || eq == std::string::npos)
            return errc::malformed;
        auto secs = parse_time_interval(std::string_view(v).substr(eq + 1));
        if (!secs)
            return errc::malformed;
        rules.push_back({v.substr(0, eq), std::chrono::seconds(*secs)});
    }
    return rules;
}

std::chrono::seconds channel_timeout_for(const std::vector<channel_timeout_rule>& rules, std::string_view type)
{
    for (const auto& r : rules)
        if (match_pattern(type, r.type_pattern))
            return r.interval;
    return std::chrono::seconds(0);
}

std::string_view channel_timeout_type(std::string_view wire_type)
{
    if (wire_type == "auth-agent@openssh.com")
        return "agent-connection";
    if (wire_type == "x11")
        return "x11-connection";
    if (wire_type == "tun@openssh.com")
        return "tun-connection";
    return wire_type;
}

std::string session_timeout_type(std::string_view request, std::string_view subsystem)
{
    if (request == "shell")
        return "session:shell";
    if (request == "exec")
        return "session:command";
    if (request == "subsystem")
        return "session:subsystem:" + std::string(subsystem);
    return {};
}

} // namespace longhaul
