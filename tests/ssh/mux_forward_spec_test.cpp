#include "ssh/mux_forward_spec.hpp"

#include "ssh/forward_spec.hpp"

#include <doctest/doctest.h>

using namespace longhaul;

namespace {

const env_lookup no_env = [](const std::string&) -> std::optional<std::string> { return std::nullopt; };

forward_spec parsed(std::string_view text, bool dynamic, bool remote)
{
    forward_spec f;
    REQUIRE(parse_forward(text, dynamic, remote, f, no_env));
    return f;
}

mux::forward_request request(std::uint32_t kind, std::string lhost, std::uint32_t lport, std::string chost,
                             std::uint32_t cport)
{
    mux::forward_request r;
    r.kind = kind;
    r.listen_host = std::move(lhost);
    r.listen_port = lport;
    r.connect_host = std::move(chost);
    r.connect_port = cport;
    return r;
}

} // namespace

TEST_CASE("mux forwards: the fields OpenSSH's mux client sends for each kind")
{
    auto local = parsed("8080:db.internal:5432", false, false);
    auto r = mux_forward_request(mux::msg::open_fwd, mux_forward_kind(local, false), local);
    CHECK(r.type == mux::msg::open_fwd);
    CHECK(r.kind == 1);
    CHECK(r.listen_host.empty()); // no bind address: ""
    CHECK(r.listen_port == 8080);
    CHECK(r.connect_host == "db.internal");
    CHECK(r.connect_port == 5432);

    auto wildcard = parsed(":8080:db:5432", false, false); // an empty bind address: "*"
    CHECK(mux_forward_request(mux::msg::open_fwd, mux::fwd_kind::local, wildcard).listen_host == "*");

    auto dynamic = parsed("127.0.0.1:1080", true, false);
    CHECK(mux_forward_kind(dynamic, false) == mux::fwd_kind::dynamic);
    r = mux_forward_request(mux::msg::close_fwd, mux::fwd_kind::dynamic, dynamic);
    CHECK(r.type == mux::msg::close_fwd);
    CHECK(r.kind == 3);
    CHECK(r.listen_host == "127.0.0.1");
    CHECK(r.connect_port == 0);

    auto remote = parsed("0:localhost:22", false, true);
    CHECK(mux_forward_kind(remote, true) == mux::fwd_kind::remote);
    r = mux_forward_request(mux::msg::open_fwd, mux::fwd_kind::remote, remote);
    CHECK(r.kind == 2);
    CHECK(r.listen_port == 0);

    auto paths = parsed("/tmp/l.sock:/run/r.sock", false, false);
    r = mux_forward_request(mux::msg::open_fwd, mux::fwd_kind::local, paths);
    CHECK(r.listen_host == "/tmp/l.sock");
    CHECK(r.listen_port == mux::port_streamlocal);
    CHECK(r.connect_host == "/run/r.sock");
    CHECK(r.connect_port == mux::port_streamlocal);
}

TEST_CASE("mux forwards: what the master reads back is what the client asked for")
{
    for (auto [text, dynamic, remote] : {std::tuple{"8080:db:5432", false, false},
                                         std::tuple{"127.0.0.1:8080:db:5432", false, false},
                                         std::tuple{"1080", true, false},
                                         std::tuple{"0:localhost:22", false, true},
                                         std::tuple{"2222", true, true}, // reverse SOCKS
                                         std::tuple{"/tmp/l.sock:/run/r.sock", false, false},
                                         std::tuple{"9000:/run/app.sock", false, true}}) {
        const std::string shown = text;
        CAPTURE(shown);
        const auto f = parsed(text, dynamic, remote);
        const auto kind = mux_forward_kind(f, remote);
        std::string why;
        auto back = forward_of_mux_request(mux_forward_request(mux::msg::open_fwd, kind, f), why);
        REQUIRE(back);
        CHECK(*back == f);
    }
}

TEST_CASE("mux forwards: the master refuses what OpenSSH's refuses, with its reasons")
{
    std::string why;
    CHECK_FALSE(forward_of_mux_request(request(4, "", 80, "h", 80), why));
    CHECK(why == "invalid forwarding type 4");
    CHECK_FALSE(forward_of_mux_request(request(3, "/tmp/s", mux::port_streamlocal, "", 0), why));
    CHECK(why == "streamlocal and dynamic forwards are mutually exclusive");
    CHECK_FALSE(forward_of_mux_request(request(1, "", 65536, "h", 80), why));
    CHECK(why == "invalid listen port 65536");
    CHECK_FALSE(forward_of_mux_request(request(1, "", 80, "h", 70000), why));
    CHECK(why == "invalid connect port 70000");
    CHECK_FALSE(forward_of_mux_request(request(1, "", 80, "h", 0), why));
    CHECK(why == "invalid connect port 0");
    CHECK_FALSE(forward_of_mux_request(request(1, "", 80, "", 80), why));
    CHECK(why == "missing connect host");
    CHECK_FALSE(forward_of_mux_request(request(2, "", 80, "", 22), why));
    CHECK(why == "missing connect host");
    // A remote forward's target port may be 0 (reverse SOCKS), a local one's not.
    CHECK(forward_of_mux_request(request(2, "", 2222, "socks", 0), why));
    // Whatever a dynamic request names as its target, it is SOCKS.
    auto d = forward_of_mux_request(request(3, "", 1080, "", 0), why);
    REQUIRE(d);
    CHECK(d->is_dynamic());
}

TEST_CASE("mux forwards: described as format_forward() describes them")
{
    auto local = parsed("8080:db:5432", false, false);
    CHECK(describe_mux_forward(mux::fwd_kind::local, local, false) == "local forward LOCALHOST:8080 -> db:5432");
    CHECK(describe_mux_forward(mux::fwd_kind::local, local, true) == "local forward *:8080 -> db:5432");
    auto dynamic = parsed("1080", true, false);
    CHECK(describe_mux_forward(mux::fwd_kind::dynamic, dynamic, false) == "dynamic forward LOCALHOST:1080 -> *");
    auto remote = parsed("0:127.0.0.1:22", false, true);
    CHECK(describe_mux_forward(mux::fwd_kind::remote, remote, true) == "remote forward LOCALHOST:0 -> 127.0.0.1:22");
}
