#include "sshd/channel_timeouts.hpp"

#include "sshd/sshd_config.hpp"

#include <doctest/doctest.h>

using namespace longhaul;
using namespace std::chrono_literals;

namespace {

std::vector<channel_timeout_rule> rules_of(const std::vector<std::string>& values)
{
    auto r = parse_channel_timeouts(values);
    REQUIRE(r);
    return *r;
}

} // namespace

TEST_CASE("channel_timeouts: type=interval rules, the first matching pattern wins (OpenSSH's lookup_timeout)")
{
    const auto rules = rules_of({"session:shell=0", "session:*=5m", "direct-tcpip=30s", "*=1h30m"});
    REQUIRE(rules.size() == 4);
    CHECK(rules[1].type_pattern == "session:*");
    CHECK(rules[1].interval == 300s);
    // A zero interval exempts the type even though a later rule matches it.
    CHECK(channel_timeout_for(rules, "session:shell") == 0s);
    CHECK(channel_timeout_for(rules, "session:command") == 300s);
    CHECK(channel_timeout_for(rules, "session:subsystem:sftp") == 300s);
    CHECK(channel_timeout_for(rules, "direct-tcpip") == 30s);
    // "session" alone (a session before its request) is not "session:*".
    CHECK(channel_timeout_for(rules, "session") == 5400s);
    CHECK(channel_timeout_for(rules, "x11-connection") == 5400s);
    // No rule: no timeout. Patterns are single patterns, case-sensitive.
    CHECK(channel_timeout_for(rules_of({"direct-*=10"}), "forwarded-tcpip") == 0s);
    CHECK(channel_timeout_for(rules_of({"direct-*=10"}), "direct-streamlocal@openssh.com") == 10s);
    CHECK(channel_timeout_for(rules_of({"Direct-tcpip=10"}), "direct-tcpip") == 0s);
    CHECK(channel_timeout_for(rules_of({"direct-tcpip,session=10"}), "direct-tcpip") == 0s);
    CHECK(channel_timeout_for(rules_of({"session:subsystem:sft?=7"}), "session:subsystem:sftp") == 7s);
    CHECK(channel_timeout_for({}, "session") == 0s);
}

TEST_CASE("channel_timeouts: values as sshd_config keeps them; the type runs to the first '='")
{
    CHECK(rules_of({}).empty());
    CHECK(rules_of({"none"}).empty());
    // The interval is everything after the first '=' (OpenSSH's strchr).
    CHECK_FALSE(parse_channel_timeouts({"a=b=5"}));
    CHECK_FALSE(parse_channel_timeouts({"=5"}));
    CHECK_FALSE(parse_channel_timeouts({"session"}));
    CHECK_FALSE(parse_channel_timeouts({"session=5x"}));
    CHECK_FALSE(parse_channel_timeouts({"session="}));
    // What the configuration accepts, in order, and a Match block's own.
    const auto cfg = sshd_config::parse("HostKey /etc/ssh/ssh_host_ed25519_key\n"
                                        "ChannelTimeout session:*=5m agent-connection=1h\n"
                                        "Match User alice\n  ChannelTimeout direct-tcpip=2s\n",
                                        "test.cfg", {});
    const auto global = rules_of(cfg.global().channel_timeouts);
    REQUIRE(global.size() == 2);
    CHECK(global[1].type_pattern == "agent-connection");
    CHECK(global[1].interval == 3600s);
    connection_info alice;
    alice.user = "alice";
    alice.address = alice.host = "192.0.2.1";
    const auto matched = rules_of(cfg.for_connection(alice).channel_timeouts);
    REQUIRE(matched.size() == 1);
    CHECK(matched[0].type_pattern == "direct-tcpip");
    CHECK(matched[0].interval == 2s);
}

TEST_CASE("channel_timeouts: the names ChannelTimeout gives channels, as OpenSSH 9.2's sshd_config(5) lists them")
{
    CHECK(channel_timeout_type("session") == "session");
    CHECK(channel_timeout_type("direct-tcpip") == "direct-tcpip");
    CHECK(channel_timeout_type("direct-streamlocal@openssh.com") == "direct-streamlocal@openssh.com");
    CHECK(channel_timeout_type("forwarded-tcpip") == "forwarded-tcpip");
    CHECK(channel_timeout_type("forwarded-streamlocal@openssh.com") == "forwarded-streamlocal@openssh.com");
    CHECK(channel_timeout_type("auth-agent@openssh.com") == "agent-connection");
    CHECK(channel_timeout_type("x11") == "x11-connection");
    CHECK(channel_timeout_type("tun@openssh.com") == "tun-connection");
    CHECK(session_timeout_type("shell") == "session:shell");
    CHECK(session_timeout_type("exec") == "session:command");
    CHECK(session_timeout_type("subsystem", "sftp") == "session:subsystem:sftp");
    CHECK(session_timeout_type("pty-req").empty());
}
