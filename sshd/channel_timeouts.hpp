// ChannelTimeout (sshd_config(5), OpenSSH 9.2): "type=interval" rules. A
// channel's timeout is the interval of the first rule whose type pattern
// matches the channel's type name (OpenSSH's lookup_timeout), zero when
// none does; the connection core then reports the channel once it has
// carried no data either way for that long (connection::idle_expired), and
// sshd closes it.
#pragma once

#include "common/result.hpp"

#include <chrono>
#include <string>
#include <string_view>
#include <vector>

namespace longhaul {

struct channel_timeout_rule {
    std::string type_pattern;         // '*' and '?' wildcards, one pattern (no list)
    std::chrono::seconds interval{0}; // 0: this type never times out
};

// The rules from the configuration's values, in order ("none" stands for
// no rule and is not among them). A value without "type=" before a valid
// interval is errc::malformed (the configuration refused it already).
result<std::vector<channel_timeout_rule>> parse_channel_timeouts(const std::vector<std::string>& values);

// The first rule whose pattern matches `type`: its interval; 0 when none.
std::chrono::seconds channel_timeout_for(const std::vector<channel_timeout_rule>& rules, std::string_view type);

// The type name ChannelTimeout knows a channel by, from the channel type
// on the wire: OpenSSH 9.2 names the agent's and X11's channels
// "agent-connection" and "x11-connection" (and a tunnel's
// "tun-connection"); the others keep their wire names (session,
// direct-tcpip, direct-streamlocal@openssh.com, forwarded-tcpip,
// forwarded-streamlocal@openssh.com).
std::string_view channel_timeout_type(std::string_view wire_type);

// The name a session takes once its request is known (OpenSSH's
// channel_set_xtype from session.c): "session:shell", "session:command"
// (exec) and "session:subsystem:NAME"; empty for any other request.
std::string session_timeout_type(std::string_view request, std::string_view subsystem = {});

} // namespace longhaul
