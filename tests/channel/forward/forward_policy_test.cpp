#include "channel/forward/forward_policy.hpp"

#include <doctest/doctest.h>

#include <optional>
#include <string>

using namespace longhaul::forward;

TEST_CASE("policy: which forwarding is enabled")
{
    using a = forwarding_allowed;
    using d = forward_direction;
    forwarding_settings s;
    CHECK(tcp_forwarding_enabled(s, d::local));
    CHECK(tcp_forwarding_enabled(s, d::remote));
    s.tcp = a::local;
    CHECK(tcp_forwarding_enabled(s, d::local));
    CHECK_FALSE(tcp_forwarding_enabled(s, d::remote));
    s.tcp = a::remote;
    CHECK_FALSE(tcp_forwarding_enabled(s, d::local));
    CHECK(tcp_forwarding_enabled(s, d::remote));
    s.tcp = a::no;
    CHECK_FALSE(tcp_forwarding_enabled(s, d::remote));
    CHECK(streamlocal_forwarding_enabled(s, d::local)); // separate settings

    forwarding_settings off;
    off.disable_forwarding = true;
    CHECK_FALSE(tcp_forwarding_enabled(off, d::local));
    CHECK_FALSE(streamlocal_forwarding_enabled(off, d::remote));
    forwarding_settings key;
    key.key_permits_forwarding = false; // no-port-forwarding, restrict
    CHECK_FALSE(tcp_forwarding_enabled(key, d::local));
    CHECK_FALSE(streamlocal_forwarding_enabled(key, d::local));

    forwarding_settings on;
    CHECK(tcpip_forward_enabled(on, 8080, false));
    CHECK(tcpip_forward_enabled(on, 0, true));
    CHECK_FALSE(tcpip_forward_enabled(on, 0, false)); // nowhere to say which port
    on.tcp = a::local;
    CHECK_FALSE(tcpip_forward_enabled(on, 8080, true));
}

TEST_CASE("policy: GatewayPorts and the bind address (channel_fwd_bind_addr)")
{
    using g = gateway_ports;
    struct row {
        std::optional<std::string> requested;
        bool is_client;
        g gp;
        bool wildcard;
        std::optional<std::string> address;
        bool overridden;
    };
    const std::nullopt_t none = std::nullopt;
    const row rows[] = {
        // ssh -L / -D
        {none, true, g::no, false, none, false},
        {none, true, g::yes, true, none, false},
        {"", true, g::no, true, none, false},
        {"*", true, g::no, true, none, false},
        {"localhost", true, g::no, false, none, false},
        {"localhost", true, g::yes, false, none, false},
        {"127.0.0.1", true, g::no, false, "127.0.0.1", false},
        {"::1", true, g::no, false, "::1", false},
        {"192.0.2.1", true, g::no, false, "192.0.2.1", false},
        {"0.0.0.0", true, g::no, false, "0.0.0.0", false},
        {"::", true, g::no, false, "::", false},
        // sshd, tcpip-forward (ssh sends "localhost" when no address was given)
        {"localhost", false, g::no, false, none, false},
        {"", false, g::no, false, none, false},
        {"*", false, g::no, false, none, false},
        {"0.0.0.0", false, g::no, false, none, false},
        {"192.0.2.1", false, g::no, false, none, false},
        {"127.0.0.1", false, g::no, false, "127.0.0.1", false},
        {"::1", false, g::no, false, "::1", false},
        {"localhost", false, g::yes, true, none, true},
        {"", false, g::yes, true, none, false},
        {"*", false, g::yes, true, none, false},
        {"0.0.0.0", false, g::yes, true, none, false},
        {"192.0.2.1", false, g::yes, true, none, true},
        {"127.0.0.1", false, g::yes, true, none, true},
        {"localhost", false, g::client_specified, false, none, false},
        {"", false, g::client_specified, true, none, false},
        {"*", false, g::client_specified, true, none, false},
        {"0.0.0.0", false, g::client_specified, false, "0.0.0.0", false},
        {"::", false, g::client_specified, false, "::", false},
        {"192.0.2.1", false, g::client_specified, false, "192.0.2.1", false},
        {"127.0.0.1", false, g::client_specified, false, "127.0.0.1", false},
    };
    for (const auto& r : rows) {
        CAPTURE(r.requested.value_or("(none)"));
        CAPTURE(r.is_client);
        CAPTURE(static_cast<int>(r.gp));
        const auto b = forward_bind_address(r.requested ? std::optional<std::string_view>(*r.requested) : std::nullopt,
                                            r.is_client, r.gp);
        CHECK(b.wildcard == r.wildcard);
        CHECK(b.address == r.address);
        CHECK(b.debug_message.has_value() == r.overridden);
    }
    CHECK(forward_bind_address("localhost", false, g::yes).debug_message ==
          "Forwarding listen address \"localhost\" overridden by server GatewayPorts");
    // Old peers' "0.0.0.0" means every address, with clientspecified.
    CHECK(forward_bind_address("0.0.0.0", false, g::client_specified, true).wildcard);
    CHECK_FALSE(forward_bind_address("0.0.0.0", false, g::no, true).wildcard);
    CHECK(forward_bind_address("0.0.0.0", true, g::no, true).address == "0.0.0.0");
}

