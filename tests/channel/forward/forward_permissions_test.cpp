#include "channel/forward/forward_permissions.hpp"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace longhaul::forward;

namespace {

permission_list parse(std::vector<std::string> v, permission_kind k)
{
    std::string why;
    auto l = parse_permission_list(v, k, "PermitOpen", why);
    REQUIRE_MESSAGE(l, why);
    return *l;
}

permission_list open_list(std::vector<std::string> v)
{
    return parse(std::move(v), permission_kind::open);
}

permission_list listen_list(std::vector<std::string> v)
{
    return parse(std::move(v), permission_kind::listen);
}

} // namespace

TEST_CASE("permissions: parsing as sshd_config and authorized_keys store them")
{
    using m = permission_list::mode;
    CHECK(open_list({}).kind == m::any);
    CHECK(open_list({"any"}).kind == m::any);
    CHECK(open_list({"none"}).kind == m::none);
    const auto l = open_list({"db:5432", "[2001:db8::1]:22", "*:443", "web:*", "host:ssh"});
    REQUIRE(l.kind == m::list);
    CHECK(l.entries == std::vector<forward_permission>{
                           {"db", 5432}, {"2001:db8::1", 22}, {"*", 443}, {"web", any_port}, {"host", 22}});
    // A bare port is any host for listen lists; sshd_config stores "*:port".
    CHECK(listen_list({"8080"}).entries == std::vector<forward_permission>{{"*", 8080}});
    CHECK(listen_list({"*:8080"}).entries == std::vector<forward_permission>{{"*", 8080}});
    CHECK(listen_list({"localhost:*"}).entries == std::vector<forward_permission>{{"localhost", any_port}});

    struct bad {
        std::vector<std::string> v;
        permission_kind k;
        const char* why;
    };
    const bad bads[] = {
        {{"host"}, permission_kind::open, "bad port number in PermitOpen"},
        {{"host:0"}, permission_kind::open, "bad port number in PermitOpen"},
        {{"host:65536"}, permission_kind::open, "bad port number in PermitOpen"},
        {{"host:nosuchservice"}, permission_kind::open, "bad port number in PermitOpen"},
        {{"[::1"}, permission_kind::open, "missing host in PermitOpen"},
        {{"/tmp/sock:*"}, permission_kind::open, "missing host in PermitOpen"},
        {{"any", "none"}, permission_kind::open, "bad port number in PermitOpen"}, // keywords only alone
        {{"0"}, permission_kind::listen, "bad port number in PermitOpen"},
        {{"[::1]"}, permission_kind::listen, "bad port number in PermitOpen"},
    };
    for (const auto& b : bads) {
        CAPTURE(b.why);
        std::string why;
        CHECK_FALSE(parse_permission_list(b.v, b.k, "PermitOpen", why));
        CHECK(why == b.why);
    }
}

// The case rules (exact host for open lists, the request lowercased for
// listen lists), "localhost" against 127.0.0.1 and the wildcard host were
// also tried against Debian's sshd 9.2 (ssh -W / -R with ExitOnForwardFailure).
TEST_CASE("permissions: open lists (PermitOpen, permitopen=, PermitRemoteOpen)")
{
    struct row {
        std::vector<std::string> list;
        const char* host;
        int port;
        bool permitted;
    };
    const row rows[] = {
        {{}, "anything", 1, true},
        {{"any"}, "anything", 1, true},
        {{"none"}, "localhost", 22, false},
        {{"db:5432"}, "db", 5432, true},
        {{"db:5432"}, "db", 5433, false},
        {{"db:5432"}, "DB", 5432, false}, // exact comparison, as strcmp
        {{"db:5432"}, "db.example", 5432, false},
        {{"db.*:5432"}, "db.example", 5432, false}, // no patterns, only "*"
        {{"*:5432"}, "anything", 5432, true},
        {{"*:5432"}, "anything", 80, false},
        {{"db:*"}, "db", 1, true},
        {{"*:*"}, "x", 65535, true},
        {{"[::1]:22"}, "::1", 22, true},
        {{"[::1]:22"}, "[::1]", 22, false},
        {{"127.0.0.1:22"}, "localhost", 22, false},
        {{"a:1", "b:2"}, "b", 2, true},
        {{"a:1", "b:2"}, "b", 1, false},
    };
    for (const auto& r : rows) {
        CAPTURE(r.host);
        CAPTURE(r.port);
        CHECK(open_list_permits(open_list(r.list), r.host, r.port) == r.permitted);
    }
}

