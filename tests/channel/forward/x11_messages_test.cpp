#include "channel/forward/x11_messages.hpp"
#include "common/wire.hpp"

#include <doctest/doctest.h>

#include <set>

using namespace longhaul;
using namespace longhaul::forward;

TEST_CASE("x11-req round-trips and reads OpenSSH's encoding")
{
    x11_request r{true, "MIT-MAGIC-COOKIE-1", "00112233445566778899aabbccddeeff", 2};
    auto d = x11_request::decode(r.encode());
    REQUIRE(d);
    CHECK(d->single_connection);
    CHECK(d->auth_protocol == "MIT-MAGIC-COOKIE-1");
    CHECK(d->auth_cookie == "00112233445566778899aabbccddeeff");
    CHECK(d->screen == 2);
    // Any non-zero byte is TRUE.
    bytes b;
    wire_writer(b).u8(7).string("p").string("c").u32(0);
    auto t = x11_request::decode(b);
    REQUIRE(t);
    CHECK(t->single_connection);
}

TEST_CASE("x11-req: truncation, trailing bytes, NUL and oversized fields are refused")
{
    const bytes good = x11_request{false, "MIT-MAGIC-COOKIE-1", "abcd", 0}.encode();
    for (std::size_t n = 0; n < good.size(); ++n) {
        auto d = x11_request::decode(byte_span(good.data(), n));
        REQUIRE_FALSE(d);
        CHECK(d.error() == errc::malformed);
    }
    bytes extra = good;
    extra.push_back(0);
    auto t = x11_request::decode(extra);
    REQUIRE_FALSE(t);
    CHECK(t.error() == errc::trailing_data);
    bytes nul;
    wire_writer(nul).u8(0).string(std::string_view("MIT\0x", 5)).string("ab").u32(0);
    auto n = x11_request::decode(nul);
    REQUIRE_FALSE(n);
    CHECK(n.error() == errc::malformed);
    const bytes big = x11_request{false, "p", std::string(max_x11_auth_field + 1, 'a'), 0}.encode();
    auto bg = x11_request::decode(big);
    REQUIRE_FALSE(bg);
    CHECK(bg.error() == errc::too_large);
    CHECK(x11_request::decode(x11_request{false, "p", std::string(max_x11_auth_field, 'a'), 0}.encode()));
}

TEST_CASE("x11 channel open data")
{
    auto d = x11_open::decode(x11_open{"127.0.0.1", 41000}.encode());
    REQUIRE(d);
    CHECK(d->originator == "127.0.0.1");
    CHECK(d->originator_port == 41000);
    bytes big_port;
    wire_writer(big_port).string("::1").u32(70000);
    auto b = x11_open::decode(big_port);
    REQUIRE_FALSE(b);
    CHECK(b.error() == errc::too_large);
    bytes trunc;
    wire_writer(trunc).string("::1");
    CHECK_FALSE(x11_open::decode(trunc));
}

TEST_CASE("xauth_valid_string and x11_display_valid are OpenSSH's character sets")
{
    CHECK(xauth_valid_string("MIT-MAGIC-COOKIE-1"));
    CHECK(xauth_valid_string("0123abcdef"));
    CHECK(xauth_valid_string("unix:10.0"));
    CHECK(xauth_valid_string(""));
    CHECK_FALSE(xauth_valid_string("abc def"));
    CHECK_FALSE(xauth_valid_string("abc\nadd unix:0 x y"));
    CHECK_FALSE(xauth_valid_string("a;b"));
    CHECK_FALSE(xauth_valid_string("$(id)"));
    char bad = 0;
    CHECK(x11_display_valid("localhost:10.0", bad));
    CHECK(x11_display_valid("/private/tmp/com.apple.launchd.x/org.xquartz:0", bad));
    CHECK_FALSE(x11_display_valid(":0;id", bad));
    CHECK(bad == ';');
    CHECK_FALSE(x11_display_valid("host :0", bad));
    CHECK(bad == ' ');
}

TEST_CASE("the screen number of a DISPLAY")
{
    CHECK(x11_screen_of(":0") == 0);
    CHECK(x11_screen_of(":0.1") == 1);
    CHECK(x11_screen_of("localhost:10.3") == 3);
    CHECK(x11_screen_of("host.example.org:10.2") == 2); // the '.' after the ':'
    CHECK(x11_screen_of("host.example.org:10") == 0);
    CHECK(x11_screen_of(":0.400") == 400);
    CHECK(x11_screen_of(":0.401") == 0);
    CHECK(x11_screen_of(":0.1x") == 0);
    CHECK(x11_screen_of(":0.") == 0);
    CHECK(x11_screen_of("nodisplay") == 0);
}

TEST_CASE("parse_x11_display: local sockets and TCP displays")
{
    std::string err;
    auto a = parse_x11_display(":0", err);
    REQUIRE(a);
    CHECK(a->local_socket);
    CHECK(a->display == 0);
    auto b = parse_x11_display("unix:12.1", err);
    REQUIRE(b);
    CHECK(b->local_socket);
    CHECK(b->display == 12);
    auto c = parse_x11_display("::3", err);
    REQUIRE(c);
    CHECK(c->local_socket);
    CHECK(c->display == 3);
    auto d = parse_x11_display("localhost:10.0", err);
    REQUIRE(d);
    CHECK_FALSE(d->local_socket);
    CHECK(d->host == "localhost");
    CHECK(d->display == 10);
    CHECK(d->port() == 6010);
    auto e = parse_x11_display("127.0.0.1:59535", err);
    REQUIRE(e);
    CHECK(e->port() == 65535);

    CHECK_FALSE(parse_x11_display("127.0.0.1:59536", err));
    CHECK(err == "Could not parse display number from DISPLAY: 127.0.0.1:59536");
    CHECK_FALSE(parse_x11_display("nohost", err));
    CHECK(err == "Could not find ':' in DISPLAY: nohost");
    CHECK_FALSE(parse_x11_display(":x", err));
    CHECK(err == "Could not parse display number from DISPLAY: :x");
    CHECK_FALSE(parse_x11_display("host:", err));
    CHECK_FALSE(parse_x11_display("unix:99999999999", err));
}

TEST_CASE("the display name xauth lists")
{
    CHECK(x11_xauth_display_name("localhost:10.0") == "unix:10.0");
    CHECK(x11_xauth_display_name(":0") == ":0");
    CHECK(x11_xauth_display_name("127.0.0.1:5") == "127.0.0.1:5");
}

TEST_CASE("first_free_x11_display: from the offset up to the first display that binds")
{
    std::set<int> busy{10, 11, 13};
    std::vector<int> tried;
    auto probe = [&](int d) {
        tried.push_back(d);
        return busy.count(d) == 0;
    };
    CHECK(first_free_x11_display(10, probe) == 12);
    CHECK(tried == std::vector<int>{10, 11, 12});
    CHECK(first_free_x11_display(0, probe) == 0);
    CHECK(first_free_x11_display(-5, probe) == 0);
    CHECK(first_free_x11_display(998, [](int d) { return d == 999; }) == 999);
    CHECK_FALSE(first_free_x11_display(10, [](int) { return false; }));
    CHECK_FALSE(first_free_x11_display(1000, [](int) { return true; }));
}