TEST_CASE("policy: the bind host ssh sends and matching forwarded-tcpip to -R")
{
    CHECK(remote_forward_bind_host(std::nullopt) == "localhost");
    CHECK(remote_forward_bind_host("") == "");
    CHECK(remote_forward_bind_host("*") == "");
    CHECK(remote_forward_bind_host("0.0.0.0") == "0.0.0.0");
    CHECK(remote_forward_bind_host("localhost") == "localhost");

    CHECK(remote_forward_matches(std::nullopt, 8080, "localhost", 8080));
    CHECK_FALSE(remote_forward_matches(std::nullopt, 8080, "localhost", 8081));
    CHECK_FALSE(remote_forward_matches(std::nullopt, 8080, "127.0.0.1", 8080));
    CHECK(remote_forward_matches("*", 9000, "", 9000));
    CHECK(remote_forward_matches("", 9000, "", 9000));
    CHECK(remote_forward_matches("192.0.2.1", 9000, "192.0.2.1", 9000));
    CHECK_FALSE(remote_forward_matches("192.0.2.1", 9000, "", 9000));
}

// Each line as Debian's sshd 9.2 logged it for the same refusal.
TEST_CASE("policy: refusal lines in OpenSSH's words")
{
    CHECK(refused_local_forward_log("192.0.2.10", 50000, "db", 5432) ==
          "refused local port forward: originator 192.0.2.10 port 50000, target db port 5432");
    CHECK(refused_streamlocal_forward_log("", 0, "/run/s") ==
          "refused streamlocal port forward: originator  port 0, target /run/s");
    CHECK(denied_connect_log("192.0.2.10", 33532, "localhost", 24599) ==
          "Received request from 192.0.2.10 port 33532 to connect to host localhost port 24599, but the request "
          "was denied.");
    CHECK(denied_connect_path_log("/run/s") == "Received request to connect to path /run/s, but the request was denied.");
    CHECK(denied_remote_forward_log("192.0.2.10", 50000, "localhost", 8080) ==
          "Received request from 192.0.2.10 port 50000 to remote forward to host localhost port 8080, but the "
          "request was denied.");
    CHECK(denied_remote_streamlocal_log("192.0.2.10", 50000, "/tmp/x") ==
          "Received request from 192.0.2.10 port 50000 to remote forward to path \"/tmp/x\", but the request was "
          "denied.");
    // Peer text: cut at 100 bytes as %.100s, control bytes escaped.
    const std::string line = denied_connect_log("192.0.2.10", 2, std::string(300, 'h'), 1);
    CHECK(line.find(std::string(100, 'h') + " port 1") != std::string::npos);
    CHECK(line.find(std::string(101, 'h')) == std::string::npos);
    CHECK(denied_connect_log("192.0.2.10", 2, "a\x1b[2Jb", 1).find('\x1b') == std::string::npos);
}