TEST_CASE("permissions: listen lists (PermitListen, permitlisten=)")
{
    struct row {
        std::vector<std::string> list;
        const char* host;
        int port;
        bool permitted;
    };
    const row rows[] = {
        {{}, "", 0, true},
        {{"none"}, "localhost", 8080, false},
        {{"8080"}, "localhost", 8080, true}, // "*:8080": any host
        {{"8080"}, "", 8080, true},
        {{"8080"}, "0.0.0.0", 8080, true},
        {{"8080"}, "localhost", 8081, false},
        {{"8080"}, "localhost", 0, false}, // port 0 only with "*"
        {{"localhost:*"}, "localhost", 0, true},
        {{"localhost:8080"}, "localhost", 8080, true},
        {{"localhost:8080"}, "LOCALHOST", 8080, true}, // the request is lowercased
        {{"LOCALHOST:8080"}, "localhost", 8080, false}, // the pattern is not
        {{"localhost:8080"}, "127.0.0.1", 8080, false}, // ssh's default is "localhost"
        {{"127.0.0.1:8080"}, "localhost", 8080, false},
        {{"localhost:8080"}, "", 8080, false},
        {{"*.example.org:443"}, "web.example.org", 443, true},
        {{"10.0.0.?:80"}, "10.0.0.7", 80, true},
        {{"10.0.0.?:80"}, "10.0.0.17", 80, false},
        {{"[::1]:80"}, "::1", 80, true},
    };
    for (const auto& r : rows) {
        CAPTURE(r.host);
        CAPTURE(r.port);
        CHECK(listen_list_permits(listen_list(r.list), r.host, r.port) == r.permitted);
    }
}

TEST_CASE("permissions: the administrator's and the user's lists together")
{
    const auto any = open_list({});
    const auto none = open_list({"none"});
    const auto db = open_list({"db:5432"});
    const auto web = open_list({"web:80"});
    CHECK(open_permitted(any, any, "x", 1));
    CHECK(open_permitted(db, any, "db", 5432));
    CHECK(open_permitted(any, db, "db", 5432));
    CHECK_FALSE(open_permitted(any, db, "web", 80));
    CHECK_FALSE(open_permitted(db, web, "db", 5432)); // must pass both
    CHECK_FALSE(open_permitted(none, any, "db", 5432));
    CHECK(open_permitted(open_list({"db:5432", "web:80"}), web, "web", 80));

    // direct-streamlocal: the path is the host and only a "*" port matches.
    CHECK(path_open_permitted(any, any, "/run/s.sock"));
    CHECK_FALSE(path_open_permitted(db, any, "/run/s.sock"));
    CHECK(path_open_permitted(open_list({"*:*"}), any, "/run/s.sock"));
    CHECK_FALSE(path_open_permitted(open_list({"*:22"}), any, "/run/s.sock"));
    CHECK_FALSE(path_open_permitted(none, any, "/run/s.sock"));

    const auto l8080 = listen_list({"8080"});
    const auto lhost = listen_list({"localhost:8080"});
    CHECK(listen_permitted(l8080, lhost, "localhost", 8080));
    CHECK_FALSE(listen_permitted(l8080, lhost, "", 8080));
    CHECK_FALSE(listen_permitted(listen_list({"none"}), listen_list({}), "localhost", 8080));
}
