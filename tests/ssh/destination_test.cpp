#include "ssh/destination.hpp"

#include "ssh/forward_spec.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

const env_lookup sockdir_env = [](const std::string& name) -> std::optional<std::string> {
    if (name == "SOCKDIR")
        return std::string("/run/x");
    return std::nullopt;
};

forward_spec forward_of(std::string_view spec, bool dynamic = false, bool remote = false)
{
    forward_spec f;
    REQUIRE(parse_forward(spec, dynamic, remote, f, sockdir_env));
    return f;
}

bool forward_fails(std::string_view spec, bool dynamic = false, bool remote = false)
{
    forward_spec f;
    return !parse_forward(spec, dynamic, remote, f, sockdir_env);
}

} // namespace

TEST_CASE("destination: ports")
{
    CHECK(parse_port("22") == 22);
    CHECK(parse_port("0") == 0);
    CHECK(parse_port("65535") == 65535);
    CHECK(parse_port("65536") == -1);
    CHECK(parse_port("") == -1);
    CHECK(parse_port("2x") == -1);
    CHECK(parse_port("ssh") == 22);
    CHECK(parse_port("no-such-service-name") == -1);
}

TEST_CASE("destination: [user@]host[:port]")
{
    user_host_port r;
    REQUIRE(parse_user_host_port("bob@host:2200", r));
    CHECK(*r.user == "bob");
    CHECK(r.host == "host");
    CHECK(r.port == 2200);
    REQUIRE(parse_user_host_port("[::1]:22", r));
    CHECK_FALSE(r.user);
    CHECK(r.host == "::1");
    CHECK(r.port == 22);
    REQUIRE(parse_user_host_port("a@b@h", r));
    CHECK(*r.user == "a@b");
    CHECK_FALSE(parse_user_host_port("@h", r));
    CHECK_FALSE(parse_user_host_port("h:0", r));
    CHECK_FALSE(parse_user_host_port("", r));
    CHECK_FALSE(parse_user_host_port("[::1", r));
    // Only ':' ends the host here, as in OpenSSH 9.2 (ssh -J host/22 is an
    // "Invalid -J argument"); '/' separates a path in ssh:// URIs only.
    CHECK_FALSE(parse_user_host_port("host/22", r));
    CHECK_FALSE(parse_user_host_port("[::1]/22", r));
    REQUIRE(parse_user_host_port("host:", r));
    CHECK(r.port == -1);
}

TEST_CASE("destination: valid names")
{
    CHECK(valid_domain("a.b-c_d.example"));
    CHECK(valid_domain("1.2.3.4"));
    CHECK_FALSE(valid_domain("-a"));
    CHECK_FALSE(valid_domain("a..b"));
    CHECK_FALSE(valid_domain("a."));
    CHECK_FALSE(valid_domain("a:b"));
    CHECK_FALSE(valid_domain(""));
    CHECK(valid_hostname("[::1]"));
    CHECK_FALSE(valid_hostname("a`b"));
    CHECK_FALSE(valid_hostname(std::string("a\x01", 2)));
    CHECK(valid_remote_user("a b$c"));
    CHECK_FALSE(valid_remote_user("a|b"));
    CHECK(host_with_port("h", 22) == "h");
    CHECK(host_with_port("h", 2222) == "[h]:2222");
}

TEST_CASE("destination: forwarding specifications")
{
    auto f = forward_of("8080:localhost:80");
    CHECK_FALSE(f.listen_host);
    CHECK(f.listen_port == 8080);
    CHECK(*f.connect_host == "localhost");
    CHECK(f.connect_port == 80);

    f = forward_of("127.0.0.1:8080:[2001:db8::1]:80");
    CHECK(*f.listen_host == "127.0.0.1");
    CHECK(*f.connect_host == "2001:db8::1");

    f = forward_of("/tmp/l.sock:host:80");
    CHECK(*f.listen_path == "/tmp/l.sock");
    CHECK(f.listen_port == port_streamlocal);

    f = forward_of("8080:/tmp/r.sock");
    CHECK(*f.connect_path == "/tmp/r.sock");
    CHECK(f.connect_port == port_streamlocal);

    f = forward_of("${SOCKDIR}/a:${SOCKDIR}/b");
    CHECK(*f.listen_path == "/run/x/a");
    CHECK(*f.connect_path == "/run/x/b");

    // A backslash makes the next character literal (here a ':').
    f = forward_of("8080:ho\\:st:80");
    CHECK(*f.connect_host == "ho:st");

    f = forward_of("1080", true);
    CHECK(f.is_dynamic());
    CHECK(f.listen_port == 1080);
    f = forward_of("[::1]:1080", true);
    CHECK(*f.listen_host == "::1");

    // Remote forwards may listen on port 0 (allocated by the server).
    f = forward_of("0:localhost:22", false, true);
    CHECK(f.listen_port == 0);
    CHECK(forward_fails("0:localhost:22"));

    CHECK(forward_fails("8080"));
    CHECK(forward_fails("8080:host"));
    CHECK(forward_fails("8080:host:0"));
    CHECK(forward_fails("a:b:c:d:e"));
    CHECK(forward_fails("[::1:8080:h:80"));
    CHECK(forward_fails("8080:h:80\\"));
    CHECK(forward_fails("${NOPE}:h:80"));
    CHECK(forward_fails("a:b:c", true));
    CHECK(forward_fails(std::string(120, '/') + ":h:80"));
}

TEST_CASE("destination: tunnel devices")
{
    int remote = 0;
    CHECK(parse_tunnel_device("3", remote) == 3);
    CHECK(remote == tun_id_any);
    CHECK(parse_tunnel_device("any:7", remote) == tun_id_any);
    CHECK(remote == 7);
    CHECK(parse_tunnel_device("1:x", remote) == tun_id_error);
    CHECK(parse_tunnel_device("-1", remote) == tun_id_error);
}

TEST_CASE("destination: ProxyJump")
{
    client_config c;
    REQUIRE(parse_proxy_jump("ssh://u@first:2200,second,bob@third:22", c, true));
    CHECK(*c.jump_user == "bob");
    CHECK(*c.jump_host == "third");
    CHECK(*c.jump_port == 22);
    CHECK(*c.jump_extra == "ssh://u@first:2200,second");
    CHECK(*c.proxy_command == "none");

    // First value wins, but later values are still checked.
    REQUIRE(parse_proxy_jump("other", c, true));
    CHECK(*c.jump_host == "third");
    CHECK_FALSE(parse_proxy_jump("ok,bad:0", c, true));

    client_config n;
    REQUIRE(parse_proxy_jump("none", n, true));
    CHECK(*n.jump_host == "none");

    client_config d;
    d.host_arg = "target";
    d.hostname = "target.example";
    d.user = "alice";
    REQUIRE(parse_proxy_jump("bob@gw1,gw2:2222", d, true));
    CHECK(proxy_jump_command(d, "/nonexistent/ssh", std::string("/etc/cfg"), 2) ==
          "ssh -p 2222 -J bob@gw1 -F /etc/cfg -vv -W '[%h]:%p' gw2");
    CHECK(proxy_jump_command(d, "ssh", std::nullopt, 0) == "ssh -p 2222 -J bob@gw1 -W '[%h]:%p' gw2");

    client_config loop;
    loop.hostname = "h";
    loop.user = "u";
    REQUIRE(parse_proxy_jump("u@h", loop, true));
    CHECK_THROWS_WITH(proxy_jump_command(loop, "ssh", std::nullopt, 0), "jumphost loop via h");
}
